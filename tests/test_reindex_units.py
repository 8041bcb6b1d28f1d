"""Pure logic of the reindex: ledger accounting, the embedding cache, the gate, API refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from chunkweave.chunking.ids import sha1_hex
from chunkweave.storage.evaluate import score
from chunkweave.storage.reindex.accounting import account
from chunkweave.storage.reindex.cache import ReusingEmbedder
from chunkweave.storage.reindex.gate import judge
from chunkweave.storage.values import LedgerEntry
from chunkweave.worker.api import create_app
from chunkweave.worker.settings import Settings
from tests.store_helpers import CountingEmbedder

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _e(doc: str, sha: str = "a", status: str = "ok", at: int = 0) -> LedgerEntry:
    return LedgerEntry(
        doc_id=doc, source=doc, doc_sha1=sha, status=status,  # type: ignore[arg-type]
        updated_at=T0 + timedelta(seconds=at),
    )  # fmt: skip


def test_accounting_needs_every_live_source_at_its_version():
    live = [_e("same"), _e("changed", "b", at=5), _e("new"), _e("was-failed", status="failed")]
    target = [_e("same"), _e("changed", "a", at=1), _e("was-failed", status="failed"), _e("gone")]
    acc = account(live, target)
    assert [e.doc_id for e in acc.missing] == ["changed", "new"]
    assert acc.extra == ["gone"]
    assert (acc.total, acc.done, acc.complete) == (4, 2, False)


def test_accounting_target_ahead_of_live_counts_and_a_failure_blocks():
    # The target read a newer file than the live store holds: it is ahead, not behind.
    assert account([_e("d", "a", at=1)], [_e("d", "b", at=9)]).complete
    acc = account([_e("d", at=1)], [_e("d", status="failed", at=9)])
    assert [e.doc_id for e in acc.failed] == ["d"] and not acc.complete
    assert account([_e("d")], [_e("d")]).complete


def test_reusing_embedder_embeds_only_unknown_texts_in_order():
    inner = CountingEmbedder()
    cache = ReusingEmbedder(inner)
    cache.load({sha1_hex("known"): [1.0] * 16})
    got = cache.embed_documents(["new one", "known", "new two"])
    assert inner.embedded == ["new one", "new two"]
    assert got[1] == [1.0] * 16 and got[0] == inner.embed_query("new one")
    assert (cache.reused, cache.embedded) == (1, 2)
    cache.clear()
    cache.embed_documents(["known"])
    assert inner.embedded[-1] == "known"


def test_gate_refuses_a_drop_beyond_the_margin():
    live = score([1, 1, 2, None])
    assert judge(live, score([1, 1, 2, None]), 0.0).passed
    worse = score([1, None, None, None])
    result = judge(live, worse, 0.05)
    assert not result.passed and "refused" in result.summary()
    assert judge(live, worse, 1.0).passed


def test_reindex_route_needs_the_token_and_refuses_unknown_keys():
    app = create_app(Settings(redis_url="redis://127.0.0.1:1/0", api={"token": "s3cret"}))
    with TestClient(app) as client:
        assert client.post("/reindex", json={}).status_code == 401
        assert client.get("/reindex").status_code == 401
        auth = {"Authorization": "Bearer s3cret"}
        bad = client.post("/reindex", json={"strategy": "nope"}, headers=auth)
        assert bad.status_code == 422
        extra = client.post("/reindex", json={"drop_everything": True}, headers=auth)
        assert extra.status_code == 422


def test_accounting_a_retag_is_not_current_in_the_target():
    # Same file, but the caller's metadata changed since the target read it (a retag).
    live = LedgerEntry(doc_id="d", source="d", doc_sha1="a", status="ok", meta_sha1="new")
    stale = live.model_copy(update={"meta_sha1": "old"})
    assert [e.doc_id for e in account([live], [stale]).missing] == ["d"]
    assert account([live], [live]).complete


def test_a_multi_tenant_store_is_refused_before_anything_is_touched():
    import pytest

    from chunkweave.storage.config import WeaviateConfig
    from chunkweave.worker.reindex import (
        ReindexRefusedError,
        SpecFactory,
        dry_run,
        refuse_multi_tenant,
        start,
    )

    refuse_multi_tenant(WeaviateConfig())  # single-tenant: nothing to refuse
    # Nothing listens on this URL: a refusal that came after a connection would not be this.
    cfg = WeaviateConfig(url="http://127.0.0.1:9", multi_tenancy=True)
    settings = Settings(weaviate=cfg, redis_url="redis://127.0.0.1:9/0")
    for call in (start, dry_run):
        with pytest.raises(ReindexRefusedError, match="multi-tenant"):
            call(settings, SpecFactory(settings))

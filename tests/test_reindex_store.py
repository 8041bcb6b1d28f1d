"""Reindex on a real Weaviate, in-process: adoption, the embedding cache, the alias."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunkweave.chunking import chunk_document
from chunkweave.chunking.api import resolve_options
from chunkweave.chunking.models import ChunkOptions
from chunkweave.parsers import parse_document
from chunkweave.storage.errors import EmbedderMismatchError, StoreError
from chunkweave.storage.filters import SearchRequest
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.alias import IndexCatalog
from chunkweave.storage.weaviate.client import WeaviateSession, connect
from chunkweave.storage.weaviate.store import WeaviateStore
from chunkweave.worker.settings import Settings
from chunkweave.worker.tasks.reindex import open_reindexer
from tests.reindex_helpers import new_target, sectioned_docx, switch
from tests.store_helpers import ID16, CountingEmbedder

pytestmark = pytest.mark.integration

#: A keeps every section its own chunk; B merges the one small section into a neighbour.
A = ChunkOptions(merge_sections="never")
B = ChunkOptions()
SIZES = [200, 5, 200, 200]


def _ingest(cfg, embedder, opts, path: Path) -> None:
    pipe = Pipeline(store=WeaviateStore.open(cfg, ID16), embedder=embedder, chunk_opts=opts)
    try:
        assert pipe.ingest(path).status == "added"
    finally:
        pipe.close()


def _chunks(path: Path, opts: ChunkOptions, embedder) -> list:
    source = str(path.resolve())
    return chunk_document(
        parse_document(path),
        resolve_options(opts, embedder.max_tokens),
        embedder,
        doc_id=doc_id_for(source),
        source=source,
    )


def _drop(cfg) -> None:
    session = WeaviateSession(connect(cfg), cfg)
    try:
        catalog = IndexCatalog(session)
        for version in catalog.versions():
            session.client.collections.delete([version.collection, version.ledger])
            catalog.delete_record(version.collection)
        for alias in (cfg.collection, cfg.ledger_collection):
            session.client.alias.delete(alias_name=alias)
        session.client.collections.delete([cfg.collection, cfg.ledger_collection])
    finally:
        session.close()


def test_new_store_is_generation_1_behind_aliases(weaviate_cfg):
    st = WeaviateStore.open(weaviate_cfg, ID16)
    try:
        catalog = IndexCatalog(st.session)
        assert catalog.alias_target(weaviate_cfg.collection) == f"{weaviate_cfg.collection}_v1"
        assert catalog.alias_target(weaviate_cfg.ledger_collection) == (
            f"{weaviate_cfg.ledger_collection}_v1"
        )
        (live,) = catalog.versions()
        assert (live.state, live.identity) == ("live", ID16)
        # Another embedder is refused with the command that moves the store.
        with pytest.raises(EmbedderMismatchError, match="chunkweave reindex"):
            WeaviateStore.open(weaviate_cfg, EmbedderIdentity("other", 16))
    finally:
        st.close()
        _drop(weaviate_cfg)


def test_only_changed_embed_texts_are_embedded(weaviate_cfg, tmp_path):
    """One small section merges under B: only the chunks it changed are embedded."""
    doc = sectioned_docx(tmp_path / "s.docx", SIZES)
    embedder = CountingEmbedder()
    settings = Settings(weaviate=weaviate_cfg, chunking=A)
    try:
        _ingest(weaviate_cfg, embedder, A, doc)
        live, target = new_target(settings, embedder, B)
        reindexer, live_ledger, _ = open_reindexer(settings, target.collection, embedder)
        embedder.embedded.clear()
        entry = live_ledger.get(doc_id_for(str(doc.resolve())))
        assert entry is not None
        outcome = reindexer.reindex(doc, entry)
        reindexer.close()
        assert outcome.status == "added", outcome
        before = {c.embed_text for c in _chunks(doc, A, embedder)}
        after = _chunks(doc, B, embedder)
        changed = [c.embed_text for c in after if c.embed_text not in before]
        assert len(changed) == 1 and len(after) == 3  # the merged chunk; two unchanged
        assert sorted(embedder.embedded) == sorted(changed)
        assert reindexer.cache.reused == len(after) - len(changed)
        # The target holds exactly B's chunks, with the live vectors where reused.
        store = WeaviateStore.open(
            weaviate_cfg.model_copy(
                update={
                    "collection": target.collection,
                    "ledger_collection": target.ledger,
                    "versioned": False,
                }
            ),
            ID16,
        )
        try:
            ids = {chunk_uuid(c.id) for c in after}
            assert store.doc_uuids(entry.doc_id) == ids
        finally:
            store.close()
    finally:
        _drop(weaviate_cfg)


def test_plain_collection_of_previous_release_is_adopted_then_switched(weaviate_cfg, tmp_path):
    """A collection made without aliases (the previous release's path) is adopted in place."""
    doc = sectioned_docx(tmp_path / "s.docx", SIZES)
    embedder = CountingEmbedder()
    plain = weaviate_cfg.model_copy(update={"versioned": False})
    try:
        _ingest(plain, embedder, A, doc)
        st = WeaviateStore.open(weaviate_cfg, ID16)  # this release, on the old store
        catalog = IndexCatalog(st.session)
        assert catalog.alias_target(weaviate_cfg.collection) is None
        (adopted,) = catalog.versions()
        assert (adopted.collection, adopted.state, adopted.generation) == (
            weaviate_cfg.collection,
            "adopted",
            0,
        )
        hits = st.search(SearchRequest("river", embedder.embed_query("river"), k=3))
        assert hits
        st.close()
        settings = Settings(weaviate=weaviate_cfg, chunking=A)
        _, target = new_target(settings, embedder, B)
        reindexer, live_ledger, _ = open_reindexer(settings, target.collection, embedder)
        entry = live_ledger.get(doc_id_for(str(doc.resolve())))
        assert entry is not None
        assert reindexer.reindex(doc, entry).status == "added"
        assert reindexer.cache.reused > 0  # vectors came from the adopted collection
        reindexer.close()
        switch(weaviate_cfg, target)
        st = WeaviateStore.open(weaviate_cfg, ID16)
        try:
            catalog = IndexCatalog(st.session)
            assert catalog.alias_target(weaviate_cfg.collection) == target.collection
            assert catalog.alias_target(weaviate_cfg.ledger_collection) == target.ledger
            want = {chunk_uuid(c.id) for c in _chunks(doc, B, embedder)}
            hits = st.search(SearchRequest("river", embedder.embed_query("river"), k=10))
            assert hits and {h.uuid for h in hits} <= want
            assert st.open_ledger().get(entry.doc_id) is not None
            # The adopted collection is gone (an alias cannot share its name): no rollback.
            with pytest.raises(StoreError, match="nothing to roll back"):
                catalog.rollback()
        finally:
            st.close()
    finally:
        _drop(weaviate_cfg)


def test_dry_run_plans_reused_and_embedded_vectors_and_writes_nothing(weaviate_cfg, tmp_path):
    from chunkweave.worker import reindex as rx

    doc = sectioned_docx(tmp_path / "s.docx", SIZES)
    embedder = CountingEmbedder()
    settings = Settings(weaviate=weaviate_cfg, chunking=A)
    try:
        _ingest(weaviate_cfg, embedder, A, doc)
        factory = rx.SpecFactory(settings, chunking=B)
        factory.embedder = embedder
        embedder.embedded.clear()
        plan = rx.dry_run(settings, factory)
        assert (plan.documents, plan.chunks, plan.reused, plan.to_embed) == (1, 3, 2, 1)
        assert plan.embed_rate is not None and plan.estimated_embed_s is not None
        assert any("2 reused (66.7%), 1 to embed" in line for line in plan.lines())
        assert len(embedder.embedded) == 1  # the rate sample only
        assert [v.state for v in rx.versions(settings)] == ["live"]  # nothing recorded
    finally:
        _drop(weaviate_cfg)


def test_reindex_replays_each_documents_metadata_and_acl(weaviate_cfg, tmp_path):
    """What the live ledger records of a document (its caller metadata) reaches the target."""
    from chunkweave.storage.metadata import MetadataConfig

    cfg = weaviate_cfg.model_copy(update={"metadata": MetadataConfig(fields={"version": "string"})})
    doc = sectioned_docx(tmp_path / "m.docx", SIZES)
    embedder = CountingEmbedder()
    settings = Settings(weaviate=cfg, chunking=A)
    meta = {"acl": ["team-x"], "version": "3"}
    try:
        pipe = Pipeline(store=WeaviateStore.open(cfg, ID16), embedder=embedder, chunk_opts=A)
        try:
            assert pipe.ingest(doc, metadata=meta).status == "added"
        finally:
            pipe.close()
        live, target = new_target(settings, embedder, B)
        reindexer, live_ledger, _ = open_reindexer(settings, target.collection, embedder)
        entry = live_ledger.get(doc_id_for(str(doc.resolve())))
        assert entry is not None and entry.metadata == meta
        assert reindexer.reindex(doc, entry).status == "added"
        reindexer.close()
        switch(cfg, target)
        store = WeaviateStore.open(cfg, ID16)
        try:
            assert store.serves == target.collection
            entry_b = store.open_ledger().get(entry.doc_id)
            assert entry_b is not None and entry_b.metadata == meta
            vector = embedder.embed_query("section")

            def hits(**kw: object) -> list:
                request = SearchRequest(query="section", vector=vector, k=10, **kw)
                return store.search(request)

            assert hits(principals=("team-x",))
            assert not hits(principals=("team-y",))
            from chunkweave.storage.filters import Condition

            assert hits(where=(Condition("version", "equal", "3"),))
            assert not hits(where=(Condition("version", "equal", "2"),))
        finally:
            store.close()
    finally:
        _drop(cfg)

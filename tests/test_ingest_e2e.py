"""End to end against a real Weaviate with the real parser, chunker and embedder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docx
import pytest

from chunkweave.storage.config import EmbedderConfig, WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.errors import StoreUnavailableError
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.store import WeaviateStore

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]

#: Representative corpus subset (DOCX + short PDFs, tables, lists, code): the whole
#: corpus (872-page handbook, 400-page PDF) takes minutes on 2 shared cores.
SUBSET = (
    "word_sample.docx",
    "word_tables.docx",
    "docx_lists.docx",
    "unit_test_headers.docx",
    "lorem_ipsum.docx",
    "multi_page.pdf",
    "2305.03393v1-pg9.pdf",
    "code_and_formula.pdf",
)


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner, on_embed=None):
        self.inner = inner
        self.name, self.dimension, self.max_tokens = inner.name, inner.dimension, inner.max_tokens
        self.embedded: list[str] = []
        self.on_embed = on_embed

    def embed_documents(self, texts):
        if self.on_embed:
            self.on_embed()
        self.embedded.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def count(self, text):
        return self.inner.count(text)


@pytest.fixture(scope="module")
def real_embedder():
    return make_embedder(EmbedderConfig())


def open_pipeline(cfg: WeaviateConfig, embedder) -> Pipeline:
    store = WeaviateStore.open(cfg, EmbedderIdentity(embedder.name, embedder.dimension))
    return Pipeline(store=store, embedder=embedder)


@pytest.fixture
def pipeline(weaviate_cfg, real_embedder):
    pipe = open_pipeline(weaviate_cfg, CountingEmbedder(real_embedder))
    yield pipe
    pipe.store.client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])
    pipe.store.close()


def all_uuids(pipe: Pipeline) -> set[str]:
    return {str(o.uuid) for o in pipe.store.collection().iterator()}


SECTIONS = ("Scope", "Design", "Storage", "Retrieval", "Operations", "Appendix")


def write_docx(path: Path, edits: dict[int, str] | None = None) -> None:
    """Six sections, each big enough to be its own chunk; ``edits`` replace paragraphs."""
    document = docx.Document()
    document.add_heading("Incremental ingest handbook", 0)
    for i, title in enumerate(SECTIONS):
        document.add_heading(title, 1)
        words = " ".join(f"{title.lower()}{n}" for n in range(60))
        text = (edits or {}).get(i, f"Section {title} explains {words}.")
        document.add_paragraph(text)
    document.save(str(path))


@pytest.mark.slow
def test_corpus_twice_is_identical_and_the_second_run_embeds_nothing(pipeline, corpus):
    files = [corpus / name for name in SUBSET]
    started = time.monotonic()
    first = [pipeline.ingest(f) for f in files]
    first_s = time.monotonic() - started
    assert [o.status for o in first] == ["added"] * len(files), [o.error for o in first]
    uuids, count = all_uuids(pipeline), pipeline.store.count()
    assert count == len(uuids) == sum(o.chunks_added for o in first) > 0
    embedded = len(pipeline.embedder.embedded)

    started = time.monotonic()
    second = [pipeline.ingest(f) for f in files]
    second_s = time.monotonic() - started
    assert [o.status for o in second] == ["unchanged"] * len(files)
    assert len(pipeline.embedder.embedded) == embedded
    assert (pipeline.store.count(), all_uuids(pipeline)) == (count, uuids)
    assert second_s < 0.1 * first_s, (second_s, first_s)

    forced = [pipeline.ingest(f, force=True) for f in files]  # re-parse, still no embedding
    assert sum(o.chunks_added for o in forced) == 0
    assert len(pipeline.embedder.embedded) == embedded
    assert all_uuids(pipeline) == uuids


def test_editing_one_paragraph_rewrites_only_its_chunks(pipeline, tmp_path):
    path = tmp_path / "handbook.docx"
    write_docx(path)
    first = pipeline.ingest(path)
    before = pipeline.store.doc_uuids(first.doc_id)
    assert first.status == "added" and len(before) >= len(SECTIONS)

    write_docx(path, {3: "Retrieval was rewritten: hybrid search with filters on pages."})
    pipeline.embedder.embedded.clear()
    second = pipeline.ingest(path)
    after = pipeline.store.doc_uuids(first.doc_id)
    added, stale = after - before, before - after
    assert second.status == "updated"
    assert (second.chunks_added, second.chunks_deleted) == (len(added), len(stale))
    assert 1 <= len(added) <= 2 and len(stale) == len(added)
    assert len(pipeline.embedder.embedded) == len(added)
    assert all("rewritten" in t for t in pipeline.embedder.embedded)
    assert second.chunks_unchanged == len(before & after) == len(before) - len(stale)
    assert pipeline.store.count(first.doc_id) == len(after)


KILL_SCRIPT = """
import json, os, sys, time
import chunkweave.storage.pipeline.conductor as ingest
import chunkweave.storage.write as write
from chunkweave.storage.config import EmbedderConfig, WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.store import WeaviateStore
cfg = WeaviateConfig(**json.loads(os.environ["TEST_CFG"]), api_key=os.environ["TEST_KEY"])
embedder = make_embedder(EmbedderConfig())
store = WeaviateStore.open(cfg, EmbedderIdentity(embedder.name, embedder.dimension))
write.EMBED_SLICE = 2
real_upsert = store.upsert
def upsert_then_hang(chunks, vectors, **kw):
    real_upsert(chunks, vectors, **kw)
    open(os.environ["TEST_MARKER"], "w").close()
    time.sleep(600)
store.upsert = upsert_then_hang
ingest.Pipeline(store=store, embedder=embedder).ingest(sys.argv[1])
"""


def test_killed_mid_reingest_never_empties_and_rerun_completes(pipeline, weaviate_cfg, tmp_path):
    path = tmp_path / "handbook.docx"
    write_docx(path)
    doc_id = pipeline.ingest(path).doc_id
    old = pipeline.store.doc_uuids(doc_id)
    write_docx(path, {i: f"Version two of section {i}: all new text." for i in range(6)})

    marker = tmp_path / "first-slice-written"
    env = {
        **os.environ,
        "TEST_CFG": weaviate_cfg.model_dump_json(exclude={"api_key"}),
        "TEST_KEY": weaviate_cfg.api_key.get_secret_value(),  # dumps mask it
        "TEST_MARKER": str(marker),
    }
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(path)], env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None, "ingest process died before writing"
            assert time.monotonic() < deadline, "ingest process never wrote a slice"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    mid = pipeline.store.doc_uuids(doc_id)
    assert old <= mid and len(mid - old) == 2  # old chunks intact plus one slice of new
    assert pipeline.store.count(doc_id) == len(mid)  # no duplicates

    pipeline.embedder.embedded.clear()
    outcome = pipeline.ingest(path)
    final = pipeline.store.doc_uuids(doc_id)
    assert outcome.status == "updated" and outcome.chunks_unchanged == 2
    assert len(pipeline.embedder.embedded) == outcome.chunks_added == len(final) - 2
    assert not (final & old) and (mid - old) <= final
    assert pipeline.store.count(doc_id) == len(final)
    assert pipeline.ledger.get(doc_id).status == "ok"


def test_weaviate_down_mid_ingest_fails_clearly_then_rerun_completes(
    own_weaviate, real_embedder, tmp_path
):
    cfg = own_weaviate.config(WeaviateConfig(retries=1))
    embedder = CountingEmbedder(real_embedder, on_embed=own_weaviate.stop)
    pipe = open_pipeline(cfg, embedder)
    path = tmp_path / "handbook.docx"
    write_docx(path)
    # Transient: raised for the caller to retry (a task) or report (the CLI), not an outcome.
    with pytest.raises(StoreUnavailableError) as raised:
        pipe.ingest(path)
    assert raised.value.code == "store_unavailable"
    assert "unreachable" in str(raised.value) or "after 1 retries" in str(raised.value)

    own_weaviate.start()
    embedder.on_embed = None
    again = pipe.ingest(path)
    assert again.status == "added", again.error
    assert pipe.store.count(doc_id_for(path)) == again.chunks_added > 0
    assert pipe.ledger.get(doc_id_for(path)).status == "ok"
    pipe.store.close()

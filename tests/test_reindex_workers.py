"""Reindex on real workers, Redis and Weaviate: no downtime, nothing lost, resumable, gated.

Documents are ingested with strategy A by real Celery workers, then reindexed to B by
the coordinator (:mod:`chunkweave.worker.reindex`) driving the same workers.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chunkweave import enqueue
from chunkweave.chunking.models import ChunkOptions
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import open_pipeline
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.alias import IndexCatalog
from chunkweave.storage.weaviate.store import WeaviateStore
from chunkweave.worker import reindex as rx
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings
from tests.fixtures_services import ROOT, WorkerProcs, reference_config, wait_for

pytestmark = pytest.mark.integration

DOCS = ("word_sample.docx", "word_tables.docx", "handbook-1p.docx", "lorem_ipsum.docx")
LATE = "docx_lists.docx"
B = ChunkOptions(strategy="fixed", max_tokens=128)
CHUNKWEAVE = Path(sys.executable).with_name("chunkweave")


@pytest.fixture
def docs(corpus: Path, tmp_path: Path) -> Path:
    """A folder with a few corpus documents."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(corpus / name, folder / name)
    return folder


def _ingest(settings: Settings, workers: WorkerProcs, *sources: str) -> None:
    job_id = enqueue(*sources, settings=settings)
    jobs = JobStore(redis_client(settings), ttl_s=3600)

    def finished() -> bool:
        job = jobs.get(job_id)
        return job is not None and job.finished_at is not None

    try:
        wait_for(finished, timeout_s=240, what=f"ingest job {job_id}", interval_s=0.3)
    except pytest.fail.Exception:
        print(workers.logs()[-5000:])
        raise
    job = jobs.get(job_id)
    assert job is not None and job.failed == 0, job


def _drive(
    settings: Settings, workers: WorkerProcs, timeout_s: float = 300, stall_s: float = 120, **hooks
) -> rx.ReindexState:
    deadline = time.monotonic() + timeout_s
    state = rx.load_state(redis_client(settings), settings.weaviate.collection)
    assert state is not None
    while state.phase not in rx.FINAL:
        if time.monotonic() > deadline:
            print(workers.logs()[-5000:])
            pytest.fail(f"reindex did not finish: {state.line()}")
        state = rx.advance(settings, settle_s=3.0, stall_s=stall_s)
        for hook in hooks.values():
            hook(state)
        time.sleep(0.3)
    return state


def _target_uuids(settings: Settings, collection: str, doc_ids: list[str]) -> dict[str, set[str]]:
    cfg = settings.weaviate.model_copy(update={"collection": collection, "versioned": False})
    store = WeaviateStore(
        __import__("chunkweave.storage.weaviate.client", fromlist=["connect"]).connect(cfg),
        cfg,
        _identity(settings),
    )
    try:
        return {d: store.doc_uuids(d) for d in doc_ids}
    finally:
        store.close()


def _identity(settings: Settings) -> EmbedderIdentity:
    embedder = make_embedder(settings.embedder)
    return EmbedderIdentity(embedder.name, embedder.dimension)


def _alias(settings: Settings) -> str | None:
    store = WeaviateStore.open(settings.weaviate, _identity(settings))
    try:
        return IndexCatalog(store.session).alias_target(settings.weaviate.collection)
    finally:
        store.close()


@pytest.fixture
def reference(pipeline_settings: Settings) -> Iterator[object]:
    """The B chunking of a document on fresh collections: an uninterrupted, clean result."""
    s = pipeline_settings
    pipe = open_pipeline(reference_config(s), make_embedder(s.embedder), s.parse, B)

    def uuids(path: Path) -> set[str]:
        doc_id = doc_id_for(path)
        pipe.ingest(path, source=str(path), doc_id=doc_id)
        return pipe.store.doc_uuids(doc_id)

    yield uuids
    pipe.close()


def test_searches_never_fail_during_a_reindex_and_nothing_ingested_is_lost(
    docs, pipeline_env, pipeline_settings, workers, tmp_path, corpus, reference
):
    settings = pipeline_settings
    workers.start(pipeline_env, concurrency=1)
    _ingest(settings, workers, str(docs))
    live = _alias(settings)
    queries = ["table", "employee handbook", "lorem ipsum dolor", "sample document"]
    out, stop = tmp_path / "searches.jsonl", tmp_path / "stop"
    env = {**pipeline_env, "PYTHONPATH": str(ROOT)}
    loop = subprocess.Popen(
        [sys.executable, "-m", "tests.reindex_search_loop", str(out), str(stop), *queries],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        wait_for(lambda: out.exists() and out.stat().st_size > 0, timeout_s=60, what="searches")
        rx.start(settings, rx.SpecFactory(settings, chunking=B))
        late = docs / LATE

        def ingest_late(state: rx.ReindexState) -> None:
            # A document arriving while the target is being built.
            if state.job_ids and not late.exists():
                shutil.copy(corpus / LATE, late)
                enqueue(str(late), settings=settings)

        state = _drive(settings, workers, late=ingest_late)
        time.sleep(2.0)
    finally:
        stop.touch()
        loop.wait(timeout=60)
    assert state.phase == "done", state
    target = _alias(settings)
    assert target == state.target and target != live
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and not [r for r in rows if "error" in r]
    baseline = {r["query"] for r in rows if r.get("uuids") and r["t"] < state.started_at}
    assert baseline == set(queries)
    assert not [r for r in rows if r["query"] in baseline and not r.get("uuids")]
    # After the switch (once it settled: a write in flight at the switch is redone
    # there with B's chunking), hits come from B's collection, chunked as B.
    doc_ids = [doc_id_for(docs / n) for n in (*DOCS, LATE)]
    b_uuids = set().union(*_target_uuids(settings, target, doc_ids).values())
    after = [r for r in rows if r["t"] > state.updated_at]
    assert after, "no search ran after the switch"
    assert all(set(r["uuids"]) <= b_uuids for r in after)
    # The document ingested during the reindex is in the new version, chunked as B.
    late_ids = _target_uuids(settings, target, [doc_id_for(late)])[doc_id_for(late)]
    assert late_ids and late_ids == reference(late)


def test_killed_workers_resume_and_the_result_matches_a_clean_run(
    docs, pipeline_env, pipeline_settings, workers, reference
):
    settings = pipeline_settings
    first = workers.start(pipeline_env, concurrency=1)
    _ingest(settings, workers, str(docs))
    rx.start(settings, rx.SpecFactory(settings, chunking=B))
    killed: list[bool] = []

    def kill_mid_way(state: rx.ReindexState) -> None:
        if not killed and state.job_ids:
            jobs = JobStore(redis_client(settings), ttl_s=3600)
            job = jobs.get(state.job_ids[-1])
            if job is not None and job.running + job.done >= 1:
                os.killpg(first.pid, signal.SIGKILL)
                first.wait(timeout=10)
                after = jobs.get(state.job_ids[-1])
                killed.append(after is not None and after.done < after.total)
                workers.start(pipeline_env, concurrency=1)

    # The killed task's message comes back only after the broker's visibility timeout;
    # after 15 s without progress the coordinator sends what is missing again.
    state = _drive(settings, workers, stall_s=15, kill=kill_mid_way)
    assert killed == [True], "the workers were not killed mid-reindex"
    assert state.phase == "done", state
    doc_ids = {n: doc_id_for(docs / n) for n in DOCS}
    got = _target_uuids(settings, state.target, list(doc_ids.values()))
    for name, doc_id in doc_ids.items():
        assert got[doc_id] == reference(docs / name), name


def test_an_incomplete_target_is_never_switched(docs, pipeline_env, pipeline_settings, workers):
    settings = pipeline_settings
    workers.start(pipeline_env, concurrency=1)
    _ingest(settings, workers, str(docs))
    live = _alias(settings)
    (docs / DOCS[0]).unlink()  # its source is gone: the target cannot account for it
    rx.start(settings, rx.SpecFactory(settings, chunking=B))
    state = _drive(settings, workers)
    assert state.phase == "incomplete", state
    assert DOCS[0] in state.message
    assert _alias(settings) == live
    versions = {v.collection: v.state for v in rx.versions(settings)}
    assert versions[state.target] == "building" and versions[live] == "live"


def test_gate_refuses_a_worse_chunking_and_rollback_restores(
    corpus, pipeline_env, pipeline_settings, workers, tmp_path
):
    settings = pipeline_settings
    names = ("word_sample.docx", "word_tables.docx", "handbook-1p.docx")
    folder = tmp_path / "qa-docs"
    folder.mkdir()
    for name in names:
        shutil.copy(corpus / name, folder / name)
    qa = tmp_path / "qa.jsonl"
    rows = (ROOT / "examples/qa/corpus_qa.jsonl").read_text().splitlines()
    qa.write_text("\n".join(r for r in rows if json.loads(r)["doc"] in names) + "\n")
    workers.start(pipeline_env, concurrency=1)
    _ingest(settings, workers, str(folder))
    live = _alias(settings)
    env = {**pipeline_env, "PYTHONPATH": str(ROOT)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(CHUNKWEAVE), "reindex", *args], env=env, cwd=ROOT, capture_output=True,
            text=True, timeout=400,
        )  # fmt: skip

    worse = cli("--strategy", "fixed", "--max-tokens", "12", "--qa", str(qa))
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "gate refused" in worse.stdout and "recall@5" in worse.stdout
    assert _alias(settings) == live
    better = cli("--min-tokens", "0", "--qa", str(qa), "--margin", "0.5")
    assert better.returncode == 0, better.stdout + better.stderr
    assert "gate passed" in better.stdout
    switched = _alias(settings)
    assert switched not in (None, live)
    status = subprocess.run(
        [str(CHUNKWEAVE), "status"], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert f"reindex {settings.weaviate.collection} -> {switched}: done" in status.stdout
    back = cli("--rollback")
    assert back.returncode == 0, back.stderr
    assert _alias(settings) == live

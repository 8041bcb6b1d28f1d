"""OpenTelemetry traces: off costs nothing; on, one ingest is one trace with the stages' spans.

The span tree is checked end to end: a document posted to the HTTP API in this process
(its ``receive`` span printed by the console exporter here), carried in the Celery
message's headers to a real worker process (console exporter on its standard output),
through the real pipeline on the real Weaviate.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from chunkweave import tracing
from chunkweave.storage.config import server_env
from chunkweave.storage.timing import StageTimer
from chunkweave.worker.api import create_app
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.settings import SourcesConfig
from tests.fixtures_services import ROOT, wait_for

OPTIONAL = ("opentelemetry", "langchain", "langchain_core", "llama_index")

#: Runs in a fresh interpreter: records which module imports each optional library
#: (Redis and FastAPI load OpenTelemetry themselves when it is installed: not ours).
_IMPORTS = """
import json, sys
OPTIONAL = set(sys.argv[1].split(","))
importers = []

class Spy:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in OPTIONAL:
            frame = sys._getframe(1)
            while frame and frame.f_globals.get("__name__", "").startswith(
                ("importlib", "_frozen_importlib")
            ):
                frame = frame.f_back
            importers.append(frame.f_globals.get("__name__") if frame else None)
        return None

sys.meta_path.insert(0, Spy())
import chunkweave
bare = sorted({m.split(".")[0] for m in sys.modules} & OPTIONAL)
import chunkweave.worker.celery_app, chunkweave.worker.enqueue, chunkweave.worker.api
import chunkweave.storage.pipeline.conductor, chunkweave.storage.write
from chunkweave import tracing
from chunkweave.storage.config import server_env
from chunkweave.storage.timing import StageTimer
with StageTimer().stage("parse"), tracing.span("chunk", doc_id="d"):
    tracing.annotate(pages=1)
ours = sorted({m for m in importers if m and m.startswith("chunkweave")})
print(json.dumps({"bare": bare, "ours": ours, "enabled": tracing.enabled()}))
"""


def _imports(**env: str) -> dict[str, Any]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "CHUNKWEAVE_"))}
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORTS, ",".join(OPTIONAL)],
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    return {**json.loads(lines[-1]), "spans": _spans(proc.stdout)}


def test_import_chunkweave_loads_no_optional_library():
    found = _imports()
    assert found["bare"] == []  # `import chunkweave`: none of them at all
    # Nor does any chunkweave module import one, tracing off (a dependency may).
    assert found["ours"] == []
    assert found["enabled"] is False and found["spans"] == []


def test_the_import_check_sees_chunkweave_import_opentelemetry_when_tracing_is_on():
    found = _imports(OTEL_TRACES_EXPORTER="console")
    assert found["enabled"] is True
    assert found["ours"] == ["chunkweave.tracing"]
    assert [s["name"] for s in found["spans"]] == ["chunk", "parse"]  # inner ends first


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({}, []),
        ({"OTEL_TRACES_EXPORTER": "console"}, ["console"]),
        ({"OTEL_TRACES_EXPORTER": "console, otlp"}, ["console", "otlp"]),
        ({"OTEL_TRACES_EXPORTER": "none"}, []),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, ["otlp"]),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, ["otlp"]),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, []),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, []),
    ],
)
def test_exporters_come_from_the_sdk_variables(env, names):
    assert tracing.exporter_names(env) == names


def test_an_unknown_exporter_is_an_error_naming_it(monkeypatch):
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "no-such-exporter")
    tracing.reset()
    try:
        with pytest.raises(ValueError, match="no-such-exporter"):
            tracing.enabled()
    finally:
        monkeypatch.delenv("OTEL_TRACES_EXPORTER")
        tracing.reset()


def _spans(text: str) -> list[dict[str, Any]]:
    """The console exporter's spans among other output (one JSON object per line)."""
    spans = []
    for line in text.splitlines():
        if line.startswith('{"name"'):
            spans.append(json.loads(line))
    return spans


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tracing on in this process, to the console exporter; off again afterwards."""
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "chunkweave-test-api")
    tracing.reset()
    tracing.connect_celery()
    yield
    tracing.disconnect_celery()
    monkeypatch.delenv("OTEL_TRACES_EXPORTER")
    tracing.reset()


def test_stage_timer_spans_nest_and_carry_attributes(traced, capfd):
    timer = StageTimer()
    with tracing.span("task", doc_id="doc://a"):
        with timer.stage("parse"):
            tracing.annotate(pages=3)
        with timer.stage("prune"):  # the commit traces prune itself
            pass
    assert set(timer.seconds) == {"parse", "prune"}
    spans = {s["name"]: s for s in _spans(capfd.readouterr().out)}
    assert set(spans) == {"task", "parse"}
    assert spans["parse"]["parent_id"] == spans["task"]["context"]["span_id"]
    assert spans["parse"]["attributes"] == {"chunkweave.pages": 3}
    assert spans["task"]["attributes"] == {"chunkweave.doc_id": "doc://a"}
    assert spans["task"]["resource"]["attributes"]["service.name"] == "chunkweave-test-api"


@pytest.mark.integration
def test_one_ingest_is_one_trace_from_the_api_through_the_worker(
    traced, capfd, pipeline_env, pipeline_settings, corpus, tmp_path, workers
):
    env = {**pipeline_env, "OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "cw-worker"}
    proc = workers.start(env)
    docs = tmp_path / "docs"
    docs.mkdir()
    doc = Path(shutil.copy(corpus / "multi_page.pdf", docs / "multi_page.pdf"))
    api_settings = pipeline_settings.model_copy(update={"sources": SourcesConfig(roots=(docs,))})
    with TestClient(create_app(api_settings)) as http:
        resp = http.post("/jobs", json={"sources": [str(doc)]})
        assert resp.status_code == 202, resp.text
        job_id = resp.json()["job_id"]
    jobs = JobStore(stored_redis := _redis(pipeline_settings), ttl_s=3600)

    def finished() -> bool:
        job = jobs.get(job_id)
        return job is not None and job.finished_at is not None

    wait_for(finished, timeout_s=150, what=f"job {job_id}", interval_s=0.3)
    stored_redis.close()
    job = jobs.get(job_id, with_docs=True)
    assert job is not None and job.status == "done", workers.logs()[-3000:]
    (state,) = job.docs or ()

    (receive,) = [s for s in _spans(capfd.readouterr().out) if s["name"] == "receive"]
    task_name = "chunkweave.ingest_document"
    # The worker prints its spans as each ends; the task's ends last.
    wait_for(
        lambda: any(s["name"] == task_name for s in _spans(workers.logs())),
        timeout_s=30,
        what="the worker's task span",
    )
    worker_spans = _spans(workers.logs())
    assert proc.poll() is None

    trace_id = receive["context"]["trace_id"]
    assert receive["parent_id"] is None  # the document's trace starts where it is received
    assert receive["attributes"]["chunkweave.doc_id"] == state.doc_id
    assert receive["attributes"]["chunkweave.bytes"] == doc.stat().st_size
    assert {s["context"]["trace_id"] for s in worker_spans} == {trace_id}  # one trace

    (task,) = [s for s in worker_spans if s["name"] == task_name]
    assert task["parent_id"] == receive["context"]["span_id"]
    assert task["resource"]["attributes"]["service.name"] == "cw-worker"
    attrs = task["attributes"]
    assert attrs["chunkweave.doc_id"] == state.doc_id
    assert attrs["chunkweave.bytes"] == doc.stat().st_size
    assert attrs["chunkweave.pages"] == state.pages > 0
    assert attrs["chunkweave.chunks"] == state.chunks_added > 0

    children = {s["name"] for s in worker_spans if s["parent_id"] == task["context"]["span_id"]}
    assert {"parse", "chunk", "embed", "upsert", "prune", "ledger"} <= children
    names = [s["name"] for s in worker_spans]
    assert names.count("prune") == names.count("ledger") == 1
    (ledger,) = [s for s in worker_spans if s["name"] == "ledger"]
    assert ledger["attributes"]["chunkweave.chunks"] == state.chunks_added
    # Stages in order: a stage ends before the next begins.
    order = ["parse", "chunk", "embed", "prune", "ledger"]
    ends = {s["name"]: s["end_time"] for s in worker_spans if s["name"] in order}
    assert [ends[n] for n in order] == sorted(ends[n] for n in order)


def _redis(settings):
    import redis

    return redis.Redis.from_url(settings.redis_url.get_secret_value())


@pytest.mark.integration
def test_cli_ingest_is_one_trace_per_document(weaviate_cfg, corpus, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "CHUNKWEAVE_"))}
    env.update(
        {
            **server_env(weaviate_cfg),
            "CHUNKWEAVE_WEAVIATE__COLLECTION": weaviate_cfg.collection,
            "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": weaviate_cfg.ledger_collection,
            "CHUNKWEAVE_DATA_DIR": str(tmp_path / "data"),
            "OTEL_TRACES_EXPORTER": "console",
            "PYTHONPATH": str(ROOT),
        }
    )
    docs = [str(corpus / "word_sample.docx"), str(corpus / "lorem_ipsum.docx")]
    cmd = [str(Path(sys.executable).parent / "chunkweave"), "ingest", *docs, "--workers", "2"]
    run = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    spans = _spans(run.stdout)
    roots = [s for s in spans if s["name"] == "ingest"]
    assert sorted(r["attributes"]["chunkweave.source"] for r in roots) == sorted(docs)
    assert all(r["parent_id"] is None for r in roots)
    assert len({r["context"]["trace_id"] for r in roots}) == 2  # a trace per document
    for root in roots:
        trace = [s for s in spans if s["context"]["trace_id"] == root["context"]["trace_id"]]
        children = {s["name"] for s in trace if s["parent_id"] == root["context"]["span_id"]}
        assert {"check", "parse", "chunk", "embed", "upsert", "prune", "ledger"} <= children
        (ledger,) = [s for s in trace if s["name"] == "ledger"]
        assert ledger["attributes"]["chunkweave.chunks"] > 0
        assert root["attributes"]["chunkweave.chunks"] == ledger["attributes"]["chunkweave.chunks"]

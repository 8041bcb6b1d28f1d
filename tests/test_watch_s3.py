"""Watched S3 prefix against a real S3 server (SeaweedFS) and a real Redis."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.jobs import JobStore
from chunkweave.worker.settings import S3Config, Settings
from chunkweave.worker.sources import fetched
from chunkweave.worker.sources.s3 import BucketWatcher, s3_client
from tests.fixtures_services import ROOT, S3Server, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(service_env: dict[str, str], s3_server: S3Server) -> Settings:
    return Settings(
        redis_url=service_env["CHUNKWEAVE_REDIS_URL"],
        tasks={"queue": service_env["CHUNKWEAVE_QUEUE"]},
        s3=S3Config(
            endpoint_url=s3_server.endpoint_url,
            access_key_id="test",
            secret_access_key="test",
            poll_interval_s=0.2,
        ),
    )


@pytest.fixture
def enq(settings: Settings) -> Iterator[Enqueuer]:
    e = Enqueuer(settings)
    yield e
    e.close()


def _enqueued(env: dict[str, str], doc_id: str) -> list[str]:
    """Every action any job of this queue's Redis holds for ``doc_id``, oldest job first."""
    client = redis.Redis.from_url(env["CHUNKWEAVE_REDIS_URL"])
    try:
        jobs = JobStore(client, ttl_s=3600)
        found = [jobs.get(j.id, with_docs=True) for j in reversed(jobs.list(limit=1000))]
        return [d.action for j in found if j for d in j.docs or () if d.doc_id == doc_id]
    finally:
        client.close()


def _job_actions(enq: Enqueuer, job_id: str | None) -> list[tuple[str, str]]:
    assert job_id is not None
    job = enq.jobs.get(job_id, with_docs=True)
    assert job is not None and job.docs is not None
    return sorted((d.action, d.source.rsplit("/", 1)[-1]) for d in job.docs)


def test_each_object_version_processed_once(enq: Enqueuer, s3_server: S3Server):
    prefix = f"in-{uuid.uuid4().hex[:6]}/"
    client = s3_client(enq.settings.s3)
    put = lambda key, body: client.put_object(  # noqa: E731
        Bucket=s3_server.bucket, Key=prefix + key, Body=body
    )
    put("a.pdf", b"%PDF a")
    put("deep/b.docx", b"PK b")
    put("readme.txt", b"not a document")
    put(".hidden.pdf", b"%PDF hidden")
    client.put_object(Bucket=s3_server.bucket, Key="elsewhere/x.pdf", Body=b"%PDF x")

    watcher = BucketWatcher(f"s3://{s3_server.bucket}/{prefix}", enq)
    assert _job_actions(enq, watcher.poll()) == [("ingest", "a.pdf"), ("ingest", "b.docx")]
    assert watcher.poll() is None  # nothing new: nothing enqueued

    put("a.pdf", b"%PDF a, version 2")  # new version -> new ETag
    put("deep/b.docx", b"PK b")  # identical re-upload -> same ETag
    assert _job_actions(enq, watcher.poll()) == [("ingest", "a.pdf")]

    client.delete_object(Bucket=s3_server.bucket, Key=prefix + "deep/b.docx")
    assert _job_actions(enq, watcher.poll()) == [("delete", "b.docx")]
    assert watcher.poll() is None

    # A second watcher (e.g. after a restart) shares the ledger: nothing is redone.
    assert BucketWatcher(f"s3://{s3_server.bucket}/{prefix}", enq).poll() is None


def test_worker_side_download_and_missing_object(settings: Settings, s3_server: S3Server):
    client = s3_client(settings.s3)
    key = f"dl-{uuid.uuid4().hex[:6]}/doc.pdf"
    client.put_object(Bucket=s3_server.bucket, Key=key, Body=b"%PDF bytes")
    with fetched(f"s3://{s3_server.bucket}/{key}", settings) as path:
        assert path.suffix == ".pdf" and path.read_bytes() == b"%PDF bytes"
        local: Path = path
    assert not local.exists()  # the temp copy is removed after the task
    missing = fetched(f"s3://{s3_server.bucket}/{key}.gone", settings)
    with pytest.raises(FileNotFoundError, match="no such object"), missing:
        pass


def test_bucket_to_weaviate_through_watcher_and_worker(
    pipeline_env, stored: Pipeline, s3_server: S3Server, corpus: Path, workers, tmp_path: Path
):
    env = dict(pipeline_env, **s3_server.env(), CHUNKWEAVE_S3__POLL_INTERVAL_S="0.5")
    workers.start(env)
    prefix = f"e2e-{uuid.uuid4().hex[:6]}/"
    uri = f"s3://{s3_server.bucket}/{prefix}"
    cmd = [str(Path(sys.executable).parent / "chunkweave"), "watch", uri]
    with open(tmp_path / "watch.log", "wb") as log:
        watcher = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        client = s3_client(
            S3Config(endpoint_url=s3_server.endpoint_url, access_key_id="t", secret_access_key="t")
        )
        key = prefix + "word_sample.docx"
        client.put_object(
            Bucket=s3_server.bucket, Key=key, Body=(corpus / "word_sample.docx").read_bytes()
        )
        doc_id = doc_id_for(f"s3://{s3_server.bucket}/{key}")
        wait_for(lambda: stored.store.count(doc_id) > 0, timeout_s=120, what="object stored")
        # A bulk producer: it lowered its CPU priority (producer_nice) before sending.
        base = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, watcher.pid) == min(19, base + 10)
        # The same object version is enqueued once: the watcher polls every 0.5 s, so
        # four more polls would have enqueued it again by now if it were going to.
        time.sleep(4 * 0.5)
        assert _enqueued(env, doc_id) == ["ingest"]
        assert [e.doc_id for e in stored.ledger.entries() if e.doc_id == doc_id] == [doc_id]

        client.delete_object(Bucket=s3_server.bucket, Key=key)
        wait_for(lambda: stored.store.count(doc_id) == 0, timeout_s=60, what="object removed")
        assert _enqueued(env, doc_id) == ["ingest", "delete"]
    finally:
        watcher.terminate()
        watcher.wait(timeout=20)

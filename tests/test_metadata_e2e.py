"""Metadata, ACLs and tenants end to end: real Redis, real Weaviate, real workers, real S3.

A document enqueued with ``tenant=a``, ``acl=["team-x"]`` (from its sidecar) and
``version="3"`` is found by team-x only, in tenant a only; changing only its sidecar's
``acl`` re-ingests it with zero embedder calls (counted in the worker process) and
the new ACL holds. An S3 object's user metadata and tags arrive on its chunks.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from docx import Document

from chunkweave import enqueue
from chunkweave.storage.errors import StoreError
from chunkweave.storage.filters import Condition, SearchRequest
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.metadata import MetadataConfig
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.store import WeaviateStore
from chunkweave.worker.jobs import JobState, JobStore
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import S3Config, Settings
from tests.counting_pipeline import FACTORY, counter_key
from tests.fixtures_services import S3Server, WorkerProcs, wait_for

pytestmark = pytest.mark.integration
FIELDS = {"version": "string", "dept": "string"}
MINILM = EmbedderIdentity("minilm-l6-v2-int8", 384)


@pytest.fixture
def tenant_env(pipeline_env: dict[str, str]) -> dict[str, str]:
    """Workers on a multi-tenant collection with declared metadata, embedder counted."""
    return dict(
        pipeline_env,
        CHUNKWEAVE_WEAVIATE__MULTI_TENANCY="true",
        CHUNKWEAVE_WEAVIATE__METADATA__FIELDS=json.dumps(FIELDS),
        CHUNKWEAVE_PIPELINE_FACTORY=FACTORY,
        COUNT_NS=uuid.uuid4().hex[:8],
    )


@pytest.fixture
def tenant_settings(pipeline_settings: Settings) -> Settings:
    wcfg = pipeline_settings.weaviate.model_copy(
        update={"multi_tenancy": True, "metadata": MetadataConfig(fields=FIELDS)}
    )
    return pipeline_settings.model_copy(update={"weaviate": wcfg})


@pytest.fixture
def chunks(tenant_settings: Settings) -> Iterator[WeaviateStore]:
    """The workers' chunk store, read from the test process."""
    from chunkweave.storage.embedders import make_embedder

    embedder = make_embedder(tenant_settings.embedder)
    identity = EmbedderIdentity(embedder.name, embedder.dimension)
    store = WeaviateStore.open(tenant_settings.weaviate, identity)
    yield store
    store.close()


def _docx(path: Path) -> Path:
    doc = Document()
    doc.add_heading("Quarterly lighthouse report", level=1)
    doc.add_paragraph("The lighthouse keepers counted zebras on the northern shore. " * 4)
    doc.add_heading("Budget", level=1)
    doc.add_paragraph("Lamp oil and zebra feed were the largest costs this quarter. " * 4)
    doc.save(str(path))
    return path


def _wait(settings: Settings, job_id: str, workers: WorkerProcs) -> JobState:
    jobs = JobStore(redis_client(settings), ttl_s=3600)

    def finished() -> JobState | None:
        job = jobs.get(job_id, with_docs=True)
        return job if job is not None and job.finished_at is not None else None

    try:
        job = wait_for(finished, timeout_s=240, what=f"job {job_id}", interval_s=0.3)
    except pytest.fail.Exception:
        print(workers.logs()[-5000:])
        raise
    assert isinstance(job, JobState)
    return job


def _found(store: WeaviateStore, settings: Settings, **request: object) -> set[str]:
    from chunkweave.storage.embedders import make_embedder

    query = "zebras at the lighthouse"
    vector = make_embedder(settings.embedder).embed_query(query)
    hits = store.search(SearchRequest(query, vector, k=20, **request))  # type: ignore[arg-type]
    return {h.doc_id for h in hits}


def test_tenant_acl_and_a_sidecar_only_change_that_embeds_nothing(
    tenant_env, tenant_settings, chunks, workers, tmp_path
):
    folder = tmp_path / "docs"
    folder.mkdir()
    doc = _docx(folder / "report.docx")
    sidecar = folder / "report.docx.meta.json"
    sidecar.write_text(json.dumps({"acl": ["team-x"]}))
    counted = counter_key(tenant_env["COUNT_NS"])
    r = redis_client(tenant_settings)
    workers.start(tenant_env)

    job_id = enqueue(doc, metadata={"version": "3"}, tenant="a", settings=tenant_settings)
    job = _wait(tenant_settings, job_id, workers)
    assert job.tenant == "a" and job.done == 1, job
    doc_id = doc_id_for(doc)
    embedded = int(r.get(counted) or 0)
    assert embedded > 0

    assert _found(chunks, tenant_settings, tenant="a", principals=("team-x",)) == {doc_id}
    assert _found(chunks, tenant_settings, tenant="a", principals=("team-y",)) == set()
    assert _found(chunks, tenant_settings, tenant="a", principals=()) == set()
    assert _found(chunks, tenant_settings, tenant="b", principals=("team-x",)) == set()
    with pytest.raises(StoreError, match="name a tenant"):
        _found(chunks, tenant_settings, principals=("team-x",))
    version = (Condition("version", "equal", "3"),)
    assert _found(chunks, tenant_settings, tenant="a", where=version) == {doc_id}
    scoped = chunks.for_tenant("a")
    uuids = scoped.doc_uuids(doc_id)
    before = scoped.vectors(uuids)
    assert len(before) == len(uuids) > 0

    # Only the sidecar changes; a second document with a bad sidecar fails alone.
    sidecar.write_text(json.dumps({"acl": ["team-y"]}))
    bad = _docx(folder / "bad.docx")
    (folder / "bad.docx.meta.json").write_text(json.dumps({"colour": "red"}))
    job_id = enqueue(folder, metadata={"version": "3"}, tenant="a", settings=tenant_settings)
    job = _wait(tenant_settings, job_id, workers)
    states = {d.source: d for d in job.docs or ()}
    good, refused = states[str(doc)], states[str(bad)]
    assert good.status == "done" and good.outcome == "updated" and good.chunks_added == 0
    assert refused.status == "failed" and refused.error_code == "bad_metadata"
    assert "bad.docx.meta.json" in (refused.error or "") and "'colour'" in (refused.error or "")
    assert int(r.get(counted) or 0) == embedded  # zero embedder calls for the ACL change
    assert scoped.vectors(uuids) == before and scoped.doc_uuids(doc_id) == uuids

    assert _found(chunks, tenant_settings, tenant="a", principals=("team-y",)) == {doc_id}
    assert _found(chunks, tenant_settings, tenant="a", principals=("team-x",)) == set()
    entry = scoped.open_ledger().get(doc_id)
    assert entry is not None and entry.metadata == {"acl": ["team-y"], "version": "3"}


def test_s3_object_metadata_and_tags_arrive_on_the_chunks(
    tenant_env, tenant_settings, chunks, workers, s3_server: S3Server, tmp_path
):
    env = dict(tenant_env, **s3_server.env())
    settings = tenant_settings.model_copy(
        update={
            "s3": S3Config(
                endpoint_url=s3_server.endpoint_url,
                access_key_id="test",
                secret_access_key="test",
            )
        }
    )
    client = boto3.client(
        "s3",
        endpoint_url=s3_server.endpoint_url,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )
    key = f"meta-{uuid.uuid4().hex[:8]}/report.docx"
    client.put_object(
        Bucket=s3_server.bucket,
        Key=key,
        Body=_docx(tmp_path / "r.docx").read_bytes(),
        # "mtime" is an upload tool's own key (rclone sets it), declared nowhere: ignored.
        Metadata={"version": "7", "acl": "team-s3,team-ops", "mtime": "1700000000.5"},
        Tagging="dept=legal",
    )
    uri = f"s3://{s3_server.bucket}/{key}"
    workers.start(env)
    job = _wait(settings, enqueue(uri, tenant="s3", settings=settings), workers)
    assert job.done == 1, job
    scoped = chunks.for_tenant("s3")
    (hit, *_) = scoped.search(SearchRequest("lighthouse", None, k=5, principals=("team-ops",)))
    assert hit.doc_id == doc_id_for(uri)
    assert hit.metadata == {"version": "7", "acl": ["team-s3", "team-ops"], "dept": "legal"}
    entry = scoped.open_ledger().get(doc_id_for(uri))
    assert entry is not None and entry.metadata["dept"] == "legal"


def test_a_fanned_out_pdf_gets_new_metadata_without_parsing_or_embedding(
    tenant_env, tenant_settings, chunks, workers, corpus: Path, tmp_path
):
    env = dict(tenant_env, CHUNKWEAVE_FANOUT_PAGES="1", CHUNKWEAVE_FANOUT_PART_PAGES="1")
    pdf = Path(shutil.copy(corpus / "multi_page.pdf", tmp_path / "multi_page.pdf"))
    counted = counter_key(tenant_env["COUNT_NS"])
    r = redis_client(tenant_settings)
    workers.start(env)
    first = _wait(
        tenant_settings,
        enqueue(pdf, metadata={"version": "1"}, tenant="f", settings=tenant_settings),
        workers,
    )
    (doc,) = first.docs or ()
    assert doc.status == "done" and doc.outcome == "added"
    assert {"embed", "prune"} <= set(doc.timings or {})  # written by the fan-out's join
    embedded = int(r.get(counted) or 0)
    assert embedded == doc.chunks_added > 0
    scoped = chunks.for_tenant("f")
    uuids = scoped.doc_uuids(doc.doc_id)
    before = scoped.vectors(uuids)

    again = _wait(
        tenant_settings,
        enqueue(pdf, metadata={"version": "2"}, tenant="f", settings=tenant_settings),
        workers,
    )
    (doc,) = again.docs or ()
    assert doc.status == "done" and doc.outcome == "updated" and doc.chunks_added == 0
    assert not {"parse", "chunk", "embed", "prune"} & set(doc.timings or {}), doc.timings
    assert int(r.get(counted) or 0) == embedded
    assert scoped.vectors(uuids) == before
    version = (Condition("version", "equal", "2"),)
    assert _found(chunks, tenant_settings, tenant="f", where=version) == {doc.doc_id}

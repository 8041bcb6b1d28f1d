"""MCP search applies the ACL as its configured principals and fails closed without them.

Issue 37, item 15: an agent searched as a trusted caller and got ACL-restricted
chunks. Real Weaviate, the real pipeline, the server's tool code in process.
"""

from __future__ import annotations

from pathlib import Path

import docx
import pytest

from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.worker.mcp_server import Tools
from chunkweave.worker.settings import Settings

pytestmark = pytest.mark.integration


def _doc(path: Path, text: str) -> Path:
    document = docx.Document()
    document.add_heading("Compensation", level=1)
    document.add_paragraph(text)
    document.save(str(path))
    return path


@pytest.fixture
def two_docs(stored: Pipeline, tmp_path: Path) -> tuple[str, str]:
    secret = _doc(tmp_path / "salaries.docx", "The salary bands for engineers are secret. " * 5)
    public = _doc(tmp_path / "holidays.docx", "The salary review happens after the holidays. " * 5)
    assert stored.ingest(secret, metadata={"acl": ["hr"]}).status == "added"
    assert stored.ingest(public).status == "added"
    return str(secret), str(public)


def _sources(tools: Tools) -> set[str]:
    try:
        return {h["source"] for h in tools.search("salary bands for engineers", k=10)["hits"]}
    finally:
        tools.close()


def test_an_agent_without_principals_never_sees_restricted_chunks(
    pipeline_settings: Settings, two_docs
):
    secret, public = two_docs
    assert _sources(Tools(pipeline_settings)) == {public}


def test_an_agent_sees_what_its_principals_may(pipeline_settings: Settings, two_docs):
    secret, public = two_docs
    # The collection's rule (public_without_acl off): principals see their ACL'd chunks.
    assert _sources(Tools(pipeline_settings, ("hr",))) == {secret}
    assert _sources(Tools(pipeline_settings, ("sales",))) == set()
    configured = pipeline_settings.model_copy(update={"mcp_principals": ("hr",)})
    assert _sources(Tools(configured)) == {secret}


@pytest.fixture
def tenant_docs(pipeline_settings: Settings, tmp_path: Path) -> Settings:
    """A multi-tenant store holding one document for acme and one for globex."""
    from chunkweave.storage.embedders import make_embedder
    from chunkweave.storage.pipeline.conductor import open_pipeline

    s = pipeline_settings
    shared = s.weaviate.model_copy(update={"multi_tenancy": True})
    for tenant, text in (
        ("acme", "Acme pays its engineers in salary bands. "),
        ("globex", "Globex salary bands are secret. "),
    ):
        cfg = shared.model_copy(update={"tenant": tenant})
        pipe = open_pipeline(cfg, make_embedder(s.embedder), s.parse, s.chunking)
        try:
            path = _doc(tmp_path / f"{tenant}.docx", text * 5)
            assert pipe.ingest(path).status == "added"
        finally:
            pipe.close()
    return s.model_copy(update={"weaviate": shared})


def test_an_agent_on_a_multi_tenant_store_sees_its_tenant_only(tenant_docs: Settings):
    acme = tenant_docs.model_copy(
        update={"weaviate": tenant_docs.weaviate.model_copy(update={"tenant": "acme"})}
    )
    assert {Path(s).name for s in _sources(Tools(acme))} == {"acme.docx"}


def test_an_agent_on_a_multi_tenant_store_without_a_tenant_is_refused(tenant_docs: Settings):
    tools = Tools(tenant_docs)
    try:
        with pytest.raises(Exception, match="multi-tenant: name a tenant"):
            tools.search("salary bands", k=10)
    finally:
        tools.close()

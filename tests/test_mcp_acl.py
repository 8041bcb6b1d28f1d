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

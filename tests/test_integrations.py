"""LangChain and LlamaIndex: retrievers on a real multi-tenant Weaviate with ACLs, loaders.

The store holds, in tenant ``acme``, a corpus PDF readable by ``team-legal`` and a
handbook DOCX (numbered sections) readable by ``team-hr``; in tenant ``beta``, another
DOCX readable by ``team-legal``. Each retriever must return only what the tenant and
the principals let through, with the chunk's metadata.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from docx import Document as DocxDocument
from langchain_core.documents import Document as LCDocument
from llama_index.core import SimpleDirectoryReader
from llama_index.core.schema import MetadataMode, NodeWithScore

from chunkweave.integrations import langchain as lc
from chunkweave.integrations import llama_index as li
from chunkweave.integrations.search import conditions
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.filters import Condition
from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.pipeline.conductor import Pipeline, open_pipeline
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.worker.settings import Settings

PDF = "multi_page.pdf"


def _handbook(path: Path, title: str, sections: list[tuple[str, str]]) -> Path:
    doc = DocxDocument()
    doc.add_heading(title, level=0)
    for heading, body in sections:
        doc.add_heading(heading, level=1)
        doc.add_paragraph(body)
    doc.save(str(path))
    return path


HANDBOOK = [
    ("1 Scope", "This handbook covers every employee of the company and its contractors."),
    ("2 Parental leave", "Parental leave lasts sixteen weeks on full pay for every parent."),
    ("3 Expenses", "Travel expenses are refunded within thirty days of the claim."),
]
BETA = [("1 Parental leave", "Beta grants parental leave of twelve weeks to each parent.")]


@dataclass(frozen=True)
class Stored:
    settings: Settings
    pipeline: Pipeline
    pdf: Path
    handbook: Path
    beta: Path


@pytest.fixture(scope="module")
def stored_tenants(
    weaviate_server: WeaviateConfig, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stored]:
    """The three documents ingested by the real pipeline into a multi-tenant collection."""
    suffix = uuid.uuid4().hex[:10]
    cfg = weaviate_server.model_copy(
        update={
            "collection": f"TestIntegrations_{suffix}",
            "ledger_collection": f"TestIntegrationsLedger_{suffix}",
            "multi_tenancy": True,
        }
    )
    root = tmp_path_factory.mktemp("integrations")
    settings = Settings(weaviate=cfg, data_dir=root / "data")
    corpus = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
    pdf = Path(shutil.copy(corpus / PDF, root / PDF))
    handbook = _handbook(root / "handbook.docx", "Staff handbook", HANDBOOK)
    beta = _handbook(root / "beta.docx", "Beta handbook", BETA)
    pipe = open_pipeline(cfg, make_embedder(settings.embedder), settings.parse, settings.chunking)
    try:
        for path, tenant, acl in (
            (pdf, "acme", "team-legal"),
            (handbook, "acme", "team-hr"),
            (beta, "beta", "team-legal"),
        ):
            outcome = pipe.ingest(path, tenant=tenant, metadata={"acl": [acl]})
            assert outcome.status == "added", outcome
        yield Stored(settings, pipe, pdf, handbook, beta)
    finally:
        pipe.store.client.collections.delete([cfg.collection, cfg.ledger_collection])
        pipe.close()


def _sources(docs: list[LCDocument]) -> set[str]:
    return {Path(d.metadata["source"]).name for d in docs}


@pytest.mark.integration
def test_langchain_retriever_searches_one_tenant_as_its_principals(stored_tenants):
    settings = stored_tenants.settings
    query = "how long is parental leave"
    retriever = lc.ChunkweaveRetriever(
        k=10, tenant="acme", principals=("team-hr",), settings=settings
    )
    try:
        docs = retriever.invoke(query)
        assert docs and _sources(docs) == {"handbook.docx"}
        best = docs[0]
        assert "sixteen weeks" in best.page_content
        meta = best.metadata
        assert meta["doc_id"] == doc_id_for(stored_tenants.handbook)
        assert meta["heading_path"][-1] == "2 Parental leave"
        assert meta["section_number"] == "2" and meta["section_numbers"][0] == "2"
        assert meta["acl"] == ["team-hr"] and meta["type"] == "text"
        assert best.id == meta["chunk_uuid"]

        # The same question as team-legal in acme: the PDF only, never the handbook.
        legal = lc.ChunkweaveRetriever(
            k=10, tenant="acme", principals=["team-legal"], settings=settings
        )
        assert _sources(legal.invoke(query)) == {PDF}
        # In beta, team-legal reads beta's handbook; team-hr reads nothing there.
        beta = lc.ChunkweaveRetriever(
            k=10, tenant="beta", principals=["team-legal"], settings=settings
        )
        assert _sources(beta.invoke(query)) == {"beta.docx"}
        nobody = lc.ChunkweaveRetriever(
            k=10, tenant="beta", principals=["team-hr"], settings=settings
        )
        assert nobody.invoke(query) == []
        for r in (legal, beta, nobody):
            r.close()
    finally:
        retriever.close()


@pytest.mark.integration
def test_langchain_retriever_filters_by_section_and_carries_pages_and_regions(stored_tenants):
    settings = stored_tenants.settings
    by_section = lc.ChunkweaveRetriever(
        k=10,
        tenant="acme",
        principals=["team-hr"],
        filters={"section_number": "Section 3"},  # a citation, as a person writes it
        settings=settings,
    )
    docs = by_section.invoke("refunds")
    assert docs and all(d.metadata["section_numbers"] == ["3"] for d in docs)
    assert "thirty days" in docs[0].page_content
    by_section.close()

    pdf = lc.ChunkweaveRetriever(
        k=3,
        tenant="acme",
        principals=["team-legal"],
        filters=[Condition("pages", "greater_or_equal", 2)],
        settings=settings,
    )
    docs = pdf.invoke("page")
    pdf.close()
    assert docs
    for d in docs:
        assert max(d.metadata["pages"]) >= 2
        regions = d.metadata["regions"]
        assert regions and {r["page"] for r in regions} <= set(d.metadata["pages"])
        assert all(len(r["bbox"]) == 4 for r in regions)


def test_filters_on_unknown_properties_are_refused_naming_them():
    with pytest.raises(ValueError, match="'colour'.*filterable are"):
        conditions({"colour": "red", "doc_id": "x"}, Settings())
    assert conditions({"doc_id": "x"}, Settings()) == (Condition("doc_id", "equal", "x"),)


@pytest.mark.integration
def test_llama_index_retriever_searches_one_tenant_as_its_principals(stored_tenants):
    settings = stored_tenants.settings
    retriever = li.ChunkweaveRetriever(
        k=10, tenant="acme", principals=["team-hr"], settings=settings
    )
    nodes = retriever.retrieve("travel expenses refund")
    retriever.close()
    assert nodes and all(isinstance(n, NodeWithScore) for n in nodes)
    assert {Path(n.node.metadata["source"]).name for n in nodes} == {"handbook.docx"}
    best = nodes[0]
    assert "thirty days" in best.node.get_content()
    assert best.node.metadata["section_number"] == "3"
    assert best.score is not None and best.score >= nodes[-1].score
    # The LLM sees where the text is from, not the application's bookkeeping.
    shown = best.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "3 Expenses" in shown and "chunk_uuid" not in shown and "regions" not in shown

    nobody = li.ChunkweaveRetriever(k=10, tenant="acme", principals=[], settings=settings)
    assert nobody.retrieve("travel expenses refund") == []
    nobody.close()
    beta = li.ChunkweaveRetriever(k=10, tenant="beta", principals=["team-legal"], settings=settings)
    assert {Path(n.node.metadata["source"]).name for n in beta.retrieve("leave")} == {"beta.docx"}
    beta.close()


@pytest.mark.integration
def test_loaders_yield_the_chunks_an_ingest_stores(stored_tenants):
    stored = stored_tenants
    docs = lc.ChunkweaveLoader(stored.pdf, settings=stored.settings).load()
    assert len(docs) > 1
    doc_id = doc_id_for(stored.pdf)
    in_store = stored.pipeline.scope("acme").store.doc_uuids(doc_id)
    assert {chunk_uuid(d.id) for d in docs if d.id} == in_store
    assert [d.metadata["chunk_index"] for d in docs] == list(range(len(docs)))
    assert {d.metadata["doc_id"] for d in docs} == {doc_id}
    assert sorted({p for d in docs for p in d.metadata["pages"]})[0] == 1

    nodes = li.ChunkweaveReader(settings=stored.settings).load_data(stored.pdf)
    assert [n.id_ for n in nodes] == [d.id for d in docs]
    assert [n.text for n in nodes] == [d.page_content for d in docs]


def test_loader_reads_a_corpus_file_without_any_server(corpus, tmp_path):
    docs = list(lc.ChunkweaveLoader(corpus / "word_sample.docx", settings=Settings()).lazy_load())
    assert docs and all(d.page_content.strip() for d in docs)
    assert {d.metadata["source"] for d in docs} == {str((corpus / "word_sample.docx").resolve())}
    headed = [d for d in docs if d.metadata["heading_path"]]
    assert headed, "word_sample.docx has headings"
    # embed_text: the heading path in front of the stored text.
    embedded = lc.ChunkweaveLoader(
        corpus / "word_sample.docx", settings=Settings(), content="embed_text"
    ).load()
    assert [d.metadata for d in embedded] == [d.metadata for d in docs]
    head = headed[0]
    twin = next(d for d in embedded if d.id == head.id)
    assert twin.page_content.endswith(head.page_content)
    assert head.metadata["heading_path"][-1] in twin.page_content

    # LlamaIndex's directory reader hands .docx files to ChunkweaveReader.
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(corpus / "word_sample.docx", folder / "word_sample.docx")
    reader = li.ChunkweaveReader(settings=Settings())
    nodes = SimpleDirectoryReader(str(folder), file_extractor={".docx": reader}).load_data()
    assert [n.text for n in nodes] == [d.page_content for d in docs]
    assert nodes[0].metadata["file_name"] == "word_sample.docx"  # extra_info kept

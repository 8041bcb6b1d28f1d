"""Shared by the reindex tests: a sectioned DOCX, and in-process reindex steps."""

from __future__ import annotations

from pathlib import Path

from docx import Document

from chunkweave.chunking.models import ChunkOptions
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.weaviate.alias import IndexCatalog, IndexVersion
from chunkweave.storage.weaviate.client import WeaviateSession, connect
from chunkweave.storage.weaviate.collection import create_chunk_collection
from chunkweave.worker.reindex import build_spec
from chunkweave.worker.settings import Settings

WORDS = [
    "river", "stone", "valley", "harbor", "signal",
    "copper", "lantern", "meadow", "orbit", "thistle",
]  # fmt: skip


def prose(seed: int, n: int) -> str:
    """``n`` words of deterministic prose."""
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(n)) + "."


def sectioned_docx(path: Path, sizes: list[int]) -> Path:
    """A DOCX: one chapter, then a subheading + paragraph of ``sizes[i]`` words per section."""
    doc = Document()
    doc.add_heading("Field guide", level=1)
    for i, n in enumerate(sizes):
        doc.add_heading(f"Section {i} {WORDS[i % len(WORDS)]}", level=2)
        doc.add_paragraph(prose(i, n))
    doc.save(str(path))
    return path


def new_target(
    settings: Settings, embedder: Embedder, chunking: ChunkOptions
) -> tuple[IndexVersion, IndexVersion]:
    """Record a reindex target of the live version (in-process); return (live, target)."""
    cfg: WeaviateConfig = settings.weaviate
    session = WeaviateSession(connect(cfg), cfg)
    try:
        catalog = IndexCatalog(session)
        live = catalog.live()
        assert live is not None
        spec = build_spec(settings, live, chunking=chunking, embedder=embedder)
        from chunkweave.chunking.fingerprint import chunker_fingerprint
        from chunkweave.storage.values import EmbedderIdentity

        identity = EmbedderIdentity(embedder.name, embedder.dimension)
        target = catalog.next_version(
            identity,
            chunker=chunker_fingerprint(spec.chunking, embedder.name),
            spec=spec.to_json(),
            create=lambda name: create_chunk_collection(session, name, identity),
        )
        return live, target
    finally:
        session.close()


def switch(cfg: WeaviateConfig, target: IndexVersion) -> IndexVersion:
    """Switch the aliases to ``target`` (in-process)."""
    session = WeaviateSession(connect(cfg), cfg)
    try:
        return IndexCatalog(session).switch(target)
    finally:
        session.close()

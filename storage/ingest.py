"""The ingest pipeline: one document from file to Weaviate, incrementally.

INTERFACE STUB written by the lead; the storage work (issue 4) implements it. The
worker's Celery tasks and the ``chunkweave ingest`` command are thin shells over it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

OutcomeStatus = Literal["added", "updated", "unchanged", "deleted", "failed"]


class DocOutcome(BaseModel):
    """What happened to one document (small: safe to return from a Celery task)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    doc_id: str
    status: OutcomeStatus
    pages: int = 0
    chunks_added: int = 0
    chunks_unchanged: int = 0
    chunks_deleted: int = 0
    error_code: str | None = None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0


def doc_id_for(source: str | Path) -> str:
    """Stable identity of a source: its normalised URI (not its content)."""
    raise NotImplementedError


# Expected shape (storage work fills in):
# class Pipeline:
#     def __init__(self, *, store, embedder, parse_opts, chunk_opts) -> None
#     def ingest(self, path, *, source=None, doc_id=None, force=False) -> DocOutcome
#     def ingest_parsed(self, doc: ParsedDocument, *, source, doc_id) -> DocOutcome
#     def delete(self, doc_id) -> DocOutcome

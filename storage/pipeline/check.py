"""The check stage: is a document's stored version current, current but for its metadata, or old.

One hash of the file, one read of the ledger; nothing is parsed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal, NamedTuple

from chunkweave.parsers.document import file_sha1
from chunkweave.storage.values import DocOutcome, LedgerEntry

#: ``unchanged``: stored as is (skip); ``metadata_only``: stored as is but for the caller
#: metadata (re-tag the stored chunks); ``changed``: parse, chunk and write it.
Verdict = Literal["unchanged", "metadata_only", "changed"]


class DocumentCheck(NamedTuple):
    """What the check found: the file's version, the ledger's entry, the verdict."""

    source: str
    doc_id: str
    sha1: str
    previous: LedgerEntry | None
    verdict: Verdict
    started: float

    def unchanged(self) -> DocOutcome:
        """Return the ``unchanged`` outcome (of a check whose verdict says so)."""
        assert self.previous is not None and self.verdict == "unchanged"
        return DocOutcome(
            source=self.source,
            doc_id=self.doc_id,
            status="unchanged",
            pages=self.previous.pages,
            chunks_unchanged=self.previous.chunk_count,
            seconds=time.monotonic() - self.started,
        )


def file_version(path: str | Path) -> str:
    """Return the SHA1 of the file's bytes: the version the ledger records.

    Raises ``OSError`` when the file cannot be read.
    """
    return file_sha1(path)


def verdict(
    entry: LedgerEntry | None, sha1: str, *, chunker: str, embedder: str, metadata_hash: str
) -> Verdict:
    """Decide what ``entry`` (the ledger's record) means for version ``sha1`` of the file."""
    same_content = (
        entry is not None
        and entry.status == "ok"
        and entry.doc_sha1 == sha1
        and entry.chunker == chunker
        and entry.embedder == embedder
    )
    if not same_content:
        return "changed"
    assert entry is not None
    return "unchanged" if entry.meta_sha1 == metadata_hash else "metadata_only"

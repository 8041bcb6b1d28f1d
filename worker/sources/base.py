"""What every source scheme shares: the source protocol, "not found", document names.

A *source* is a URI naming documents: a local path, ``s3://bucket/prefix``, and
whatever a new scheme module adds. Tasks carry only the URI; a worker reads it with
:meth:`Source.fetched`. Watchers feed jobs through a :class:`Submitter` (in practice
:class:`chunkweave.worker.enqueue.Enqueuer`), so they never import the producer side.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol

from chunkweave.errors import ChunkweaveError, TransientError
from chunkweave.parsers.document import SUPPORTED_SUFFIXES
from chunkweave.parsers.errors import ErrorCode
from chunkweave.worker.jobs import Action, as_text

if TYPE_CHECKING:
    import redis

    from chunkweave.worker.settings import Settings, SourcesConfig

_TEMP_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", ".partial", "~")


class SourceNotFoundError(ChunkweaveError, FileNotFoundError):
    """The source named in a task no longer exists."""

    code = ErrorCode.NOT_FOUND


class SourceUnavailableError(TransientError, ConnectionError):
    """The store a source lives in cannot be reached or is not configured (S3 endpoint)."""


class InvalidSourceError(ChunkweaveError, ValueError):
    """The source is not a well-formed URI of its scheme (``s3://`` with no bucket...)."""


class TooManyDocumentsError(ChunkweaveError, ValueError):
    """A source expands to more documents than one job may hold."""


def not_allowed(uri: str) -> SourceNotFoundError:
    """Build the one error for a source that is missing *or* outside what the caller may read.

    Both read the same, so a caller learns nothing about what exists where it may not look.
    """
    return SourceNotFoundError(f"{uri}: not found, or not under an allowed root or bucket")


def wanted(name: str) -> bool:
    """Tell whether a file name is a document to process (not hidden, temp, other type).

    Editors and copy tools write ``.~lock``/``~$x.docx``/``x.pdf.part`` files and
    atomic writers use hidden temp names; none of them is a finished document.
    """
    base = PurePosixPath(name).name
    if base.startswith((".", "~$")) or base.endswith(_TEMP_SUFFIXES):
        return False
    return PurePosixPath(base).suffix.lower() in SUPPORTED_SUFFIXES


class Submitter(Protocol):
    """Where a watcher sends what it found: one job per batch of ``(source, action)``."""

    @property
    def settings(self) -> Settings:
        """The service settings (poll intervals, settle times)."""
        ...

    @property
    def redis(self) -> redis.Redis:
        """Redis, where a watcher keeps what it has already enqueued."""
        ...

    def submit(self, items: Iterable[tuple[str, Action]]) -> str:
        """Create a job for the items and send its tasks; return the job id."""
        ...


def remembered(submitter: Submitter, key: str) -> dict[str, str]:
    """Return what a watcher last enqueued, source -> version, from the Redis hash ``key``."""
    raw = submitter.redis.hgetall(key)
    return {as_text(k): as_text(v) for k, v in raw.items()}


def submit_and_remember(
    submitter: Submitter, key: str, items: list[tuple[str, Action]], versions: dict[str, str]
) -> str | None:
    """Enqueue ``items`` as one job, then record them in the Redis hash ``key``.

    Deleted sources leave the hash; ingested ones record their version (an mtime and
    size, an ETag) when ``versions`` has it. The hash is written after the job is
    enqueued, so a watcher killed in between enqueues again on restart (at least once:
    the pipeline makes the repeat a no-op). Returns the job id, or None for no items.
    """
    if not items:
        return None
    job_id = submitter.submit(items)
    pipe = submitter.redis.pipeline(transaction=False)
    for source, action in items:
        if action == "delete":
            pipe.hdel(key, source)
        elif versions.get(source):
            pipe.hset(key, source, versions[source])
    pipe.execute()
    return job_id


class Watcher(Protocol):
    """Keeps a source's documents in step: enqueues new, changed and removed ones."""

    def run(self, stop: threading.Event) -> None:
        """Watch until ``stop`` is set."""
        ...


class Source(Protocol):
    """One URI scheme: how to name, list, read and watch its documents."""

    def claims(self, uri: str) -> bool:
        """Tell whether ``uri`` belongs to this scheme."""
        ...

    def normalize(self, uri: str) -> str:
        """Return the canonical form of ``uri``.

        The document's id is ``chunkweave.storage.identity.doc_id_for`` of it (with
        ``canonical=True``: a canonical local path is absolute and resolved already).
        """
        ...

    def expand(self, uri: str, settings: Settings) -> Iterator[str]:
        """Every document under ``uri`` (one file, a folder, a prefix), canonical, sorted."""
        ...

    def confine(self, uri: str, settings: Settings) -> str:
        """Return ``uri`` canonical if an API caller may read it (``settings.sources``).

        Raises the :func:`not_allowed` error for a source that is missing or outside the
        allowed roots or buckets, and :class:`InvalidSourceError` for a malformed URI.
        """
        ...

    def expand_confined(self, uri: str, settings: Settings) -> Iterator[str]:
        """Like :meth:`expand` on a confined ``uri``, never leaving what is allowed."""
        ...

    def allowing(self, uri: str, sources: SourcesConfig) -> SourcesConfig:
        """Return ``sources`` with ``uri`` (a watched folder or prefix) allowed too."""
        ...

    def fetched(self, uri: str, settings: Settings) -> AbstractContextManager[Path]:
        """Give a local path holding the document's bytes for the duration of the block.

        Raises :class:`SourceNotFoundError` when the document is gone.
        """
        ...

    def watcher(self, uri: str, submitter: Submitter, *, polling: bool = False) -> Watcher:
        """Build a watcher that keeps ``uri``'s documents in step through ``submitter``."""
        ...

"""Source URIs and the registry of schemes that read them.

A task carries a source URI, never bytes. :data:`SCHEMES` lists the schemes in the
order they are asked; the first that :meth:`~.base.Source.claims` a URI handles it,
and local paths come last because they claim everything. A new source (an HTTP URL,
a Google Drive folder) is one module with a class following :class:`~.base.Source`
plus one entry here; nothing else in the worker branches on a scheme.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from chunkweave.worker.sources.base import (
    InvalidSourceError,
    Source,
    SourceNotFoundError,
    SourceUnavailableError,
    Submitter,
    TooManyDocumentsError,
    Watcher,
    not_allowed,
    wanted,
)
from chunkweave.worker.sources.local import LocalSource
from chunkweave.worker.sources.s3 import S3Source

if TYPE_CHECKING:
    from chunkweave.worker.settings import Settings

__all__ = [
    "SCHEMES",
    "InvalidSourceError",
    "TooManyDocumentsError",
    "expand_confined",
    "Source",
    "SourceNotFoundError",
    "SourceUnavailableError",
    "Submitter",
    "Watcher",
    "expand",
    "fetched",
    "normalize",
    "scheme_for",
    "source_metadata",
    "wanted",
    "watcher",
]

#: Every scheme, asked in order; the last one claims any URI.
SCHEMES: tuple[Source, ...] = (S3Source(), LocalSource())


def scheme_for(uri: str | Path) -> Source:
    """Return the scheme that handles ``uri``."""
    text = str(uri)
    return next(s for s in SCHEMES if s.claims(text))


def normalize(uri: str | Path) -> str:
    """Canonical form of a source (local paths absolute and resolved)."""
    return scheme_for(uri).normalize(str(uri))


def expand(uri: str | Path, settings: Settings) -> Iterator[str]:
    """Document sources under ``uri``: a file, a folder (recursive) or a prefix.

    Raises ``FileNotFoundError`` for a missing local path.
    """
    return scheme_for(uri).expand(str(uri), settings)


def expand_confined(uri: str, settings: Settings) -> list[str]:
    """Documents under ``uri`` that an API caller may have ingested, at most one job's worth.

    Uploads (:mod:`chunkweave.worker.uploads`) are never among them, whoever asks.
    Raises :class:`SourceNotFoundError` (missing or not allowed: one error),
    :class:`InvalidSourceError`, :class:`SourceUnavailableError` (the store behind the
    scheme cannot be reached) or :class:`TooManyDocumentsError`.
    """
    from chunkweave.worker.uploads import is_upload  # uploads reads S3 through this package

    limit = settings.sources.max_files_per_job
    found: list[str] = []
    if is_upload(str(uri), settings):
        # Another caller's upload is never a source: a caller uploads its own file.
        raise not_allowed(str(uri))
    for doc in scheme_for(uri).expand_confined(str(uri), settings):
        if is_upload(doc, settings):
            continue  # a root that holds the uploads folder: its walk skips them
        found.append(doc)
        if len(found) > limit:
            raise TooManyDocumentsError(f"{uri}: more than {limit} documents for one job")
    return found


def fetched(uri: str, settings: Settings) -> AbstractContextManager[Path]:
    """Give a local path with the source's bytes for the block (:meth:`.Source.fetched`)."""
    return scheme_for(uri).fetched(uri, settings)


def source_metadata(uri: str, settings: Settings) -> dict[str, str]:
    """Return the metadata the source carries for ``uri`` (S3: user metadata, tags) as text.

    Keys as the source spells them, lower-cased with ``-`` read as ``_``; a scheme
    without metadata of its own (local files: their sidecar is read by the producer)
    gives none.
    """
    read = getattr(scheme_for(uri), "metadata", None)
    return dict(read(uri, settings)) if callable(read) else {}


def watcher(uri: str, submitter: Submitter, *, polling: bool = False) -> Watcher:
    """Build a watcher for ``uri`` that enqueues through ``submitter``."""
    return scheme_for(uri).watcher(uri, submitter, polling=polling)

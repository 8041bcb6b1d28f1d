"""A document's identity: the one function that turns a source into the id it is stored under.

Everything keyed by document (chunks, the ledger, job state, write locks, fan-out
scratch keys) uses this id, so the pipeline, the CLI and the producer that enqueues a
source must derive it the same way: they all call :func:`doc_id_for`. A caller may
instead name its document (``doc://<name>``, see ``chunkweave.worker.enqueue``).
"""

from __future__ import annotations

from pathlib import Path


def doc_id_for(source: str | Path, *, canonical: bool = False) -> str:
    """Stable identity of a source: its normalised URI (not its content).

    A URI (``scheme://...``) is kept with its scheme lower-cased; a filesystem path
    becomes the ``file://`` URI of its absolute, symlink-resolved form (the file
    need not exist any more, so a removed source maps to the same id).

    ``canonical`` says a path is already absolute and resolved (a source's canonical
    form, as the worker's source schemes normalise it), so it is not resolved again:
    the producer saves a walk of the filesystem per document that way.
    """
    text = str(source)
    if "://" in text:
        scheme, rest = text.split("://", 1)
        return f"{scheme.lower()}://{rest}"
    path = Path(text) if canonical else Path(text).expanduser().resolve()
    return path.as_uri()

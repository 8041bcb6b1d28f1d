"""What a retrieved or loaded chunk says about itself, the same for every framework.

Keys: ``doc_id``, ``source``, ``heading_path`` (outermost first), ``section_number``
(the deepest numbered heading's, normalised: ``"7.3.1"``; ``None`` when unnumbered),
``section_numbers`` (every section the chunk holds), ``pages`` (1-based), ``regions``
(``{"page", "bbox"}`` boxes on the page, PDF points, origin top-left) and ``type``;
a search hit adds ``chunk_uuid``, ``score`` and the caller metadata it was stored with
(declared keys, ``acl``); a loaded chunk adds ``chunk_id``, ``chunk_index`` and
``token_count``. Values are JSON types only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chunkweave.chunking.models import Chunk, ChunkOptions, Region
    from chunkweave.storage.hits import Hit
    from chunkweave.worker.settings import Settings


def _regions(regions: Sequence[Region]) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in regions]


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """Return the metadata of one search hit (the chunk's own keys win over caller keys)."""
    own = {
        "doc_id": hit.doc_id,
        "source": hit.source,
        "heading_path": list(hit.heading_path),
        "section_number": hit.section_number,
        "section_numbers": list(hit.section_numbers),
        "pages": list(hit.pages),
        "regions": _regions(hit.regions),
        "type": hit.type,
        "chunk_uuid": hit.uuid,
        "score": hit.score,
    }
    caller = {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in hit.metadata.items()}
    return {**caller, **own}


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    """Return the metadata of one chunk as chunking made it (no store involved)."""
    return {
        "doc_id": chunk.doc_id,
        "source": chunk.source,
        "heading_path": list(chunk.heading_path),
        "section_number": chunk.section_number,
        "section_numbers": list(chunk.section_numbers),
        "pages": list(chunk.pages),
        "regions": _regions(chunk.regions),
        "type": chunk.type,
        "chunk_id": chunk.id,
        "chunk_index": chunk.chunk_index,
        "token_count": chunk.token_count,
    }


def iter_chunks(
    paths: Sequence[str | Path],
    *,
    settings: Settings | None = None,
    chunk_options: ChunkOptions | None = None,
) -> Iterator[Chunk]:
    """Parse and chunk each file in turn, as ``chunkweave ingest`` would (nothing stored).

    Options default to the settings' (:func:`chunkweave.worker.settings.get_settings`);
    token budgets come from the configured embedder, so the chunks (and their ids) are
    the ones an ingest of the same file stores. Raises
    :class:`~chunkweave.parsers.ParseError` for a file that cannot be read.
    """
    from chunkweave.parsers import parse_document
    from chunkweave.storage.embedders import make_embedder
    from chunkweave.storage.identity import doc_id_for
    from chunkweave.storage.pipeline.chunker import Chunker
    from chunkweave.worker.settings import get_settings

    settings = settings or get_settings()
    chunker = Chunker(chunk_options or settings.chunking, make_embedder(settings.embedder))
    for path in paths:
        source = str(Path(path).expanduser().resolve())
        doc = parse_document(source, settings.parse)
        yield from chunker.chunk(doc, doc_id=doc_id_for(source), source=source)

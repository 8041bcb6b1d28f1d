"""Entry point: a parsed document + options -> chunks."""

from __future__ import annotations

from parsers import ParsedDocument

from chunking.models import Chunk, ChunkOptions, Embed, TokenCounter


def chunk_document(
    doc: ParsedDocument,
    opts: ChunkOptions,
    counter: TokenCounter,
    *,
    doc_id: str,
    source: str | None = None,
    embed: Embed | None = None,
) -> list[Chunk]:
    """Chunk ``doc`` with ``opts``; deterministic for the same inputs.

    ``doc_id`` is the stable identity of the source (not its content); ``source``
    defaults to ``doc.path``. ``embed`` is needed only by the ``semantic`` strategy.
    """
    raise NotImplementedError("chunk_document: implemented by the chunking work (issue 3)")

"""The chunkers of the retrieval benchmark, by name, as ``(path, embedder) -> chunks``.

chunkweave's strategies with the options ``chunkweave eval`` uses (budget resolved from
the embedder; documents parsed once and shared), and the peers of
:mod:`bench.peer_chunkers` at the same budget.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.peer_chunkers import PEERS, PeerChunk


def _chunkweave(strategy: str, overlap: int = 0) -> Callable[[Path, Any], list[PeerChunk]]:
    def run(path: Path, embedder: Any) -> list[PeerChunk]:
        from chunkweave.chunking import ChunkOptions, chunk_document, resolve_options
        from chunkweave.parsers import parse_document

        if path not in _PARSED:  # parsed once, shared by chunkweave's strategies
            _PARSED[path] = parse_document(path)
        doc = _PARSED[path]
        base = ChunkOptions(strategy=strategy, overlap_tokens=overlap)
        opts = resolve_options(base, embedder.max_tokens)
        chunks = chunk_document(doc, opts, embedder, doc_id=path.name)
        return [
            PeerChunk(c.text, c.embed_text, c.heading_path, c.pages, c.type)
            for c in chunks
            if c.type != "section"
        ]

    return run


def _peer(name: str) -> Callable[[Path, Any], list[PeerChunk]]:
    _, fn = PEERS[name]

    def run(path: Path, embedder: Any) -> list[PeerChunk]:
        return fn(path, budget(embedder))

    return run


def budget(embedder: Any) -> int:
    """Return the token budget ``chunkweave eval`` resolves for ``embedder``."""
    from chunkweave.chunking import ChunkOptions, resolve_options

    budget = resolve_options(ChunkOptions(), embedder.max_tokens).max_tokens
    assert budget is not None
    return budget


_PARSED: dict[Path, Any] = {}
_BOTH = frozenset({"pdf", "docx"})
#: Every system of the retrieval benchmark: the formats it reads and its chunker.
SYSTEMS: dict[str, tuple[frozenset[str], Callable[[Path, Any], list[PeerChunk]]]] = {
    "chunkweave:elements": (_BOTH, _chunkweave("elements")),
    "chunkweave:fixed": (_BOTH, _chunkweave("fixed")),
    "chunkweave:fixed+ov64": (_BOTH, _chunkweave("fixed", overlap=64)),
    "chunkweave:recursive": (_BOTH, _chunkweave("recursive")),
    **{name: (formats, _peer(name)) for name, (formats, _) in PEERS.items()},
}

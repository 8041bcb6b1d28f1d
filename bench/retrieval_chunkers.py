"""The chunkers of the retrieval benchmark, by name, as ``(path, embedder) -> chunks``.

chunkweave's strategies with the options ``chunkweave eval`` uses (budget resolved from
the embedder; documents parsed once and shared), one per table serialisation for
``elements`` (``chunkweave:elements/<serialisation>``, see ``ChunkOptions.table_embed``),
the naive baseline ``naive:fixed-256/50`` (:func:`fixed_windows`) and the peers of
:mod:`bench.peer_chunkers` at the same budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.peer_chunkers import PEERS, PeerChunk, wordpiece_tokenizer

#: The naive baseline's window and overlap, in word pieces (specials included).
NAIVE_WINDOW = 256
NAIVE_OVERLAP = 50


def _parsed(path: Path) -> Any:
    from chunkweave.parsers import parse_document

    if path not in _PARSED:  # parsed once, shared by every system reading chunkweave's parse
        _PARSED[path] = parse_document(path)
    return _PARSED[path]


def _chunkweave(
    strategy: str, overlap: int = 0, table_embed: str | None = None
) -> Callable[[Path, Any], list[PeerChunk]]:
    def run(path: Path, embedder: Any) -> list[PeerChunk]:
        from chunkweave.chunking import ChunkOptions, chunk_document, resolve_options

        doc = _parsed(path)
        extra = {} if table_embed is None else {"table_embed": table_embed}
        base = ChunkOptions(strategy=strategy, overlap_tokens=overlap, **extra)
        opts = resolve_options(base, embedder.max_tokens)
        chunks = chunk_document(doc, opts, embedder, doc_id=path.name)
        return [
            PeerChunk(c.text, c.embed_text, c.heading_path, c.pages, c.type)
            for c in chunks
            if c.type != "section"
        ]

    return run


def fixed_windows(
    text: str, ends: list[int], window: int, overlap: int
) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` offsets of windows of ``window`` tokens, ``overlap`` shared.

    ``ends[i]`` is the end offset of token ``i`` in ``text`` (specials excluded); a
    window runs from the end of the token before its first to the end of its last,
    so consecutive windows share ``overlap`` tokens and the last one ends the text.
    Structure-blind on purpose: it cuts tables, headings and words' pieces alike.
    """
    if window <= overlap:
        raise ValueError(f"window {window} must exceed overlap {overlap}")
    first = 0
    while first < len(ends):
        last = min(first + window, len(ends))
        start = ends[first - 1] if first else 0
        yield start, ends[last - 1]
        if last == len(ends):
            return
        first = last - overlap


def _naive_fixed(path: Path, embedder: Any) -> list[PeerChunk]:
    """Cut chunkweave's parse as Markdown into 256-token windows, 50 shared, no context."""
    from chunkweave.parsers.markdown import to_markdown

    text = to_markdown(_parsed(path))
    ends = [e for _, e in _TOKENIZER().encode(text, add_special_tokens=False).offsets]
    # The embedder adds two special tokens to every window.
    spans = fixed_windows(text, ends, NAIVE_WINDOW - 2, NAIVE_OVERLAP)
    return [PeerChunk(text[a:b].strip(), text[a:b].strip()) for a, b in spans if text[a:b].strip()]


def _tokenizer_once() -> Callable[[], Any]:
    found: list[Any] = []

    def get() -> Any:
        if not found:
            found.append(wordpiece_tokenizer())
        return found[0]

    return get


_TOKENIZER = _tokenizer_once()


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


def _serialisations() -> tuple[str, ...]:
    try:
        from typing import get_args

        from chunkweave.chunking.models import TableEmbed
    except ImportError:  # a checkout from before the option
        return ()
    return tuple(get_args(TableEmbed))


_PARSED: dict[Path, Any] = {}
_BOTH = frozenset({"pdf", "docx"})
#: Every system of the retrieval benchmark: the formats it reads and its chunker.
SYSTEMS: dict[str, tuple[frozenset[str], Callable[[Path, Any], list[PeerChunk]]]] = {
    "chunkweave:elements": (_BOTH, _chunkweave("elements")),
    **{
        f"chunkweave:elements/{name}": (_BOTH, _chunkweave("elements", table_embed=name))
        for name in _serialisations()
    },
    "chunkweave:fixed": (_BOTH, _chunkweave("fixed")),
    "chunkweave:fixed+ov64": (_BOTH, _chunkweave("fixed", overlap=64)),
    "chunkweave:recursive": (_BOTH, _chunkweave("recursive")),
    f"naive:fixed-{NAIVE_WINDOW}/{NAIVE_OVERLAP}": (_BOTH, _naive_fixed),
    **{name: (formats, _peer(name)) for name, (formats, _) in PEERS.items()},
}

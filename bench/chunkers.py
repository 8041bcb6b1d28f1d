"""Every chunker under test, by name, as ``path -> (chunk views, timings)``.

chunkweave's strategies (``auto`` parse mode) and the peer chunkers of
:mod:`bench.peer_chunkers`, all at the same token budget. :func:`run_chunker` is the
child-process side the chunk-quality benchmark starts once per chunker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.peer_chunkers import PEERS, WordPieceCounter
from bench.views import ChunkView
from bench.worker_protocol import emit

#: Token budget of every chunker (the default embedder's WordPiece tokens).
BUDGET = 512


def _chunkweave(path: Path, strategy: str) -> tuple[list[ChunkView], dict[str, float]]:
    from chunkweave.chunking import ChunkOptions, chunk_document
    from chunkweave.parsers import ParseOptions, parse_document

    counter = WordPieceCounter()  # loaded before timing: tokenizer load is not chunking
    start = time.perf_counter()
    doc = parse_document(path, ParseOptions(mode="auto"))
    parsed = time.perf_counter()
    opts = ChunkOptions(strategy=strategy, max_tokens=BUDGET)
    chunks = chunk_document(doc, opts, counter, doc_id=path.name)
    done = time.perf_counter()
    views = [
        ChunkView(c.text, c.heading_path, c.pages, "table" if c.type == "table" else "text")
        for c in chunks
    ]
    return views, {"parse_s": parsed - start, "chunk_s": done - parsed}


def _peer(name: str) -> Callable[[Path], tuple[list[ChunkView], dict[str, float]]]:
    _, fn = PEERS[name]

    def run(path: Path) -> tuple[list[ChunkView], dict[str, float]]:
        return [ChunkView(c.text, c.heading_path, c.pages, c.kind) for c in fn(path, BUDGET)], {}

    return run


ChunkFn = Callable[[Path], tuple[list[ChunkView], dict[str, float]]]
CHUNKERS: dict[str, tuple[frozenset[str], ChunkFn]] = {
    "chunkweave:elements": (frozenset({"pdf", "docx"}), lambda p: _chunkweave(p, "elements")),
    "chunkweave:fixed": (frozenset({"pdf", "docx"}), lambda p: _chunkweave(p, "fixed")),
    **{name: (formats, _peer(name)) for name, (formats, _) in PEERS.items()},
}


def run_chunker(argv: list[str]) -> int:
    """Child-process side: chunk each file with one chunker (``argv``: NAME FILE...).

    Prints one worker-protocol record per file: its chunks as lists, or its error.
    """
    _, fn = CHUNKERS[argv[0]]
    for name in argv[1:]:
        record: dict[str, Any] = {"path": name}
        try:
            views, timing = fn(Path(name))
            record["chunks"] = [
                [v.text, list(v.heading_path), list(v.pages), v.kind] for v in views
            ]
            record.update(timing)
        except Exception as exc:  # one failing document is a result, not a crash
            record["error"] = f"{type(exc).__name__}: {exc}"[:300]
        emit(record)
    return 0

"""Retrieval quality of chunkweave's strategies vs the peer chunkers, one embedder, one search.

Every system chunks the documents the QA file names (``examples/qa/corpus_qa.jsonl``):

- ``chunkweave:elements|fixed|recursive``: chunkweave's parser and chunker with the options
  ``chunkweave eval`` uses (budget resolved from the embedder: 256 word pieces), and
  ``chunkweave:fixed+ov64`` (fixed with a 64-token overlap); the embedded text is the
  chunk's ``embed_text`` (context line in front), as in the pipeline;
- the peers of :mod:`bench.peer_chunkers` (``langchain:recursive`` on pymupdf4llm+layout
  Markdown, PDF only; ``unstructured:by_title``; ``docling:hybrid``, DOCX only;
  ``llamaindex:sentence``, LlamaIndex's reader and SentenceSplitter) with the same
  256-token budget; embedded text is the peer's own contextualised text where it has
  one (docling's ``contextualize``), else its chunk text.

All chunks are embedded with the default embedder (all-MiniLM-L6-v2 int8, 256 word pieces);
a peer text longer than that is cut at the last whole word piece that fits (what
truncating embedders do; the count is shown as ``cut``). Each scope's chunks are ranked
for each question by exact cosine similarity (numpy, brute force) and scored with
``chunkweave.storage.evaluate``'s hit rule: the chunk's stored text contains the evidence from the
right document, both sides passed through :func:`markup_normalize` (Markdown table pipes,
emphasis and escapes dropped, whitespace collapsed), for every system alike.

Scopes: ``pdf`` (questions on the PDFs), ``docx`` (on the DOCX) and ``all``; a system is
scored on a scope only when it handles every document in it (otherwise ``n/a``).
``findable`` counts the questions whose evidence is in some chunk of the right document
at all: the evidence strings of ``examples/qa`` were copied from chunkweave's parse (those
of ``examples/qa_extra`` from PyMuPDF's plain text), so a system whose extraction differs
(hyphenation, ligatures, reading order, a file its reader cannot open) can lose a question
before ranking; that column separates extraction from chunking.

    bench/.venv-peers/bin/python -m bench.chunk_retrieval [--qa FILE] [--docs DIR]
        [--systems a,b] [--json bench/results/chunk_retrieval.json]

The corpus-extra set: ``--qa examples/qa_extra/extra_qa.jsonl --docs ../shared/corpus-extra``
(``examples/qa_extra/README.md``).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.options import DEFAULT_CORPUS, ROOT, add_names, bench_parser, write_json
from bench.peer_chunkers import PeerChunk, wordpiece_tokenizer
from bench.retrieval_chunkers import SYSTEMS, budget
from chunkweave.storage.evaluate import KS, QAItem, Scores, load_qa, normalize, rank_hits, score

DEFAULT_QA = ROOT / "examples" / "qa" / "corpus_qa.jsonl"
SCOPES = ("all", "pdf", "docx")

_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
# A Markdown table rule row (dashes, alignment colons, pipes) or a horizontal rule.
_TABLE_RULE = re.compile(r"(?m)^[ \t|:-]*-{3,}[ \t|:-]*$")
_HEADING_MARK = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+")
_EMPHASIS = re.compile(r"[*_`\\]")


def markup_normalize(text: str) -> str:
    """Return ``text`` without Markdown markup, whitespace collapsed (the hit comparison).

    Table pipes, ``<br>`` and table rule rows become spaces (they separate cells);
    heading marks at line start, emphasis (``*``, ``_``), code ticks and backslash
    escapes are removed (they sit inside words). Applied to evidence and chunk text
    alike, so it can only turn a markup-split match into a hit, for every system.
    """
    text = _BR.sub(" ", text)
    text = _TABLE_RULE.sub(" ", text)
    text = _HEADING_MARK.sub("", text)
    text = _EMPHASIS.sub("", text.replace("|", " "))
    return normalize(text)


def cut_to_fit(text: str, ends: Sequence[int], count: Callable[[str], int], limit: int) -> str:
    """Return the longest token-boundary prefix of ``text`` that ``count`` fits in ``limit``.

    ``ends[i]`` is the end offset in ``text`` of its ``i``-th token (specials excluded).
    ``text`` itself is returned when it fits; otherwise prefixes ending at a token end
    are tried from the longest down; ``""`` when none fits.
    """
    if count(text) <= limit:
        return text
    for keep in range(len(ends), 0, -1):
        prefix = text[: ends[keep - 1]]
        if count(prefix) <= limit:
            return prefix
    return ""


def system_scores(
    questions: Sequence[QAItem],
    texts: Sequence[str],
    docs: Sequence[str],
    vectors: np.ndarray[Any, Any],
    query_vectors: np.ndarray[Any, Any],
) -> dict[str, Any]:
    """Score one system's search space: overall and per-kind scores, ranks, findable count."""
    ranks = rank_hits(
        questions, texts, docs, vectors, query_vectors, max(KS), norm=markup_normalize
    )
    normed = [markup_normalize(t) for t in texts]
    findable = sum(
        any(
            markup_normalize(q.evidence) in t and d == q.doc
            for t, d in zip(normed, docs, strict=True)
        )
        for q in questions
    )
    kinds = sorted({q.kind for q in questions if q.kind})
    by_kind: dict[str, Scores] = {
        kind: score(r for q, r in zip(questions, ranks, strict=True) if q.kind == kind)
        for kind in kinds
    }
    return {
        "overall": score(ranks).model_dump(),
        "by_kind": {k: s.model_dump() for k, s in by_kind.items()},
        "findable": findable,
        "ranks": ranks,
    }


def _fmt(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Chunk, embed, rank and score every selected system; return the JSON payload."""
    from chunkweave.storage.config import EmbedderConfig
    from chunkweave.storage.embedders import make_embedder

    questions = load_qa(args.qa)
    missing_doc = [i for i, q in enumerate(questions, 1) if not q.doc]
    if missing_doc:
        raise SystemExit(f"{args.qa}: questions {missing_doc[:5]} name no doc")
    paths = {name: args.docs / name for name in sorted({q.doc or "" for q in questions})}
    absent = [str(p) for p in paths.values() if not p.is_file()]
    if absent:
        raise SystemExit(f"documents named by {args.qa} not found: {', '.join(absent)}")
    embedder = make_embedder(EmbedderConfig())
    limit = embedder.max_tokens
    tok = wordpiece_tokenizer()
    names = args.systems or list(SYSTEMS)
    query_vectors = np.array([embedder.embed_query(q.question) for q in questions])
    cache: dict[str, np.ndarray[Any, Any]] = {}
    results: dict[str, Any] = {}
    for name in names:
        formats, fn = SYSTEMS[name]
        chunks: list[tuple[str, PeerChunk]] = []
        failed: dict[str, str] = {}
        started = time.perf_counter()
        for doc, path in paths.items():
            if _fmt(path) not in formats:
                continue
            print(f"[chunk_retrieval] {name}: {doc}", file=sys.stderr, flush=True)
            try:
                # Peers print progress and notices to stdout: keep it for the table.
                with contextlib.redirect_stdout(sys.stderr):
                    chunks += [(doc, c) for c in fn(path, embedder)]
            except Exception as exc:  # a peer failing on one document is a result
                failed[doc] = f"{type(exc).__name__}: {exc}"[:300]
        seconds = time.perf_counter() - started
        fitted = []
        for _, c in chunks:
            ends = [e for _, e in tok.encode(c.embed_text, add_special_tokens=False).offsets]
            text = cut_to_fit(c.embed_text, ends, embedder.count, limit)
            fitted.append(text)
        todo = list(dict.fromkeys(t for t in fitted if t not in cache))
        if todo:
            cache.update(zip(todo, np.array(embedder.embed_documents(todo)), strict=True))
        tokens = [embedder.count(t) for t in fitted]
        row: dict[str, Any] = {"seconds": round(seconds, 1), "failed": failed, "scopes": {}}
        for scope in SCOPES:
            docs_in = [d for d, p in paths.items() if scope == "all" or _fmt(p) == scope]
            if not docs_in or any(_fmt(paths[d]) not in formats or d in failed for d in docs_in):
                continue
            idx = [i for i, (d, _) in enumerate(chunks) if d in docs_in]
            qidx = [i for i, q in enumerate(questions) if q.doc in docs_in]
            vectors = np.array([cache[fitted[i]] for i in idx], dtype=np.float32)
            scored = system_scores(
                [questions[i] for i in qidx],
                [chunks[i][1].text for i in idx],
                [chunks[i][0] for i in idx],
                vectors.reshape(len(idx), -1),
                query_vectors[qidx],
            )
            scored.update(
                chunks=len(idx),
                embedded_tokens=sum(tokens[i] for i in idx),
                cut=sum(fitted[i] != chunks[i][1].embed_text for i in idx),
                questions=qidx,
            )
            row["scopes"][scope] = scored
        results[name] = row
    return {
        "qa": str(args.qa.relative_to(ROOT) if args.qa.is_relative_to(ROOT) else args.qa),
        "embedder": embedder.name,
        "budget": budget(embedder),
        "embedder_max_tokens": limit,
        "k": max(KS),
        "documents": list(paths),
        "results": results,
    }


def render(payload: dict[str, Any]) -> str:
    """One plain-text table: a line per scope and system, then any failures."""
    head = (
        f"{'scope':5s} {'system':22s} {'n':>3s} {'chunks':>6s} {'tokens':>7s} {'cut':>4s} "
        f"{'find':>4s} {'R@1':>5s} {'R@5':>5s} {'R@10':>5s} {'MRR':>5s}  "
        f"{'table R@5/MRR':>13s} {'heading R@5/MRR':>15s} {'text R@5/MRR':>12s}"
    )
    lines = [head, "-" * len(head)]
    for scope in SCOPES:
        for name, row in payload["results"].items():
            s = row["scopes"].get(scope)
            if s is None:
                lines.append(f"{scope:5s} {name:22s} n/a")
                continue
            o = s["overall"]
            kinds = []
            for kind, width in (("table", 13), ("heading", 15), ("text", 12)):
                k = s["by_kind"].get(kind)
                cell = f"{k['recall_at_5']:.2f}/{k['mrr']:.2f} ({k['n']})" if k else "-"
                kinds.append(f"{cell:>{width}s}")
            lines.append(
                f"{scope:5s} {name:22s} {o['n']:3d} {s['chunks']:6d} {s['embedded_tokens']:7d} "
                f"{s['cut']:4d} {s['findable']:4d} {o['recall_at_1']:5.2f} {o['recall_at_5']:5.2f} "
                f"{o['recall_at_10']:5.2f} {o['mrr']:5.3f}  " + " ".join(kinds)
            )
        lines.append("")
    for name, row in payload["results"].items():
        for doc, err in row["failed"].items():
            lines.append(f"  ! {name} failed on {doc}: {err}")
    lines.append(
        f"embedder {payload['embedder']} (max {payload['embedder_max_tokens']} word pieces), "
        f"chunk budget {payload['budget']} tokens, exact cosine, hit = evidence in chunk text "
        "of the right doc after markup_normalize; n = questions, find = evidence in some chunk"
    )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    ap = bench_parser(__doc__)
    ap.add_argument("--qa", type=Path, default=DEFAULT_QA, help="QA JSONL (default: %(default)s)")
    ap.add_argument("--docs", type=Path, default=DEFAULT_CORPUS, help="documents directory")
    add_names(ap, "systems", SYSTEMS)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, optionally write JSON."""
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    payload = run(args)
    print(render(payload))
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Retrieval evaluation of a chunking: recall@k and MRR on verbatim-evidence questions.

A QA file has one JSON object per line: ``question``, ``evidence`` (a string copied
verbatim from the document), optionally ``doc`` (the file name it comes from) and
``kind`` (a tag such as ``table`` or ``heading`` for per-kind scores).

Here retrieval is exhaustive cosine similarity over every chunk of every document
(in memory, numpy: the fast mode), so scores measure the chunking and the embedder,
nothing else; :mod:`chunkweave.storage.served_eval` asks a real store instead, as
``chunkweave search`` does. Either way a retrieved chunk is a hit when its ``text``
contains the evidence (whitespace normalised) and, if the question names a ``doc``,
it comes from that document; relevance is binary (nDCG counts every such chunk).
Parent (``section``) chunks are not retrieved: they are read, not searched.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from chunkweave.chunking.models import Chunk
from chunkweave.storage.embedders.base import Embedder

KS = (1, 5, 10)
#: The depth of nDCG, and how many top hits "tokens a hit returns" averages over.
NDCG_K = 10
HIT_TOKENS_K = 5
_WS = re.compile(r"\s+")


class QAItem(BaseModel):
    """One evaluation question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    evidence: str
    doc: str | None = None
    kind: str | None = None


class Scores(BaseModel):
    """Recall@k (share of questions with a hit in the top k) and MRR over ``n`` questions.

    With a full evaluation also nDCG@10 (binary relevance), ``found`` (the ceiling:
    questions whose evidence is inside some chunk), the search latency percentiles
    (ms; served mode only) and ``hit_tokens``, the mean tokens of a top-5 hit.
    """

    model_config = ConfigDict(frozen=True)

    n: int
    recall_at_1: float
    recall_at_5: float
    recall_at_10: float
    mrr: float
    ndcg_at_10: float | None = None
    found: int | None = None
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    hit_tokens: float | None = None


class Ranked(NamedTuple):
    """One retrieved chunk as scored: its stored text and the document it is from."""

    text: str
    doc: str


class StrategyReport(BaseModel):
    """The evaluation of one chunking over the whole QA set.

    ``ranks`` holds, per question in QA-file order, the 1-based rank of the first
    hit within the top ``k`` (``None`` for a miss): the per-question view for
    comparing two chunkings (see :func:`details_table`).
    """

    model_config = ConfigDict(frozen=True)

    strategy: str
    chunker: str
    chunks: int
    #: How the chunks were searched: ``numpy`` (in memory) or the served search mode.
    mode: str = "numpy"
    #: The scratch collection of a served evaluation (gone unless kept).
    collection: str | None = None
    embedded_tokens: int
    evidence_in_chunks: int
    overall: Scores
    by_kind: dict[str, Scores]
    ranks: tuple[int | None, ...] = ()


def normalize(text: str) -> str:
    """Collapse whitespace runs to single spaces and strip (the hit comparison)."""
    return _WS.sub(" ", text).strip()


def load_qa(path: str | Path) -> list[QAItem]:
    """Read a QA JSONL file; raises ``ValueError`` naming the file and line on bad input."""
    items: list[QAItem] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = QAItem.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as err:
                reason = str(err).splitlines()[0]
                raise ValueError(f"{path}:{lineno}: not a QA item ({reason})") from err
            if not normalize(item.evidence):
                raise ValueError(f"{path}:{lineno}: empty evidence")
            items.append(item)
    if not items:
        raise ValueError(f"{path}: no questions")
    return items


def write_qa(path: str | Path, items: Iterable[QAItem]) -> int:
    """Write ``items`` as a QA file (the format :func:`load_qa` reads); return how many."""
    count = 0
    with open(path, "w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item.model_dump(exclude_none=True), ensure_ascii=False) + "\n")
            count += 1
    return count


def missing_in_parse(items: Sequence[QAItem], corpus: Path) -> list[QAItem]:
    """Return the items whose evidence chunkweave's parse of ``corpus / item.doc`` lacks.

    The evidence counts as present when it is (whitespace-normalised) inside one
    element's text or one table cell: what a chunk can hold whole. Items without a
    ``doc`` are not checked. Each document is parsed once.
    """
    from chunkweave.parsers import parse_document

    texts: dict[str, list[str]] = {}
    for doc in sorted({item.doc for item in items if item.doc}):
        elements = parse_document(corpus / doc).elements
        texts[doc] = [normalize(e.text) for e in elements]
        texts[doc] += [normalize(cell) for e in elements for row in e.rows or () for cell in row]
    return [
        item
        for item in items
        if item.doc and not any(normalize(item.evidence) in text for text in texts[item.doc])
    ]


def hit_ranks(
    questions: Sequence[QAItem],
    chunks: Sequence[Chunk],
    chunk_docs: Sequence[str],
    chunk_vectors: np.ndarray[Any, Any],
    query_vectors: np.ndarray[Any, Any],
    k: int,
) -> list[int | None]:
    """For each question, the 1-based rank of the first hit in the top ``k`` (or None).

    ``chunk_docs[i]`` is the file name chunk ``i`` came from; vectors are rows.
    """
    texts = [c.text for c in chunks]
    return rank_hits(questions, texts, chunk_docs, chunk_vectors, query_vectors, k)


def rank_hits(
    questions: Sequence[QAItem],
    texts: Sequence[str],
    chunk_docs: Sequence[str],
    chunk_vectors: np.ndarray[Any, Any],
    query_vectors: np.ndarray[Any, Any],
    k: int,
    *,
    norm: Callable[[str], str] = normalize,
) -> list[int | None]:
    """:func:`hit_ranks` over plain chunk texts, with a chosen hit normaliser.

    Chunks are ranked by cosine similarity (ties by position); a chunk is a hit when
    ``norm(evidence)`` is a substring of ``norm(text)`` and its doc matches the
    question's ``doc`` (when given). ``norm`` is applied to both sides alike.
    """
    if len(texts) == 0:
        return [None] * len(questions)
    sims = _unit(query_vectors) @ _unit(chunk_vectors).T
    normed = [norm(t) for t in texts]
    ranks: list[int | None] = []
    for qi, item in enumerate(questions):
        top = _top_k(sims[qi], k)
        evidence = norm(item.evidence)
        rank = None
        for position, ci in enumerate(top, 1):
            if evidence in normed[ci] and (item.doc is None or chunk_docs[ci] == item.doc):
                rank = position
                break
        ranks.append(rank)
    return ranks


def score(ranks: Iterable[int | None]) -> Scores:
    """Recall@1/5/10 and MRR (reciprocal rank, 0 for a miss) of a list of hit ranks."""
    values = list(ranks)
    n = len(values)
    if n == 0:
        return Scores(n=0, recall_at_1=0.0, recall_at_5=0.0, recall_at_10=0.0, mrr=0.0)

    def recall(k: int) -> float:
        return sum(1 for r in values if r is not None and r <= k) / n

    mrr = sum(1.0 / r for r in values if r is not None) / n
    return Scores(
        n=n, recall_at_1=recall(1), recall_at_5=recall(5), recall_at_10=recall(10), mrr=mrr
    )


def ndcg_at_k(positions: Sequence[int], relevant: int, k: int = NDCG_K) -> float:
    """nDCG@k with binary relevance: hits at 1-based ``positions``, ``relevant`` in all.

    DCG sums ``1 / log2(position + 1)`` over the hits within the top ``k``; the ideal
    puts ``min(relevant, k)`` hits first. 0.0 when nothing is relevant.
    """
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(relevant, k) + 1))
    if ideal == 0.0:
        return 0.0
    return sum(1.0 / math.log2(p + 1) for p in positions if p <= k) / ideal


def evaluate_chunks(
    strategy: str,
    questions: Sequence[QAItem],
    chunks_by_doc: dict[str, list[Chunk]],
    embedder: Embedder,
    *,
    k: int = 10,
    cache: dict[str, list[float]] | None = None,
) -> StrategyReport:
    """Embed all chunks and questions with ``embedder`` and score retrieval (numpy mode).

    ``cache`` (text -> vector) lets several strategies share vectors of identical
    embed texts within one run.
    """
    chunks, docs = searchable(chunks_by_doc)
    cache = {} if cache is None else cache
    chunk_vectors = embed_cached([c.embed_text for c in chunks], embedder, cache)
    query_vectors = np.array(
        [embedder.embed_query(q.question) for q in questions], dtype=np.float32
    )
    sims = _unit(query_vectors) @ _unit(chunk_vectors).T if chunks else None
    rankings = [
        [Ranked(chunks[i].text, docs[i]) for i in _top_k(sims[qi], max(k, max(KS)))]
        if sims is not None
        else []
        for qi in range(len(questions))
    ]
    return report_rankings(strategy, questions, chunks, docs, rankings, embedder.count)


def searchable(chunks_by_doc: dict[str, list[Chunk]]) -> tuple[list[Chunk], list[str]]:
    """Return the chunks a search may return (not ``section`` parents) and their documents."""
    docs: list[str] = []
    chunks: list[Chunk] = []
    for name in sorted(chunks_by_doc):
        for chunk in chunks_by_doc[name]:
            if chunk.type != "section":
                docs.append(name)
                chunks.append(chunk)
    return chunks, docs


def report_rankings(
    strategy: str,
    questions: Sequence[QAItem],
    chunks: Sequence[Chunk],
    docs: Sequence[str],
    rankings: Sequence[Sequence[Ranked]],
    count_tokens: Callable[[str], int],
    *,
    latencies_ms: Sequence[float] | None = None,
    mode: str = "numpy",
    collection: str | None = None,
) -> StrategyReport:
    """Score one ranking per question (best first) against ``chunks`` (with their ``docs``).

    A ranked chunk is relevant when it holds the evidence (and is from the named
    ``doc``); how many of ``chunks`` are relevant sets each question's ideal DCG and
    its ceiling. ``latencies_ms`` (one per question) gives the latency percentiles;
    ``count_tokens`` counts the tokens of the top :data:`HIT_TOKENS_K` hits.
    """
    texts = [normalize(c.text) for c in chunks]
    tokens: dict[str, int] = {}
    rows: list[_Row] = []
    for qi, item in enumerate(questions):
        evidence = normalize(item.evidence)

        def relevant(text: str, doc: str, evidence: str = evidence, item: QAItem = item) -> bool:
            return evidence in text and (item.doc is None or doc == item.doc)

        total = sum(1 for t, d in zip(texts, docs, strict=True) if relevant(t, d))
        positions = [p for p, r in enumerate(rankings[qi], 1) if relevant(normalize(r.text), r.doc)]
        for r in rankings[qi][:HIT_TOKENS_K]:
            if r.text not in tokens:
                tokens[r.text] = count_tokens(r.text)
        top = [tokens[r.text] for r in rankings[qi][:HIT_TOKENS_K]]
        rows.append(
            _Row(
                rank=positions[0] if positions else None,
                ndcg=ndcg_at_k(positions, max(total, len(positions))),
                found=total > 0,
                latency=latencies_ms[qi] if latencies_ms is not None else None,
                hit_tokens=top,
            )
        )
    kinds = sorted({q.kind for q in questions if q.kind})
    return StrategyReport(
        strategy=strategy,
        chunker=chunks[0].chunker if chunks else "",
        chunks=len(chunks),
        mode=mode,
        collection=collection,
        embedded_tokens=sum(c.token_count for c in chunks),
        evidence_in_chunks=sum(r.found for r in rows),
        overall=_full_score(rows),
        by_kind={
            kind: _full_score([r for q, r in zip(questions, rows, strict=True) if q.kind == kind])
            for kind in kinds
        },
        ranks=tuple(r.rank for r in rows),
    )


class _Row(NamedTuple):
    rank: int | None
    ndcg: float
    found: bool
    latency: float | None
    hit_tokens: list[int]


def _full_score(rows: Sequence[_Row]) -> Scores:
    base = score(r.rank for r in rows)
    latencies = [r.latency for r in rows if r.latency is not None]
    hit_tokens = [t for r in rows for t in r.hit_tokens]
    return base.model_copy(
        update={
            "ndcg_at_10": sum(r.ndcg for r in rows) / len(rows) if rows else 0.0,
            "found": sum(r.found for r in rows),
            "latency_p50_ms": float(np.percentile(latencies, 50)) if latencies else None,
            "latency_p95_ms": float(np.percentile(latencies, 95)) if latencies else None,
            "hit_tokens": sum(hit_tokens) / len(hit_tokens) if hit_tokens else None,
        }
    )


def details_table(questions: Sequence[QAItem], reports: Sequence[StrategyReport]) -> str:
    """Plain-text table: one line per question, its hit rank under each report.

    A miss shows as ``-``; columns follow ``reports``; the question is cut to fit.
    """
    head = " ".join(f"{r.strategy[:9]:>9}" for r in reports)
    lines = [f"{'#':>3} {'kind':8} {head}  question"]
    for qi, item in enumerate(questions):
        cells = []
        for report in reports:
            rank = report.ranks[qi] if qi < len(report.ranks) else None
            cells.append(f"{rank if rank is not None else '-':>9}")
        lines.append(f"{qi:>3} {(item.kind or '')[:8]:8} {' '.join(cells)}  {item.question[:70]}")
    return "\n".join(lines)


def embed_cached(
    texts: list[str], embedder: Embedder, cache: dict[str, list[float]]
) -> np.ndarray[Any, Any]:
    """Return the vectors of ``texts`` as rows, embedding only those not in ``cache``."""
    missing = list(dict.fromkeys(t for t in texts if t not in cache))
    if missing:
        for text, vector in zip(missing, embedder.embed_documents(missing), strict=True):
            cache[text] = vector
    if not texts:
        return np.zeros((0, max(embedder.dimension, 1)), dtype=np.float32)
    return np.array([cache[t] for t in texts], dtype=np.float32)


def _unit(matrix: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _top_k(row: np.ndarray[Any, Any], k: int) -> list[int]:
    # Stable order: by similarity descending, ties by chunk position.
    k = min(k, row.shape[0])
    order = np.argsort(-row, kind="stable")
    return [int(i) for i in order[:k]]

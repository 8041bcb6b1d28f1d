"""Measure a static "fast tier" embedder distilled from the bundled MiniLM against MiniLM.

A static embedder stores one vector per vocabulary token and embeds a text as the
weighted mean of its tokens' vectors: no network runs, so it embeds thousands of
chunks per second where MiniLM embeds ~20. This script builds such a table from the
model chunkweave already ships (offline, no downloads) and measures what the speed
costs in retrieval, on the example QA file with the default ``elements`` chunks:

- distillation: every vocabulary token ``t`` is run through the int8 MiniLM as
  ``[CLS] t [SEP]``; the model's pooled, normalised output is ``t``'s vector;
- variants: the raw table; the table reduced by PCA to 256 dimensions; either with
  each token weighted by ``log(1 + id)`` (WordPiece vocabularies list frequent
  tokens first, so this damps common ones);
- for each variant and for MiniLM itself: recall@1/5/10 and MRR per question kind
  (:func:`chunkweave.storage.evaluate.evaluate_chunks`, exhaustive cosine search) and
  embedding throughput in chunks per second.

Usage: ``python bench/static_embed.py [--qa FILE] [--corpus DIR] [--out PATH]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunkweave.chunking import ChunkOptions, chunk_document, resolve_options  # noqa: E402
from chunkweave.chunking.models import Chunk  # noqa: E402
from chunkweave.parsers import parse_document  # noqa: E402
from chunkweave.storage.embedders.minilm import MiniLMEmbedder, load_runtime  # noqa: E402
from chunkweave.storage.evaluate import StrategyReport, evaluate_chunks, load_qa  # noqa: E402

DEFAULT_QA = ROOT / "examples" / "qa" / "corpus_qa.jsonl"
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
DISTILL_BATCH = 512
PCA_DIMENSION = 256


def distill() -> np.ndarray[Any, np.dtype[np.float32]]:
    """One vector per vocabulary id: MiniLM's sentence vector of ``[CLS] id [SEP]``."""
    rt = load_runtime()
    size = rt.tokenizer.get_vocab_size()
    cls, sep = rt.tokenizer.token_to_id("[CLS]"), rt.tokenizer.token_to_id("[SEP]")
    table = np.zeros((size, rt.dimension), dtype=np.float32)
    for start in range(0, size, DISTILL_BATCH):
        ids = np.arange(start, min(size, start + DISTILL_BATCH), dtype=np.int64)
        n = len(ids)
        input_ids = np.stack([np.full(n, cls), ids, np.full(n, sep)], axis=1)
        feeds = {
            "input_ids": input_ids,
            "attention_mask": np.ones_like(input_ids),
            "token_type_ids": np.zeros_like(input_ids),
        }
        feeds = {k: v for k, v in feeds.items() if k in rt.input_names}
        table[start : start + n] = rt.session.run(None, feeds)[0]
    return table


def pca(table: np.ndarray[Any, Any], dimension: int) -> np.ndarray[Any, Any]:
    """Centre ``table`` and project it on its first ``dimension`` principal axes."""
    centred = table - table.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    return np.asarray(centred @ axes[:dimension].T, dtype=np.float32)


class StaticEmbedder:
    """Weighted mean of token vectors, unit length (the tokenizer is MiniLM's)."""

    max_tokens = 256

    def __init__(self, name: str, table: np.ndarray[Any, Any], weights: np.ndarray[Any, Any]):
        self.name = name
        self.dimension = int(table.shape[1])
        self.table = table * weights[:, None]
        self.tokenizer = load_runtime().tokenizer

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, enc in enumerate(self.tokenizer.encode_batch(texts, add_special_tokens=False)):
            if enc.ids:
                vector = self.table[enc.ids].sum(axis=0)
                norm = float(np.linalg.norm(vector))
                out[row] = vector / norm if norm else vector
        return out.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text).ids)


def score(
    embedder: Any, questions: list[Any], chunks: dict[str, list[Chunk]]
) -> tuple[StrategyReport, float]:
    """Return the retrieval scores and the chunks per second of the whole evaluation.

    The rate covers embedding the chunks and the questions and the search, which
    for MiniLM is nearly all embedding.
    """
    n = sum(len(c) for c in chunks.values())
    started = time.perf_counter()
    report = evaluate_chunks("elements", questions, chunks, embedder, k=10)
    return report, n / (time.perf_counter() - started)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qa", type=Path, default=DEFAULT_QA)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, help="also write the JSON results here")
    args = ap.parse_args()
    questions = load_qa(args.qa)
    minilm = MiniLMEmbedder()
    opts = resolve_options(ChunkOptions(), minilm.max_tokens)
    names = sorted({q.doc for q in questions if q.doc})
    chunks = {
        name: chunk_document(parse_document(args.corpus / name), opts, minilm, doc_id=name)
        for name in names
    }
    started = time.perf_counter()
    raw = distill()
    distill_s = time.perf_counter() - started
    ones = np.ones(raw.shape[0], dtype=np.float32)
    by_id = np.log1p(np.arange(raw.shape[0], dtype=np.float32))
    reduced = pca(raw, PCA_DIMENSION)
    candidates: list[Any] = [
        StaticEmbedder("static-raw", raw, ones),
        StaticEmbedder("static-raw-weighted", raw, by_id),
        StaticEmbedder(f"static-pca{PCA_DIMENSION}", reduced, ones),
        StaticEmbedder(f"static-pca{PCA_DIMENSION}-weighted", reduced, by_id),
        minilm,
    ]
    rows = []
    for embedder in candidates:
        report, rate = score(embedder, questions, chunks)
        row = {
            "embedder": embedder.name,
            "dimension": embedder.dimension,
            "chunks_per_s": round(rate, 1),
            **{k: round(v, 3) for k, v in report.overall.model_dump().items() if k != "n"},
            "recall_at_5_by_kind": {k: round(s.recall_at_5, 3) for k, s in report.by_kind.items()},
        }
        rows.append(row)
        print(
            f"{row['embedder']:<26} R@1 {row['recall_at_1']:.3f} R@5 {row['recall_at_5']:.3f} "
            f"R@10 {row['recall_at_10']:.3f} MRR {row['mrr']:.3f}  "
            f"{row['chunks_per_s']:8.1f} chunks/s  R@5 by kind {row['recall_at_5_by_kind']}",
            flush=True,
        )
    summary = {
        "qa": args.qa.name,
        "questions": len(questions),
        "chunks": sum(len(c) for c in chunks.values()),
        "vocabulary": int(raw.shape[0]),
        "distill_s": round(distill_s, 1),
        "rows": rows,
    }
    if args.out:
        args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

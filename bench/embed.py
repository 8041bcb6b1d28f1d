"""Throughput and peak memory of the default embedder (all-MiniLM-L6-v2 int8 ONNX).

Embeds ~300 realistic chunks (~200 word pieces each, prose cut from a real manual
in the shared corpus) at several batch sizes. Each batch size runs in a fresh
subprocess so its peak RSS is its own. Reports chunks/s by wall clock and by
process CPU time (the CPU figure is steadier on a shared machine), and peak RSS.

    .venv/bin/python -m bench.embed [--chunks 300] [--batches 1,16,32] [--threads 0]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from chunkweave.storage.embedders.minilm import MiniLMEmbedder

REPO = Path(__file__).resolve().parents[1]

CORPUS = REPO.parent / "shared" / "corpus"
SOURCE = CORPUS / "R-intro.pdf"
TARGET_TOKENS = 200


def make_chunks(embedder: MiniLMEmbedder, n: int) -> list[str]:
    """Cut ``n`` chunks of about TARGET_TOKENS word pieces from the source PDF's text."""
    import pymupdf

    with pymupdf.open(SOURCE) as doc:
        words = " ".join(page.get_text() for page in doc).split()
    chunks: list[str] = []
    start = 0
    while len(chunks) < n and start < len(words):
        size = 150
        while size > 10 and embedder.count(" ".join(words[start : start + size])) > TARGET_TOKENS:
            size -= 10
        chunks.append(" ".join(words[start : start + size]))
        start += size
    if len(chunks) < n:
        sys.exit(f"{SOURCE} yields only {len(chunks)} chunks, {n} asked")
    return chunks


def run_one(batch: int, n: int, threads: int) -> dict[str, float]:
    """Embed ``n`` chunks at ``batch`` in this process; return the measurements."""
    embedder = MiniLMEmbedder(batch_size=batch, intra_op_threads=threads)
    chunks = make_chunks(embedder, n)
    tokens = sum(embedder.count(c) for c in chunks) / len(chunks)
    embedder.embed_documents(chunks[:4])  # warm-up: first run allocates and plans
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = embedder.embed_documents(chunks)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert len(vectors) == n and len(vectors[0]) == embedder.dimension
    return {
        "batch": batch,
        "chunks": n,
        "mean_tokens": round(tokens, 1),
        "chunks_per_s_wall": round(n / wall, 1),
        "chunks_per_cpu_s": round(n / cpu, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--batches", default="1,16,32")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child mode
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.chunks, args.threads)))
        return
    print(f"{'batch':>5} {'tokens':>7} {'chunks/s':>9} {'chunks/cpu-s':>13} {'peak RSS MB':>12}")
    for batch in (int(b) for b in args.batches.split(",")):
        out = subprocess.run(
            [sys.executable, "-m", "bench.embed", "--one", str(batch),
             "--chunks", str(args.chunks), "--threads", str(args.threads)],
            cwd=REPO, check=True, capture_output=True, text=True,
        )  # fmt: skip
        r = json.loads(out.stdout)
        print(
            f"{r['batch']:>5} {r['mean_tokens']:>7} {r['chunks_per_s_wall']:>9} "
            f"{r['chunks_per_cpu_s']:>13} {r['peak_rss_mb']:>12}"
        )


if __name__ == "__main__":
    main()

"""Served ranking options on one ingest: hybrid alpha, BM25 field weights, rerank, language.

``chunkweave eval`` parses, chunks, embeds and writes a scratch collection for every
run; tuning the search on top of that would pay the ingest for every point of a
grid. This bench pays it once per QA set:

1. ``prepare``: parse the documents the QA file names, chunk them (``elements``, the
   default, and the ``naive`` yardstick, as ``chunkweave eval`` builds them), embed
   every chunk and question with the configured embedder, and pickle it all (a cache
   under ``--work``).
2. ``run``: write each chunking into a scratch collection of the configured Weaviate
   (as :func:`chunkweave.storage.served_eval.evaluate_served` writes it), then ask
   every question through ``ChunkStore.search`` once per ranking variant
   (:class:`chunkweave.storage.ranking.Ranking`, passed on the request exactly as the
   served search takes it) and score each with ``chunkweave eval``'s scorer. The
   scratch collections are dropped afterwards.

    python -m bench.ranking prepare --qa examples/qa/corpus_qa.jsonl --docs ../shared/corpus
    python -m bench.ranking run --qa examples/qa/corpus_qa.jsonl --variants grid \
        --json bench/results/ranking_qa.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
from pathlib import Path
from typing import Any

from chunkweave.chunking.models import Chunk
from chunkweave.storage.evaluate import QAItem, load_qa

WORK = Path("/tmp/chunkweave-bench-ranking")


def _cache_path(work: Path, qa: str) -> Path:
    tag = hashlib.sha1(Path(qa).resolve().read_bytes()).hexdigest()[:10]
    return work / f"{Path(qa).stem}-{tag}.pickle"


def prepare(qa: str, docs_dir: str, work: Path) -> Path:
    """Parse, chunk and embed once; return the pickle holding chunks and vectors."""
    from chunkweave.chunking.naive import naive_chunks
    from chunkweave.parsers import parse_document
    from chunkweave.storage.embedders import make_embedder
    from chunkweave.storage.evaluate import embed_cached, searchable
    from chunkweave.storage.pipeline.chunker import Chunker
    from chunkweave.worker.cli.chunk import NAIVE_OVERLAP, _eval_files, _options
    from chunkweave.worker.settings import get_settings

    settings = get_settings()
    questions = load_qa(qa)
    embedder = make_embedder(settings.embedder)
    files = _eval_files(Path(docs_dir), {q.doc for q in questions})
    chunker = Chunker(_options(settings.chunking, {"strategy": "elements"}), embedder)
    chunkings: dict[str, dict[str, list[Chunk]]] = {"elements": {}, "naive": {}}
    for path in files:
        started = time.perf_counter()
        doc = parse_document(path, settings.parse)
        chunkings["elements"][path.name] = chunker.chunk(doc, doc_id=path.name)
        chunkings["naive"][path.name] = naive_chunks(
            doc, embedder, doc_id=path.name, window=embedder.max_tokens, overlap=NAIVE_OVERLAP
        )
        print(f"{path.name}: {time.perf_counter() - started:.1f}s", file=sys.stderr)
    cache: dict[str, list[float]] = {}
    for label, by_doc in chunkings.items():
        started = time.perf_counter()
        chunks, _ = searchable(by_doc)
        embed_cached([c.embed_text for c in chunks], embedder, cache)
        print(f"embedded {label}: {time.perf_counter() - started:.1f}s", file=sys.stderr)
    queries = {q.question: embedder.embed_query(q.question) for q in questions}
    out = _cache_path(work, qa)
    work.mkdir(parents=True, exist_ok=True)
    payload = {
        "embedder": (embedder.name, embedder.dimension),
        "chunkings": chunkings,
        "vectors": cache,
        "queries": queries,
    }
    out.write_bytes(pickle.dumps(payload))
    print(f"wrote {out}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run ``prepare`` or ``run`` (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phase", choices=["prepare", "run"])
    ap.add_argument("--qa", required=True)
    ap.add_argument("--docs")
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--variants", default="default")
    ap.add_argument("--chunkings", default="elements,naive")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args(argv)
    if args.phase == "prepare":
        if not args.docs:
            ap.error("prepare needs --docs")
        prepare(args.qa, args.docs, args.work)
        return 0
    from bench.ranking_run import run

    result = run(
        args.qa,
        _cache_path(args.work, args.qa),
        args.variants,
        args.chunkings.split(","),
    )
    text = json.dumps(result, indent=1, default=str)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n")
    return 0


def load(path: Path) -> dict[str, Any]:
    """Read back what :func:`prepare` pickled."""
    data: dict[str, Any] = pickle.loads(path.read_bytes())
    return data


def questions(qa: str) -> list[QAItem]:
    """Return the QA file's questions."""
    return load_qa(qa)


if __name__ == "__main__":
    sys.exit(main())

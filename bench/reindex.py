"""Reindex cost: the corpus rebuilt with the embedder unchanged, changed, and new ``min_tokens``.

Ingests every PDF and DOCX of ``../shared/corpus`` (default options, bundled MiniLM)
into a fresh local Weaviate, then builds three reindex targets of that live version
with :class:`chunkweave.storage.reindex.reindexer.Reindexer`, the function the workers'
``chunkweave.reindex_document`` task runs, one document after another in this process:

1. ``unchanged``: same chunking, same embedder: every vector is reused;
2. ``embedder changed``: the same with the embedding cache off (``--no-reuse``): every
   chunk is embedded, which is what a reindex onto another embedder pays (parsing,
   chunking and writing are the same; only the model's own speed differs);
3. ``min_tokens``: the merge threshold changed (48 -> ``--min-tokens``): the share of
   vectors still reused.

Each pass is wall time for the whole corpus with its per-stage seconds (the pipeline's
``parse``/``chunk``/``embed``/``upsert``/``prune`` timings summed). Writes
``bench/results/reindex.json``. Run: ``python -m bench.reindex [--min-tokens N]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from chunkweave.chunking.models import ChunkOptions
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.pipeline.conductor import open_pipeline
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.worker.settings import Settings
from chunkweave.worker.tasks.reindex import open_reindexer

ROOT = Path(__file__).resolve().parents[1]


def _target(settings: Settings, embedder: object, chunking: ChunkOptions, reuse: bool) -> str:
    from chunkweave.chunking.fingerprint import chunker_fingerprint
    from chunkweave.storage.values import EmbedderIdentity
    from chunkweave.storage.weaviate.alias import IndexCatalog
    from chunkweave.storage.weaviate.client import WeaviateSession, connect
    from chunkweave.storage.weaviate.collection import create_chunk_collection
    from chunkweave.worker.reindex import build_spec

    cfg = settings.weaviate
    session = WeaviateSession(connect(cfg), cfg)
    try:
        catalog = IndexCatalog(session)
        live = catalog.live()
        assert live is not None
        spec = build_spec(settings, live, chunking=chunking, embedder=embedder, reuse=reuse)  # type: ignore[arg-type]
        identity = EmbedderIdentity(embedder.name, embedder.dimension)  # type: ignore[attr-defined]
        version = catalog.next_version(
            identity,
            chunker=chunker_fingerprint(spec.chunking, identity.name),
            spec=spec.to_json(),
            create=lambda name: create_chunk_collection(session, name, identity),
        )
        return version.collection
    finally:
        session.close()


def _pass(
    settings: Settings, embedder: object, name: str, chunking: ChunkOptions, reuse: bool
) -> dict[str, object]:
    target = _target(settings, embedder, chunking, reuse)
    reindexer, live_ledger, _ = open_reindexer(settings, target, embedder)  # type: ignore[arg-type]
    stages: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    started = time.monotonic()
    entries = list(live_ledger.entries())
    for entry in entries:
        outcome = reindexer.reindex(entry.source, entry)
        statuses[outcome.status] += 1
        stages.update(outcome.timings)
    wall = time.monotonic() - started
    cache = reindexer.cache
    reindexer.close()
    total = cache.reused + cache.embedded
    row = {
        "pass": name,
        "target": target,
        "documents": len(entries),
        "outcomes": dict(statuses),
        "wall_s": round(wall, 1),
        "stages_s": {k: round(v, 1) for k, v in sorted(stages.items())},
        "vectors_reused": cache.reused,
        "vectors_embedded": cache.embedded,
        "reused_share": round(cache.reused / total, 4) if total else None,
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    """Run the three passes and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--min-tokens", type=int, default=24)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/reindex.json")
    args = parser.parse_args()
    files = sorted(p for p in args.corpus.iterdir() if p.suffix.lower() in (".pdf", ".docx"))
    with tempfile.TemporaryDirectory() as tmp, LocalWeaviate(Path(tmp) / "wv") as server:
        cfg = server.config(WeaviateConfig(collection="BenchChunk", ledger_collection="BenchDoc"))
        settings = Settings(weaviate=cfg)
        embedder = make_embedder(settings.embedder)
        pipe = open_pipeline(cfg, embedder, settings.parse, settings.chunking)
        started = time.monotonic()
        ingested = Counter(pipe.ingest(path).status for path in files)
        ingest_s = time.monotonic() - started
        pipe.close()
        print(json.dumps({"ingest_s": round(ingest_s, 1), "outcomes": dict(ingested)}), flush=True)
        rows = [
            _pass(settings, embedder, "unchanged", settings.chunking, reuse=True),
            _pass(
                settings, embedder, "embedder changed (no reuse)", settings.chunking, reuse=False
            ),
            _pass(
                settings,
                embedder,
                f"min_tokens 48 -> {args.min_tokens}",
                settings.chunking.model_copy(update={"min_tokens": args.min_tokens}),
                reuse=True,
            ),
        ]
    result = {
        "corpus": str(args.corpus),
        "files": len(files),
        "embedder": embedder.name,
        "ingest": {"wall_s": round(ingest_s, 1), "outcomes": dict(ingested)},
        "passes": rows,
        "note": "one process, in-process reindex (the worker task's function), shared 2-core host",
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

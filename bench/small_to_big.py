"""What small-to-big retrieval costs at ingest: vectors, embed and upsert time, index size.

Each document is parsed once, then written by the real pipeline
(:meth:`~chunkweave.storage.pipeline.conductor.Pipeline.ingest_parsed`, the default
embedder) into two fresh collections of one local Weaviate: one with
``small_to_big`` off, one with it on (match units: table rows and sentence windows,
:mod:`chunkweave.chunking.match_units`). Reported per setting: chunks and units,
vectors per document, chunks/s of the write (chunk + embed + upsert + prune, parse
excluded), the embed and upsert seconds, and the collection's size on disk (its
folder, write-ahead logs included). The ``off`` and ``on`` runs alternate per
document, so machine load hits both alike.

Usage: ``python -m bench.small_to_big [--docs DIR] [--json PATH] [FILE ...]``
(default: six documents of ``../shared/corpus`` that ``examples/qa`` asks about).
Starts its own server in a temp dir.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from chunkweave.parsers import parse_document
from chunkweave.storage.config import EmbedderConfig, WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.storage.weaviate.store import WeaviateStore

DEFAULT_DOCS = (
    "redp5110_sampled.pdf",
    "2305.03393v1-pg9.pdf",
    "layout-parser-paper-with-table.pdf",
    "multi_page.pdf",
    "word_sample.docx",
    "word_tables.docx",
)


def _size(data_dir: Path, collection: str) -> int:
    folder = data_dir / collection.lower()
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run(files: list[Path]) -> dict[str, Any]:
    """Ingest ``files`` with small-to-big off and on; return the figures of each."""
    embedder = make_embedder(EmbedderConfig())
    identity = EmbedderIdentity(embedder.name, embedder.dimension)
    with tempfile.TemporaryDirectory() as tmp, LocalWeaviate(Path(tmp) / "wv") as server:
        base = server.config(WeaviateConfig(versioned=False))
        pipes: dict[str, Pipeline] = {}
        for label, on in (("off", False), ("on", True)):
            cfg = base.model_copy(
                update={
                    "collection": f"S2b_{label}",
                    "ledger_collection": f"S2bLedger_{label}",
                    "small_to_big": on,
                }
            )
            pipes[label] = Pipeline(store=WeaviateStore.open(cfg, identity), embedder=embedder)
        totals = {k: {"chunks": 0, "seconds": 0.0, "embed_s": 0.0, "upsert_s": 0.0} for k in pipes}
        units = 0
        for path in files:
            doc = parse_document(path)
            for label, pipe in pipes.items():
                started = time.perf_counter()
                out = pipe.ingest_parsed(doc, source=str(path), doc_id=path.name)
                t = totals[label]
                t["seconds"] += time.perf_counter() - started
                t["chunks"] += out.chunks_added
                t["embed_s"] += out.timings.get("embed", 0.0)
                t["upsert_s"] += out.timings.get("upsert", 0.0)
            on_store = pipes["on"].store
            assert isinstance(on_store, WeaviateStore)
            units += len(on_store.unit_parents(path.name))
        time.sleep(2)  # let the server settle its files
        report: dict[str, Any] = {"documents": [p.name for p in files], "embedder": embedder.name}
        for label, pipe in pipes.items():
            t = totals[label]
            vectors = t["chunks"] + (units if label == "on" else 0)
            assert isinstance(pipe.store, WeaviateStore)
            report[label] = {
                **{k: round(v, 3) for k, v in t.items()},
                "units": units if label == "on" else 0,
                "vectors_per_doc": round(vectors / len(files), 1),
                "chunks_per_s": round(t["chunks"] / t["seconds"], 1),
                "index_bytes": _size(Path(tmp) / "wv", pipe.store.cfg.collection),
            }
            pipe.close()
    return report


def main() -> None:
    """Parse the arguments, run, print (and save) the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--docs", default=str(Path("../shared/corpus")))
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()
    files = [Path(args.docs) / name for name in (args.files or DEFAULT_DOCS)]
    report = run(files)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json_path:
        Path(args.json_path).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

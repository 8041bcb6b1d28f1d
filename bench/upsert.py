"""Upsert throughput into a real local Weaviate, as ratios within one run.

Compares, on the same synthetic chunks (384-d deterministic random vectors):

- ``batch``: our path (``WeaviateStore.upsert``: fixed-size batches, concurrent requests);
- ``single``: one ``data.insert`` call per object (on a sample, it is slow);
- ``delete+insert``: re-ingest by deleting each document then inserting all of it
  again with random UUIDs (what a popular ingest tool does);
- ``unchanged``: our re-ingest of the same documents (existing-id lookup, no writes,
  prune of nothing), against our first ingest.

Usage: ``python bench/upsert.py [--docs 40] [--chunks-per-doc 100] [--single 300]``.
Starts its own server in a temp dir unless ``CHUNKWEAVE_WEAVIATE__URL`` is set.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import time
import uuid

import numpy as np
from weaviate.classes.query import Filter

from chunking.models import Chunk
from storage.config import WeaviateConfig
from storage.ingest import Pipeline
from storage.local_weaviate import LocalWeaviate
from storage.weaviate_store import EmbedderIdentity, WeaviateStore, chunk_properties

DIM = 384


class TableEmbedder:
    """Returns precomputed vectors by text, so the benchmark measures storage only."""

    name, dimension, max_tokens = "bench-random", DIM, 512

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.table[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.table[text]

    def count(self, text: str) -> int:
        return len(text.split())


def make_chunks(docs: int, per_doc: int) -> list[Chunk]:
    chunks = []
    for d in range(docs):
        for i in range(per_doc):
            text = f"document {d} paragraph {i} " + "lorem ipsum dolor sit amet " * 12
            sha = hashlib.sha1(f"{d}|{i}|{text}".encode()).hexdigest()
            chunks.append(
                Chunk(
                    id=sha,
                    doc_id=f"doc-{d}",
                    source=f"/bench/doc-{d}.pdf",
                    text=text,
                    embed_text=text,
                    type="text",
                    heading_path=("Bench", f"Section {i // 10}"),
                    page_start=i // 5 + 1,
                    page_end=i // 5 + 1,
                    pages=(i // 5 + 1,),
                    chunk_index=i,
                    token_count=80,
                    content_sha1=sha,
                    doc_sha1="b" * 40,
                    chunker="bench/v1/0",
                )
            )
    return chunks


def by_doc(chunks: list[Chunk]) -> dict[str, list[Chunk]]:
    out: dict[str, list[Chunk]] = {}
    for c in chunks:
        out.setdefault(c.doc_id, []).append(c)
    return out


def run(cfg: WeaviateConfig, docs: int, per_doc: int, single: int) -> dict[str, float]:
    chunks = make_chunks(docs, per_doc)
    rng = np.random.default_rng(42)
    vectors = rng.standard_normal((len(chunks), DIM), dtype=np.float32).tolist()
    table = {c.embed_text: v for c, v in zip(chunks, vectors, strict=True)}
    identity = EmbedderIdentity(TableEmbedder.name, DIM)
    names = [f"Bench{n}" for n in ("Batch", "Single", "Naive", "Pipe")]
    stores = [WeaviateStore.open(cfg.model_copy(update={"collection": n}), identity) for n in names]
    batch, single_store, naive, pipe_store = stores
    n = len(chunks)
    out: dict[str, float] = {"chunks": n}

    t = time.perf_counter()
    batch.upsert(chunks, vectors)
    out["batch_chunks_per_s"] = n / (time.perf_counter() - t)

    coll = single_store.collection()
    t = time.perf_counter()
    for c, v in zip(chunks[:single], vectors[:single], strict=True):
        coll.data.insert(properties=chunk_properties(c, _now()), uuid=uuid.uuid4(), vector=v)
    out["single_chunks_per_s"] = single / (time.perf_counter() - t)

    # Naive re-ingest: delete every document's objects, insert all again (random UUIDs).
    ncoll = naive.collection()
    _naive_insert(ncoll, chunks, vectors, cfg)
    t = time.perf_counter()
    start = 0
    for doc_id, group in by_doc(chunks).items():
        ncoll.data.delete_many(where=Filter.by_property("doc_id").equal(doc_id))
        _naive_insert(ncoll, group, vectors[start : start + len(group)], cfg)
        start += len(group)
    out["delete_insert_chunks_per_s"] = n / (time.perf_counter() - t)

    # Our pipeline path (embed new -> upsert -> prune), first and unchanged.
    pipe = Pipeline(store=pipe_store, embedder=TableEmbedder(table))
    t = time.perf_counter()
    for doc_id, group in by_doc(chunks).items():
        pipe.prune(doc_id, pipe.upsert_chunks(group).uuids)
    first = time.perf_counter() - t
    t = time.perf_counter()
    for doc_id, group in by_doc(chunks).items():
        written = pipe.upsert_chunks(group)
        assert written.added == 0
        pipe.prune(doc_id, written.uuids)
    again = time.perf_counter() - t
    out["pipeline_first_chunks_per_s"] = n / first
    out["pipeline_unchanged_chunks_per_s"] = n / again
    out["unchanged_cost_vs_first"] = again / first
    out["batch_vs_single"] = out["batch_chunks_per_s"] / out["single_chunks_per_s"]
    out["unchanged_vs_delete_insert"] = (
        out["pipeline_unchanged_chunks_per_s"] / out["delete_insert_chunks_per_s"]
    )
    for st in stores:
        st.client.collections.delete(st.cfg.collection)
    stores[0].client.collections.delete(cfg.ledger_collection)
    for st in stores:
        st.close()
    return {k: round(v, 3) for k, v in out.items()}


def _now():  # noqa: ANN202 - tiny helper
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _naive_insert(coll, chunks, vectors, cfg) -> None:  # noqa: ANN001
    now = _now()
    with coll.batch.fixed_size(cfg.batch_size, cfg.concurrent_requests) as b:
        for c, v in zip(chunks, vectors, strict=True):
            b.add_object(properties=chunk_properties(c, now), uuid=uuid.uuid4(), vector=v)
    if coll.batch.failed_objects:
        raise RuntimeError(coll.batch.failed_objects[0].message)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--chunks-per-doc", type=int, default=100)
    parser.add_argument("--single", type=int, default=300, help="objects for the one-by-one run")
    args = parser.parse_args()
    cfg = WeaviateConfig(ledger_collection="BenchLedger")
    url = os.environ.get("CHUNKWEAVE_WEAVIATE__URL")
    if url:
        port = int(os.environ.get("CHUNKWEAVE_WEAVIATE__GRPC_PORT", "50051"))
        result = run(cfg.model_copy(update={"url": url, "grpc_port": port}), **_sizes(args))
    else:
        with tempfile.TemporaryDirectory() as tmp, LocalWeaviate(tmp) as server:
            result = run(server.config(cfg), **_sizes(args))
    print(json.dumps(result, indent=2))


def _sizes(args: argparse.Namespace) -> dict[str, int]:
    return {"docs": args.docs, "per_doc": args.chunks_per_doc, "single": args.single}


if __name__ == "__main__":
    main()

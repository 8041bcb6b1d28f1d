"""Upsert throughput into a real local Weaviate, as ratios within one run.

Compares, on the same synthetic chunks (384-d deterministic random vectors):

- ``batch``: our path (``WeaviateStore.upsert``: gRPC batch slices of ``batch_size``
  encoded by :mod:`chunkweave.storage.weaviate.grpc_batch`, ``concurrent_requests`` at a
  time), with the CPU seconds the Weaviate server, this client and everything else on
  the machine each spent meanwhile (they share the machine's cores);
- ``batch_client_encoder``: the same path with ``encoder="client"`` (objects encoded by
  weaviate-client's ``insert_many``, as before, instead of
  :mod:`chunkweave.storage.weaviate.grpc_batch`),
  for the client's share of the CPU;
- ``batch_weaviate_hnsw``: the same into a collection with Weaviate's default HNSW
  parameters (efConstruction 128, dynamic ef floor 100; chunkweave's until it chose 64
  and 128), to show what the configured ones (or ``--ef-construction``,
  ``--max-connections``) save or cost;
- ``batch_v1``: the write path before chunk schema version 2 (every identifier indexed,
  Weaviate's HNSW defaults, the client's ``batch.fixed_size`` batcher): the "before";
- ``single``: one ``data.insert`` call per object (on a sample, it is slow);
- ``delete+insert``: re-ingest by deleting each document then inserting all of it
  again with random UUIDs through the client's batcher (what a popular ingest tool does);
- ``unchanged``: our re-ingest of the same documents (existing-id lookup, no writes,
  prune of nothing), against our first ingest.

Then the price of the HNSW settings in recall (and query time): nearest neighbours from
Weaviate vs exact (brute-force cosine) ones, for the configured and for Weaviate's
default parameters, on (a) the random vectors above (the hard case for HNSW) and (b)
the real chunks of the six shared-corpus documents that ``examples/qa/corpus_qa.jsonl``
asks about, queried with its questions. (b) runs the real pipeline (parse, chunk,
default embedder, upsert) twice, so it also gives the embedder's throughput and the
unchanged re-ingest's share of the first ingest.

Last, ``real_keyword`` / ``real_vector_only``: the batch rate of every shared-corpus
document's real chunks with their real vectors (embedded once, then cached in the
user's cache directory), into a collection with the keyword (BM25) index (the
default) and one without (``keyword_index`` off), alternating, median of
``--repeats``. Real embeddings cluster, so HNSW builds faster than on random vectors,
but real text makes the keyword index the server's main cost.

Usage: ``python -m bench.upsert [--docs 40] [--chunks-per-doc 100] [--single 300]
[--repeats 3] [--no-corpus] [--json PATH]``. ``batch`` and ``batch_client_encoder`` are
the median of ``--repeats`` runs each (all runs listed under ``*_runs_chunks_per_s``),
each started in a quiet moment of the machine (waiting up to a minute); ``*_other_cpu_s``
is what other processes spent during a run (contention on shared cores).
Starts its own server in a temp dir unless ``CHUNKWEAVE_WEAVIATE__URL`` is set (then
the server's CPU is not measured).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from weaviate.classes.config import Configure, DataType, Property, Tokenization
from weaviate.classes.query import Filter

from chunkweave.chunking.models import Chunk
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.schema import (
    CHUNK_PROPERTIES,
    chunk_properties,
    identity_description,
)
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.storage.weaviate.store import WeaviateStore

REPO = Path(__file__).resolve().parents[1]

DIM = 384
#: Weaviate's own HNSW defaults (what collections got before chunkweave set them).
WEAVIATE_HNSW = {
    "hnsw_ef_construction": 128,
    "hnsw_max_connections": 32,
    "hnsw_dynamic_ef_min": 100,
}
CORPUS = REPO.parent / "shared" / "corpus"
QA = REPO / "examples" / "qa" / "corpus_qa.jsonl"
QA_DOCS = (
    "redp5110_sampled.pdf",
    "2305.03393v1-pg9.pdf",
    "interface-config-guide-p93.pdf",
    "layout-parser-paper-with-table.pdf",
    "word_tables.docx",
    "R-intro.pdf",
)


def v1_properties() -> list[Property]:
    """Return the chunk properties indexed as schema version 1 did (this bench's "before")."""
    out = []
    for p in CHUNK_PROPERTIES:
        if p.dataType == DataType.TEXT:
            filterable = p.name not in {"text", "table_markdown", "table_html", "caption"}
            out.append(
                Property(
                    name=p.name,
                    data_type=p.dataType,
                    tokenization=p.tokenization,
                    index_filterable=filterable,
                    index_searchable=bool(p.indexSearchable),
                )
            )
        elif p.dataType == DataType.TEXT_ARRAY:
            out.append(Property(name=p.name, data_type=p.dataType, tokenization=Tokenization.WORD))
        elif p.dataType == DataType.INT:
            ranged = p.name in {"page_start", "page_end", "chunk_index"}
            out.append(Property(name=p.name, data_type=p.dataType, index_range_filters=ranged))
        else:
            out.append(Property(name=p.name, data_type=p.dataType))
    return out


def timed_v1_upsert(
    store: WeaviateStore, chunks: list[Chunk], vectors: Any, meter: CpuMeter
) -> dict[str, float]:
    """Upsert as before schema version 2; chunks/s and the CPU split.

    Version 1 indexes, Weaviate's HNSW defaults and the client's ``batch.fixed_size``
    batcher, in the same run as the current path.
    """
    name = "BenchV1"
    store.client.collections.create(
        name,
        description=identity_description(store.identity, schema=1),
        properties=v1_properties(),
        vector_config=Configure.Vectors.self_provided(),
    )
    coll = store.client.collections.use(name)
    now = _now()
    client0, server0 = meter.read()
    t = time.perf_counter()
    with coll.batch.fixed_size(store.cfg.batch_size, store.cfg.concurrent_requests) as batch:
        for c, v in zip(chunks, vectors, strict=True):
            batch.add_object(properties=chunk_properties(c, now), uuid=chunk_uuid(c.id), vector=v)
    wall = time.perf_counter() - t
    client1, server1 = meter.read()
    if coll.batch.failed_objects:
        raise RuntimeError(coll.batch.failed_objects[0].message)
    store.client.collections.delete(name)
    out = {"chunks_per_s": len(chunks) / wall, "client_cpu_s": client1 - client0}
    if server0 is not None and server1 is not None:
        out["server_cpu_s"] = server1 - server0
    return out


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


class CpuMeter:
    """CPU seconds spent by this process, (when known) the server, and the whole machine."""

    def __init__(self, server_pid: int | None) -> None:
        self.me = psutil.Process()
        self.server = psutil.Process(server_pid) if server_pid else None

    def read(self) -> tuple[float, float | None]:
        mine = self.me.cpu_times()
        theirs = self.server.cpu_times() if self.server else None
        return (
            mine.user + mine.system,
            theirs.user + theirs.system if theirs else None,
        )

    @staticmethod
    def machine() -> float:
        """CPU seconds every process on the machine has spent (the cores' busy time)."""
        t = psutil.cpu_times()
        return float(t.user + t.nice + t.system + t.irq + t.softirq + getattr(t, "steal", 0.0))


def timed_upsert(
    store: WeaviateStore, chunks: list[Chunk], vectors: Any, meter: CpuMeter
) -> dict[str, float]:
    """Upsert through our path; chunks/s and the CPU split between client and server.

    ``other_cpu_s`` is what everything else on the machine spent meanwhile (other
    users' jobs on shared cores): a run with much of it measured contention.
    """
    client0, server0 = meter.read()
    machine0 = meter.machine()
    t = time.perf_counter()
    store.upsert(chunks, vectors)
    wall = time.perf_counter() - t
    machine1 = meter.machine()
    client1, server1 = meter.read()
    out = {"chunks_per_s": len(chunks) / wall, "client_cpu_s": client1 - client0}
    if server0 is not None and server1 is not None:
        out["server_cpu_s"] = server1 - server0
        out["other_cpu_s"] = max(
            0.0, machine1 - machine0 - out["client_cpu_s"] - out["server_cpu_s"]
        )
    return out


def wait_for_quiet(meter: CpuMeter, *, max_wait_s: float = 60.0) -> None:
    """Wait (at most ``max_wait_s``) for half a second in which the cores are idle.

    On a machine shared with other people's jobs a run that overlaps one measures
    them too; ``other_cpu_s`` of each run says how much that happened anyway.
    """
    deadline = time.monotonic() + max_wait_s
    while time.monotonic() < deadline:
        busy = meter.machine()
        time.sleep(0.5)
        if meter.machine() - busy < 0.1:
            return


def repeated_upserts(
    paths: dict[str, tuple[WeaviateStore, CpuMeter]],
    chunks: list[Chunk],
    vectors: Any,
    repeats: int,
) -> dict[str, list[dict[str, float]]]:
    """Time each named write path (a store and the meter of its server), alternating.

    Every run but the first writes into a freshly re-created collection, so each
    measures the same work; each store's collection keeps its last run's objects.
    Each run waits for a quiet moment first (:func:`wait_for_quiet`).
    """
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in paths}
    for rep in range(repeats):
        order = list(paths.items()) if rep % 2 == 0 else list(paths.items())[::-1]
        for name, (store, meter) in order:
            if rep:
                store.client.collections.delete(store.cfg.collection)
                store.ensure_schema()
            wait_for_quiet(meter)
            runs[name].append(timed_upsert(store, chunks, vectors, meter))
    return runs


def summarize_runs(runs: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    """Flatten :func:`repeated_upserts`' runs: per path, the run with the median rate.

    Keys are ``{path}_{measure}`` for that run, plus every run's rate and other
    processes' CPU (``{path}_runs_chunks_per_s``, ``{path}_runs_other_cpu_s``).
    """
    out: dict[str, Any] = {}
    for prefix, rs in runs.items():
        median = sorted(rs, key=lambda r: r["chunks_per_s"])[len(rs) // 2]
        out |= {f"{prefix}_{key}": value for key, value in median.items()}
        out[f"{prefix}_runs_chunks_per_s"] = [round(r["chunks_per_s"]) for r in rs]
        out[f"{prefix}_runs_other_cpu_s"] = [round(r.get("other_cpu_s", 0.0), 2) for r in rs]
    return out


def run(
    cfg: WeaviateConfig,
    docs: int,
    per_doc: int,
    single: int,
    server_pid: int | None,
    repeats: int = 3,
) -> dict[str, Any]:
    chunks = make_chunks(docs, per_doc)
    rng = np.random.default_rng(42)
    array = rng.standard_normal((len(chunks), DIM), dtype=np.float32)
    vectors = array.tolist()
    table = {c.embed_text: v for c, v in zip(chunks, vectors, strict=True)}
    identity = EmbedderIdentity(TableEmbedder.name, DIM)
    names: dict[str, dict[str, Any]] = {
        "Batch": {},
        "ClientEncoder": {"encoder": "client"},
        "Single": {},
        "Naive": {},
        "Pipe": {},
        "WeaviateHnsw": WEAVIATE_HNSW,
    }
    stores = {
        n: WeaviateStore.open(cfg.model_copy(update={"collection": f"Bench{n}", **u}), identity)
        for n, u in names.items()
    }
    n = len(chunks)
    meter = CpuMeter(server_pid)
    out: dict[str, Any] = {"chunks": n}

    # Each write path ``repeats`` times into a fresh collection, the two alternating;
    # the median run is reported (one run on 2 shared cores swings by +-30%, and the
    # first write into a fresh server also pays its warm-up).
    paths = {
        "batch": (stores["Batch"], meter),
        "batch_client_encoder": (stores["ClientEncoder"], meter),
    }
    out |= summarize_runs(repeated_upserts(paths, chunks, vectors, repeats))
    out["batch_vs_client_encoder"] = (
        out["batch_chunks_per_s"] / out["batch_client_encoder_chunks_per_s"]
    )
    for key, value in timed_upsert(stores["WeaviateHnsw"], chunks, vectors, meter).items():
        out[f"batch_weaviate_hnsw_{key}"] = value
    for key, value in timed_v1_upsert(stores["Batch"], chunks, vectors, meter).items():
        out[f"batch_v1_{key}"] = value
    out["batch_vs_v1"] = out["batch_chunks_per_s"] / out["batch_v1_chunks_per_s"]

    coll = stores["Single"].collection()
    t = time.perf_counter()
    for c, v in zip(chunks[:single], vectors[:single], strict=True):
        coll.data.insert(properties=chunk_properties(c, _now()), uuid=uuid.uuid4(), vector=v)
    out["single_chunks_per_s"] = single / (time.perf_counter() - t)

    # Naive re-ingest: delete every document's objects, insert all again (random UUIDs).
    ncoll = stores["Naive"].collection()
    _naive_insert(ncoll, chunks, vectors, cfg)
    t = time.perf_counter()
    start = 0
    for doc_id, group in by_doc(chunks).items():
        ncoll.data.delete_many(where=Filter.by_property("doc_id").equal(doc_id))
        _naive_insert(ncoll, group, vectors[start : start + len(group)], cfg)
        start += len(group)
    out["delete_insert_chunks_per_s"] = n / (time.perf_counter() - t)

    # Our pipeline path (embed new -> upsert -> prune), first and unchanged.
    pipe = Pipeline(store=stores["Pipe"], embedder=TableEmbedder(table))
    t = time.perf_counter()
    for doc_id, group in by_doc(chunks).items():
        pipe.writer.prune(doc_id, pipe.writer.upsert(group).uuids)
    first = time.perf_counter() - t
    t = time.perf_counter()
    for doc_id, group in by_doc(chunks).items():
        written = pipe.writer.upsert(group)
        assert written.added == 0
        pipe.writer.prune(doc_id, written.uuids)
    again = time.perf_counter() - t
    out["pipeline_first_chunks_per_s"] = n / first
    out["pipeline_unchanged_chunks_per_s"] = n / again
    out["unchanged_cost_vs_first"] = again / first
    out["batch_vs_single"] = out["batch_chunks_per_s"] / out["single_chunks_per_s"]
    out["unchanged_vs_delete_insert"] = (
        out["pipeline_unchanged_chunks_per_s"] / out["delete_insert_chunks_per_s"]
    )

    # Recall of the HNSW graphs built above, on random queries (k=10).
    queries = rng.standard_normal((200, DIM), dtype=np.float32)
    ids = [chunk_uuid(c.id) for c in chunks]
    # Query time: mean near_vector round trip (client included) over those queries.
    for suffix, name in (("", "Batch"), ("_weaviate_hnsw", "WeaviateHnsw")):
        t = time.perf_counter()
        out[f"random_recall_at_10{suffix}"] = ann_recall(stores[name], array, ids, queries, 10)
        out[f"random_query_ms{suffix}"] = (time.perf_counter() - t) * 1000 / len(queries)
    for st in stores.values():
        st.client.collections.delete(st.cfg.collection)
    stores["Batch"].client.collections.delete(cfg.ledger_collection)
    for st in stores.values():
        st.close()
    return out


def ann_recall(
    store: WeaviateStore, base: np.ndarray, ids: Sequence[str], queries: np.ndarray, k: int
) -> float:
    """Share of the exact cosine top-``k`` that Weaviate's ``near_vector`` returns."""
    unit = base / np.linalg.norm(base, axis=1, keepdims=True)
    qs = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    exact = np.argsort(-(qs @ unit.T), axis=1)[:, :k]
    coll = store.collection()
    found = 0
    for q, top in zip(queries, exact, strict=True):
        res = coll.query.near_vector(near_vector=q.tolist(), limit=k, return_properties=[])
        found += len({str(o.uuid) for o in res.objects} & {ids[i] for i in top})
    return found / (len(queries) * k)


class TimedEmbedder:
    """Wraps the real embedder; adds up the time spent embedding documents."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.dimension, self.max_tokens = inner.name, inner.dimension, inner.max_tokens
        self.chunks, self.wall, self.cpu = 0, 0.0, 0.0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        wall, cpu = time.perf_counter(), time.process_time()
        out = self.inner.embed_documents(texts)
        self.wall += time.perf_counter() - wall
        self.cpu += time.process_time() - cpu
        self.chunks += len(texts)
        return list(out)

    def embed_query(self, text: str) -> list[float]:
        return list(self.inner.embed_query(text))

    def count(self, text: str) -> int:
        return int(self.inner.count(text))


def run_corpus(cfg: WeaviateConfig) -> dict[str, float]:
    """Run the real pipeline on the QA documents twice; embedder speed and HNSW recall.

    Recall compares Weaviate's ``near_vector`` top 5 with the exact top 5 for every
    question of the QA file, in the configured collection and in a copy of it with
    Weaviate's default HNSW parameters.
    """
    from chunkweave.storage.config import EmbedderConfig
    from chunkweave.storage.embedders import make_embedder
    from chunkweave.storage.weaviate.client import send_objects

    embedder = TimedEmbedder(make_embedder(EmbedderConfig()))
    embedder.inner.embed_documents(["warm-up: the first call plans and allocates"])
    identity = EmbedderIdentity(embedder.name, embedder.dimension)
    corpus_cfg = cfg.model_copy(
        update={"collection": "BenchCorpus", "ledger_collection": "BenchCorpusLedger"}
    )
    store = WeaviateStore.open(corpus_cfg, identity)
    pipe = Pipeline(store=store, embedder=embedder)
    files = [CORPUS / name for name in QA_DOCS]
    t = time.perf_counter()
    first = [pipe.ingest(f) for f in files]
    first_s = time.perf_counter() - t
    t = time.perf_counter()
    again = [pipe.ingest(f) for f in files]
    again_s = time.perf_counter() - t
    failed = [o.error for o in first if o.status == "failed"]
    assert not failed and all(o.status == "unchanged" for o in again), (failed, again)
    out = {
        "corpus_documents": len(files),
        "corpus_chunks": embedder.chunks,
        "corpus_first_ingest_s": first_s,
        "corpus_unchanged_ingest_s": again_s,
        "corpus_unchanged_cost_vs_first": again_s / first_s,
        "embed_chunks_per_s": embedder.chunks / embedder.wall,
        "embed_chunks_per_cpu_s": embedder.chunks / embedder.cpu,
    }
    objects = {
        str(o.uuid): (o.properties, o.vector["default"])
        for o in store.collection().iterator(include_vector=True)
    }
    ids = list(objects)
    base = np.array([objects[u][1] for u in ids], dtype=np.float32)
    questions = [json.loads(line)["question"] for line in QA.read_text().splitlines() if line]
    queries = np.array([embedder.embed_query(q) for q in questions], dtype=np.float32)
    out["corpus_recall_at_5"] = ann_recall(store, base, ids, queries, 5)
    default_cfg = corpus_cfg.model_copy(update={"collection": "BenchCorpusHnsw", **WEAVIATE_HNSW})
    default = WeaviateStore(store.client, default_cfg, identity)
    default.ensure_schema()
    failures = send_objects(default.collection(), objects, batch_size=200, concurrent_requests=2)
    assert not failures, failures
    out["corpus_recall_at_5_weaviate_hnsw"] = ann_recall(default, base, ids, queries, 5)
    store.client.collections.delete(
        [corpus_cfg.collection, default_cfg.collection, corpus_cfg.ledger_collection]
    )
    store.close()
    return out


def corpus_chunks_and_vectors() -> tuple[list[Chunk], np.ndarray]:
    """Every shared-corpus document's default chunks and their default-embedder vectors.

    Parsing and chunking take ~30 s; embedding the ~2,450 chunks takes minutes on two
    cores, so the vectors are cached in the user's cache directory under a digest of
    the embedder's name and the chunk IDs (which derive from content and chunker: a
    changed corpus or chunker misses the cache). Documents that fail to parse (the
    corpus holds some on purpose) are left out.
    """
    from platformdirs import user_cache_dir

    from chunkweave.chunking import ChunkOptions, chunk_document, resolve_options
    from chunkweave.parsers import ParseError, parse_document
    from chunkweave.storage.config import EmbedderConfig
    from chunkweave.storage.embedders import make_embedder

    embedder = make_embedder(EmbedderConfig())
    opts = resolve_options(ChunkOptions(), embedder.max_tokens)
    chunks: list[Chunk] = []
    for path in sorted(CORPUS.iterdir()):
        if path.suffix.lower() not in {".pdf", ".docx"}:
            continue
        try:
            doc = parse_document(path)
        except ParseError:
            continue
        chunks += chunk_document(doc, opts, embedder, doc_id=path.name, source=str(path))
    digest = hashlib.sha1("\n".join([embedder.name, *(c.id for c in chunks)]).encode())
    cache = Path(user_cache_dir("chunkweave")) / "bench" / f"vectors-{digest.hexdigest()}.npy"
    if cache.is_file():
        return chunks, np.load(cache)
    print(f"embedding {len(chunks)} corpus chunks once (cached in {cache})...", file=sys.stderr)
    array = np.asarray(embedder.embed_documents([c.embed_text for c in chunks]), dtype=np.float32)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, array)
    return chunks, array


def run_real(cfg: WeaviateConfig, server_pid: int | None, repeats: int) -> dict[str, Any]:
    """Batch rate of the whole corpus's real chunks and vectors, with and without BM25.

    The synthetic chunks of :func:`run` have random vectors (the hard case for HNSW)
    but a dozen distinct words each; real chunks carry ~100 words of prose or table
    text, whose keyword (BM25) index is most of the server's work. Both collections
    get the same chunks through the same path, alternating, ``repeats`` runs each.
    """
    chunks, array = corpus_chunks_and_vectors()
    vectors = array.tolist()
    identity = EmbedderIdentity("bench-corpus", array.shape[1])
    meter = CpuMeter(server_pid)
    paths = {}
    for name, keyword in (("real_keyword", True), ("real_vector_only", False)):
        update = {"collection": f"Bench{name.title().replace('_', '')}", "keyword_index": keyword}
        paths[name] = (WeaviateStore.open(cfg.model_copy(update=update), identity), meter)
    out: dict[str, Any] = {"real_chunks": len(chunks)}
    out |= summarize_runs(repeated_upserts(paths, chunks, vectors, repeats))
    out["real_vector_only_vs_keyword"] = (
        out["real_vector_only_chunks_per_s"] / out["real_keyword_chunks_per_s"]
    )
    for store, _ in paths.values():
        store.client.collections.delete(store.cfg.collection)
        store.close()
    return out


def _now() -> datetime:
    return datetime.now(UTC)


def _naive_insert(coll: Any, chunks: list[Chunk], vectors: Any, cfg: WeaviateConfig) -> None:
    now = _now()
    with coll.batch.fixed_size(cfg.batch_size, cfg.concurrent_requests) as b:
        for c, v in zip(chunks, vectors, strict=True):
            b.add_object(properties=chunk_properties(c, now), uuid=uuid.uuid4(), vector=v)
    if coll.batch.failed_objects:
        raise RuntimeError(coll.batch.failed_objects[0].message)


def measure(cfg: WeaviateConfig, args: argparse.Namespace, server_pid: int | None) -> dict:
    result: dict[str, Any] = {
        "load_before": round(os.getloadavg()[0], 2),
        "hnsw_ef_construction": cfg.hnsw_ef_construction,
        "hnsw_max_connections": cfg.hnsw_max_connections,
        "hnsw_dynamic_ef_min": cfg.hnsw_dynamic_ef_min,
        "encoder": cfg.encoder,
        "batch_size": cfg.batch_size,
        "concurrent_requests": cfg.concurrent_requests,
    }
    result |= run(cfg, args.docs, args.chunks_per_doc, args.single, server_pid, args.repeats)
    if args.corpus:
        result |= run_real(cfg, server_pid, args.repeats)
        result |= run_corpus(cfg)
    result["load_after"] = round(os.getloadavg()[0], 2)
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--chunks-per-doc", type=int, default=100)
    parser.add_argument("--single", type=int, default=300, help="objects for the one-by-one run")
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of each batch path (median reported)"
    )
    parser.add_argument(
        "--no-corpus",
        dest="corpus",
        action="store_false",
        help="skip the real-corpus sections (the first run embeds the corpus: minutes)",
    )
    parser.add_argument("--ef-construction", type=int, help="HNSW efConstruction to try")
    parser.add_argument("--max-connections", type=int, help="HNSW maxConnections to try")
    parser.add_argument("--json", type=Path, help="also write the result to this file")
    args = parser.parse_args()
    cfg = WeaviateConfig(ledger_collection="BenchLedger")
    if args.ef_construction:
        cfg = cfg.model_copy(update={"hnsw_ef_construction": args.ef_construction})
    if args.max_connections:
        cfg = cfg.model_copy(update={"hnsw_max_connections": args.max_connections})
    url = os.environ.get("CHUNKWEAVE_WEAVIATE__URL")
    if url:
        port = int(os.environ.get("CHUNKWEAVE_WEAVIATE__GRPC_PORT", "50051"))
        result = measure(cfg.model_copy(update={"url": url, "grpc_port": port}), args, None)
    else:
        with tempfile.TemporaryDirectory() as tmp, LocalWeaviate(tmp) as server:
            result = measure(server.config(cfg), args, server.pid)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()

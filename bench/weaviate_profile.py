"""Record the CPU profile the embedded Weaviate is built with (Go profile-guided optimisation).

Usage: ``python -m bench.weaviate_profile [--out storage/weaviate/server/weaviate.pgo]
[--rounds 3]``

Starts the embedded Weaviate (whichever binary
:mod:`chunkweave.storage.weaviate.server.build` would start) on a temporary data
directory and runs chunkweave's own workload against it
while the server's Go CPU profiler (``/debug/pprof/profile``) records:

- per round, ``bench/upsert.py``'s 4,000 synthetic chunks (384-d random vectors)
  written through :meth:`chunkweave.storage.weaviate.store.WeaviateStore.upsert` into a fresh
  collection, then written again (the replace path);
- 10 hybrid, 10 vector and 10 filtered vector searches (a light share: the synthetic
  texts repeat the same words, which makes their BM25 postings unrealistically long);
- the chunks of a quarter of the documents deleted by ``doc_id``.

Writes dominate, as in ingestion. ``go install -pgo=FILE`` then lays out and
inlines the server's hot paths for this workload (see
:func:`chunkweave.storage.weaviate.server.build.build`);
a profile taken from a binary that was itself built with PGO is fine to reuse. Re-record
after changing the pinned Weaviate version: the profile refers to its functions.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

from bench.upsert import DIM, make_chunks
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.server.build import PGO_PROFILE
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.storage.weaviate.store import WeaviateStore


def workload(store: WeaviateStore, rounds: int) -> None:
    """Write, rewrite, search and delete, ``rounds`` times, each in a fresh collection."""
    from weaviate.classes.query import Filter

    rng = np.random.default_rng(7)
    chunks = make_chunks(40, 100)
    for _ in range(rounds):
        vectors = rng.standard_normal((len(chunks), DIM), dtype=np.float32).tolist()
        store.upsert(chunks, vectors)
        store.upsert(chunks, vectors)
        for i in range(30):
            query = rng.standard_normal(DIM, dtype=np.float32).tolist()
            where = Filter.by_property("doc_id").equal(f"doc-{i % 40}") if i >= 20 else None
            store.search(f"paragraph {i} dolor", query, k=10, hybrid=i < 10, where=where)
        for d in range(0, 40, 4):
            store.delete_doc(f"doc-{d}")
        store.client.collections.delete(store.cfg.collection)
        store.ensure_schema()  # empty again for the next round


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=PGO_PROFILE, help="where to write the profile")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, LocalWeaviate(tmp, profiling=True) as server:
        cfg = server.config(WeaviateConfig(collection="Profile", ledger_collection="ProfileLedger"))
        store = WeaviateStore.open(cfg, EmbedderIdentity("profile", DIM))
        profile: list[bytes] = []
        # Go's profiler records for a fixed number of seconds: time one unprofiled
        # round first, then profile the real rounds with a little slack.
        t0 = time.perf_counter()
        workload(store, 1)  # warm-up, not profiled: measure how long a round takes
        per_round = time.perf_counter() - t0
        seconds = max(5, int(per_round * args.rounds) + 2)
        url = f"http://127.0.0.1:{server.ports.profiling}/debug/pprof/profile?seconds={seconds}"
        fetch = threading.Thread(
            target=lambda: profile.append(urllib.request.urlopen(url, timeout=seconds + 60).read())
        )
        fetch.start()
        time.sleep(0.3)
        workload(store, args.rounds)
        fetch.join()
        store.close()
    args.out.write_bytes(profile[0])
    print(f"wrote {args.out} ({len(profile[0]):,} bytes, {seconds} s of profile)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Plain vs profile-guided Weaviate build: batch upsert rate and server CPU, same run.

Usage: ``python -m bench.weaviate_pgo [--repeats 6] [--json bench/results/weaviate_pgo.json]``

Starts two embedded servers of the pinned version, one built plainly
(``CHUNKWEAVE_WEAVIATE_PGO=off``, built first if missing) and one built with
``storage/weaviate/server/weaviate.pgo`` (see
:mod:`chunkweave.storage.weaviate.server.build`), and writes
``bench/upsert.py``'s 4,000 synthetic chunks (384-d random vectors) through
chunkweave's batch path into a fresh collection on each, alternating which goes
first, each run after a quiet moment. Reports per build the median chunks/s, the
median server and client CPU seconds, every run, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from bench.upsert import DIM, CpuMeter, make_chunks, repeated_upserts
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.server.build import ensure_binary, pgo_profile
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.storage.weaviate.store import WeaviateStore


def binaries() -> dict[str, Path]:
    """Return the plain and the profile-guided build of the pinned version (built if missing)."""
    if pgo_profile() is None:
        raise SystemExit(
            "no PGO profile (storage/weaviate/server/weaviate.pgo missing or PGO switched off)"
        )
    return {"plain": ensure_binary(guided=False), "pgo": ensure_binary()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--json", type=Path, help="also write the result here")
    args = ap.parse_args()
    chunks = make_chunks(40, 100)
    vectors = np.random.default_rng(42).standard_normal((len(chunks), DIM), dtype=np.float32)
    rows = vectors.tolist()
    load_before = os.getloadavg()[0]
    with ExitStack() as stack:
        paths: dict[str, tuple[WeaviateStore, CpuMeter]] = {}
        for name, binary in binaries().items():
            data_dir = stack.enter_context(tempfile.TemporaryDirectory())
            server = stack.enter_context(LocalWeaviate(data_dir, binary=binary))
            cfg = server.config(WeaviateConfig(collection="Pgo", ledger_collection="PgoLedger"))
            store = WeaviateStore.open(cfg, EmbedderIdentity("bench", DIM))
            stack.callback(store.close)
            paths[name] = (store, CpuMeter(server.pid))
        runs = repeated_upserts(paths, chunks, rows, args.repeats)
    result: dict[str, Any] = {"chunks": len(chunks), "repeats": args.repeats}
    result["load_before"] = round(load_before, 2)
    for name, rs in runs.items():
        for key in ("chunks_per_s", "server_cpu_s", "client_cpu_s"):
            result[f"{name}_{key}"] = round(statistics.median(r[key] for r in rs), 2)
        result[f"{name}_runs_chunks_per_s"] = [round(r["chunks_per_s"]) for r in rs]
        result[f"{name}_runs_other_cpu_s"] = [round(r.get("other_cpu_s", 0.0), 2) for r in rs]
    result["pgo_vs_plain"] = round(result["pgo_chunks_per_s"] / result["plain_chunks_per_s"], 3)
    result["load_after"] = round(os.getloadavg()[0], 2)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Searches in a loop until a stop file appears (run as a separate process by the tests).

``python -m tests.reindex_search_loop OUT STOP QUERY...``: one JSON line per search in
OUT: the time, the query, the hit UUIDs, or the error. Reads the store settings from
the environment (``CHUNKWEAVE_WEAVIATE__*``), like any app searching the alias.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.filters import SearchRequest
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.store import WeaviateStore
from chunkweave.worker.settings import get_settings


def main(out: Path, stop: Path, queries: list[str]) -> None:
    """Search each query in turn until ``stop`` exists."""
    settings = get_settings()
    embedder = make_embedder(settings.embedder)
    store = WeaviateStore.open(
        settings.weaviate, EmbedderIdentity(embedder.name, embedder.dimension)
    )
    vectors = {q: embedder.embed_query(q) for q in queries}
    with out.open("a", encoding="utf-8") as fh:
        while not stop.exists():
            for query in queries:
                row: dict[str, object] = {"t": time.time(), "query": query}
                try:
                    hits = store.search(SearchRequest(query, vectors[query], k=5))
                    row["uuids"] = [h.uuid for h in hits]
                except Exception as err:  # noqa: BLE001 - every failure is what we record
                    row["error"] = f"{type(err).__name__}: {err}"
                fh.write(json.dumps(row) + "\n")
                fh.flush()
            time.sleep(0.05)
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])

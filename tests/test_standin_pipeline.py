"""The queue-mechanics stand-in pipeline counts what it writes and skips what is unchanged."""

from __future__ import annotations

import os
import time
from pathlib import Path

import redis

from tests.standin_pipeline import StandinPipeline


def test_standin_counts_writes_and_skips_unchanged(redis_client: redis.Redis, tmp_path: Path):
    doc = tmp_path / "a.pdf"
    doc.write_bytes(b"%PDF-1.4 one")
    pipe = StandinPipeline(redis_client, f"unit-{os.getpid()}-{time.time_ns()}", 0)
    assert pipe.ingest(doc, source=str(doc), doc_id="d").status == "added"
    assert pipe.ingest(doc, source=str(doc), doc_id="d").status == "unchanged"
    doc.write_bytes(b"%PDF-1.4 two")
    assert pipe.ingest(doc, source=str(doc), doc_id="d").status == "updated"
    assert int(redis_client.hget(pipe.key("writes"), "d") or 0) == 2

"""A stand-in pipeline for queue-mechanics tests.

Queue mechanics (acks, redelivery, poison counting, time limits, locks) do not depend
on what the pipeline does, only on how long it takes and that it is idempotent. This
pipeline records every write in the real Redis (``cw:standin:<ns>:*``), so a test
can count writes per document exactly. Workers load it through the documented
``CHUNKWEAVE_PIPELINE_FACTORY`` setting. End-to-end tests use the real pipeline.

Environment read by the stand-in (set by the tests on the worker processes):
``STANDIN_NS`` key namespace, ``STANDIN_DELAY_S`` seconds each ingest takes. A
document containing ``DELAY=<seconds>`` takes that long instead.

Faults, which no real document produces reliably and quickly on every machine (the
product has no fault hooks; they live here): a document containing ``CRASH-ME``
SIGKILLs its worker process (as the OOM killer would), ``HANG-ME`` sleeps until the
soft time limit interrupts it, and ``STUCK-IN-C`` ignores the soft limit (as a hang
inside a C library would), so only the hard limit ends it.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import time
from pathlib import Path

import redis
from billiard.exceptions import SoftTimeLimitExceeded

from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.pipeline.check import DocumentCheck
from chunkweave.storage.values import DocOutcome
from chunkweave.worker.settings import Settings

#: The ``CHUNKWEAVE_PIPELINE_FACTORY`` value that makes workers load the stand-in.
FACTORY = "tests.standin_pipeline:make_standin"


class StandinPipeline:
    """Idempotent fake store in Redis: one sha1 per doc, a write counter per doc."""

    def __init__(self, client: redis.Redis, ns: str, delay_s: float) -> None:
        self.r = client
        self.ns = ns
        self.delay_s = delay_s

    def key(self, name: str) -> str:
        return f"cw:standin:{self.ns}:{name}"

    #: The stand-in embeds nothing.
    embedder = None

    def ingest(
        self, path: Path, *, source: str, doc_id: str, force: bool = False, **_: object
    ) -> DocOutcome:
        data = Path(path).read_bytes()
        sha1 = hashlib.sha1(data).hexdigest()
        self.r.hset(self.key("pid"), doc_id, os.getpid())
        inject_faults(data)
        match = re.search(rb"DELAY=([0-9.]+)", data)
        deadline = time.monotonic() + (float(match.group(1)) if match else self.delay_s)
        while time.monotonic() < deadline:
            time.sleep(0.05)
        previous = self.r.hget(self.key("sha1"), doc_id)
        if previous is not None and previous.decode() == sha1 and not force:
            return DocOutcome(source=source, doc_id=doc_id, status="unchanged", pages=1)
        self.r.hincrby(self.key("writes"), doc_id, 1)
        self.r.hset(self.key("sha1"), doc_id, sha1)
        status = "added" if previous is None else "updated"
        return DocOutcome(source=source, doc_id=doc_id, status=status, pages=1, chunks_added=1)

    def check(self, path: Path, *, source: str, doc_id: str, **_: object) -> DocumentCheck:
        raise NotImplementedError("documents are never fanned out here")

    def retag(self, path: Path, *, source: str, doc_id: str, **_: object) -> DocOutcome | None:
        raise NotImplementedError("documents are never fanned out here")

    def ingest_parsed(self, doc: object, *, source: str, doc_id: str, **_: object) -> DocOutcome:
        raise NotImplementedError("the stand-in does not parse")

    def chunk(self, doc: object, *, source: str, doc_id: str) -> list[object]:
        raise NotImplementedError("the stand-in does not chunk")

    def begin(self, doc: object, **_: object) -> object:
        raise NotImplementedError("the stand-in writes in one step")

    def resume(self, plan: object, **_: object) -> object:
        raise NotImplementedError("the stand-in writes in one step")

    def record_failed(
        self, doc_id: str, source: str, code: ErrorCode, error: str, **_: object
    ) -> bool:
        self.r.hset(self.key("failed"), doc_id, f"{code}: {error}")
        return True

    def failed(
        self, source: str, doc_id: str, code: ErrorCode, error: str, **_: object
    ) -> DocOutcome:
        self.record_failed(doc_id, source, code, error)
        return DocOutcome(source=source, doc_id=doc_id, status="failed", error_code=code)

    def stale(self) -> bool:
        return False

    def close(self) -> None:
        self.r.close()

    def delete(self, doc_id: str, **_: object) -> DocOutcome:
        self.r.hdel(self.key("sha1"), doc_id)
        self.r.hincrby(self.key("deletes"), doc_id, 1)
        return DocOutcome(source=doc_id, doc_id=doc_id, status="deleted", chunks_deleted=1)


def inject_faults(data: bytes) -> None:
    """Crash or hang as the document's markers say (see the module docstring)."""
    if b"CRASH-ME" in data:
        os.kill(os.getpid(), signal.SIGKILL)
    if b"STUCK-IN-C" in data:
        while True:
            try:
                time.sleep(0.1)
            except SoftTimeLimitExceeded:
                continue  # a C-level hang would not notice the soft limit either
    if b"HANG-ME" in data:
        while True:  # until the soft time limit interrupts it
            time.sleep(0.1)


def make_standin(settings: Settings) -> StandinPipeline:
    """Build the stand-in for a worker from its settings and the ``STANDIN_*`` environment."""
    assert settings.redis_url is not None
    client = redis.Redis.from_url(settings.redis_url.get_secret_value())
    return StandinPipeline(
        client, os.environ["STANDIN_NS"], float(os.environ.get("STANDIN_DELAY_S", "0"))
    )

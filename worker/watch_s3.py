"""Watched S3 prefix: poll listings, process each object version exactly once.

S3-compatible stores have no portable change feed, so the watcher lists
``s3://bucket/prefix`` every ``poll_interval_s`` (``list_objects_v2``, paginated) and
compares it with a ledger in Redis, the hash ``cw:s3ledger:<bucket>/<prefix>`` of
key -> ETag:

- a key not in the ledger, or with a different ETag, is a new object version:
  one ingest is enqueued, then the ledger records that ETag;
- a ledger key missing from the listing was deleted: one delete is enqueued and the
  key leaves the ledger.

The ledger is written after the job is enqueued, so a watcher killed in between
re-enqueues that version on restart (at least once; the pipeline makes the repeat
a no-op). Several watchers on one prefix would each enqueue: run one.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from chunkweave.worker.enqueue import Action, Enqueuer
from chunkweave.worker.jobs import as_text
from chunkweave.worker.sources import iter_s3, s3_client, split_s3

log = logging.getLogger(__name__)


class BucketWatcher:
    """Polls one ``s3://bucket/prefix`` and enqueues jobs through ``enqueuer``."""

    def __init__(self, uri: str, enqueuer: Enqueuer, *, client: Any | None = None) -> None:
        bucket, prefix = split_s3(uri)
        self.uri = f"s3://{bucket}/{prefix}"
        self.enq = enqueuer
        self.client = client or s3_client(enqueuer.settings.s3)
        self.ledger_key = f"cw:s3ledger:{bucket}/{prefix}"
        self.interval_s = enqueuer.settings.s3.poll_interval_s
        self.jobs: list[str] = []

    def poll(self) -> str | None:
        """One listing pass; returns the id of the job it enqueued, if any."""
        listed = dict(iter_s3(self.client, self.uri))
        raw = self.enq.redis.hgetall(self.ledger_key)
        ledger = {as_text(k): as_text(v) for k, v in raw.items()}
        items: list[tuple[str, Action]] = [
            (uri, "ingest") for uri, etag in sorted(listed.items()) if ledger.get(uri) != etag
        ]
        items += [(uri, "delete") for uri in sorted(set(ledger) - set(listed))]
        if not items:
            return None
        job_id = self.enq.submit(items)
        pipe = self.enq.redis.pipeline(transaction=False)
        for uri, action in items:
            if action == "delete":
                pipe.hdel(self.ledger_key, uri)
            else:
                pipe.hset(self.ledger_key, uri, listed[uri])
        pipe.execute()
        log.info("watch %s: job %s with %d object(s)", self.uri, job_id, len(items))
        self.jobs.append(job_id)
        return job_id

    def run(self, stop: threading.Event) -> None:
        """Poll until ``stop`` is set; a failed listing is logged and retried next round."""
        while not stop.is_set():
            try:
                self.poll()
            except Exception as err:  # noqa: BLE001 - keep watching through outages
                log.warning("watch %s: listing failed: %s", self.uri, err)
            stop.wait(self.interval_s)

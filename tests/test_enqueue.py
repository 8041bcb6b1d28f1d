"""The producer side against a real Redis: what ``Enqueuer.submit`` leaves in the queue.

No worker consumes the queue here; the tests read the task messages back from Redis
(kombu's JSON envelope around Celery's protocol-2 body) and the job state, so they
check the batched publish path message by message. Delivery to real workers is
covered by ``tests/test_worker_queue.py``.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from celery.utils.saferepr import saferepr
from kombu.exceptions import BatchPublishError

from chunkweave.storage.identity import doc_id_for
from chunkweave.worker import enqueue as enqueue_module
from chunkweave.worker.enqueue import _BATCH, Enqueuer

pytestmark = pytest.mark.integration


def _messages(client: redis.Redis, queue: str) -> list[tuple[str, dict[str, object]]]:
    """Every task message waiting in ``queue``, oldest first: (task name, kwargs)."""
    out = []
    for raw in reversed(client.lrange(queue, 0, -1)):  # LPUSH: newest at the left
        envelope = json.loads(raw)
        assert envelope["properties"]["body_encoding"] == "base64"
        args, kwargs, _embed = json.loads(base64.b64decode(envelope["body"]))
        assert args == []
        assert envelope["headers"]["id"] == envelope["properties"]["correlation_id"]
        # What monitors show: the same text Celery's own saferepr would have written.
        assert envelope["headers"]["argsrepr"] == "()"
        assert envelope["headers"]["kwargsrepr"] == saferepr(kwargs, 1024)
        out.append((envelope["headers"]["task"], kwargs))
    return out


def _docs(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"doc-{i:04d}.docx" for i in range(n)]
    for path in paths:
        path.write_bytes(b"not parsed here")
    return paths


def test_submit_sends_one_message_per_new_document_across_batches(
    service_enqueuer: Enqueuer, redis_client: redis.Redis, tmp_path: Path
) -> None:
    enq = service_enqueuer
    docs = _docs(tmp_path / "real", 2 * _BATCH + 37)  # three batches, the last one partial
    (tmp_path / "link").symlink_to(tmp_path / "real")
    items = [(str(d), "ingest") for d in docs]
    # The same documents again, named through a symlink and as relative paths: no new task.
    items += [(str(tmp_path / "link" / docs[5].name), "ingest")]
    items += [(os.path.relpath(d, Path.cwd()), "ingest") for d in docs[:3]]
    items += [("doc://report-q3", "delete")]

    job_id = enq.submit(items, force=True)

    messages = _messages(redis_client, enq.settings.tasks.queue)
    assert len(messages) == len(docs) + 1
    expected = {doc_id_for(d): str(d.resolve()) for d in docs}
    ingests = [kw for name, kw in messages if name == "chunkweave.ingest_document"]
    assert {kw["doc_id"]: kw["source"] for kw in ingests} == expected
    assert len(ingests) == len(docs)
    assert all(kw["job_id"] == job_id and kw["force"] is True for kw in ingests)
    assert ("chunkweave.delete_document", {"job_id": job_id, "source": "doc://report-q3",
            "doc_id": "doc://report-q3"}) in messages  # fmt: skip
    job = enq.jobs.get(job_id, with_docs=True)
    assert job is not None and job.total == job.queued == len(docs) + 1
    assert job.docs is not None
    assert {d.doc_id for d in job.docs} == {*expected, "doc://report-q3"}


def test_without_force_no_force_flag_and_order_kept(
    service_enqueuer: Enqueuer, redis_client: redis.Redis, tmp_path: Path
) -> None:
    enq = service_enqueuer
    docs = _docs(tmp_path, _BATCH + 1)
    job_id = enq.submit([(str(d), "ingest") for d in docs])
    messages = _messages(redis_client, enq.settings.tasks.queue)
    assert [kw["source"] for _, kw in messages] == [str(d.resolve()) for d in docs]
    assert all("force" not in kw for _, kw in messages)
    job = enq.jobs.get(job_id)
    assert job is not None and job.total == len(docs)


def test_a_failed_publish_batch_is_sent_again_one_message_at_a_time(
    service_enqueuer: Enqueuer,
    redis_client: redis.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failures = []

    @contextmanager
    def failing_batch(producer: object, messages: int) -> Iterator[None]:
        """A batch whose pipeline fails after buffering: nothing of it reached Redis."""
        with producer.batch(max_size=8 * messages + 8) as batch:  # type: ignore[attr-defined]
            yield
            batch.state.abort()  # drop what was buffered, as a failed EXEC would
            failures.append(messages)
            raise BatchPublishError("pipeline failed")

    monkeypatch.setattr(enqueue_module, "_publish_batch", failing_batch)
    enq = service_enqueuer
    docs = _docs(tmp_path, _BATCH + 5)
    job_id = enq.submit([(str(d), "ingest") for d in docs])

    assert failures == [_BATCH, 5]
    messages = _messages(redis_client, enq.settings.tasks.queue)
    assert sorted(kw["source"] for _, kw in messages) == sorted(str(d.resolve()) for d in docs)
    job = enq.jobs.get(job_id)
    assert job is not None and job.total == len(docs)


def test_kwargs_repr_is_bounded_like_celerys() -> None:
    short = {"job_id": "j", "source": "/data/a.pdf", "doc_id": "file:///data/a.pdf"}
    assert enqueue_module._kwargs_repr(short) == repr(short)
    long = dict(short, source="/data/" + "x" * 5000 + ".pdf")
    text = enqueue_module._kwargs_repr(long)
    assert len(text) == enqueue_module._REPR_MAX and text.endswith("...")
    assert text.startswith(repr(long)[:100])

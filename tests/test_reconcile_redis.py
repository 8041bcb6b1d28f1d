"""The reconciler and the holder-naming lock against a real Redis (no workers).

- A lock whose holder is a gone worker is broken at once (no wait for its 30 s TTL);
  a live holder's lock and an unnamed holder's lock are not.
- A document whose owner is gone is requeued with its recorded task and arguments,
  and past ``max_requeues`` failed as ``poison`` with the reason (and sent to the
  ledger through ``record_failure``).
- After a Redis restart (a new ``run_id``) a queued document whose message is in no
  queue is requeued; one whose message waits is left alone.
- Job counters never drift: a document racing ``done`` against a late ``running`` ends
  in exactly one status.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest
import redis

from chunkweave.worker import keys, ownership
from chunkweave.worker.heartbeat import beat
from chunkweave.worker.jobs import DocState, JobStore
from chunkweave.worker.locks import DocLock, lock_value
from chunkweave.worker.reconcile import Reconciler
from chunkweave.worker.settings import Settings

pytestmark = pytest.mark.integration


def _settings(redis_url: str, **extra: Any) -> Settings:
    return Settings(
        redis_url=redis_url,
        queue=f"test-rec-{uuid.uuid4().hex[:8]}",
        heartbeat_ttl_s=0.2,
        reconcile_grace_s=0.2,
        reconcile_audit_s=0,
        **extra,
    )


def _register_dead(r: redis.Redis) -> str:
    wid = f"dead-{uuid.uuid4().hex[:6]}"
    r.zadd(keys.WORKERS, {wid: time.time() - 60})  # beat once, long ago; no heartbeat key
    return wid


def test_lock_of_a_gone_worker_is_broken_at_once(redis_client):
    doc = f"doc://lock-{uuid.uuid4().hex[:6]}"
    dead = _register_dead(redis_client)
    redis_client.set(keys.lock(doc), lock_value(dead, "old-task"), px=30_000)
    started = time.monotonic()
    with DocLock(redis_client, doc, ttl_s=30, wait_s=5, worker="w2", task_id="new") as lock:
        waited = time.monotonic() - started
        assert lock.acquired and lock.broke is not None and dead in lock.broke
    assert waited < 1.0, waited


def test_lock_of_a_live_or_unnamed_holder_is_waited_for(redis_client):
    live = f"live-{uuid.uuid4().hex[:6]}"
    beat(redis_client, live, ["running-task"], ttl_s=30)
    for holder in (lock_value(live, "running-task"), uuid.uuid4().hex):
        doc = f"doc://lock-{uuid.uuid4().hex[:6]}"
        redis_client.set(keys.lock(doc), holder, px=30_000)
        with DocLock(redis_client, doc, ttl_s=30, wait_s=0.3, worker="w2", task_id="t") as lock:
            assert not lock.acquired
        assert redis_client.get(keys.lock(doc)) == holder.encode()
    redis_client.delete(keys.heartbeat(live))


def test_redelivered_task_breaks_its_own_earlier_deliverys_lock(redis_client):
    doc = f"doc://lock-{uuid.uuid4().hex[:6]}"
    live = f"live-{uuid.uuid4().hex[:6]}"
    beat(redis_client, live, ["same-task"], ttl_s=30)
    redis_client.set(keys.lock(doc), lock_value(live, "same-task"), px=30_000)
    with DocLock(redis_client, doc, ttl_s=30, wait_s=0.5, worker=live, task_id="same-task") as lk:
        assert lk.acquired
    redis_client.delete(keys.heartbeat(live))


def _job_with_doc(r: redis.Redis, s: Settings, doc_id: str) -> tuple[JobStore, str]:
    jobs = JobStore(r, ttl_s=3600)
    job_id = jobs.create()
    jobs.add_docs(job_id, [DocState(doc_id=doc_id, source=f"/in/{doc_id}", status="queued")])
    kwargs = {"job_id": job_id, "source": f"/in/{doc_id}", "doc_id": doc_id, "metadata": {"k": 1}}
    ownership.remember_tasks(
        r, job_id, {doc_id: ("chunkweave.ingest_document", kwargs)}, queue=s.queue, ttl_s=3600
    )
    jobs.seal(job_id)
    return jobs, job_id


def _ready(rec: Reconciler) -> None:
    rec.run_pass()  # notes the run id; judges nothing for one heartbeat TTL
    time.sleep(rec.settings.heartbeat_ttl_s + 0.05)


def test_gone_owner_requeued_with_its_arguments_then_failed_past_the_bound(redis_client):
    s = _settings(_url(redis_client), max_requeues=2)
    sent: list[tuple[str, dict[str, Any], str]] = []
    rec = Reconciler(s, client=redis_client, send=lambda n, k, t: sent.append((n, k, t)))
    jobs, job_id = _job_with_doc(redis_client, s, "doc://a")
    _ready(rec)
    for attempt in (1, 2, 3):
        dead = _register_dead(redis_client)
        ownership.claim(
            redis_client, job_id, "doc://a", worker=dead, task_id=f"t{attempt}",
            name="chunkweave.ingest_document", kwargs={}, ttl_s=3600,
        )  # fmt: skip
        jobs.set_doc(job_id, DocState(doc_id="doc://a", source="/in/doc://a", status="running"))
        shown = jobs.get(job_id, with_docs=True)
        assert shown is not None and shown.docs is not None
        assert shown.docs[0].owner == f"{dead} t{attempt}"  # the job record names the owner
        assert rec.run_pass() == 1
    requeues = [m for m in sent if m[0] == "chunkweave.ingest_document"]
    assert len(requeues) == 2 and requeues[0][1]["metadata"] == {"k": 1}
    assert len({t for _, _, t in requeues}) == 2  # a new task id each time
    state = jobs.get_doc(job_id, "doc://a")
    assert state is not None and (state.status, state.error_code) == ("failed", "poison")
    assert "is gone" in (state.error or "") and "limit 2" in (state.error or "")
    assert [m[1]["error_code"] for m in sent if m[0] == "chunkweave.record_failure"] == ["poison"]
    job = jobs.get(job_id)
    assert job is not None and (job.status, job.running, job.failed) == ("failed", 0, 1)


def _url(client: redis.Redis) -> str:
    kw = client.connection_pool.connection_kwargs
    password = f":{kw['password']}@" if kw.get("password") else ""
    return f"redis://{password}{kw['host']}:{kw['port']}/{kw.get('db', 0)}"


def test_after_a_restart_a_queued_document_without_a_message_is_requeued(redis_client):
    s = _settings(_url(redis_client))
    sent: list[tuple[str, dict[str, Any], str]] = []
    rec = Reconciler(s, client=redis_client, send=lambda n, k, t: sent.append((n, k, t)))
    jobs, lost_job = _job_with_doc(redis_client, s, "doc://lost")
    _, kept_job = _job_with_doc(redis_client, s, "doc://kept")
    # The kept document's message waits in the queue, as kombu writes it.
    kept_kwargs = ownership.task_of(redis_client, kept_job, "doc://kept")
    assert kept_kwargs is not None
    from chunkweave.worker.celery_app import make_app

    app = make_app(s)
    app.send_task(kept_kwargs[0], kwargs=kept_kwargs[1], queue=s.queue)
    app.close()
    # "It restarted": the run id this service saw last is another one.
    redis_client.hset(keys.RECONCILE_STATE, f"run_id:{s.queue}", "a-previous-redis")
    _ready(rec)
    assert rec.run_pass() == 1
    (requeued,) = sent
    assert requeued[1]["doc_id"] == "doc://lost" and requeued[1]["job_id"] == lost_job
    state = jobs.get_doc(lost_job, "doc://lost")
    assert state is not None and state.status == "queued" and "lost" in (state.stage or "")
    redis_client.delete(s.queue)


def test_done_racing_a_late_running_ends_in_one_status(redis_client):
    jobs = JobStore(redis_client, ttl_s=3600)
    for _ in range(20):
        job_id = jobs.create()
        queued = DocState(doc_id="d", source="/d", status="queued")
        jobs.add_docs(job_id, [queued])
        jobs.seal(job_id)
        late = threading.Thread(
            target=jobs.set_doc, args=(job_id, queued.model_copy(update={"status": "running"}))
        )
        late.start()
        jobs.set_doc(job_id, queued.model_copy(update={"status": "done"}))
        late.join()
        job = jobs.get(job_id)
        assert job is not None
        assert (job.queued, job.running, job.done) == (0, 0, 1), job

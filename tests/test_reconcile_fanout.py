"""The steps of a fanned-out PDF owned by the job record, against a real Redis.

A big PDF runs as many tasks (page-range parts, the join, chunk slices, the commit).
Each is owned like a whole document, so a dead worker holding one no longer waits
out the broker's 21-minute visibility timeout:

- a step held by a gone worker is requeued with its own recorded arguments, while its
  document stays ``running``; past the bound the document fails as ``poison`` and the
  write lease of its fan-out is dropped;
- after a Redis restart, a step sent but in no queue is sent again;
- the join and the commit are sent once, whichever sibling sees the set complete;
- a dead joiner's lease is broken at once; a lease passed to the write is not;
- a duplicate run of a slice adds nothing to the write's counts;
- a join run again after its joiner died mid-send resumes the write it began.
The run itself, with a worker group killed mid-fan-out, is in test_faults_worker.
"""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
import redis

from chunkweave.worker import keys, ownership
from chunkweave.worker.heartbeat import beat
from chunkweave.worker.jobs import DocState, JobStore
from chunkweave.worker.locks import DocLock, lock_value, pass_lease, take_lease
from chunkweave.worker.reconcile import Reconciler
from chunkweave.worker.settings import Settings
from chunkweave.worker.tasks.parts import Parts
from tests.test_reconcile_redis import _ready, _register_dead, _settings, _url

pytestmark = pytest.mark.integration

SHA1 = "b" * 40
Sent = list[tuple[str, dict[str, Any], str]]


def _fanned_out(r: redis.Redis, s: Settings, doc_id: str) -> tuple[JobStore, str]:
    """A job whose one document is running as a fan-out: two parts sent, none received."""
    jobs = JobStore(r, ttl_s=3600)
    job_id = jobs.create()
    jobs.add_docs(job_id, [DocState(doc_id=doc_id, source="/in/big.pdf", status="queued")])
    ids = {"job_id": job_id, "source": "/in/big.pdf", "doc_id": doc_id}
    ownership.remember_tasks(
        r, job_id, {doc_id: ("chunkweave.ingest_document", ids)}, queue=s.tasks.queue, ttl_s=3600
    )
    jobs.seal(job_id)
    jobs.set_doc(job_id, DocState(doc_id=doc_id, source="/in/big.pdf", status="running"))
    for index in (0, 1):
        kwargs = {**ids, "sha1": SHA1, "index": index, "first": index + 1, "last": index + 1}
        field = ownership.work_field("chunkweave.parse_part", kwargs)
        assert field is not None
        ownership.announce(
            r, job_id, field, name="chunkweave.parse_part", kwargs={**kwargs, "parts": 2},
            task_id=f"sent-{index}", ttl_s=3600,
        )  # fmt: skip
    return jobs, job_id


def _part(doc_id: str, index: int) -> str:
    return f"{doc_id}{ownership.STEP_SEP}part{index}"


def test_a_gone_workers_part_is_requeued_with_its_arguments_and_the_document_runs_on(
    redis_client,
):
    s = _settings(_url(redis_client))
    sent: Sent = []
    rec = Reconciler(s, client=redis_client, send=lambda n, k, t: sent.append((n, k, t)))
    doc_id = f"doc://big-{uuid.uuid4().hex[:6]}"
    jobs, job_id = _fanned_out(redis_client, s, doc_id)
    dead, live = _register_dead(redis_client), f"live-{uuid.uuid4().hex[:6]}"
    beat(redis_client, live, ["t-live"], ttl_s=30)
    claim = {"name": "chunkweave.parse_part", "kwargs": {}, "ttl_s": 3600}
    ownership.claim(redis_client, job_id, _part(doc_id, 0), worker=dead, task_id="t-dead", **claim)
    ownership.claim(redis_client, job_id, _part(doc_id, 1), worker=live, task_id="t-live", **claim)
    _ready(rec)
    beat(redis_client, live, ["t-live"], ttl_s=30)

    assert rec.run_pass() == 1
    ((name, kwargs, task_id),) = sent
    assert name == "chunkweave.parse_part"
    assert (kwargs["index"], kwargs["first"], kwargs["parts"], kwargs["sha1"]) == (0, 1, 2, SHA1)
    state = jobs.get_doc(job_id, doc_id)
    assert state is not None and state.status == "running"  # its other part still runs
    assert "part0" in (state.stage or "") and "is gone" in (state.stage or "")
    records = ownership.owners(redis_client, job_id)
    assert records[_part(doc_id, 0)] == ownership.Owner(
        "", task_id, records[_part(doc_id, 0)].since
    )
    assert records[_part(doc_id, 1)].worker == live
    redis_client.delete(keys.heartbeat(live))


def test_a_slice_lost_past_the_bound_fails_the_document_and_drops_its_lease(redis_client):
    s = _settings(_url(redis_client), max_requeues=1)
    sent: Sent = []
    rec = Reconciler(s, client=redis_client, send=lambda n, k, t: sent.append((n, k, t)))
    doc_id = f"doc://big-{uuid.uuid4().hex[:6]}"
    jobs, job_id = _fanned_out(redis_client, s, doc_id)
    redis_client.hdel(ownership.owners_key(job_id), _part(doc_id, 0), _part(doc_id, 1))  # parsed
    # The write's lease and plan, as slices.start leaves them.
    token = uuid.uuid4().hex
    redis_client.set(keys.lock(doc_id), token, ex=600)
    slices = Parts(redis_client, keys.fanout_slices(doc_id, SHA1), kind="slice", ttl_s=600)
    pipe = redis_client.pipeline()
    slices.put_meta(pipe, {"token": token, "pages": 9, "existed": 0, "slices": 1})
    pipe.execute()
    kwargs = {"job_id": job_id, "source": "/in/big.pdf", "doc_id": doc_id, "sha1": SHA1}
    field = f"{doc_id}{ownership.STEP_SEP}slice0"
    ownership.announce(
        redis_client, job_id, field, name="chunkweave.embed_slice",
        kwargs={**kwargs, "index": 0, "slices": 1}, task_id="sent", ttl_s=3600,
    )  # fmt: skip
    _ready(rec)
    for attempt in (1, 2):
        ownership.claim(
            redis_client, job_id, field, worker=_register_dead(redis_client),
            task_id=f"t{attempt}", name="chunkweave.embed_slice", kwargs={}, ttl_s=3600,
        )  # fmt: skip
        assert rec.run_pass() == 1

    assert [m[1]["index"] for m in sent if m[0] == "chunkweave.embed_slice"] == [0]
    state = jobs.get_doc(job_id, doc_id)
    assert state is not None and (state.status, state.error_code) == ("failed", "poison")
    assert "slice0" in (state.error or "") and "limit 1" in (state.error or "")
    assert [m[1]["error_code"] for m in sent if m[0] == "chunkweave.record_failure"] == ["poison"]
    assert redis_client.get(keys.lock(doc_id)) is None  # the next ingest need not wait 21 min


def test_after_a_restart_a_step_sent_but_in_no_queue_is_sent_again(redis_client):
    s = _settings(_url(redis_client))
    sent: Sent = []
    rec = Reconciler(s, client=redis_client, send=lambda n, k, t: sent.append((n, k, t)))
    doc_id = f"doc://big-{uuid.uuid4().hex[:6]}"
    jobs, job_id = _fanned_out(redis_client, s, doc_id)
    # Part 1's message waits in the queue as kombu writes it; part 0's was lost.
    recorded = ownership.task_of(redis_client, job_id, _part(doc_id, 1))
    assert recorded is not None
    from chunkweave.worker.celery_app import make_app

    app = make_app(s)
    app.send_task(recorded[0], kwargs=recorded[1], queue=s.tasks.queue, task_id="sent-1")
    app.close()
    redis_client.hset(keys.RECONCILE_STATE, f"run_id:{s.tasks.queue}", "a-previous-redis")
    _ready(rec)

    assert rec.run_pass() == 1
    ((name, kwargs, _),) = sent
    assert (name, kwargs["index"]) == ("chunkweave.parse_part", 0)
    state = jobs.get_doc(job_id, doc_id)
    assert state is not None and state.status == "running" and "lost" in (state.stage or "")
    redis_client.delete(s.tasks.queue)


def test_the_join_is_announced_once_and_a_new_fan_out_forgets_the_old_steps(redis_client):
    job_id, doc_id = uuid.uuid4().hex, "doc://once"
    field = f"{doc_id}{ownership.STEP_SEP}finish"
    args = {"name": "chunkweave.finish_document", "kwargs": {"doc_id": doc_id}, "ttl_s": 60}
    assert ownership.announce(redis_client, job_id, field, task_id="a", once=True, **args)
    assert not ownership.announce(redis_client, job_id, field, task_id="b", once=True, **args)
    assert ownership.owners(redis_client, job_id)[field].task_id == "a"
    other = ownership.work_field("chunkweave.ingest_document", {"job_id": job_id, "doc_id": "x"})
    assert other == "x"
    ownership.claim(
        redis_client, job_id, "x", worker="w", task_id="t", name="n", kwargs={}, ttl_s=60
    )
    ownership.forget_steps(redis_client, job_id, doc_id)
    assert set(ownership.owners(redis_client, job_id)) == {"x"}  # another document's record
    assert ownership.announce(redis_client, job_id, field, task_id="c", once=True, **args)


def test_a_dead_joiners_lease_is_broken_and_a_passed_lease_is_not(redis_client):
    doc_id = f"doc://lease-{uuid.uuid4().hex[:6]}"
    dead = _register_dead(redis_client)
    redis_client.set(keys.lock(doc_id), lock_value(dead, "joiner"), ex=600)
    started = time.monotonic()
    mine = take_lease(redis_client, doc_id, ttl_s=600, worker="w2", task_id="joiner-2")
    assert mine is not None and time.monotonic() - started < 1.0
    # Passed to the write's token, which names no holder: slices hold it, nobody breaks it.
    token = uuid.uuid4().hex
    assert pass_lease(redis_client, doc_id, mine, token, ttl_s=600)
    assert not pass_lease(redis_client, doc_id, mine, "again", ttl_s=600)
    assert take_lease(redis_client, doc_id, ttl_s=600, worker="w3", task_id="joiner-3") is None
    with DocLock(redis_client, doc_id, ttl_s=30, wait_s=0.2, worker="w3", task_id="t") as lock:
        assert not lock.acquired
    assert redis_client.get(keys.lock(doc_id)) == token.encode()
    redis_client.delete(keys.lock(doc_id))


def test_a_duplicate_run_of_a_slice_adds_nothing_to_the_counts(redis_client):
    slices = Parts(redis_client, f"cw:test:{uuid.uuid4().hex}", kind="slice", ttl_s=60)
    assert slices.finish(0, 2, counts={"added": 5, "unchanged": 0}) == (False, 1)
    assert slices.finish(0, 2, counts={"added": 5, "unchanged": 0}) == (False, 1)
    assert slices.finish(1, 2, counts={"added": 3, "unchanged": 1}) == (True, 2)
    assert slices.counts() == {"added": 8, "unchanged": 1}
    slices.clear(2)


def test_a_requeued_join_resumes_a_write_its_dead_joiner_began(redis_client, monkeypatch):
    from chunkweave.worker.tasks import slices

    doc_id = f"doc://big-{uuid.uuid4().hex[:6]}"
    sent: list[tuple[str, dict[str, Any], bool]] = []
    monkeypatch.setattr(
        slices,
        "send_step",
        lambda run, step, kwargs, once=False: sent.append((step.name, kwargs, once)),
    )
    rt = SimpleNamespace(redis=redis_client, settings=Settings())
    run = SimpleNamespace(
        rt=rt, job_id="j", source="/in/big.pdf", doc_id=doc_id, sha1=SHA1, carried=lambda: {}
    )
    scratch = Parts(redis_client, keys.fanout_slices(doc_id, SHA1), kind="slice", ttl_s=600)
    assert slices._resume(run, scratch) is None  # no write began: take the lease as usual

    # The dead joiner stored the plan, passed the lease and sent slice 1 only; slice 1 ran.
    token = uuid.uuid4().hex
    pipe = redis_client.pipeline()
    scratch.put_meta(pipe, {"token": token, "pages": 18, "existed": 0, "slices": 3})
    pipe.execute()
    redis_client.set(keys.lock(doc_id), token, ex=600)
    scratch.finish(1, 3, counts={"added": 8})
    assert slices._resume(run, scratch) == {"doc_id": doc_id, "status": "embedding", "slices": 3}
    assert [(n, k["index"]) for n, k, _ in sent] == [
        ("chunkweave.embed_slice", 0),
        ("chunkweave.embed_slice", 2),
    ]
    # Every slice finished: only the commit is left, sent once.
    sent.clear()
    scratch.finish(0, 3, counts={"added": 8})
    scratch.finish(2, 3, counts={"added": 2})
    slices._resume(run, scratch)
    assert [(n, once) for n, _, once in sent] == [("chunkweave.commit_document", True)]
    # Another write holds the lease: nothing to resume.
    redis_client.set(keys.lock(doc_id), "someone-else", ex=600)
    assert slices._resume(run, scratch) is None
    scratch.clear(3)
    redis_client.delete(keys.lock(doc_id))

"""The reconciler's decisions, as pure logic: who lost a document, and what to do then.

Which owner is lost (dead worker, live worker no longer holding the task, a claim too
fresh to judge), which queued document has no message anywhere, and what follows once
the broker is read (keep, adopt the waiting message, requeue); plus the encodings the
decisions read (owner records, the work fields of fan-out steps, lock values, kombu
messages).
"""

from __future__ import annotations

import base64
import json

from chunkweave.worker.broker import BrokerView, doc_of
from chunkweave.worker.heartbeat import Beat
from chunkweave.worker.locks import lock_holder, lock_value
from chunkweave.worker.ownership import (
    STEP_SEP,
    Owner,
    doc_of_field,
    doc_owner_label,
    split_field,
    work_field,
)
from chunkweave.worker.reconcile import after_loss, message_lost, owner_lost

NOW = 1_000_000.0
KEY = ("job1", "doc://a")


def _beat(worker: str, *tasks: str, at: float = NOW - 1) -> dict[str, Beat]:
    return {worker: Beat(worker, at, frozenset(tasks))}


def test_owner_without_heartbeat_is_lost():
    why = owner_lost(Owner("w1", "t1", NOW - 5), {}, now=NOW, grace_s=30)
    assert why is not None and "w1 is gone" in why


def test_live_owner_holding_the_task_is_not_lost():
    beats = _beat("w1", "t1")
    assert owner_lost(Owner("w1", "t1", NOW - 500), beats, now=NOW, grace_s=30) is None


def test_live_owner_no_longer_holding_the_task_is_lost_after_the_grace():
    beats = _beat("w1", "other")
    why = owner_lost(Owner("w1", "t1", NOW - 60), beats, now=NOW, grace_s=30)
    assert why is not None and "no longer holds task t1" in why


def test_a_fresh_claim_or_a_beat_older_than_the_claim_is_not_judged():
    # Claimed 5 s ago (within the grace): the next beat may not list it yet.
    assert owner_lost(Owner("w1", "t1", NOW - 5), _beat("w1"), now=NOW, grace_s=3 + 30) is None
    # The last beat predates the claim: it cannot know the task.
    old_beat = _beat("w1", at=NOW - 100)
    assert owner_lost(Owner("w1", "t1", NOW - 60), old_beat, now=NOW, grace_s=30) is None


def test_queue_markers_are_left_to_the_audit():
    assert owner_lost(Owner("", "t1", NOW - 500), {}, now=NOW, grace_s=30) is None


def test_queued_document_without_a_message_anywhere_is_lost():
    empty = BrokerView()
    assert message_lost(KEY, None, NOW - 60, empty, now=NOW, grace_s=30)
    assert message_lost(KEY, Owner("", "t1", NOW - 60), NOW - 60, empty, now=NOW, grace_s=30)


def test_queued_document_with_a_message_or_too_recent_or_claimed_is_not_lost():
    in_queue = BrokerView(queued={KEY: {"t1"}})
    unacked = BrokerView(unacked={KEY: [("tag", "t1")]})
    assert not message_lost(KEY, None, NOW - 60, in_queue, now=NOW, grace_s=30)
    assert not message_lost(KEY, None, NOW - 60, unacked, now=NOW, grace_s=30)
    assert not message_lost(KEY, None, NOW - 5, BrokerView(), now=NOW, grace_s=30)
    claimed = Owner("w1", "t1", NOW - 60)
    assert not message_lost(KEY, claimed, NOW - 60, BrokerView(), now=NOW, grace_s=30)


def test_after_loss_requeues_adopts_or_keeps():
    lost = Owner("w1", "t1", NOW - 60)
    # Only the dead holder's unacknowledged copy is left: send it again.
    dead_copy = BrokerView(unacked={KEY: [("tag", "t1")]})
    assert after_loss(KEY, lost, dead_copy, {}).action == "requeue"
    assert after_loss(KEY, lost, BrokerView(), {}).action == "requeue"
    # Celery put the message back itself (a pool child died): adopt it, send nothing.
    back = after_loss(KEY, lost, BrokerView(queued={KEY: {"t1"}}), _beat("w1"))
    assert (back.action, back.task_id) == ("adopt", "t1")
    # Another live worker holds a copy (it will record itself): leave it alone.
    held = BrokerView(unacked={KEY: [("tag", "t2")]})
    assert after_loss(KEY, lost, held, _beat("w2", "t2")).action == "keep"


def test_owner_record_round_trips_with_a_worker_id_like_celerys():
    owner = Owner("w0-ab12@host/4242/9f9f9f", "5d1e-task", 1733.25)
    assert Owner.decode(owner.encode().encode()) == owner


def test_lock_value_names_its_holder_and_a_lease_token_names_none():
    worker, task, at = lock_holder(lock_value("w1@host/1/abc", "task-9")) or ("", "", 0.0)
    assert (worker, task) == ("w1@host/1/abc", "task-9") and at > 0
    assert lock_holder("0123456789abcdef") is None


def test_kombu_message_is_read_back_to_its_document():
    body = [[], {"job_id": "job1", "doc_id": "doc://a", "source": "/x.pdf"}, {}]
    message = {
        "body": base64.b64encode(json.dumps(body).encode()).decode(),
        "headers": {"id": "t1", "task": "chunkweave.ingest_document"},
        "properties": {"body_encoding": "base64"},
    }
    assert doc_of(message) == (KEY, "t1")
    other = {**message, "headers": {"id": "t2", "task": "chunkweave.send_webhook"}}
    assert doc_of(other) is None


def test_fan_out_steps_have_work_fields_of_their_own_and_name_their_document():
    ids = {"job_id": "job1", "doc_id": "doc://a", "source": "/x.pdf"}
    fields = {
        work_field("chunkweave.ingest_document", ids),
        work_field("chunkweave.parse_part", {**ids, "index": 0}),
        work_field("chunkweave.parse_part", {**ids, "index": 1}),
        work_field("chunkweave.finish_document", ids),
        work_field("chunkweave.embed_slice", {**ids, "index": 0}),
        work_field("chunkweave.commit_document", ids),
    }
    assert len(fields) == 6 and "doc://a" in fields
    for field in fields:
        assert field is not None and doc_of_field(field) == "doc://a"
    assert split_field(f"doc://a{STEP_SEP}slice0") == ("doc://a", "slice0")
    # Only the known steps split: an odd document id stays whole.
    assert split_field(f"doc://a{STEP_SEP}notastep") == (f"doc://a{STEP_SEP}notastep", "")
    assert work_field("chunkweave.send_webhook", ids) is None
    assert work_field("chunkweave.parse_part", {"doc_id": "doc://a"}) is None  # no job


def test_kombu_message_of_a_fan_out_step_is_read_back_to_its_step():
    body = [[], {"job_id": "job1", "doc_id": "doc://a", "index": 3, "first": 7, "last": 9}, {}]
    message = {
        "body": base64.b64encode(json.dumps(body).encode()).decode(),
        "headers": {"id": "t3", "task": "chunkweave.parse_part"},
        "properties": {"body_encoding": "base64"},
    }
    assert doc_of(message) == (("job1", f"doc://a{STEP_SEP}part3"), "t3")


def test_a_fanned_out_document_is_shown_with_its_steps_holders():
    held = {
        f"doc://a{STEP_SEP}part1": Owner("w1", "t1", NOW).encode(),
        f"doc://a{STEP_SEP}part0": Owner("", "t0", NOW).encode(),
        "doc://b": Owner("w2", "t2", NOW).encode(),
    }
    assert doc_owner_label("doc://a", held) == "queue part0; w1 part1"
    assert doc_owner_label("doc://b", held) == "w2 t2"
    assert doc_owner_label("doc://c", held) is None

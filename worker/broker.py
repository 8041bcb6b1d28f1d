r"""What the broker holds for each document: read off Celery's Redis transport (kombu).

kombu keeps a queue as a Redis list of JSON messages (``LPUSH`` to publish, ``BRPOP``
to consume; priorities other than 0 in sibling lists ``<queue>\x06\x16<n>``), and,
with ack emulation, every delivered but unacknowledged message in the ``unacked``
hash (delivery tag -> ``[message, exchange, routing key]``) indexed by delivery time
in ``unacked_index``. Only a message older than the visibility timeout is put back
(``restore_visible``), and a worker that loses its connection tries to put back what
it holds right then, while Redis may be down: so after a Redis restart or a dead
worker host a message may be in neither, or only in ``unacked`` for the next 21
minutes. :mod:`.reconcile` reads both through this module to find which documents
still have a message somewhere.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

import redis

from chunkweave.worker.ownership import work_field

#: kombu's defaults (``Channel.unacked_key`` and friends), which chunkweave keeps.
UNACKED = "unacked"
UNACKED_INDEX = "unacked_index"
_PRIORITY_SEP = "\x06\x16"
_PRIORITIES = (3, 6, 9)
_PAGE = 1000

DocKey = tuple[str, str]  # (job_id, work field): a document, or one step of its fan-out


@dataclass
class BrokerView:
    """Documents with a message: waiting in the queue, or delivered and unacknowledged."""

    #: (job_id, doc_id) -> task ids of its messages waiting in the queue.
    queued: dict[DocKey, set[str]] = field(default_factory=dict)
    #: (job_id, doc_id) -> (delivery tag, task id) of its unacknowledged messages.
    unacked: dict[DocKey, list[tuple[str, str]]] = field(default_factory=dict)

    def has(self, key: DocKey) -> bool:
        """Tell whether any message for the document exists in the broker."""
        return key in self.queued or key in self.unacked


def doc_of(message: dict[str, object]) -> tuple[DocKey, str] | None:
    """Return ((job_id, work field), task id) of an owned task's message, else None."""
    headers = message.get("headers")
    if not isinstance(headers, dict) or not isinstance(headers.get("task"), str):
        return None
    try:
        body = str(message["body"])
        props = message.get("properties")
        encoding = props.get("body_encoding") if isinstance(props, dict) else None
        raw = base64.b64decode(body) if encoding == "base64" else body.encode()
        _args, kwargs, _embed = json.loads(raw)
        field = work_field(headers["task"], kwargs)
        if field is None:
            return None
        return (str(kwargs["job_id"]), field), str(headers.get("id", ""))
    except (KeyError, TypeError, ValueError):
        return None


def _queue_items(client: redis.Redis, queue: str) -> Iterator[bytes | str]:
    for name in (queue, *(f"{queue}{_PRIORITY_SEP}{p}" for p in _PRIORITIES)):
        start = 0
        while True:
            page = client.lrange(name, start, start + _PAGE - 1)
            yield from page
            if len(page) < _PAGE:
                break
            start += _PAGE


def read_unacked(client: redis.Redis) -> dict[DocKey, list[tuple[str, str]]]:
    """Return the documents with unacknowledged messages (small: at most what workers hold)."""
    out: dict[DocKey, list[tuple[str, str]]] = {}
    for tag, raw in client.hgetall(UNACKED).items():
        try:
            message = json.loads(raw)[0]
        except (ValueError, IndexError, TypeError):
            continue
        found = doc_of(message) if isinstance(message, dict) else None
        if found is not None:
            key, task_id = found
            name = tag.decode() if isinstance(tag, bytes) else str(tag)
            out.setdefault(key, []).append((name, task_id))
    return out


def read_broker(client: redis.Redis, queue: str) -> BrokerView:
    """Read every document message of ``queue`` and of ``unacked`` (pages of 1,000)."""
    view = BrokerView()
    for raw in _queue_items(client, queue):
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        found = doc_of(message) if isinstance(message, dict) else None
        if found is not None:
            view.queued.setdefault(found[0], set()).add(found[1])
    view.unacked = read_unacked(client)
    return view


def drop_unacked(client: redis.Redis, tags: list[str]) -> None:
    """Remove unacknowledged messages (a dead holder's): they are sent again instead."""
    if not tags:
        return
    pipe = client.pipeline(transaction=True)
    pipe.hdel(UNACKED, *tags)
    pipe.zrem(UNACKED_INDEX, *tags)
    pipe.execute()

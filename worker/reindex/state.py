"""A reindex's progress as Redis keeps it: its state, its lock's lifetime, its vector counts."""

from __future__ import annotations

import time
from typing import Literal

import redis
from pydantic import BaseModel, ConfigDict, Field

from chunkweave.errors import ChunkweaveError
from chunkweave.worker import keys

Phase = Literal["building", "switched", "done", "refused", "incomplete", "rolled_back"]

#: Phases after which nothing more happens.
FINAL: frozenset[str] = frozenset({"done", "refused", "incomplete", "rolled_back"})

REINDEX_TASK = "chunkweave.reindex_document"

#: Seconds the reindex lock lives without a step renewing it.
LOCK_TTL_S = 600


class ReindexRefusedError(ChunkweaveError, RuntimeError):
    """A reindex cannot start (another one runs, nothing to reindex, bad options)."""


class ReindexState(BaseModel):
    """A reindex as ``chunkweave status`` and ``GET /reindex`` show it (kept in Redis)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alias: str
    target: str
    live: str
    phase: Phase = "building"
    job_ids: tuple[str, ...] = ()
    total: int = 0
    done: int = 0
    missing: int = 0
    failed: int = 0
    reused: int = 0
    embedded: int = 0
    started_at: float = Field(default_factory=time.time)
    updated_at: float = Field(default_factory=time.time)
    switched_at: float | None = None
    #: When the target last accounted for one more document (stall detection).
    progress_at: float = Field(default_factory=time.time)
    #: Seconds per stage: ``start``, ``build`` (until the target accounts for every
    #: source), ``gate``, ``switch``, ``settle``.
    timings: dict[str, float] = Field(default_factory=dict)
    gate: str | None = None
    message: str = ""

    def line(self) -> str:
        """One line of progress."""
        share = self.reused / (self.reused + self.embedded) if self.reused + self.embedded else 0
        return (
            f"reindex {self.alias} -> {self.target}: {self.phase}, {self.done}/{self.total} "
            f"documents, vectors {self.reused} reused / {self.embedded} embedded "
            f"({share:.0%} reused){', ' + self.message if self.message else ''}"
        )


def resumed(previous: ReindexState | None, target: str) -> ReindexState | None:
    """Return the state a reindex onto ``target`` goes on from, its counters kept, or None.

    ``target`` is a version still building: a run that stopped (interrupted, or
    ``incomplete`` or ``refused`` at the end) is taken up again with the documents
    and vectors it already counted. After an end its jobs are not waited on again.
    """
    if previous is None or previous.target != target or previous.phase in ("done", "switched"):
        return None
    update: dict[str, object] = {"phase": "building", "message": "resumed", "gate": None}
    if previous.phase != "building":
        update["job_ids"] = ()  # their failures are what is being retried
    return previous.model_copy(update=update)


def save_state(r: redis.Redis, state: ReindexState) -> ReindexState:
    """Store ``state`` as the alias's reindex, stamped with the time; return it."""
    state = state.model_copy(update={"updated_at": time.time()})
    r.set(keys.reindex(state.alias), state.model_dump_json())
    return state


def load_state(r: redis.Redis, alias: str) -> ReindexState | None:
    """Return the alias's current or last reindex, or ``None``."""
    raw = r.get(keys.reindex(alias))
    return None if raw is None else ReindexState.model_validate_json(raw)


def status_lines(r: redis.Redis) -> list[str]:
    """One line per reindex Redis knows (for ``chunkweave status``)."""
    out: list[str] = []
    for key in sorted(r.scan_iter(match="cw:reindex:*", count=100)):
        name = key.decode() if isinstance(key, bytes) else str(key)
        if name.count(":") != 2:
            continue
        state = load_state(r, name.split(":", 2)[2])
        if state is not None:
            out.append(state.line())
    return out


def vector_stats(r: redis.Redis, alias: str) -> tuple[int, int]:
    """Return the vectors the alias's reindex tasks reused and embedded so far."""
    got = r.hmget(keys.reindex(alias) + ":stats", "reused", "embedded")
    return int(got[0] or 0), int(got[1] or 0)


def add_stats(r: redis.Redis, alias: str, *, reused: int, embedded: int) -> None:
    """Count vectors a reindex task reused and embedded."""
    pipe = r.pipeline(transaction=False)
    pipe.hincrby(keys.reindex(alias) + ":stats", "reused", reused)
    pipe.hincrby(keys.reindex(alias) + ":stats", "embedded", embedded)
    pipe.execute()


def reset_stats(r: redis.Redis, alias: str) -> None:
    """Start a new reindex's vector counts at zero."""
    r.delete(keys.reindex(alias) + ":stats")

"""Where a document's time goes: seconds per named stage, summed as work happens.

The pipeline times ``check`` (file hash and ledger look-up), ``parse`` (format
detection and parsing), ``chunk``, ``embed``, ``upsert`` (finding stored chunks and
writing new ones) and ``prune`` (deleting stale chunks and recording the ledger
entry); the worker adds ``fetch`` (reading the source) and ``queue``-side stages of
its own. The figures travel in :attr:`DocOutcome.timings <.values.DocOutcome>`.
Each stage is also a tracing span (:mod:`chunkweave.tracing`), but ``prune``: the
commit traces its two steps, ``prune`` and ``ledger``, itself.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from chunkweave import tracing

#: Stages the pipeline reports, in the order a document goes through them.
PIPELINE_STAGES = ("check", "parse", "chunk", "embed", "upsert", "prune")
#: Stages that are no span of their own (see the module docstring).
_UNTRACED = frozenset({"prune"})


class StageTimer:
    """Accumulates wall-clock seconds per stage (a stage may run several times)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block and add it to ``name``."""
        started = time.perf_counter()
        try:
            if name in _UNTRACED:
                yield
            else:
                with tracing.span(name):
                    yield
        finally:
            self.add(name, time.perf_counter() - started)

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to stage ``name``."""
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def rounded(self) -> dict[str, float]:
        """Return the stages with time spent, rounded to 0.1 ms."""
        return {name: round(value, 4) for name, value in self.seconds.items()}

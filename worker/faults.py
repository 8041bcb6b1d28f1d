"""TEST-ONLY fault injection for the worker, off unless explicitly configured.

Integration tests must show that a hanging document hits the time limit and that a
document which kills its worker is given up after bounded attempts. Real inputs
that do this reliably (and quickly) on every machine do not exist, so the worker
honours two settings, both unset by default:

- ``CHUNKWEAVE_FAULT_HANG_MARKER``: a document whose bytes contain this string makes
  its task sleep in Python until the soft time limit interrupts it.
- ``CHUNKWEAVE_FAULT_HARD_HANG_MARKER``: like the hang marker, but the soft limit's
  exception is swallowed (as when a C library hangs), so only the hard limit ends it.
- ``CHUNKWEAVE_FAULT_CRASH_MARKER``: a document whose bytes contain this string makes
  its worker process SIGKILL itself, as the kernel's OOM killer would.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from billiard.exceptions import SoftTimeLimitExceeded

_SCAN_BYTES = 1 << 20


def inject(
    path: Path,
    *,
    hang_marker: str | None,
    crash_marker: str | None,
    hard_hang_marker: str | None = None,
) -> None:
    """Hang or crash if the file carries a configured marker; otherwise do nothing."""
    if not (hang_marker or crash_marker or hard_hang_marker):
        return
    with open(path, "rb") as fh:
        head = fh.read(_SCAN_BYTES)
    if crash_marker and crash_marker.encode() in head:
        os.kill(os.getpid(), signal.SIGKILL)
    if hard_hang_marker and hard_hang_marker.encode() in head:
        while True:
            try:
                time.sleep(0.1)
            except SoftTimeLimitExceeded:
                continue  # a C-level hang would not notice the soft limit either
    if hang_marker and hang_marker.encode() in head:
        while True:  # until the time limit interrupts us
            time.sleep(0.1)

"""How the benchmarks run a system in a child process and read back its results.

A benchmark starts ``python -m MODULE SYSTEM FILE...`` per system, so one system's
global state cannot leak into another's; the child prints one marked JSON record per
file (:func:`emit`), which :func:`run_worker` collects with the child's own resource
usage. Items cross as :func:`item_to_json` dicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.views import Item


def item_to_json(item: Item) -> dict[str, Any]:
    """Return a JSON-safe dict of an item (the worker protocol's wire form)."""
    return {
        "kind": item.kind,
        "text": item.text,
        "level": item.level,
        "page": item.page,
        "rows": [list(r) for r in item.rows] if item.rows is not None else None,
    }


def item_from_json(data: dict[str, Any]) -> Item:
    """Inverse of :func:`item_to_json`."""
    rows = data.get("rows")
    return Item(
        data["kind"],
        data["text"],
        data.get("level"),
        data.get("page"),
        tuple(tuple(r) for r in rows) if rows is not None else None,
    )


#: Prefix of the worker protocol's result lines: libraries print to stdout too.
MARK = "@@bench-record "


def emit(record: dict[str, Any]) -> None:
    """Print one worker result record (a marked JSON line) to stdout."""
    print(MARK + json.dumps(record), flush=True)


def run_worker(
    module: str, system: str, files: list[Path], *, timeout: float, extra: tuple[str, ...] = ()
) -> tuple[list[dict[str, Any]], str | None, Any]:
    """Run ``python -m MODULE SYSTEM FILE...`` in a child process; collect its records.

    Returns the records the child printed (one per file it finished), an error string
    if it timed out or died (None otherwise) and the child's ``resource`` usage (from
    ``os.wait4``, so ``ru_maxrss`` is this child's own peak RSS in KiB).
    """
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, system, *map(str, files), *extra],
            cwd=root,
            stdout=out,
            stderr=err,
            env={**os.environ, "UNSTRUCTURED_DISABLE_NOTICE": "1", "HF_HUB_OFFLINE": "1"},
        )
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.05)
        else:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            status = None
        proc.returncode = 0  # reaped above; keep Popen from waiting again
        out.seek(0)
        lines = out.read().decode(errors="replace").splitlines()
        records = [json.loads(ln[len(MARK) :]) for ln in lines if ln.startswith(MARK)]
        error = None
        if status is None:
            error = f"timed out after {timeout:.0f}s"
        elif status != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-1:]
            error = f"exit status {os.waitstatus_to_exitcode(status)}: {' '.join(tail)}"
    return records, error, usage

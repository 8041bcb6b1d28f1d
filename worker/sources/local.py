"""Local paths: absolute, resolved paths on a filesystem every worker sees.

Read in place (no copy). ``file://`` URIs, which is what doc ids of local files look
like, are accepted and turned back into paths.

Watched folders (:class:`FolderWatcher`): enqueue ingest for new/changed documents
and delete for removed ones.

- Events (watchdog, inotify on Linux): only *close-after-write* and *moves* count, so
  half-written files and atomic-rename temp files are never picked up; hidden, temp
  and non-document names are ignored (``chunkweave.worker.sources.base.wanted``). With
  ``polling=True`` (network filesystems, where inotify sees nothing from other
  hosts) created/modified files are acted on once their size and mtime have been
  stable for ``settle_s``.
- Reconcile: on start and every ``reconcile_s`` the folder is compared with what the
  watcher last enqueued (a Redis hash ``cw:watch:<folder>`` of path -> mtime:size),
  so files added, changed or removed while the watcher was down are caught up.
- Events arriving close together are batched into one job (0.5 s window).

One watcher per folder; any number of workers consume its jobs.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from watchdog.events import (
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from chunkweave.worker.jobs import Action
from chunkweave.worker.sources.base import (
    SourceNotFoundError,
    Submitter,
    Watcher,
    remembered,
    submit_and_remember,
    wanted,
)

if TYPE_CHECKING:
    from chunkweave.worker.settings import Settings


def iter_local(root: Path) -> Iterator[Path]:
    """Every wanted document under ``root`` (a file or a folder), sorted, hidden dirs skipped."""
    if root.is_file():
        yield root.resolve()
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if wanted(name):
                yield (Path(dirpath) / name).resolve()


class LocalSource:
    """The fallback scheme: anything that is not another scheme's URI is a path."""

    def claims(self, uri: str) -> bool:
        """Every URI with no other scheme (checked last by the registry)."""
        return True

    def normalize(self, uri: str) -> str:
        """Return the absolute, resolved path (``~`` expanded, ``file://`` unwrapped)."""
        text = uri
        if text.startswith("file://"):  # a doc_id of a local file is its file:// URI
            text = unquote(urlsplit(text).path)
        return str(Path(text).expanduser().resolve())

    def expand(self, uri: str, settings: Settings) -> Iterator[str]:
        """Yield the file itself, or every wanted document under the folder (recursive)."""
        path = Path(uri).expanduser()
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or directory")
        for found in iter_local(path):
            yield str(found)

    @contextmanager
    def fetched(self, uri: str, settings: Settings) -> Iterator[Path]:
        """Give the file in place."""
        path = Path(uri)
        if not path.is_file():
            raise SourceNotFoundError(f"{uri}: no such file")
        yield path

    def watcher(self, uri: str, submitter: Submitter, *, polling: bool = False) -> Watcher:
        """Build a :class:`FolderWatcher` on the folder."""
        settings = submitter.settings
        return FolderWatcher(
            Path(uri),
            submitter,
            polling=polling,
            reconcile_s=settings.watch_reconcile_s,
            settle_s=settings.watch_settle_s,
        )


log = logging.getLogger(__name__)
_BATCH_WINDOW_S = 0.5
_RECONCILE = "__reconcile__"


def _stamp(path: Path) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return f"{st.st_mtime_ns}:{st.st_size}"


class _Handler(FileSystemEventHandler):
    """Turns watchdog events into (kind, path) items on a queue."""

    def __init__(self, out: queue.Queue[tuple[str, str]], polling: bool) -> None:
        self.out = out
        self.polling = polling

    def on_any_event(self, event: FileSystemEvent) -> None:
        src = os.fsdecode(event.src_path)
        if isinstance(event, FileClosedEvent):  # close-after-write (inotify only)
            self.out.put(("upsert", src))
        elif isinstance(event, FileMovedEvent):
            self.out.put(("delete", src))
            self.out.put(("upsert", os.fsdecode(event.dest_path)))
        elif isinstance(event, FileDeletedEvent):
            self.out.put(("delete", src))
        elif isinstance(event, DirMovedEvent | DirDeletedEvent):
            self.out.put((_RECONCILE, src))  # whole subtrees came or went
        elif self.polling and isinstance(event, FileCreatedEvent | FileModifiedEvent):
            self.out.put(("settle", src))


class FolderWatcher:
    """Watches one folder tree and enqueues jobs through ``enqueuer``."""

    def __init__(
        self,
        root: Path,
        enqueuer: Submitter,
        *,
        polling: bool = False,
        reconcile_s: float = 300.0,
        settle_s: float = 1.0,
    ) -> None:
        self.root = root.expanduser().resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"{root}: not a directory")
        self.enq = enqueuer
        self.polling = polling
        self.reconcile_s = reconcile_s
        self.settle_s = settle_s
        self.state_key = f"cw:watch:{self.root}"
        self.events: queue.Queue[tuple[str, str]] = queue.Queue()
        self._settling: dict[str, tuple[str | None, float]] = {}
        self.jobs: list[str] = []

    # -- decisions -----------------------------------------------------------------

    def _known(self) -> dict[str, str]:
        return remembered(self.enq, self.state_key)

    def reconcile(self) -> str | None:
        """Enqueue what changed since the last enqueue; return the job id, if any."""
        known = self._known()
        current = {str(p): s for p in iter_local(self.root) if (s := _stamp(p)) is not None}
        items: list[tuple[str, Action]] = []
        fresh_after = time.time_ns() - int(self.settle_s * 1e9)
        for path, stamp in sorted(current.items()):
            if known.get(path) == stamp:
                continue
            if int(stamp.split(":")[0]) > fresh_after:
                # Modified moments ago: maybe still being written; wait for it to settle.
                self._settling.setdefault(path, (stamp, time.monotonic()))
                continue
            items.append((path, "ingest"))
        items += [(p, "delete") for p in sorted(set(known) - set(current))]
        return self._submit(items, current)

    def _submit(self, items: list[tuple[str, Action]], stamps: dict[str, str]) -> str | None:
        job_id = submit_and_remember(self.enq, self.state_key, items, stamps)
        if job_id is None:
            return None
        log.info("watch %s: job %s with %d document(s)", self.root, job_id, len(items))
        self.jobs.append(job_id)
        return job_id

    def _decide(self, events: list[tuple[str, str]]) -> bool:
        """Turn a batch of events into one job; True if a full reconcile is due."""
        known = self._known()
        wanted_items: dict[str, Action] = {}
        stamps: dict[str, str] = {}
        for kind, path in events:
            if kind == _RECONCILE:
                return True
            if not self._inside(path) or not wanted(path):
                continue
            if kind == "settle":
                self._settling[path] = (_stamp(Path(path)), time.monotonic())
                continue
            if kind == "delete":
                if path in known or path in wanted_items:
                    wanted_items[path] = "delete"
                continue
            stamp = _stamp(Path(path))
            if stamp is not None and known.get(path) != stamp:
                wanted_items[path] = "ingest"
                stamps[path] = stamp
        self._submit(list(wanted_items.items()), stamps)
        return False

    def _settled(self) -> None:
        """Act on files whose size and mtime stopped changing (polling mode)."""
        now = time.monotonic()
        ready: list[tuple[str, str]] = []
        for path, (stamp, seen) in list(self._settling.items()):
            current = _stamp(Path(path))
            if current != stamp:
                self._settling[path] = (current, now)
            elif now - seen >= self.settle_s:
                del self._settling[path]
                if current is not None:
                    ready.append(("upsert", path))
        if ready:
            self._decide(ready)

    def _inside(self, path: str) -> bool:
        rel = Path(path).relative_to(self.root) if path.startswith(str(self.root)) else None
        return rel is not None and not any(part.startswith(".") for part in rel.parts[:-1])

    # -- loop ------------------------------------------------------------------------

    def _observer(self) -> BaseObserver:
        observer = PollingObserver(timeout=1.0) if self.polling else Observer()
        observer.schedule(_Handler(self.events, self.polling), str(self.root), recursive=True)
        return observer

    def run(self, stop: threading.Event) -> None:
        """Watch until ``stop`` is set: reconcile, then events + periodic reconciles."""
        observer = self._observer()
        observer.start()  # before the first reconcile, so nothing slips between them
        try:
            self.reconcile()
            next_reconcile = time.monotonic() + self.reconcile_s
            while not stop.is_set():
                batch: list[tuple[str, str]] = []
                try:
                    batch.append(self.events.get(timeout=0.2))
                    deadline = time.monotonic() + _BATCH_WINDOW_S
                    while (left := deadline - time.monotonic()) > 0:
                        batch.append(self.events.get(timeout=left))
                except queue.Empty:
                    pass
                due = bool(batch) and self._decide(batch)
                self._settled()
                if due or time.monotonic() >= next_reconcile:
                    self.reconcile()
                    next_reconcile = time.monotonic() + self.reconcile_s
        finally:
            observer.stop()
            observer.join(timeout=5)

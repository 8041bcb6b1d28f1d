"""Local paths: absolute, resolved paths on a filesystem every worker sees.

Read in place (no copy). ``file://`` URIs, which is what doc ids of local files look
like, are accepted and turned back into paths.

Watched folders (:class:`FolderWatcher`): enqueue ingest for new/changed documents
and delete for removed ones.

- Events (watchdog, inotify on Linux): a file *created* (which is also how inotify
  reports a move from a folder outside), *closed after write*, or in a folder
  *created or moved in* (its whole tree) is acted on once its size and mtime have
  been stable for ``settle_s`` (a writer may close and reopen it mid-write); a file
  renamed into place inside the folder at once. Hidden, temp and non-document names
  are ignored (:func:`~.base.wanted`), and so is a link that leads out of the
  watched folder. With ``polling=True`` (network filesystems, where inotify sees
  nothing from other hosts) created/modified files settle the same way.
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
    DirCreatedEvent,
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

from chunkweave.storage.metadata import SIDECAR_SUFFIX, sidecar_path
from chunkweave.worker import keys
from chunkweave.worker.jobs import Action
from chunkweave.worker.sources.base import (
    InvalidSourceError,
    SourceNotFoundError,
    Submitter,
    Watcher,
    not_allowed,
    remembered,
    submit_and_remember,
    wanted,
)

if TYPE_CHECKING:
    from chunkweave.worker.settings import Settings, SourcesConfig


def iter_local(root: Path, *, within: tuple[Path, ...] | None = None) -> Iterator[Path]:
    """Every wanted document under ``root`` (a file or a folder), resolved and sorted.

    Hidden folders are skipped and folder links are not followed. A file whose link
    points outside ``within`` (default: ``root`` itself) is skipped: a watched or
    confined folder never leads to files elsewhere. Each file is yielded once, however
    many links inside lead to it.
    """
    bounds = within if within is not None else (root.resolve(),)
    if root.is_file():
        found = root.resolve()
        if any(found.is_relative_to(b) for b in bounds):
            yield found
        return
    seen: set[Path] = set()  # a link to a file inside is the file: once
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if wanted(name):
                found = (Path(dirpath) / name).resolve()
                if found not in seen and any(found.is_relative_to(b) for b in bounds):
                    seen.add(found)
                    yield found


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

    def confine(self, uri: str, settings: Settings) -> str:
        """Return the resolved path if it exists under one of ``settings.source_roots``.

        Relative paths are refused (they would resolve against the server's working
        folder), and links are resolved before the check.
        """
        path = Path(uri)
        if not path.is_absolute():
            raise InvalidSourceError(f"{uri}: local sources must be absolute paths")
        try:
            resolved = path.resolve()
            inside = any(resolved.is_relative_to(root) for root in settings.source_roots)
            found = inside and resolved.exists()
        except OSError as err:  # a name longer than the file system takes, a loop of links
            raise InvalidSourceError(f"{uri}: {err.strerror or err}") from err
        if not found:
            raise not_allowed(uri)
        return str(resolved)

    def expand_confined(self, uri: str, settings: Settings) -> Iterator[str]:
        """Every document under a confined path, links out of the roots skipped."""
        root = Path(self.confine(uri, settings))
        for found in iter_local(root, within=settings.source_roots):
            yield str(found)

    def allowing(self, uri: str, sources: SourcesConfig) -> SourcesConfig:
        """Add the folder to the allowed roots."""
        root = Path(uri).expanduser().resolve()
        return sources.model_copy(update={"roots": (*sources.roots, root)})

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
            reconcile_s=settings.watch.reconcile_s,
            settle_s=settings.watch.settle_s,
        )


def refusal(uri: str, settings: Settings) -> str:
    """Say which check a local source that :meth:`LocalSource.confine` refused fails.

    For callers the operator trusts with the allowed roots (``chunkweave mcp``): the
    HTTP API answers every refusal alike (:func:`~.base.not_allowed`), so that it tells
    nothing about what exists where a caller may not look.
    """
    roots = settings.source_roots
    allowed = ", ".join(str(r) for r in roots) or "none configured"
    path = Path(uri).expanduser()
    if not path.is_absolute():
        return f"{uri}: a relative path; give an absolute path under an allowed root ({allowed})"
    lexical = Path(os.path.normpath(path))
    resolved = path.resolve()
    if not any(resolved.is_relative_to(root) for root in roots):
        if any(lexical.is_relative_to(root) for root in roots):
            return f"{uri}: a link that leads outside the allowed roots ({allowed})"
        return (
            f"{uri}: not under an allowed root ({allowed}); CHUNKWEAVE_SOURCES__ROOTS "
            "names more (a `serve --watch` folder is allowed in serve's own API only)"
        )
    if not resolved.exists():
        return f"{uri}: no such file or folder (it is under an allowed root)"
    return f"{uri}: not readable here ({resolved})"


log = logging.getLogger(__name__)
_BATCH_WINDOW_S = 0.5
_RECONCILE = "__reconcile__"
_SETTLE_TREE = "__settle_tree__"


def _stamp(path: Path) -> str | None:
    """``mtime:size`` of a document, and of its sidecar when it has one.

    A sidecar ``NAME.meta.json`` holds the document's metadata, so a change to it
    alone is a change of the document.
    """
    try:
        st = path.stat()
    except OSError:
        return None
    stamp = f"{st.st_mtime_ns}:{st.st_size}"
    try:
        side = Path(sidecar_path(str(path))).stat()
    except OSError:
        return stamp
    return f"{stamp}+{side.st_mtime_ns}:{side.st_size}"


def _document_of(kind: str, path: str) -> tuple[str, str]:
    """Map an event on a sidecar to one on its document (a removed sidecar changes it)."""
    if not path.endswith(SIDECAR_SUFFIX):
        return kind, path
    return ("upsert" if kind == "delete" else kind), path.removesuffix(SIDECAR_SUFFIX)


class _Handler(FileSystemEventHandler):
    """Turns watchdog events into (kind, path) items on a queue."""

    def __init__(self, out: queue.Queue[tuple[str, str]], polling: bool) -> None:
        self.out = out
        self.polling = polling

    def on_any_event(self, event: FileSystemEvent) -> None:
        src = os.fsdecode(event.src_path)
        if isinstance(event, FileClosedEvent | FileCreatedEvent):
            # Closed after write (inotify), or created: a new file, a copy just begun, or
            # a move from a folder outside the watched one (inotify reports an unpaired
            # move-in as a creation). A writer may still be writing, or close and reopen
            # the file: act once its size and mtime have been stable for settle_s.
            self.out.put(("settle", src))
        elif isinstance(event, FileMovedEvent):  # a rename inside the folder: complete
            self.out.put(("delete", src))
            self.out.put(("upsert", os.fsdecode(event.dest_path)))
        elif isinstance(event, FileDeletedEvent):
            self.out.put(("delete", src))
        elif isinstance(event, DirCreatedEvent):
            # A folder copied or moved in: files that landed in it before its watch was
            # added raise no event of their own, so its whole tree settles.
            self.out.put((_SETTLE_TREE, src))
        elif isinstance(event, DirMovedEvent | DirDeletedEvent):
            self.out.put((_RECONCILE, src))  # whole subtrees came or went
        elif event.event_type == "events_lost":  # a kernel queue overflow (watchdog >= 7)
            self.out.put((_RECONCILE, src))
        elif self.polling and isinstance(event, FileModifiedEvent):
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
        self.state_key = keys.watched_folder(str(self.root))
        self.events: queue.Queue[tuple[str, str]] = queue.Queue()
        self._settling: dict[str, tuple[str | None, float]] = {}
        self.jobs: list[str] = []

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
        for event_kind, event_path in events:
            if event_kind == _RECONCILE:
                return True
            if event_kind == _SETTLE_TREE:
                self._settle_tree(Path(event_path))
                continue
            kind, path = _document_of(event_kind, event_path)
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

    def _settle_tree(self, folder: Path) -> None:
        """Let every wanted file under a folder that arrived settle, then act on it."""
        if not self._inside(str(folder / "_")) or not folder.is_dir():
            return
        now = time.monotonic()
        for found in iter_local(folder, within=(self.root,)):
            self._settling.setdefault(str(found), (_stamp(found), now))

    def _settled(self) -> None:
        """Act on files whose size and mtime stopped changing for ``settle_s``."""
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
        """Tell whether ``path`` is a watched file.

        It must lie under the root with no hidden folder on the way, and still lie under
        the root once links are resolved.
        """
        rel = Path(path).relative_to(self.root) if path.startswith(str(self.root)) else None
        if rel is None or any(part.startswith(".") for part in rel.parts[:-1]):
            return False
        return Path(path).resolve().is_relative_to(self.root)

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

"""Chunks as files: one Markdown file per chunk with YAML front matter, and a JSONL manifest.

For users who bring their own vector store. :class:`FileSink` writes a document's
chunks in the format of :mod:`.chunk_files` and lists every file in
``ROOT/manifest.jsonl``, one JSON object per chunk. Writes are incremental and
crash-safe, like the store's:

- a file whose bytes would not change is not touched (its mtime stays);
- every file is written to a temporary name beside it, then renamed over it, so a
  reader never sees half a file; stale files (chunks the document no longer has)
  are removed after the new ones are in place; the manifest is written last;
- one lock file (``ROOT/.lock``) serialises writers (worker processes, a CLI run).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunkweave.chunking.models import Chunk
from chunkweave.storage.chunk_files import (
    DOC_HASH,
    LOCK,
    MANIFEST,
    chunk_file_name,
    doc_dir_name,
    dump_chunk_file,
    inside,
    parse_chunk_file,
    read_manifest,
    render_chunk,
)
from chunkweave.storage.errors import StoreError
from chunkweave.storage.uuids import chunk_uuid


@dataclass(frozen=True)
class SinkResult:
    """What one write did: files written, found unchanged, removed."""

    written: int = 0
    unchanged: int = 0
    removed: int = 0


class FileSink:
    """Writes chunks as files under ``root`` (see the module docstring)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def is_current(self, doc_id: str, doc_sha1: str, chunker: str) -> bool:
        """Return True when ``doc_id`` is exported at this version, every file present."""
        with self._locked():
            lines = read_manifest(self.root).get(doc_id, [])
        return bool(lines) and all(
            line["doc_sha1"] == doc_sha1
            and line["chunker"] == chunker
            and (self.root / str(line["path"])).is_file()
            for line in lines
        )

    def write_document(
        self,
        doc_id: str,
        chunks: Sequence[Chunk],
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> SinkResult:
        """Make the export of ``doc_id`` exactly ``chunks`` (none: remove the document)."""
        with self._locked():
            manifest = read_manifest(self.root)
            result = self._put(manifest, doc_id, chunks, metadata, replace=True)
            self._write_manifest(manifest)
        return result

    def put_chunks(
        self, chunks: Sequence[Chunk], *, metadata: Mapping[str, Any] | None = None
    ) -> SinkResult:
        """Write (or move) these chunks' files; a document's other files stay."""
        by_doc: dict[str, list[Chunk]] = {}
        for c in chunks:
            by_doc.setdefault(c.doc_id, []).append(c)
        written = unchanged = removed = 0
        with self._locked():
            manifest = read_manifest(self.root)
            for doc_id, part in by_doc.items():
                r = self._put(manifest, doc_id, part, metadata, replace=False)
                written, unchanged = written + r.written, unchanged + r.unchanged
                removed += r.removed
            self._write_manifest(manifest)
        return SinkResult(written, unchanged, removed)

    def retag_document(self, doc_id: str, metadata: Mapping[str, Any]) -> SinkResult:
        """Give the files of ``doc_id`` this caller ``metadata`` (their text stays as it is)."""
        written = unchanged = 0
        with self._locked():
            manifest = read_manifest(self.root)
            for line in manifest.get(doc_id, []):
                path = inside(self.root, str(line["path"]))
                try:
                    front, text = parse_chunk_file(path.read_bytes(), str(path))
                except FileNotFoundError:
                    continue  # a missing file is filled by the next write of the document
                front.pop("metadata", None)
                if metadata:
                    front["metadata"] = dict(metadata)
                data = dump_chunk_file(front, text)
                if _same(path, data):
                    unchanged += 1
                    continue
                _atomic_write(path, data)
                line["sha1"] = hashlib.sha1(data).hexdigest()
                written += 1
            self._write_manifest(manifest)
        return SinkResult(written, unchanged, 0)

    def remove_uuids(self, uuids: Iterable[str]) -> int:
        """Remove the files of the chunks with these store UUIDs; return how many."""
        gone = set(uuids)
        with self._locked():
            manifest = read_manifest(self.root)
            removed = 0
            for doc_id, lines in list(manifest.items()):
                kept = [line for line in lines if line["uuid"] not in gone]
                held = {line["path"] for line in kept}
                drop = [line["path"] for line in lines if line["uuid"] in gone]
                removed += self._unlink(p for p in drop if p not in held)
                if kept:
                    manifest[doc_id] = kept
                else:
                    del manifest[doc_id]
            self._write_manifest(manifest)
        return removed

    def remove_document(self, doc_id: str) -> int:
        """Remove every file of ``doc_id``; return how many."""
        return self.write_document(doc_id, []).removed

    def known(self, uuids: Iterable[str]) -> set[str]:
        """Those of ``uuids`` whose file is listed in the manifest and present."""
        wanted = set(uuids)
        with self._locked():
            manifest = read_manifest(self.root)
        return {
            str(line["uuid"])
            for lines in manifest.values()
            for line in lines
            if line["uuid"] in wanted and (self.root / str(line["path"])).is_file()
        }

    def _put(
        self,
        manifest: dict[str, list[dict[str, Any]]],
        doc_id: str,
        chunks: Sequence[Chunk],
        metadata: Mapping[str, Any] | None,
        *,
        replace: bool,
    ) -> SinkResult:
        previous = manifest.get(doc_id, [])
        if any(c.doc_id != doc_id for c in chunks):
            raise ValueError(f"chunks of another document than {doc_id!r}")
        folder = doc_dir_name(doc_id, chunks[0].source) if chunks else ""
        if chunks and any(
            line["path"].split("/")[0] == folder
            for other, lines in manifest.items()
            if other != doc_id
            for line in lines
        ):
            # Two ids whose folder names collide (same slug, same hash prefix): the
            # later one takes the whole hash, the same way on every run.
            folder = f"{folder[: -DOC_HASH - 1]}-{hashlib.sha1(doc_id.encode()).hexdigest()}"
        written = unchanged = 0
        lines: list[dict[str, Any]] = []
        for chunk in chunks:
            rel = f"{folder}/{chunk_file_name(chunk)}"
            data = render_chunk(chunk, metadata)
            path = inside(self.root, rel)
            if _same(path, data):
                unchanged += 1
            else:
                _atomic_write(path, data)
                written += 1
            lines.append(_line(chunk, rel, data))
        ids = {c.id for c in chunks}
        paths = {line["path"] for line in lines}
        if replace:
            keep: list[dict[str, Any]] = []
            stale = [line["path"] for line in previous if line["path"] not in paths]
            stale += self._strays(folder, paths)
        else:
            # A chunk that took the file of another (an edit kept the index and the
            # heading) replaces that one's line: its file is overwritten already.
            keep = [
                line
                for line in previous
                if line["chunk_id"] not in ids and line["path"] not in paths
            ]
            taken = {line["path"] for line in keep}
            stale = [line["path"] for line in previous if line["chunk_id"] in ids]
            stale = [p for p in stale if p not in paths and p not in taken]
        removed = self._unlink(stale)
        merged = sorted([*keep, *lines], key=lambda line: (line["chunk_index"], line["path"]))
        if merged:
            manifest[doc_id] = merged
        else:
            manifest.pop(doc_id, None)
        return SinkResult(written, unchanged, removed)

    def _strays(self, folder: str, paths: set[str]) -> list[str]:
        # Chunk files (and temporary files of an interrupted write) in the
        # document's folder that the new version does not have.
        if not folder or not (self.root / folder).is_dir():
            return []
        return [
            f"{folder}/{p.name}"
            for p in (self.root / folder).iterdir()
            if (p.suffix == ".md" or _is_temp(p.name)) and f"{folder}/{p.name}" not in paths
        ]

    def _unlink(self, rels: Iterable[str]) -> int:
        removed = 0
        folders: set[Path] = set()
        for rel in rels:
            path = inside(self.root, rel)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
            folders.add(path.parent)
        for folder in folders:
            with contextlib.suppress(OSError):  # not empty: other files remain
                folder.rmdir()
        return removed

    def _write_manifest(self, manifest: Mapping[str, list[dict[str, Any]]]) -> None:
        lines = sorted(
            (line for entries in manifest.values() for line in entries),
            key=lambda line: (line["path"].split("/")[0], line["chunk_index"], line["path"]),
        )
        data = "".join(
            json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines
        )
        path = self.root / MANIFEST
        if not _same(path, data.encode()):
            _atomic_write(path, data.encode())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            handle = (self.root / LOCK).open("a")
        except OSError as err:
            raise StoreError(f"{self.root}: cannot write the export: {err}") from err
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _line(chunk: Chunk, rel: str, data: bytes) -> dict[str, Any]:
    return {
        "doc_id": chunk.doc_id,
        "source": chunk.source,
        "chunk_id": chunk.id,
        "uuid": chunk_uuid(chunk.id),
        "chunk_index": chunk.chunk_index,
        "path": rel,
        "sha1": hashlib.sha1(data).hexdigest(),
        "doc_sha1": chunk.doc_sha1,
        "chunker": chunk.chunker,
    }


def _same(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except FileNotFoundError:
        return False


def _is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed over it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with temp.open("wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except OSError as err:
        with contextlib.suppress(OSError, UnboundLocalError):
            temp.unlink()
        raise StoreError(f"{path}: cannot write: {err.strerror or err}") from err

"""One chunk as a Markdown file: its names, its bytes, and reading an export back.

The format :class:`chunkweave.storage.files.FileSink` writes: ``ROOT/<doc slug>/NNN-<slug>.md``
(:func:`doc_dir_name`, :func:`chunk_file_name`), YAML front matter then the text
(:func:`render_chunk`), every file listed in ``ROOT/manifest.jsonl``. Slugs are built
from titles and file names but can never leave ``ROOT``: only word characters and
``-`` survive, their length is bounded, and a document's folder name ends with a hash
of its id (so two documents with the same file name never share one).
:func:`read_export` reads an export back (front matter and text).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from chunkweave.chunking.models import Chunk

MANIFEST = "manifest.jsonl"
LOCK = ".lock"
#: Characters of a slug taken from a title or file name (a folder name adds a hash).
MAX_SLUG = 48
#: Hex digits of the document id's SHA1 ending a document's folder name.
DOC_HASH = 12
#: Largest chunk file :func:`read_export` reads (a chunk is a few KB).
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Largest manifest read (about 300 bytes a chunk: a million chunks).
MAX_MANIFEST_BYTES = 512 * 1024 * 1024
_FRONT = "---\n"
_UNSAFE = re.compile(r"[^\w-]+")


def slug(text: str, limit: int = MAX_SLUG, *, default: str = "chunk") -> str:
    r"""Return a safe file-name part for ``text``: word characters and ``-``, at most ``limit``.

    Unicode is normalised (NFKC) and lower-cased; every other character (``/``, ``.``,
    ``\``, NUL, whitespace) becomes ``-``; ``default`` when nothing is left. The result
    never starts with ``.`` or ``-`` and is never a path of its own.
    """
    text = unicodedata.normalize("NFKC", text).lower()
    out = _UNSAFE.sub("-", text).strip("-_")[:limit].strip("-_")
    return out or default


def doc_dir_name(doc_id: str, source: str) -> str:
    """Folder of a document: the slug of its file name, then a hash of its id."""
    name = PurePosixPath(source.replace("\\", "/").rstrip("/")).name or source
    digest = hashlib.sha1(doc_id.encode()).hexdigest()[:DOC_HASH]
    return f"{slug(name, default='doc')}-{digest}"


def chunk_file_name(chunk: Chunk) -> str:
    """File of a chunk: its index (three digits or more), then a slug of its heading or text."""
    title = chunk.heading_path[-1] if chunk.heading_path else " ".join(chunk.text.split()[:8])
    return f"{chunk.chunk_index:03d}-{slug(title, default=chunk.type)}.md"


def render_chunk(chunk: Chunk, metadata: Mapping[str, Any] | None = None) -> bytes:
    """Return the file of ``chunk``: YAML front matter, a blank line, its ``text``.

    ``metadata`` is the caller's mapping for the document (chunks carry none of their
    own). Written only when not empty.
    """
    meta = metadata
    front: dict[str, Any] = {
        "doc_id": chunk.doc_id,
        "source": chunk.source,
        "chunk_id": chunk.id,
        "chunk_index": chunk.chunk_index,
        "type": chunk.type,
        "heading_path": list(chunk.heading_path),
        "section_number": chunk.section_number,
        "pages": list(chunk.pages),
        "regions": [{"page": r.page, "bbox": list(r.bbox)} for r in chunk.regions],
        "token_count": chunk.token_count,
        "parent_id": chunk.parent_id,
        "table_id": chunk.table_id,
        "caption": chunk.caption,
        "content_sha1": chunk.content_sha1,
        "chunker": chunk.chunker,
    }
    # The file's version (``doc_sha1``) is in the manifest only: in the front matter
    # any edit of the document would rewrite every one of its files.
    # What chunkweave embeds: the context line in front of the text (or, where the
    # embedded text does not end with the stored one, all of it).
    if chunk.embed_text.endswith(chunk.text):
        front["context"] = chunk.embed_text[: len(chunk.embed_text) - len(chunk.text)].rstrip("\n")
    else:
        front["embed_text"] = chunk.embed_text
    if meta:
        front["metadata"] = dict(meta)
    return dump_chunk_file(front, chunk.text)


def dump_chunk_file(front: Mapping[str, Any], text: str) -> bytes:
    """Return a chunk file's bytes: ``front`` as YAML between ``---`` lines, then ``text``."""
    dumped = yaml.safe_dump(
        dict(front), sort_keys=False, allow_unicode=True, default_flow_style=None, width=1000
    )
    # The text ends the file with one newline more, which the reader takes off again.
    return f"{_FRONT}{dumped}{_FRONT}\n{text}\n".encode()


@dataclass(frozen=True)
class ExportedChunk:
    """One chunk file read back: its path below the root, its front matter, its text."""

    path: str
    meta: dict[str, Any]
    text: str

    @property
    def id(self) -> str:
        """The chunk's id (``chunk_id`` in the front matter)."""
        return str(self.meta["chunk_id"])

    @property
    def embed_text(self) -> str:
        """What chunkweave embeds for this chunk (its context line, then its text)."""
        if "embed_text" in self.meta:
            return str(self.meta["embed_text"])
        context = self.meta.get("context")
        return f"{context}\n{self.text}" if context else self.text


def parse_chunk_file(data: bytes, name: str) -> tuple[dict[str, Any], str]:
    """Split one chunk file into its front matter and text; ``ValueError`` naming ``name``."""
    text = data.decode("utf-8")
    end = text.find(f"\n{_FRONT}\n", len(_FRONT) - 1)
    if not text.startswith(_FRONT) or end < 0 or not text.endswith("\n"):
        raise ValueError(f"{name}: not a chunk file (no front matter between '---' lines)")
    meta = yaml.safe_load(text[len(_FRONT) : end + 1])
    if not isinstance(meta, dict) or "chunk_id" not in meta:
        raise ValueError(f"{name}: front matter has no chunk_id")
    return meta, text[end + len(_FRONT) + 2 : -1]


def read_export(root: str | Path) -> list[ExportedChunk]:
    """Read every chunk the manifest of ``root`` lists, in manifest order.

    Raises ``ValueError`` naming the file for a manifest entry outside ``root``, a
    file over :data:`MAX_FILE_BYTES` or one that is not a chunk file; ``OSError``
    for a missing one.
    """
    root = Path(root)
    out = []
    for entry in read_manifest(root).values():
        for line in entry:
            path = inside(root, str(line["path"]))
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError(f"{path}: over {MAX_FILE_BYTES} bytes")
            meta, text = parse_chunk_file(path.read_bytes(), str(path))
            out.append(ExportedChunk(str(line["path"]), meta, text))
    return out


def read_manifest(root: Path) -> dict[str, list[dict[str, Any]]]:
    """Manifest lines of ``root`` by document id, in file order (none: empty)."""
    path = root / MANIFEST
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise ValueError(f"{path}: over {MAX_MANIFEST_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        try:
            line = json.loads(raw)
            out.setdefault(str(line["doc_id"]), []).append(line)
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path}:{number}: not a manifest line ({err})") from err
    return out


def inside(root: Path, rel: str) -> Path:
    """``root / rel``, refusing any path that would resolve outside ``root``."""
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts or "\\" in rel:
        raise ValueError(f"{rel!r}: not a path inside the export {root}")
    path = root.joinpath(*parts)
    base = root.resolve()
    # A folder that is a symlink out of the root is refused too.
    if not path.resolve().is_relative_to(base):
        raise ValueError(f"{path}: resolves outside the export {root}")
    return path

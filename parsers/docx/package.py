"""Safe access to the parts of a DOCX (OOXML) package.

A DOCX is a ZIP of XML parts, so it is an easy vehicle for zip bombs and hostile
XML. :class:`DocxPackage` opens the ZIP, checks the central directory against
:class:`PackageLimits` before reading anything, bounds every decompression while
it happens (declared sizes can lie), refuses any XML with a DTD (OOXML never has
one, and DTDs are where entity expansion and external entities live), and parses
with entity resolution, network access and huge-tree mode off, so libxml2's own
depth limit applies. Violations raise :class:`UnsafeDocumentError`; unreadable
containers raise :class:`CorruptDocumentError`. Parts written in Strict Open XML
are returned in the transitional vocabulary (:mod:`chunkweave.parsers.docx.strict`),
so the readers know one set of names.
"""

from __future__ import annotations

import posixpath
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from chunkweave.parsers.docx.strict import STRICT_MARKER, to_transitional
from chunkweave.parsers.errors import CorruptDocumentError, UnsafeDocumentError

NS = {
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "m": "http://schemas.openxmlformats.org/officeDocument/2006/math",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "pic": "http://schemas.openxmlformats.org/drawingml/2006/picture",
    "v": "urn:schemas-microsoft-com:vml",
    "pr": "http://schemas.openxmlformats.org/package/2006/relationships",
    "dc": "http://purl.org/dc/elements/1.1/",
}
_OFFICE_DOCUMENT = (
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
)


@dataclass(frozen=True)
class PackageLimits:
    """Bounds that a DOCX package must respect to be read at all.

    The defaults are far above real documents (the 872-page corpus handbook has a
    ~5 MB main part) and far below what would exhaust memory.
    """

    max_entries: int = 10_000
    max_part_bytes: int = 128 * 1024 * 1024
    max_total_bytes: int = 512 * 1024 * 1024
    max_ratio: int = 500  # decompressed/compressed on entries above 1 MiB; deflate tops at ~1032


DEFAULT_LIMITS = PackageLimits()

_PARSER = etree.XMLParser(
    resolve_entities=False,
    no_network=True,
    load_dtd=False,
    huge_tree=False,
    remove_comments=True,
    remove_pis=True,
)


class DocxPackage:
    """An open DOCX package whose parts can be read as parsed XML, safely.

    Use as a context manager. ``main_part`` is the name of the main document part
    (normally ``word/document.xml``); :meth:`xml` returns a parsed part or ``None``
    when the part does not exist; :meth:`rels` maps relationship ids of a part to
    ``(type, target part name)``.
    """

    def __init__(self, path: str | Path, limits: PackageLimits = DEFAULT_LIMITS) -> None:
        self.path = str(path)
        self.limits = limits
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as err:
            raise CorruptDocumentError(self.path, f"damaged or truncated ZIP ({err})") from err
        self._infos = {info.filename: info for info in self._zip.infolist()}
        self._read_total = 0
        #: Set once a part written in Strict Open XML has been read.
        self.strict = False
        self._check_directory()
        self.main_part = self._find_main_part()

    def __enter__(self) -> DocxPackage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the underlying ZIP file."""
        self._zip.close()

    def has(self, name: str) -> bool:
        """Tell whether the package holds a part called ``name``."""
        return name in self._infos

    def xml(self, name: str) -> etree._Element | None:
        """Return the parsed root element of part ``name``, or ``None`` if absent.

        Raises UnsafeDocumentError for a DTD, a size bound or excessive nesting and
        CorruptDocumentError for malformed XML or a damaged ZIP entry.
        """
        if name not in self._infos:
            return None
        data = self._read(name)
        # OOXML has no DTDs; a DOCTYPE can only be there to declare entities. The
        # byte scan refuses before parsing; the docinfo check after parsing catches
        # encodings the scan cannot see (the parser never expands entities anyway).
        if b"<!DOCTYPE" in data:
            raise self._dtd_error(name)
        try:
            root = etree.fromstring(data, parser=_PARSER)
        except etree.XMLSyntaxError as err:
            msg = str(err)
            if "depth" in msg.lower() or "huge" in msg.lower():
                raise UnsafeDocumentError(
                    self.path, f"{name} nests XML absurdly deep ({msg})"
                ) from err
            raise CorruptDocumentError(self.path, f"{name} is not well-formed XML ({msg})") from err
        if root.getroottree().docinfo.doctype:
            raise self._dtd_error(name)
        if STRICT_MARKER in data:
            self.strict = True
            to_transitional(root)
        return root

    def _dtd_error(self, name: str) -> UnsafeDocumentError:
        return UnsafeDocumentError(
            self.path, f"{name} declares a DTD (entity expansion or external entity attempt)"
        )

    def rels(self, part: str) -> dict[str, tuple[str, str]]:
        """Relationships of ``part``: ``{rId: (type URI, target part name)}``.

        External targets (hyperlinks) are skipped: they never name a package part.
        """
        folder, base = posixpath.split(part)
        root = self.xml(posixpath.join(folder, "_rels", base + ".rels"))
        out: dict[str, tuple[str, str]] = {}
        if root is None:
            return out
        for rel in root.iter(f"{{{NS['pr']}}}Relationship"):
            if rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target", "")
            if target.startswith("/"):
                name = target.lstrip("/")
            else:
                name = posixpath.normpath(posixpath.join(folder, target))
            out[rel.get("Id", "")] = (rel.get("Type", ""), name)
        return out

    def _check_directory(self) -> None:
        lim = self.limits
        if len(self._infos) > lim.max_entries:
            raise UnsafeDocumentError(
                self.path, f"ZIP has {len(self._infos)} entries (limit {lim.max_entries})"
            )
        total = 0
        for info in self._infos.values():
            if info.flag_bits & 0x1:
                raise UnsafeDocumentError(self.path, f"ZIP entry {info.filename} is encrypted")
            total += info.file_size
            if info.file_size > lim.max_part_bytes:
                raise UnsafeDocumentError(
                    self.path,
                    f"{info.filename} declares {info.file_size} bytes uncompressed "
                    f"(limit {lim.max_part_bytes}): zip bomb?",
                )
            if info.file_size > (1 << 20) and info.file_size > lim.max_ratio * max(
                info.compress_size, 1
            ):
                raise UnsafeDocumentError(
                    self.path,
                    f"{info.filename} compresses {info.file_size // max(info.compress_size, 1)}:1 "
                    f"(limit {lim.max_ratio}:1): zip bomb?",
                )
        if total > lim.max_total_bytes:
            raise UnsafeDocumentError(
                self.path,
                f"ZIP declares {total} bytes uncompressed (limit {lim.max_total_bytes}): zip bomb?",
            )

    def _read(self, name: str) -> bytes:
        # Read in blocks and stop at the bound: the declared size is not trusted.
        lim = self.limits
        cap = min(lim.max_part_bytes, lim.max_total_bytes - self._read_total)
        chunks: list[bytes] = []
        size = 0
        try:
            with self._zip.open(name) as fh:
                while block := fh.read(1 << 20):
                    size += len(block)
                    if size > cap:
                        raise UnsafeDocumentError(
                            self.path,
                            f"{name} decompresses beyond {cap} bytes "
                            "(declared size was false): zip bomb?",
                        )
                    chunks.append(block)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as err:
            raise CorruptDocumentError(self.path, f"damaged ZIP entry {name} ({err})") from err
        except RuntimeError as err:  # zipfile raises it for encrypted entries
            raise CorruptDocumentError(self.path, f"unreadable ZIP entry {name} ({err})") from err
        self._read_total += size
        return b"".join(chunks)

    def _find_main_part(self) -> str:
        root = self.xml("_rels/.rels")
        if root is not None:
            for rel in root.iter(f"{{{NS['pr']}}}Relationship"):
                if rel.get("Type") == _OFFICE_DOCUMENT:
                    name = rel.get("Target", "").lstrip("/")
                    if name in self._infos:
                        return name
        if "word/document.xml" in self._infos:
            return "word/document.xml"
        raise CorruptDocumentError(self.path, "no main document part (word/document.xml)")

"""Format detection from a file's bytes (never its extension).

:func:`detect_format` returns ``"pdf"`` or ``"docx"`` or raises a typed error that
says what the file looks like instead ("looks like a legacy Word .doc (OLE2), not
DOCX"). It reads at most the first KiB for magic numbers, the ZIP central directory
for OOXML packages (and at most :data:`MIMETYPE_MAX_BYTES` of an ODF ``mimetype``
entry, after checking its declared size: detection runs before the zip-bomb checks
of the DOCX reader, so no entry is ever read whole here), and, for OLE2 compound
files only, scans the file for the stream names that tell an encrypted OOXML
package from a legacy Office binary.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

from chunkweave.parsers.document import DocFormat
from chunkweave.parsers.errors import (
    CorruptDocumentError,
    EncryptedDocumentError,
    UnsafeDocumentError,
    UnsupportedFormatError,
)

#: A PDF header may follow leading junk; readers accept it within the first KiB.
PDF_SEARCH_WINDOW = 1024
#: An ODF/EPUB ``mimetype`` entry holds one short media type (under 50 bytes); one
#: that declares more than this is refused, and no more than this is ever read.
MIMETYPE_MAX_BYTES = 256
_PDF_MAGIC = b"%PDF-"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

# Other formats we recognise only to give a precise refusal.
_OTHER_MAGICS: tuple[tuple[bytes, str], ...] = (
    (b"{\\rtf", "an RTF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"%!PS", "a PostScript file"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
)

# OOXML/ODF packages that are ZIPs but not Word documents: (marker entry, description).
_ZIP_KINDS: tuple[tuple[str, str], ...] = (
    ("xl/workbook.xml", "an Excel workbook (XLSX)"),
    ("ppt/presentation.xml", "a PowerPoint presentation (PPTX)"),
    ("visio/document.xml", "a Visio drawing (VSDX)"),
)
_ODF_MIMETYPES = {
    b"application/vnd.oasis.opendocument.text": "an OpenDocument text file (ODT)",
    b"application/vnd.oasis.opendocument.spreadsheet": "an OpenDocument spreadsheet (ODS)",
    b"application/vnd.oasis.opendocument.presentation": "an OpenDocument presentation (ODP)",
    b"application/epub+zip": "an EPUB e-book",
}

# OLE2 directory entries store stream names in UTF-16LE.
_OLE_ENCRYPTION_INFO = "EncryptionInfo".encode("utf-16-le")
_OLE_STREAMS: tuple[tuple[bytes, str], ...] = (
    ("WordDocument".encode("utf-16-le"), "a legacy Word .doc (OLE2)"),
    ("Workbook".encode("utf-16-le"), "a legacy Excel .xls (OLE2)"),
    ("PowerPoint Document".encode("utf-16-le"), "a legacy PowerPoint .ppt (OLE2)"),
)


def detect_format(path: str | Path) -> DocFormat:
    """Return the document format of ``path`` judged by its content.

    Raises:
        UnsupportedFormatError: not a PDF or DOCX; the reason names what it looks like.
        EncryptedDocumentError: a password-protected OOXML package (an OLE2 container
            holding an ``EncryptionInfo`` stream).
        CorruptDocumentError: a ZIP container that cannot be read (e.g. truncated).
        UnsafeDocumentError: a ZIP whose ``mimetype`` entry declares an absurd size.

    """
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(PDF_SEARCH_WINDOW)
    if head.startswith(_ZIP_MAGICS):
        return _detect_zip(path)
    if _PDF_MAGIC in head:
        return "pdf"
    if head.startswith(_OLE2_MAGIC):
        _refuse_ole2(path)
    for magic, what in _OTHER_MAGICS:
        if head.startswith(magic):
            raise UnsupportedFormatError(str(path), f"looks like {what}, not a PDF or DOCX")
    raise UnsupportedFormatError(str(path), f"unrecognised format ({_describe_head(head)})")


def _detect_zip(path: Path) -> DocFormat:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            mimetype = _read_mimetype(path, zf) if "mimetype" in names else b""
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as err:
        raise CorruptDocumentError(
            str(path), f"damaged or truncated ZIP container ({err})"
        ) from err
    except RuntimeError as err:  # zipfile raises it for encrypted entries
        raise CorruptDocumentError(str(path), f"unreadable ZIP entry mimetype ({err})") from err
    if "word/document.xml" in names and "[Content_Types].xml" in names:
        return "docx"
    for marker, what in _ZIP_KINDS:
        if marker in names:
            raise UnsupportedFormatError(str(path), f"looks like {what}, not DOCX")
    if mimetype in _ODF_MIMETYPES:
        raise UnsupportedFormatError(str(path), f"looks like {_ODF_MIMETYPES[mimetype]}, not DOCX")
    if "word/document.xml" in names:
        raise CorruptDocumentError(str(path), "Word package without [Content_Types].xml")
    raise UnsupportedFormatError(str(path), "a ZIP archive that is not a Word document")


def _read_mimetype(path: Path, zf: zipfile.ZipFile) -> bytes:
    """Return the stripped start of the ``mimetype`` entry, reading a bounded amount.

    The declared size is checked first (an honest bomb is refused without reading);
    then at most ``MIMETYPE_MAX_BYTES`` are decompressed, so a declared size that lies
    cannot make detection inflate the entry either.
    """
    info = zf.getinfo("mimetype")
    if info.file_size > MIMETYPE_MAX_BYTES:
        raise UnsafeDocumentError(
            str(path),
            f"ZIP entry mimetype declares {info.file_size} bytes (a media type is under "
            f"{MIMETYPE_MAX_BYTES}): zip bomb?",
        )
    with zf.open(info) as fh:
        return fh.read(MIMETYPE_MAX_BYTES).strip()


def _refuse_ole2(path: Path) -> None:
    # The directory sector may sit anywhere in the file, so scan all of it in
    # overlapping blocks (the caller has already bounded the file size).
    overlap = 64
    tail = b""
    found: list[str] = []
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            window = tail + block
            if _OLE_ENCRYPTION_INFO in window:
                raise EncryptedDocumentError(
                    str(path),
                    "password-protected Office document (encrypted OOXML in an OLE2 "
                    "container); remove the password and retry",
                )
            found.extend(what for needle, what in _OLE_STREAMS if needle in window)
            tail = window[-overlap:]
    what = found[0] if found else "an OLE2 compound file (legacy Office format)"
    raise UnsupportedFormatError(str(path), f"looks like {what}, not DOCX")


def _describe_head(head: bytes) -> str:
    stripped = head.lstrip()
    lowered = stripped[:256].lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "looks like HTML"
    if lowered.startswith(b"<?xml"):
        if b"w:worddocument" in head.lower() or b"pkg:package" in head.lower():
            return "looks like Word 2003/flat XML, not DOCX"
        return "looks like XML"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "binary data without a known signature"
    return "looks like plain text"

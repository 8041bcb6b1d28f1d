"""Format detection from bytes, and the dispatcher's checks before any parser runs."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import docx
import pymupdf
import pytest

from chunkweave.parsers import SUPPORTED_SUFFIXES, ParseOptions, parse_document
from chunkweave.parsers.detect import MIMETYPE_MAX_BYTES, detect_format
from chunkweave.parsers.errors import (
    CorruptDocumentError,
    EmptyDocumentError,
    ParseError,
    TooLargeError,
    UnsafeDocumentError,
    UnsupportedFormatError,
)
from tests.docx_builders import patch_declared_size


def _pdf_bytes() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "hello")
    return doc.tobytes()


def _docx(path: Path) -> Path:
    d = docx.Document()
    d.add_paragraph("hello")
    d.save(str(path))
    return path


def _zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def test_pdf_detected_with_leading_junk_and_wrong_extension(tmp_path: Path) -> None:
    path = tmp_path / "report.docx"
    path.write_bytes(b"\x00junk\r\n" * 50 + _pdf_bytes())
    assert detect_format(path) == "pdf"


def test_docx_detected_without_extension(tmp_path: Path) -> None:
    assert detect_format(_docx(tmp_path / "noext")) == "docx"


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ({"[Content_Types].xml": b"", "xl/workbook.xml": b""}, "XLSX"),
        ({"[Content_Types].xml": b"", "ppt/presentation.xml": b""}, "PPTX"),
        ({"mimetype": b"application/vnd.oasis.opendocument.text"}, "ODT"),
        ({"readme.txt": b"hi"}, "ZIP archive"),
    ],
)
def test_other_zip_formats_are_named(
    tmp_path: Path, entries: dict[str, bytes], expected: str
) -> None:
    path = _zip(tmp_path / "file.docx", entries)
    with pytest.raises(UnsupportedFormatError, match=expected):
        detect_format(path)


def test_legacy_word_doc_is_named(tmp_path: Path) -> None:
    path = tmp_path / "old.docx"
    path.write_bytes(
        bytes.fromhex("d0cf11e0a1b11ae1") + bytes(1000) + "WordDocument".encode("utf-16-le")
    )
    with pytest.raises(UnsupportedFormatError, match=r"legacy Word \.doc \(OLE2\), not DOCX"):
        detect_format(path)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"{\\rtf1\\ansi hello}", "RTF"),
        (b"\x89PNG\r\n\x1a\n" + bytes(20), "PNG"),
        (b"<!DOCTYPE html><html></html>", "HTML"),
        (b"just some words", "plain text"),
    ],
)
def test_non_documents_are_named(tmp_path: Path, data: bytes, expected: str) -> None:
    path = tmp_path / "x.pdf"
    path.write_bytes(data)
    with pytest.raises(UnsupportedFormatError, match=expected):
        detect_format(path)


def test_each_supported_suffix_names_a_detected_format(tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(_pdf_bytes())
    _docx(tmp_path / "doc.docx")
    detected = {"." + detect_format(tmp_path / f"doc{suffix}") for suffix in SUPPORTED_SUFFIXES}
    assert detected == SUPPORTED_SUFFIXES == {".pdf", ".docx"}


def test_truncated_zip_is_corrupt(tmp_path: Path) -> None:
    data = _docx(tmp_path / "a.docx").read_bytes()
    path = tmp_path / "b.docx"
    path.write_bytes(data[:200])
    with pytest.raises(CorruptDocumentError):
        detect_format(path)


def test_missing_file_is_a_parse_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "missing.docx"
    with pytest.raises(ParseError, match="missing.docx: no such file"):
        parse_document(path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    with pytest.raises(EmptyDocumentError, match="empty"):
        parse_document(path)


def test_too_large_by_bytes(tmp_path: Path) -> None:
    path = _docx(tmp_path / "a.docx")
    with pytest.raises(TooLargeError, match="limit 100"):
        parse_document(path, ParseOptions(max_bytes=100))


def test_too_many_pages_in_docx(tmp_path: Path) -> None:
    d = docx.Document()
    for i in range(3):
        d.add_paragraph(f"page {i}")
        d.add_page_break()
    d.add_paragraph("last")
    path = tmp_path / "pages.docx"
    d.save(str(path))
    with pytest.raises(TooLargeError, match="4 pages"):
        parse_document(path, ParseOptions(max_pages=2))


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = _docx(tmp_path / "a.docx")
    path.chmod(0)
    with pytest.raises(ParseError, match="permission"):
        parse_document(path)


def test_explicit_parser_must_match_the_bytes(tmp_path: Path) -> None:
    path = _docx(tmp_path / "a.pdf")
    with pytest.raises(UnsupportedFormatError, match="DOCX but parser 'pymupdf'"):
        parse_document(path, ParseOptions(parser="pymupdf"))
    pdf = tmp_path / "b.docx"
    pdf.write_bytes(_pdf_bytes())
    with pytest.raises(UnsupportedFormatError, match="PDF but parser 'docx'"):
        parse_document(pdf, ParseOptions(parser="docx"))


def test_docx_without_text_is_empty(tmp_path: Path) -> None:
    d = docx.Document()
    path = tmp_path / "blank.docx"
    d.save(str(path))
    with pytest.raises(EmptyDocumentError, match="no text"):
        parse_document(path)


# Measured in a fresh interpreter: peak RSS growth (KiB) across one parse_document call.
_RSS_PROBE = """
import resource, sys
import chunkweave.parsers.docx  # load lxml and the reader before the baseline
from chunkweave.parsers import parse_document
from chunkweave.parsers.errors import ParseError
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    parse_document(sys.argv[1])
    outcome = "parsed"
except ParseError as err:
    outcome = f"{type(err).__name__}: {err}"
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
print(outcome)
"""
_BOMB_MIB = 256


def _docx_with_huge_mimetype(path: Path) -> Path:
    # A real DOCX plus a "mimetype" entry of 256 MiB of zeros (about 250 KiB deflated),
    # streamed so the test itself never holds it in memory.
    base = zipfile.ZipFile(_docx(path.with_suffix(".base.docx")))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("mimetype", "w") as entry:
            block = bytes(1 << 20)
            for _ in range(_BOMB_MIB):
                entry.write(block)
        for name in base.namelist():
            z.writestr(name, base.read(name))
    base.close()
    return path


def _rss_growth_and_outcome(path: Path) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    growth, outcome = proc.stdout.strip().split("\n", 1)
    return int(growth) // 1024, outcome


def test_huge_mimetype_entry_is_refused_before_reading_it(tmp_path: Path) -> None:
    path = _docx_with_huge_mimetype(tmp_path / "bomb.docx")
    assert path.stat().st_size < 2 << 20
    growth_mib, outcome = _rss_growth_and_outcome(path)
    assert outcome.startswith("UnsafeDocumentError")
    assert str(path) in outcome and "mimetype" in outcome
    assert growth_mib < 32, f"detection grew RSS by {growth_mib} MiB"


def test_huge_mimetype_entry_with_a_lying_size_is_never_inflated(tmp_path: Path) -> None:
    # The directory claims 40 bytes: detection reads only that much, sees the CRC
    # disagree and calls the container damaged, without inflating the rest.
    path = _docx_with_huge_mimetype(tmp_path / "liar.docx")
    patch_declared_size(path, "mimetype", 40)
    growth_mib, outcome = _rss_growth_and_outcome(path)
    assert outcome.startswith("CorruptDocumentError") and str(path) in outcome
    assert growth_mib < 32, f"parsing grew RSS by {growth_mib} MiB"


def test_mimetype_is_read_at_most_the_bound(tmp_path: Path) -> None:
    path = _zip(
        tmp_path / "odt.docx",
        {"mimetype": b"application/vnd.oasis.opendocument.text" + b" " * MIMETYPE_MAX_BYTES},
    )
    with pytest.raises(UnsafeDocumentError, match="odt.docx.*mimetype declares"):
        detect_format(path)

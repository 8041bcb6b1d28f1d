"""PDF bad input and options: passwords, damage, limits, page ranges."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from pydantic import SecretStr

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.errors import (
    CorruptDocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    ParseError,
    TooLargeError,
)
from chunkweave.parsers.pdf import parse_pdf


def _make_pdf(path: Path, pages: int = 3, **save: object) -> Path:
    doc = pymupdf.open()
    for i in range(pages):
        page = doc.new_page()
        page.insert_text((72, 100), f"Section {i + 1}", fontsize=18)
        page.insert_text((72, 140), f"Body text on page {i + 1} of the test document.", fontsize=11)
    doc.save(path, **save)  # type: ignore[arg-type]
    doc.close()
    return path


def test_user_password_required_and_accepted(tmp_path: Path) -> None:
    path = _make_pdf(
        tmp_path / "locked.pdf",
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="s3cret",
        owner_pw="owner",
    )
    with pytest.raises(EncryptedDocumentError, match="locked.pdf.*password is required"):
        parse_pdf(path, ParseOptions())
    with pytest.raises(EncryptedDocumentError, match="wrong"):
        parse_pdf(path, ParseOptions(password=SecretStr("nope")))
    doc = parse_pdf(path, ParseOptions(password=SecretStr("s3cret")))
    assert "Body text on page 2" in " ".join(e.text for e in doc.elements)


def test_owner_password_only_opens_without_password(tmp_path: Path) -> None:
    path = _make_pdf(
        tmp_path / "owner.pdf",
        encryption=pymupdf.PDF_ENCRYPT_AES_128,
        owner_pw="owner",
        permissions=pymupdf.PDF_PERM_PRINT,
    )
    doc = parse_pdf(path, ParseOptions())
    assert len(doc.elements) >= 3


def test_truncated_pdf_errors_cleanly(tmp_path: Path) -> None:
    good = _make_pdf(tmp_path / "good.pdf", pages=2)
    bad = tmp_path / "truncated.pdf"
    bad.write_bytes(good.read_bytes()[:300])
    with pytest.raises((CorruptDocumentError, EmptyDocumentError)) as info:
        parse_pdf(bad, ParseOptions())
    assert "truncated.pdf" in str(info.value)


def test_garbage_bytes_are_corrupt(tmp_path: Path) -> None:
    bad = tmp_path / "garbage.pdf"
    bad.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 20)
    with pytest.raises(ParseError, match="garbage.pdf"):
        parse_pdf(bad, ParseOptions())


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    with pytest.raises(EmptyDocumentError, match="empty.pdf"):
        parse_pdf(empty, ParseOptions())


def test_blank_pages_raise_empty(tmp_path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page()
    doc.save(tmp_path / "blank.pdf")
    with pytest.raises(EmptyDocumentError, match="no extractable text"):
        parse_pdf(tmp_path / "blank.pdf", ParseOptions())


def test_too_many_pages(tmp_path: Path) -> None:
    path = _make_pdf(tmp_path / "long.pdf", pages=5)
    with pytest.raises(TooLargeError, match="5 pages, limit is 4"):
        parse_pdf(path, ParseOptions(max_pages=4))


def test_page_range_keeps_true_page_numbers(tmp_path: Path) -> None:
    path = _make_pdf(tmp_path / "range.pdf", pages=5)
    doc = parse_pdf(path, ParseOptions(page_range=(2, 3), mode="fast"))
    assert {e.page for e in doc.elements} == {2, 3}
    assert doc.page_count == 5
    with pytest.raises(ParseError, match="outside"):
        parse_pdf(path, ParseOptions(page_range=(6, 9)))

"""A cyclic page tree and a huge page are input faults, not bugs (issue 37, item 16).

Both used to escape as MuPDF's own exceptions and be recorded as ``internal``. A
cyclic page tree is ``corrupt``; a page too large to render is rendered at a lower
resolution (never more than ``MAX_RENDER_PIXELS``), and a limit MuPDF still hits is
``too_large``, naming the file.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.errors import CorruptDocumentError, ErrorCode, TooLargeError
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.orientation import MAX_RENDER_PIXELS, ReadingFrame


def _cyclic_page_tree(path: Path) -> Path:
    doc = pymupdf.open()
    for text in ("first page", "second page"):
        doc.new_page().insert_text((72, 72), text)
    pages = int(doc.xref_get_key(doc.pdf_catalog(), "Pages")[1].split()[0])
    kids = doc.xref_get_key(pages, "Kids")[1]
    # The page tree lists itself among its kids.
    doc.xref_set_key(pages, "Kids", kids[:-1] + f" {pages} 0 R]")
    doc.xref_set_key(pages, "Count", "3")
    doc.save(path)
    return path


def _huge_page(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=14400, height=14400)  # 200 inches square: 10 GB at 300 dpi
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(180)
    page.insert_image(page.rect, pixmap=pix)  # a scan: no text layer, so it is rendered for OCR
    doc.save(path)
    return path


@pytest.mark.parametrize("mode", ["auto", "fast"])
def test_cyclic_page_tree_is_corrupt(tmp_path: Path, mode: str) -> None:
    path = _cyclic_page_tree(tmp_path / "cyclic.pdf")
    with pytest.raises(CorruptDocumentError, match="cyclic.pdf: damaged PDF: .*cycle") as err:
        parse_pdf(path, ParseOptions(mode=mode))
    assert err.value.code is ErrorCode.CORRUPT


def test_a_huge_page_is_rendered_within_the_pixel_bound(tmp_path: Path) -> None:
    path = _huge_page(tmp_path / "huge.pdf")
    with pymupdf.open(path) as doc:
        page = doc[0]
        pix = ReadingFrame.of(page, 0).render(page, 300)
        assert pix.width * pix.height <= MAX_RENDER_PIXELS
        assert pix.width == pytest.approx(MAX_RENDER_PIXELS**0.5, abs=2)
        small = ReadingFrame.of(page, 0).render(page, 1)  # below the bound: as asked
        assert small.width == pytest.approx(14400 / 72, abs=1)
    parsed = parse_pdf(path, ParseOptions())  # OCR of a bounded image: no text, a warning
    assert parsed.warnings


def test_a_limit_mupdf_still_hits_is_too_large(tmp_path: Path, monkeypatch) -> None:
    path = _huge_page(tmp_path / "huge.pdf")

    def refuse(*args: object, **kwargs: object) -> pymupdf.Pixmap:
        raise pymupdf.mupdf.FzErrorLimit("Overly large image")

    monkeypatch.setattr(ReadingFrame, "render", refuse)
    with pytest.raises(TooLargeError, match="huge.pdf: beyond MuPDF's limits") as err:
        parse_pdf(path, ParseOptions())
    assert err.value.code is ErrorCode.TOO_LARGE

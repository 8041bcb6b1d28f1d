"""The extra corpus (``../shared/corpus-extra``): turned scans OCR to their reference text
(text fidelity, the benchmarks' token F1, at least 0.8 on every page), the turned scan
with an invisible OCR layer reads that layer, and every one of its 60 documents parses
without an error.

Run with ``-s`` to see the table of document, elements and warnings.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pymupdf
import pytest

from bench.scoring import token_f1
from chunkweave.parsers import ParsedDocument, ParseError, parse_document
from chunkweave.parsers.pdf.ocr import tessdata_dir

EXTRA = Path(__file__).resolve().parents[2] / "shared" / "corpus-extra"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not EXTRA.is_dir(), reason="../shared/corpus-extra not available"),
]


#: Scans turned against their page's rotation flag (reference text: cardinal's).
TURNED = ("cardinal.pdf", "rotated_skew.pdf")
#: A /Rotate 270 scan with an invisible OCR text layer.
LAYERED = "issue5747.pdf"
MIN_FIDELITY = 0.8


@functools.cache
def _turned(path: Path) -> ParsedDocument:
    # The turned scans cost most of this file's time (OCR, one pass a page): the
    # tests read the one parse of each rather than paying for it twice.
    return parse_document(path)


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)}


@pytest.mark.skipif(tessdata_dir("eng") is None, reason="Tesseract eng data missing")
@pytest.mark.parametrize("name", TURNED)
def test_turned_scans_read_the_reference_words(name: str) -> None:
    # cardinal.pdf: one page scanned at 0/90/180/270 degrees, all /Rotate 0;
    # rotated_skew.pdf: /Rotate 90 and skewed. Both were "no text" or garbage before.
    reference = _words((EXTRA / "cardinal.groundtruth.ocr-reference.txt").read_text())
    doc = _turned(EXTRA / name)
    pages: dict[int | None, set[str]] = {}
    for el in doc.elements:
        pages.setdefault(el.page, set()).update(_words(el.text))
    assert len(pages) == (4 if name == "cardinal.pdf" else 1)
    for words in pages.values():
        assert len(words & reference) >= 0.95 * len(reference)


@pytest.mark.skipif(tessdata_dir("eng") is None, reason="Tesseract eng data missing")
@pytest.mark.parametrize("name", TURNED)
def test_turned_scans_read_with_text_fidelity(name: str) -> None:
    reference = (EXTRA / "cardinal.groundtruth.ocr-reference.txt").read_text()
    pages: dict[int | None, list[str]] = {}
    for el in _turned(EXTRA / name).elements:
        if el.type not in ("page_header", "page_footer"):
            pages.setdefault(el.page, []).append(el.text)
    fidelity = {p: token_f1("\n".join(texts), reference) for p, texts in pages.items()}
    print(name, {p: round(f, 3) for p, f in fidelity.items()})
    assert len(fidelity) == (4 if name == "cardinal.pdf" else 1)
    assert min(fidelity.values()) >= MIN_FIDELITY, fidelity


def test_invisible_ocr_layer_is_read_in_its_reading_frame() -> None:
    # The layer's text runs up the unrotated page; the page shows it upright.
    doc = _turned(EXTRA / LAYERED)
    assert not doc.warnings, doc.warnings
    text = " ".join(el.text for el in doc.elements)
    layer = pymupdf.open(EXTRA / LAYERED)[0].get_text()
    assert token_f1(text, layer) >= 0.95
    assert "Lorem ipsum dolor sit amet" in text


def test_every_document_parses_without_an_error() -> None:
    docs = sorted(
        p
        for p in EXTRA.iterdir()
        if p.suffix.lower() in (".pdf", ".docx") and ".groundtruth." not in p.name
    )
    assert len(docs) == 60
    rows, failed = [], []
    for path in docs:
        try:
            cached = (*TURNED, LAYERED)
            parsed = _turned(path) if path.name in cached else parse_document(path)
        except ParseError as err:
            failed.append(f"{path.name}: {err.reason}")
            continue
        rows.append(f"| {path.name} | {len(parsed.elements)} | {'; '.join(parsed.warnings)} |")
    print("\n| document | elements | warnings |\n| --- | --- | --- |\n" + "\n".join(rows))
    assert not failed

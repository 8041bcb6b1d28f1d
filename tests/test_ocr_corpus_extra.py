"""The extra corpus (``../shared/corpus-extra``): turned scans OCR to their reference text,
and every one of its 60 documents parses without an error.

Run with ``-s`` to see the table of document, elements and warnings.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from chunkweave.parsers import ParsedDocument, ParseError, parse_document
from chunkweave.parsers.pdf.ocr import tessdata_dir

EXTRA = Path(__file__).resolve().parents[2] / "shared" / "corpus-extra"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not EXTRA.is_dir(), reason="../shared/corpus-extra not available"),
]


#: Scans turned against their page's rotation flag.
TURNED = ("cardinal.pdf", "rotated_skew.pdf")


@functools.cache
def _turned(path: Path) -> ParsedDocument:
    # The turned scans cost most of this file's time (OCR of every turn): both tests
    # read the one parse of each rather than paying for it twice.
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
            parsed = _turned(path) if path.name in TURNED else parse_document(path)
        except ParseError as err:
            failed.append(f"{path.name}: {err.reason}")
            continue
        rows.append(f"| {path.name} | {len(parsed.elements)} | {'; '.join(parsed.warnings)} |")
    print("\n| document | elements | warnings |\n| --- | --- | --- |\n" + "\n".join(rows))
    assert not failed

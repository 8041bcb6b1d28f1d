"""A real scan turned 90, 180 and 270 degrees against its page's /Rotate reads the same
text, and its elements' boxes land where the words are on the page.

The PDFs are built here from a real page image (the top of the upright page of
``../shared/corpus-extra/cardinal.pdf``, a scanned brochure): one page with the image
upright (the reference), and pages with the image inserted turned by k*90 degrees and
a ``/Rotate`` that does not undo it. Where each word should land is taken from the
image's own placement on each page (``get_image_info`` transform, MuPDF's reading
of the content stream), not from the code under test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from bench.scoring import token_f1
from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.ocr import tessdata_dir
from chunkweave.parsers.pdf.orientation import QUARTER_TURNS, ReadingFrame

CARDINAL = Path(__file__).resolve().parents[2] / "shared" / "corpus-extra" / "cardinal.pdf"
#: (image turn, page /Rotate): the reference, then each turn against its flag.
LAYOUTS = ((0, 0), (90, 0), (180, 90), (270, 180))
CLIP = pymupdf.Rect(0, 0, 612, 330)  # title and the first paragraphs, in points


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)}


def _turned_pdf(tmp_path: Path) -> Path:
    png = pymupdf.open(CARDINAL)[0].get_pixmap(clip=CLIP, dpi=150).tobytes("png")
    doc = pymupdf.open()
    for turn, rotate in LAYOUTS:
        w, h = (CLIP.width, CLIP.height) if turn in (0, 180) else (CLIP.height, CLIP.width)
        page = doc.new_page(width=w, height=h)
        page.insert_image(page.rect, stream=png, rotate=turn)
        page.set_rotation(rotate)
    path = tmp_path / "turned.pdf"
    doc.save(str(path))
    return path


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ra, rb = pymupdf.Rect(a), pymupdf.Rect(b)
    inter = abs(ra & rb)
    return inter / (abs(ra) + abs(rb) - inter or 1.0)


@pytest.mark.slow
@pytest.mark.skipif(tessdata_dir("eng") is None, reason="Tesseract eng data missing")
@pytest.mark.skipif(not CARDINAL.is_file(), reason="../shared/corpus-extra not available")
def test_scan_turned_against_its_rotate_reads_the_same_text_in_the_right_place(
    tmp_path: Path,
) -> None:
    path = _turned_pdf(tmp_path)
    parsed = parse_document(path, ParseOptions(mode="fast"))
    by_page: dict[int, list[Element]] = {}
    for el in parsed.elements:
        by_page.setdefault(el.page or 0, []).append(el)
    assert sorted(by_page) == [1, 2, 3, 4], parsed.warnings
    ref = by_page[1]
    ref_text = "\n".join(e.text for e in ref)
    assert len(_words(ref_text)) >= 40  # the reference itself reads as text
    doc = pymupdf.open(path)
    # Image space (unit square, origin at the image's top-left) -> page coordinates.
    place = [pymupdf.Matrix(doc[i].get_image_info()[0]["transform"]) for i in range(len(doc))]
    for page_no in (2, 3, 4):
        page = doc[page_no - 1]
        els = by_page[page_no]
        text = "\n".join(e.text for e in els)
        # The same text: the page's words and their order agree with the reference.
        assert token_f1(text, ref_text) >= 0.95, (page_no, text[:300])
        assert token_f1(text, ref_text, n=2) >= 0.9, page_no
        # ... and the same elements (a heading, list items, no footnotes from a page
        # height taken in the wrong frame).
        assert [e.type for e in els] == [e.type for e in ref], page_no
        # Every box is inside the page (PyMuPDF's unrotated page frame) ...
        bounds = page.rect * page.derotation_matrix
        for el in els:
            assert el.bbox is not None and pymupdf.Rect(el.bbox) in bounds + (-1, -1, 1, 1)
        # ... and where the reference's box of the same paragraph lands on this page.
        to_here = ~place[0] * place[page_no - 1]
        matched = 0
        for el in els:
            twin = max(ref, key=lambda r: token_f1(r.text, el.text))  # noqa: B023
            if token_f1(twin.text, el.text) < 0.8 or len(_words(el.text)) < 3:
                continue
            assert twin.bbox is not None and el.bbox is not None
            expected = pymupdf.Rect(twin.bbox) * to_here
            assert _iou(el.bbox, tuple(expected)) >= 0.8, (page_no, el.text, el.bbox, expected)
            matched += 1
        assert matched >= 0.8 * len(ref), (page_no, matched, len(ref))


@pytest.mark.parametrize("rotate", QUARTER_TURNS)
@pytest.mark.parametrize("turn", QUARTER_TURNS)
def test_reading_frame_maps_rendered_pixels_back_onto_the_page(rotate: int, turn: int) -> None:
    # A black square at a known place of the unrotated page: rendered in the frame,
    # its pixels map back (frame points -> page) onto the square.
    doc = pymupdf.open()
    page = doc.new_page(width=300, height=200)
    square = (40.0, 30.0, 70.0, 50.0)
    page.draw_rect(pymupdf.Rect(square), color=None, fill=(0, 0, 0))
    page.set_rotation(rotate)
    frame = ReadingFrame.of(page, turn)
    dpi = 72.0
    pix = frame.render(page, dpi, gray=True)
    assert (pix.width, pix.height) == (round(frame.rect.width), round(frame.rect.height))
    dark = [(x, y) for y in range(pix.height) for x in range(pix.width) if pix.pixel(x, y)[0] < 128]
    xs, ys = [x for x, _ in dark], [y for _, y in dark]
    found = frame.to_page((min(xs), min(ys), max(xs) + 1, max(ys) + 1))
    assert all(abs(a - b) <= 1.0 for a, b in zip(found, square, strict=True)), found
    assert frame.is_page == ((rotate + turn) % 360 == 0)


def _scan_with_invisible_layer(tmp_path: Path) -> Path:
    """A /Rotate 270 scan whose invisible OCR text runs up the unrotated page.

    The image is a rendered paragraph, turned so that the page shows it upright; the
    invisible text (render mode 3) sits on the image's lines, as an OCR tool writes it.
    """
    src = pymupdf.open()
    text_page = src.new_page(width=420, height=200)
    lines = ("Invisible layers carry the words", "of a scanned page already")
    for i, line in enumerate(lines):
        text_page.insert_text((30, 60 + 40 * i), line, fontsize=18)
    png = text_page.get_pixmap(dpi=100).tobytes("png")
    doc = pymupdf.open()
    page = doc.new_page(width=200, height=420)  # the unrotated page is portrait
    page.insert_image(page.rect, stream=png, rotate=90)
    page.set_rotation(270)  # displayed landscape, the image upright
    # The same lines, invisible, on top of the image (turned with it).
    for i, line in enumerate(lines):
        page.insert_text((60 + 40 * i, 390), line, fontsize=18, rotate=90, render_mode=3)
    path = tmp_path / "layer.pdf"
    doc.save(str(path))
    return path


def test_invisible_text_layer_of_a_turned_scan_is_read_instead_of_ocr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chunkweave.parsers.pdf import page as pdf_page

    def no_ocr(*args: object) -> None:  # pragma: no cover - must not run
        raise AssertionError("OCR ran on a page with a text layer")

    monkeypatch.setattr(pdf_page, "ocr_page", no_ocr)
    path = _scan_with_invisible_layer(tmp_path)
    parsed = parse_document(path, ParseOptions(mode="fast"))
    text = " ".join(e.text for e in parsed.elements)
    assert text == "Invisible layers carry the words of a scanned page already", parsed.elements
    # The element's box is the layer's own words' box, in the page's coordinates.
    words = pymupdf.open(path)[0].get_text("words")
    x0, y0 = min(w[0] for w in words), min(w[1] for w in words)
    x1, y1 = max(w[2] for w in words), max(w[3] for w in words)
    boxes = [pymupdf.Rect(e.bbox) for e in parsed.elements if e.bbox]
    boxes += [pymupdf.Rect(b) for e in parsed.elements for _, b in e.continued]  # joined parts
    union = boxes[0]
    for b in boxes[1:]:
        union |= b
    got = (union.x0, union.y0, union.x1, union.y1)
    assert _iou(got, (x0, y0, x1, y1)) >= 0.95, (got, (x0, y0, x1, y1))

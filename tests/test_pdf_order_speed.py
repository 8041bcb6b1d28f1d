"""PDF reading order, heading levels and the cheap-extraction paths that keep parsing fast.

Speed itself is measured by ``bench/parse_speed.py``; these tests pin down that the
faster paths return exactly what the plain ones do, and that the order and level
fixes hold on the real documents that showed the bugs.
"""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pymupdf
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkweave.parsers.document import ParsedDocument, ParseOptions
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.headings import rank_styles
from chunkweave.parsers.pdf.order import find_gutters, reading_order
from chunkweave.parsers.pdf.profile import build_profile, sample_document, sample_pages
from chunkweave.parsers.pdf.text import (
    _CONTROL,
    _SPACES,
    _line_from_spans,
    clean_text,
    extract_lines,
)

ODT = "text_document_01.odt.pdf"
ODT_TRUTH = "text_document_01.odt.groundtruth.from-odt-source.md"


@dataclass
class Box:
    name: str
    bbox: tuple[float, float, float, float]


@pytest.fixture(scope="module")
def odt(corpus: Path) -> ParsedDocument:
    return parse_pdf(corpus / ODT, ParseOptions(mode="fast"))


def _truth_headings(path: Path) -> list[tuple[str, int]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^(#{1,6})\s+(.*\S)", line):
            out.append((m.group(2), len(m.group(1))))
    return out


def _ranks(levels: list[int]) -> list[int]:
    order = sorted(set(levels))
    return [order.index(lv) for lv in levels]


# ---------------------------------------------------------------- reading order


def test_centred_title_block_reads_before_left_aligned_heading(odt: ParsedDocument) -> None:
    # Title and subtitle are centred above a left-aligned heading: the empty strip
    # between them is not a column gutter.
    texts = [e.text for e in odt.elements]
    assert texts.index("Title") < texts.index("Subtitle") < texts.index("heading level 1.0")
    assert odt.elements[0].type == "title"


def test_heading_order_and_level_ranks_match_the_ground_truth(
    odt: ParsedDocument, corpus: Path
) -> None:
    truth = _truth_headings(corpus / ODT_TRUTH)
    ours = [
        (e.text, 0 if e.type == "title" else e.level or 0) for e in odt.elements if e.is_heading
    ]
    assert [t for t, _ in ours] == [t for t, _ in truth]
    assert _ranks([lv for _, lv in ours]) == _ranks([lv for _, lv in truth])


def test_heading_paths_follow_the_fixed_levels(odt: ParsedDocument) -> None:
    by_text = {e.text: e for e in odt.elements}
    # "Subtitle" and "heading level 1.0" are siblings under the title.
    assert by_text["heading level 1.0"].heading_path == ("Title",)
    assert by_text["Heading level 2: A"].heading_path == ("Title", "heading level 1.0")


def test_side_by_side_columns_keep_their_gutter() -> None:
    boxes = [
        Box("title", (60, 40, 540, 60)),
        Box("L1", (60, 100, 290, 300)),
        Box("R1", (310, 100, 540, 300)),
        Box("L2", (60, 320, 290, 500)),
        Box("R2", (310, 320, 540, 500)),
    ]
    assert len(find_gutters(boxes)) == 1
    assert [b.name for b in reading_order(boxes)] == ["title", "L1", "L2", "R1", "R2"]


def test_stacked_narrow_blocks_are_not_columns() -> None:
    # Narrow blocks on the right sit above narrow blocks on the left, never beside
    # them (a centred title page): read top to bottom.
    boxes = [
        Box("title", (260, 60, 330, 100)),
        Box("subtitle", (255, 130, 335, 155)),
        Box("h1", (57, 190, 200, 215)),
        Box("body", (57, 220, 540, 290)),
        Box("h2", (57, 300, 195, 320)),
        Box("h3", (57, 630, 195, 650)),
    ]
    assert find_gutters(boxes) == []
    assert [b.name for b in reading_order(boxes)] == ["title", "subtitle", "h1", "body", "h2", "h3"]


def test_address_block_under_the_authors_does_not_hide_the_gutter(corpus: Path) -> None:
    # Page 1 of the paper: an e-mail block centred under the author lines crosses
    # the gutter, but nothing sits beside it, so the two columns are still found.
    doc = parse_pdf(corpus / "multi-column-2p.pdf", ParseOptions(mode="fast"))
    body = [e for e in doc.elements if e.page == 1 and e.type == "paragraph" and e.bbox]
    lefts = [i for i, e in enumerate(body) if e.bbox and e.bbox[2] < 310]
    rights = [i for i, e in enumerate(body) if e.bbox and e.bbox[0] > 300]
    assert lefts and rights
    # Every left-column paragraph comes before every right-column one.
    assert max(lefts) < min(rights)


# ---------------------------------------------------------------- heading levels


def test_single_regular_twin_of_a_bold_style_shares_its_level() -> None:
    styles = {(18.0, True): 1, (18.0, False): 1, (16.0, True): 2}
    levels = rank_styles(styles, {})
    assert levels[(18.0, False)] == levels[(18.0, True)] == 1
    assert levels[(16.0, True)] == 2


def test_repeated_regular_style_keeps_a_level_of_its_own() -> None:
    styles = {(18.0, True): 3, (18.0, False): 4, (16.0, True): 5}
    levels = rank_styles(styles, {})
    assert levels == {(18.0, True): 1, (18.0, False): 2, (16.0, True): 3}


# ---------------------------------------------------------------- fast paths


@given(st.text(max_size=40))
def test_clean_text_fast_path_matches_the_full_normalisation(text: str) -> None:
    full = _SPACES.sub(" ", _CONTROL.sub("", unicodedata.normalize("NFKC", text)))
    assert clean_text(text) == full


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40))
def test_clean_text_fast_path_on_printable_ascii(text: str) -> None:
    assert clean_text(text) == re.sub(" +", " ", text)


def _span(text: str, x0: float, font: str = "Body", size: float = 10.0, flags: int = 0) -> dict:
    return {"text": text, "bbox": (x0, 100.0, x0 + 5 * len(text), 110.0), "font": font,
            "size": size, "flags": flags}  # fmt: skip


def test_line_from_spans_weighs_runs_by_characters() -> None:
    spans = [
        _span("  ", 40.0),  # leading blank span: indent, but no part of the box
        _span("Bold", 50.0, font="Serif-Bold", size=12.0),
        _span(" ", 70.0),
        _span("regular", 75.0),
        _span(" ", 110.0),
        _span("words", 115.0),
    ]
    line = _line_from_spans(spans, block=3)
    assert line is not None
    assert line.text == "Bold regular words"
    assert line.bbox == (50.0, 100.0, 140.0, 110.0)
    # 12 regular characters outweigh 4 bold ones at 12 pt.
    assert (line.size, line.bold, line.first_bold) == (10.0, False, True)
    assert (line.chars, line.indent, line.block) == (16, 2, 3)


def test_line_from_spans_skips_lines_without_visible_text() -> None:
    assert _line_from_spans([_span(" ", 40.0), _span("", 50.0)], block=0) is None


def test_profile_sample_lines_equal_a_fresh_extraction(corpus: Path) -> None:
    with pymupdf.open(corpus / "R-intro.pdf") as doc:
        keep = range(20, 60)
        profile, kept = sample_document(doc, keep=keep)
        expected = {p for p in sample_pages(doc.page_count) if p in keep}
        assert set(kept) == expected and expected
        for pno, lines in kept.items():
            assert lines == extract_lines(doc.load_page(pno))
        fresh = build_profile(doc)
        assert (profile.headings, profile.outline) == (fresh.headings, fresh.outline)


def _run_fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter at the repo root; return its stdout."""
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def test_fast_parse_never_loads_the_layout_model(corpus: Path) -> None:
    # A fresh interpreter: this test process may have loaded PyMuPDF already.
    code = (
        "import sys; from pathlib import Path\n"
        "from parsers import ParseOptions, parse_document\n"
        f"doc = parse_document(Path({str(corpus / ODT)!r}), ParseOptions(mode='fast'))\n"
        "import pymupdf\n"
        "assert doc.elements, 'no elements'\n"
        "assert pymupdf._get_layout is None, 'layout model loaded'\n"
        "assert 'pymupdf.layout' not in sys.modules, 'layout package imported'\n"
        "assert 'pymupdf4llm' not in sys.modules, 'pymupdf4llm imported'\n"
        "from chunkweave.parsers.pdf.layout_model import model_available\n"
        "assert model_available() and pymupdf._get_layout is not None, 'model not loadable'\n"
        "import pymupdf4llm\n"
        "print('ok')\n"
    )
    assert _run_fresh(code) == "ok"


def test_boxes_do_not_depend_on_what_loaded_pymupdf_first(corpus: Path) -> None:
    # pymupdf4llm changes MuPDF's character boxes when imported; the parser pins
    # the same setting, so skipping that import must not move any box.
    parse = (
        "import json; from pathlib import Path\n"
        "from parsers import ParseOptions, parse_document\n"
        f"doc = parse_document(Path({str(corpus / ODT)!r}), ParseOptions(mode='fast'))\n"
        "print(json.dumps([e.bbox for e in doc.elements]))\n"
    )
    deferred = _run_fresh(parse)
    preloaded = _run_fresh("import pymupdf, pymupdf4llm\n" + parse)
    assert deferred == preloaded
    assert len(deferred) > 100


def test_speed_rounds_keep_the_fastest_time_and_the_highest_memory() -> None:
    from bench.parse_speed import best_of

    slow = {"pages_per_s": 10.0, "seconds": 10.0, "peak_rss_mb": 150.0, "warm_pages_per_s": 40.0}
    fast = {"pages_per_s": 20.0, "seconds": 5.0, "peak_rss_mb": 140.0, "warm_pages_per_s": 30.0}
    slow["child_cpu_s"], fast["child_cpu_s"] = 4.0, 6.0
    merged = best_of(best_of(None, slow), fast)
    assert (merged["pages_per_s"], merged["seconds"]) == (20.0, 5.0)
    assert merged["child_cpu_s"] == 4.0
    assert merged["warm_pages_per_s"] == 40.0
    assert merged["peak_rss_mb"] == 150.0
    assert merged["rounds"] == 2
    # A failed round (no speed) never replaces a measured one.
    failed = {"pages_per_s": None, "seconds": None, "peak_rss_mb": 90.0, "error": "timed out"}
    assert best_of(merged, failed)["pages_per_s"] == 20.0

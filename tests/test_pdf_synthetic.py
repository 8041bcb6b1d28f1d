"""Tiny PDFs built in the test: one behaviour each (headings, lists, code, tables)."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.pdf import parse_pdf
from tests.pdf_helpers import draw_ruled_table


def _build(path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    y = 72.0

    def put(
        text: str, size: float = 11, font: str = "helv", x: float = 72, gap: float = 1.5
    ) -> None:
        nonlocal y
        page.insert_text((x, y), text, fontsize=size, fontname=font)
        y += size * gap

    put("1 Introduction", 18, "hebo", gap=2)
    put("This report describes the method. It has a long first paragraph that")
    put("continues on a second line with a hyphen-")
    put("ated word at the end.", gap=2.5)
    put("1.1 Background", 14, "hebo", gap=2)
    put("Some background text follows here.", gap=2.5)
    put("\u2022 First item", x=80)
    put("\u2022 Nested item", x=100)
    put("\u2022 Second item", x=80, gap=2.5)
    put("def main():", 10, "cour")
    put("    return 42", 10, "cour", gap=2.5)
    put("Table 1: Results of the runs", 10, "helv", gap=1.2)
    top = y
    rows = [("Run", "Score", "Time"), ("A", "0.91", "12"), ("B", "0.87", "10")]
    draw_ruled_table(page, top, rows)
    y = top + 20 * len(rows) + 30
    put("2 Method", 18, "hebo", gap=2)
    put("The method section text.")
    doc.save(path)
    return path


def test_synthetic_structure(tmp_path: Path) -> None:
    doc = parse_pdf(_build(tmp_path / "synthetic.pdf"), ParseOptions(mode="fast"))
    by_type: dict[str, list] = {}
    for e in doc.elements:
        by_type.setdefault(e.type, []).append(e)
    headings = [(e.text, e.level) for e in by_type["heading"]]
    assert headings == [("1 Introduction", 1), ("1.1 Background", 2), ("2 Method", 1)]
    para = by_type["paragraph"][0].text
    assert "hyphenated word" in para and para.startswith("This report")
    items = [(e.text, e.level) for e in by_type["list_item"]]
    assert items == [("First item", 1), ("Nested item", 2), ("Second item", 1)]
    assert by_type["code"][0].text == "def main():\n    return 42"
    table = by_type["table"][0]
    assert table.rows == (("Run", "Score", "Time"), ("A", "0.91", "12"), ("B", "0.87", "10"))
    caption = by_type["caption"][0]
    assert caption.text.startswith("Table 1") and caption.ref == table.order
    method = next(e for e in doc.elements if e.text == "The method section text.")
    assert method.heading_path == ("2 Method",)


def test_monospaced_titles_the_outline_lists_are_headings_and_code_stays_code(
    tmp_path: Path,
) -> None:
    """A book setting its chapter titles in a typewriter face: the outline and size say heading."""
    doc = pymupdf.open()
    body = "The chapter text is set in a proportional face at the body size, as prose is."
    for title in ("PREFACE", "INTRODUCTION"):
        page = doc.new_page()
        page.insert_text((72, 90), title, fontsize=15, fontname="cour")
        y = 130.0
        for _ in range(12):
            page.insert_text((72, y), body, fontsize=10.5, fontname="tiro")
            y += 14
        page.insert_text((72, y + 10), "x = compute(y)", fontsize=10.5, fontname="cour")
    doc.set_toc([[1, "PREFACE", 1], [1, "INTRODUCTION", 2]])
    path = tmp_path / "typewriter.pdf"
    doc.save(path)
    for mode in ("fast", "auto"):
        parsed = parse_pdf(path, ParseOptions(mode=mode))
        headings = [(e.text, e.page) for e in parsed.elements if e.type == "heading"]
        assert headings == [("PREFACE", 1), ("INTRODUCTION", 2)], mode
        code = [e.text for e in parsed.elements if e.type == "code"]
        assert code == ["x = compute(y)", "x = compute(y)"], mode

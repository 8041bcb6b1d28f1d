"""PDF furniture classes on small synthetic documents: running lines that vary per page.

Each document is written with PyMuPDF (A4, 10 pt body text) and parsed in ``fast``
mode; furniture is what the parser labels ``page_header`` / ``page_footer``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pymupdf

from chunkweave.parsers.document import ParsedDocument, ParseOptions
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.bands import is_page_number
from chunkweave.parsers.pdf.profile import build_profile
from chunkweave.parsers.pdf.text import extract_lines

WIDTH, HEIGHT = 595.0, 842.0
#: Per page: header lines (text, x) from the top, footer lines (text, x) from the bottom.
Edge = Sequence[tuple[str, float]]


def _body(page: pymupdf.Page, n: int, top: float = 130.0, lines: int = 30) -> None:
    for i in range(lines):
        text = f"Paragraph text of page {n} carries line {i} of its discussion of the topic."
        page.insert_text((72, top + 18 * i), text, fontsize=10)


def _write(
    path: Path,
    pages: int,
    header: Callable[[int], Edge],
    footer: Callable[[int], Edge],
    body: Callable[[pymupdf.Page, int], None] = _body,
    size: float = 9.0,
) -> Path:
    """Write ``pages`` pages; header and footer entries each take a row of their own."""
    doc = pymupdf.open()
    for n in range(1, pages + 1):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        for k, (text, x) in enumerate(header(n)):
            page.insert_text((x, 50 + 13 * k), text, fontsize=size)
        for k, (text, x) in enumerate(reversed(list(footer(n)))):
            page.insert_text((x, HEIGHT - 40 - 13 * k), text, fontsize=size)
        body(page, n)
    doc.save(path)
    return path


def _parse(path: Path) -> ParsedDocument:
    return parse_pdf(path, ParseOptions(mode="fast"))


def _furniture(doc: ParsedDocument) -> set[tuple[int | None, str]]:
    return {(e.page, e.text) for e in doc.elements if e.is_furniture}


def _body_texts(doc: ParsedDocument) -> str:
    return "\n".join(e.text for e in doc.elements if not e.is_furniture)


def _chapter(n: int) -> str:
    return ["Introduction and scope", "Methods of the survey", "Results by region"][(n - 1) // 3]


def test_running_header_whose_chapter_title_changes_is_furniture(tmp_path: Path) -> None:
    """'Chapter 2: Methods' on three pages, then another chapter: each title repeats a few times."""
    path = _write(
        tmp_path / "chapters.pdf",
        9,
        lambda n: [(f"Chapter {(n - 1) // 3 + 1}: {_chapter(n)}", 72)],
        lambda n: [(str(n), 290)],
    )
    doc = _parse(path)
    furniture = _furniture(doc)
    for n in range(1, 10):
        assert (n, f"Chapter {(n - 1) // 3 + 1}: {_chapter(n)}") in furniture
        assert (n, str(n)) in furniture
    body = _body_texts(doc)
    assert "Chapter" not in body
    assert "line 29 of its discussion" in body


def test_page_n_of_m_footer_beside_a_date_is_furniture(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "page_of.pdf",
        4,
        lambda n: [("Quarterly report of the district board", 72)],
        lambda n: [(f"Printed 2023-0{n}-1{n}", 72), (f"Page {n} of 4", 460)],
    )
    doc = _parse(path)
    furniture = _furniture(doc)
    for n in range(1, 5):
        assert (n, f"Page {n} of 4") in furniture
        assert (n, f"Printed 2023-0{n}-1{n}") in furniture
    assert "Page" not in _body_texts(doc)


def test_odd_and_even_pages_alternate_their_running_lines(tmp_path: Path) -> None:
    """Book layout: the title on even pages (left), the chapter on odd pages (right)."""

    def header(n: int) -> Edge:
        if n % 2:
            return [(f"Chapter {(n + 1) // 4 + 1}. Field notes", 380), (str(n), 510)]
        return [(str(n), 72), ("A history of the valley", 110)]

    path = _write(tmp_path / "book.pdf", 8, header, lambda n: [])
    doc = _parse(path)
    furniture = _furniture(doc)
    for n in range(1, 9):
        assert (n, str(n)) in furniture
    assert {(n, "A history of the valley") for n in (2, 4, 6, 8)} <= furniture
    assert {(n, t) for n, t in furniture if "Field notes" in t} == {
        (n, f"Chapter {(n + 1) // 4 + 1}. Field notes") for n in (1, 3, 5, 7)
    }
    assert "valley" not in _body_texts(doc)


def test_two_page_document_with_little_repetition(tmp_path: Path) -> None:
    """Two pages: a running title and a page label seen twice only."""
    path = _write(
        tmp_path / "two.pdf",
        2,
        lambda n: [("Memorandum on the bridge works", 72)],
        lambda n: [(f"- {n} -", 285)],
    )
    doc = _parse(path)
    assert _furniture(doc) >= {
        (1, "Memorandum on the bridge works"),
        (2, "Memorandum on the bridge works"),
        (1, "- 1 -"),
        (2, "- 2 -"),
    }
    assert "Memorandum" not in _body_texts(doc)


def test_prefixed_page_labels_in_a_footer_row_are_furniture(tmp_path: Path) -> None:
    """Appendix and chapter-relative page labels: "A-42" beside a footer date, on one page."""

    def body(page: pymupdf.Page, n: int) -> None:
        page.insert_text((72, HEIGHT - 40), "August 2, 2007", fontsize=9)
        page.insert_text((480, HEIGHT - 40), "A-42", fontsize=9)
        _body(page, n)

    doc = _parse(_write(tmp_path / "appendix.pdf", 1, lambda n: [], lambda n: [], body))
    assert (1, "A-42") in _furniture(doc)
    assert "A-42" not in _body_texts(doc)
    assert is_page_number("A-42") and is_page_number("3-7") and is_page_number("B.12")
    assert not is_page_number("COVID-19") and not is_page_number("1-800-555")


def test_a_lone_body_line_at_the_top_of_one_page_stays_body(tmp_path: Path) -> None:
    """Negative: a title line at the top of page 2 only, not repeated, is body text."""

    def body(page: pymupdf.Page, n: int) -> None:
        if n == 2:
            page.insert_text((72, 60), "Results of the second field season", fontsize=10)
            page.insert_text((72, 78), "Water levels rose in every well we sampled.", fontsize=10)
        _body(page, n)

    path = _write(tmp_path / "negative.pdf", 4, lambda n: [], lambda n: [(str(n), 290)], body)
    doc = _parse(path)
    body_text = _body_texts(doc)
    assert "Results of the second field season" in body_text
    assert "Water levels rose" in body_text
    assert {t for _, t in _furniture(doc)} == {"1", "2", "3", "4"}


def test_body_size_running_title_that_changes_every_page_is_furniture(tmp_path: Path) -> None:
    """Short sections: after three pages of one title, each page has its own, never repeated.

    The title is set at body size (no smaller-font evidence); its position, where
    running lines sat on earlier pages, is what marks it.
    """
    regions = ["Overview of the basin", "Notes on the north shore", "Notes on the delta"]
    titles = [regions[0]] * 3 + regions[1:] + ["Notes on the upper valley"]
    path = _write(
        tmp_path / "slots.pdf",
        len(titles),
        lambda n: [(titles[n - 1], 72)],
        lambda n: [(str(n), 290)],
        size=10.0,
    )
    doc = _parse(path)
    assert {(n, titles[n - 1]) for n in range(1, len(titles) + 1)} <= _furniture(doc)
    assert "Notes on" not in _body_texts(doc)


def test_a_display_title_where_the_running_header_sits_stays_body(tmp_path: Path) -> None:
    """Negative: a chapter opener's large title at the header position is not furniture."""

    def header(n: int) -> Edge:
        return [] if n == 3 else [("Annual review of the harbour", 72)]

    def body(page: pymupdf.Page, n: int) -> None:
        if n == 3:
            page.insert_text((72, 52), "Harbour traffic", fontsize=18)
        _body(page, n)

    path = _write(tmp_path / "opener.pdf", 5, header, lambda n: [(str(n), 290)], body, size=10.0)
    doc = _parse(path)
    assert (3, "Harbour traffic") not in _furniture(doc)
    assert "Harbour traffic" in _body_texts(doc)


def test_small_tightly_set_text_at_the_top_of_a_page_stays_body(tmp_path: Path) -> None:
    """Negative: a references page in a smaller font whose lines touch is not a header.

    Its first line is the top-most, smaller than the body and short; what follows
    it is set tight (boxes touching), so it is not set apart from the text.
    """

    def body(page: pymupdf.Page, n: int) -> None:
        if n == 2:
            for i in range(12):
                ref = f"Author {i}, A. (2001) Study number {i} of the river. Journal {i}: 1-9."
                page.insert_text((72, 60 + 12 * i), ref, fontsize=9)
            _body(page, n, top=200, lines=10)
        else:
            _body(page, n)

    path = _write(tmp_path / "refs.pdf", 3, lambda n: [], lambda n: [(str(n), 290)], body)
    doc = _parse(path)
    assert "Author 0, A. (2001) Study number 0" in _body_texts(doc)
    assert {t for _, t in _furniture(doc)} == {"1", "2", "3"}


def _exhibits(path: Path) -> pymupdf.Document:
    """Six pages: exhibits 1 (pages 1-3) and 2 (pages 4-6), both titled "Input screen layout".

    Each page has a running header row, an exhibit line ("(Cont. N)" on continuation
    pages) and, set close under it, the exhibit's title; the outline lists each
    exhibit on its first page.
    """
    doc = pymupdf.open()
    for n in range(1, 7):
        exhibit, first = (n - 1) // 3 + 1, (n - 1) % 3 == 0
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        page.insert_text((72, 40), "Terminal responses manual", fontsize=10)
        page.insert_text((480, 40), f"page {n}", fontsize=10)
        cont = "" if first else f" (Cont. {(n - 1) % 3})"
        page.insert_text((72, 75), f"Exhibit {exhibit}{cont} (07-01-2019)", fontsize=10)
        page.insert_text((72, 88), "Input screen layout", fontsize=10, fontname="hebo")
        _body(page, n, top=140)
    doc.set_toc([[1, "Exhibits", 1], [2, "Input screen layout", 1], [2, "Input screen layout", 4]])
    doc.save(path)
    return pymupdf.open(path)


def test_a_title_repeated_under_the_header_of_continuation_pages_is_furniture(
    tmp_path: Path,
) -> None:
    """Stacked header rows: the repeated title is furniture on continuation pages only.

    Where a new exhibit with the same title starts (an outline entry on that page)
    and on the first page, the title is a heading and stays body.
    """
    doc = _exhibits(tmp_path / "exhibits.pdf")
    profile = build_profile(doc)
    decided: dict[int, bool] = {}
    for pno in range(doc.page_count):
        page = doc.load_page(pno)
        lines = extract_lines(page)
        title = next(i for i, ln in enumerate(lines) if ln.text == "Input screen layout")
        furniture = profile.furniture.classify(
            lines, page.rect.height, profile.body_size, page=pno, outline=profile.outline
        )
        assert any(lines[i].text.startswith("Exhibit") for i in furniture)
        decided[pno + 1] = title in furniture
        # Without the page, nothing is known about the page before: the title stays.
        plain = profile.furniture.classify(lines, page.rect.height, profile.body_size)
        assert title not in plain
    assert decided == {1: False, 2: True, 3: True, 4: False, 5: True, 6: True}
    # Without the outline, the page after a continuation page is taken as one too.
    pno = 3
    page = doc.load_page(pno)
    lines = extract_lines(page)
    furniture = profile.furniture.classify(lines, page.rect.height, profile.body_size, page=pno)
    assert any(ln.text == "Input screen layout" for i, ln in enumerate(lines) if i in furniture)


def test_a_table_header_repeated_under_each_page_title_stays_body(tmp_path: Path) -> None:
    """Negative: repeated text in the top band under a body line is not a running line.

    Each page has its own table title, then the same column headings, all within
    the top band: the headings repeat, but body text lies between them and the edge.
    """
    titles = ["Retail sales of the northern stores", "Wholesale trade by district", "Payroll"]
    titles += ["Employment in the harbour trades"]

    def body(page: pymupdf.Page, n: int) -> None:
        page.insert_text((72, 45), titles[n - 1], fontsize=10, fontname="hebo")
        for x, cell in ((72, "Kind of business"), (300, "Sales"), (400, "Annual payroll")):
            page.insert_text((x, 75), cell, fontsize=10)
        _body(page, n)

    path = _write(tmp_path / "tables.pdf", 4, lambda n: [], lambda n: [(str(n), 290)], body)
    doc = _parse(path)
    assert {t for _, t in _furniture(doc)} == {"1", "2", "3", "4"}
    assert _body_texts(doc).count("Annual payroll") == 4


def _figures_with_outline(path: Path, header: bool) -> Path:
    """Six pages, each opening with its own title ("Drawing N") where running headers sit.

    With ``header`` every page also carries a running line repeating the book title
    above it, so the titles are not the outermost text of their band.
    """
    doc = pymupdf.open()
    toc = []
    for n in range(1, 7):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        if header:
            page.insert_text((72, 40), "Utility patent application", fontsize=9)
        page.insert_text((72, 60), f"Drawing {n}", fontsize=10, fontname="hebo")
        _body(page, n)
        toc.append([1, f"Drawing {n}", n])
    doc.set_toc(toc)
    doc.save(path)
    return path


def test_a_title_the_outline_lists_on_its_page_is_never_furniture(tmp_path: Path) -> None:
    """Same place on every page, only its number changing: a running line, but listed."""
    for header in (False, True):
        doc = _parse(_figures_with_outline(tmp_path / f"drawings{header}.pdf", header))
        headings = {(e.page, e.text) for e in doc.elements if e.is_heading}
        assert headings == {(n, f"Drawing {n}") for n in range(1, 7)}, header
        if header:
            assert {t for _, t in _furniture(doc)} == {"Utility patent application"}

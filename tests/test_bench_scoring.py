"""Unit tests of the benchmarks' pure scoring functions and text normal forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.groundtruth import GtHeading, GtTable
from bench.normalize import markdown_body_text, normalize_heading, normalize_text
from bench.scoring import (
    chunk_gt_headings,
    furniture_leaks,
    heading_path_correct,
    level_accuracy,
    match_headings,
    match_tables,
    percentile,
    prf,
    running_line_leaks,
    table_kept_whole,
    token_f1,
)
from bench.views import ChunkView, Item


def heading(text: str, level: int = 1) -> Item:
    return Item("heading", text, level=level)


def table(rows: list[list[str]]) -> Item:
    cells = tuple(tuple(r) for r in rows)
    return Item("table", "\n".join("\t".join(r) for r in cells), rows=cells)


def test_prf_counts_and_empty_sides() -> None:
    assert prf(3, 4, 6) == pytest.approx((0.75, 0.5, 0.6))
    assert prf(0, 0, 5) == (0.0, 0.0, 0.0)
    assert prf(0, 5, 0) == (0.0, 0.0, 0.0)


def test_normalize_text_drops_markdown_noise_and_case() -> None:
    assert normalize_text("**Bold** _it_ \\# `code`  <!-- image -->") == "bold it code"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2.3.1  Existing row control", "existing row control"),
        ("## **1 Introduction**", "introduction"),
        ("Chapter 4 Results", "results"),
        ("A.1 Appendix stuff", "appendix stuff"),
        ("2023 was a year", "was a year"),
        ("2.3.59-12 Command Code Entity Display", "command code entity display"),
        ("3-9 Creating a mask", "creating a mask"),
        ("Run-time options", "run time options"),
        ("II Basics", "basics"),
        ("II. BASICS", "basics"),
        ("CHAPTER ONE: Creators", "creators"),
        ("Chapter 1: Creators", "creators"),
        ("Civil rights", "civil rights"),
        ("One more thing", "one more thing"),
    ],
)
def test_normalize_heading_strips_numbering(raw: str, expected: str) -> None:
    assert normalize_heading(raw) == expected


def test_percentile_nearest_rank() -> None:
    values = list(range(1, 101))
    assert percentile(values, 50) == 50
    assert percentile(values, 95) == 95
    assert percentile(values, 100) == 100
    assert percentile([], 50) == 0


def test_match_headings_exact_fuzzy_and_one_to_one() -> None:
    gt = [GtHeading("Introduction", 1), GtHeading("Related work", 2), GtHeading("Results", 1)]
    pred = [
        heading("1 Introduction"),
        heading("Introduction"),  # duplicate: may match only once
        heading("Related  work."),
        heading("Resu1ts and more words entirely"),  # too different
        Item("text", "Results"),  # not a heading
    ]
    score = match_headings(pred, gt)
    assert (score.tp, score.n_pred, score.n_gt) == (2, 4, 3)
    near = match_headings(
        [heading("Securty fundamentals")], [GtHeading("Security fundamentals", 1)]
    )
    assert near.tp == 1


def test_level_accuracy_rewards_hierarchy_not_offset() -> None:
    # same hierarchy, predicted levels shifted by one: fully right
    assert level_accuracy([(1, 2), (2, 3), (3, 4)]) == 1.0
    # flattened: everything on one level
    assert level_accuracy([(1, 1), (2, 1), (3, 1)]) == pytest.approx(1 / 3)
    # titles (GT level 0) are left out
    assert level_accuracy([(0, 1), (1, 1), (2, 2)]) == 1.0
    assert level_accuracy([]) is None


def test_match_headings_reports_level_pairs() -> None:
    gt = [GtHeading("Alpha", 1), GtHeading("Beta", 2)]
    score = match_headings([heading("Alpha", 3), heading("Beta", 3)], gt)
    assert sorted(score.level_pairs) == [(1, 3), (2, 3)]
    assert level_accuracy(score.level_pairs) == 0.5


def test_match_tables_by_content_and_shape() -> None:
    gt = [
        GtTable(2, 2, ("name", "age", "ann", "31")),
        GtTable(2, 3, ("x", "y", "z", "10", "20", "30")),
    ]
    pred = [
        table([["name", "age"], ["ann", "31"]]),  # right shape
        table([["x", "y", "z", "10", "20", "30"]]),  # right cells, wrong shape
        table([["totally", "unrelated"]]),
    ]
    score = match_tables(pred, gt)
    assert (score.tp, score.n_pred, score.n_gt, score.shape_ok) == (2, 3, 2, 1)


def test_match_tables_no_tables() -> None:
    score = match_tables([Item("text", "name age ann 31")], [GtTable(2, 2, ("name", "age"))])
    assert (score.tp, score.n_pred, score.n_gt) == (0, 0, 1)


def test_token_f1_unigram_and_bigram_order() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    assert token_f1(text, text) == 1.0
    assert token_f1("alpha beta", "gamma delta") == 0.0
    swapped = "over the lazy dog the quick brown fox jumps"
    assert token_f1(swapped, text) == 1.0
    assert token_f1(swapped, text, n=2) < 1.0


def test_markdown_body_text_keeps_words_drops_syntax() -> None:
    md = "# Title\n\n- item one\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert normalize_text(markdown_body_text(md)) == "title item one a b 1 2"


def test_furniture_leaks_exact_and_inside() -> None:
    furniture = ["9", "9", "Copyright IBM Corp 2014", "Copyright IBM Corp 2014"]
    body = [
        "9",  # a page number left as its own paragraph: leaks once
        "Some text. Copyright IBM Corp 2014. More text.",  # long furniture inside: leaks
        "There are 9 apples.",  # a short number inside prose does not count
    ]
    assert furniture_leaks(body, furniture) == (2, 4)
    assert furniture_leaks(["clean body"], furniture) == (0, 4)
    assert furniture_leaks(["x"], []) == (0, 0)


def test_furniture_leaks_discount_text_the_gt_body_also_holds() -> None:
    title = "Access Control Support in DB2"
    furniture = [title, "1", "1"]  # a running footer repeating the title; page numbers
    gt_body = [title, "Chapter", "1", "Intro text"]  # the title page; a chapter number "1"
    # Title and chapter number kept once each, as in the GT body: nothing leaked.
    assert furniture_leaks([title, "1", "Intro text"], furniture, gt_body) == (0, 3)
    # The footer kept as well (the title twice) and a page number "1" kept as body.
    body = [title, "1", "Intro text", title, "1"]
    assert furniture_leaks(body, furniture, gt_body) == (2, 3)
    # Without the reference every occurrence counts.
    assert furniture_leaks([title, "1", "Intro text"], furniture) == (2, 3)


def test_chunk_gt_headings_locates_chunks() -> None:
    stream = [
        (False, "preface words before any heading appear here first"),
        (True, "1 Methods"),
        (False, "we measured the thing with a ruler and a very careful eye"),
        (True, "2 Results"),
        (False, "the thing was long and the ruler was short which was a problem"),
    ]
    chunks = [
        ChunkView("preface words before any heading appear here first"),
        ChunkView("we measured the thing with a ruler", heading_path=("Methods",)),
        ChunkView("the thing was long and the ruler", heading_path=("Methods",)),
        ChunkView("words that are not in the document anywhere at all"),
    ]
    expected = chunk_gt_headings(stream, chunks)
    assert expected == ["", "methods", "results", None]
    pairs = zip(chunks, expected, strict=True)
    verdicts = [heading_path_correct(c.heading_path, e) for c, e in pairs]
    assert verdicts == [True, True, False, False]


def test_heading_path_correct_partial_outline() -> None:
    path = ("2 Results", "2.1 Unlisted subsection")
    assert not heading_path_correct(path, "results")
    assert heading_path_correct(path, "results", partial_gt=True)
    assert not heading_path_correct(path, "methods", partial_gt=True)


def test_table_kept_whole() -> None:
    cells = ("name", "age", "ann", "31", "bob", "42")
    assert table_kept_whole(cells, ["intro", "name age ann 31 bob 42 and more"])
    # split across two chunks: not whole
    assert not table_kept_whole(cells, ["name age ann", "31 bob 42"])
    assert not table_kept_whole(cells, [])
    assert not table_kept_whole((), ["anything"])


def test_running_line_proxy_counts_edge_repeats_and_page_numbers() -> None:
    items = []
    for page in range(1, 11):
        items += [
            Item("text", "ACME Annual Report 2024", page=page),
            Item("heading", f"Section {page}", page=page),
            Item("text", f"Body text that says {'abcdefghij'[page - 1] * 3} here.", page=page),
            Item("text", str(page), page=page),
        ]
    leaked, pages = running_line_leaks(items)
    # 10 running titles and 10 page numbers; "Section 3" is an edge item too (the
    # first two items are) and repeats with its digits masked: the proxy counts it.
    assert pages == 10
    assert leaked == 30
    labelled = [
        i if i.text != "ACME Annual Report 2024" else Item("furniture", i.text, page=i.page)
        for i in items
    ]
    assert running_line_leaks(labelled)[0] == 20
    assert running_line_leaks([Item("text", "Unique", page=1)]) == (0, 1)


def test_running_line_proxy_spares_headings_the_ground_truth_lists_on_the_page() -> None:
    from bench.groundtruth import GtHeading

    items = []
    for page in range(1, 7):
        items += [
            Item("heading", f"Drawing {page}", page=page),
            Item("text", f"Figure body {'abcdef'[page - 1] * 3}.", page=page),
        ]
    # Without the outline, "Drawing #" at the top of every page looks like a running line.
    assert running_line_leaks(items)[0] == 6
    outline = [GtHeading(f"Drawing {p}", 2, page=p) for p in range(1, 6)]
    # Listed on its own page, it is a heading. Page 6's label is not listed, but alone
    # it no longer repeats on 3 pages; a label listed for another page still counts.
    assert running_line_leaks(items, outline)[0] == 0
    moved = [GtHeading(f"Drawing {p}", 2, page=p + 1) for p in range(1, 6)]
    assert running_line_leaks(items, moved)[0] == 6


def test_level_accuracy_is_ranked_per_document() -> None:
    from bench.groundtruth import GroundTruth
    from bench.parse_quality import Tally

    def doc(levels: list[int], shift: int) -> tuple[GroundTruth, list[Item]]:
        gt = GroundTruth(doc=Path("x.pdf"), source="outline")
        gt.headings = [GtHeading(f"Heading {i}", lv, None) for i, lv in enumerate(levels)]
        return gt, [heading(f"Heading {i}", lv + shift) for i, lv in enumerate(levels)]

    tally = Tally()
    # Two documents, each with a right hierarchy at its own offset: both right.
    for levels, shift in (([1, 2, 2], 0), ([1, 1, 2], 1)):
        tally.add(*doc(levels, shift))
    assert tally.row()["level_accuracy"] == 1.0
    assert tally.row()["level_pairs"] == 6


def test_outline_bookmarks_without_a_destination_are_no_ground_truth(tmp_path) -> None:
    from bench.groundtruth import load_outline

    tsv = tmp_path / "book.groundtruth.pdf-outline.tsv"
    tsv.write_text(
        "level\ttitle\tpage\n1\tDocument\t-1\n2\tPreface\t3\n2\t*lessig.org\t-1\n2\tOne\t5\n",
        encoding="utf-8",
    )
    gt = load_outline(tsv, tmp_path / "book.pdf")
    assert [(h.text, h.page) for h in gt.headings] == [("Preface", 3), ("One", 5)]

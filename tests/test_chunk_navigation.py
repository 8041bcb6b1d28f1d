"""Contents and index entries (navigation furniture) stay out of chunks by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.navigation import (
    is_navigation_table,
    is_navigation_text,
    navigation_orders,
)
from chunkweave.parsers import parse_document
from tests.chunk_helpers import el, make_doc

COUNTER = ApproxTokenCounter()


@pytest.mark.parametrize(
    "text",
    [
        "Preface . . . . . . . . . . . . . . . 1",
        "2 Simple manipulations; numbers and vectors . . 8",
        "Notices . . . . . . . . vii Trademarks . . . . . . . viii",
        "Factors. . . . . . . . . 17, 57 Families . . . . . . . 61",
        "3.1 Arrays......................20",
        "Introduction …… 4",
    ],
)
def test_contents_and_index_entries_are_navigation(text: str) -> None:
    assert is_navigation_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "The ratio was 0.5. 10 people came.",
        "Loop over x in 1..10",
        "He paused... 5 minutes later he left.",
        "See page 5 . . . and then read the rest of the chapter 7 times",
        # One leader entry cannot hide a long paragraph of prose.
        "Setup . . . . 4 " + "This explains the setup in many plain words. " * 6 + "5 . . . . 6",
        "Chapter 3 explains the options in detail.",
    ],
)
def test_prose_is_not_navigation(text: str) -> None:
    assert not is_navigation_text(text)


def _toc_doc():
    return make_doc(
        [
            el("heading", "Contents", level=1),
            el("paragraph", "1 Alpha . . . . . . . . 1 1.1 Details . . . . . . 2"),
            el("paragraph", "2 Beta . . . . . . . . . 3"),
            el("heading", "1 Alpha", level=1),
            el("paragraph", "Alpha explains the first idea in plain words."),
            el("heading", "Index", level=1),
            el("paragraph", "A"),
            el("paragraph", "B"),
            el("paragraph", "Alpha . . . . . . 1 Apples . . . . . 2"),
            el("paragraph", "C"),
            el("paragraph", "Beta . . . . . . . 3"),
        ]
    )


def test_group_letters_next_to_index_entries_are_navigation() -> None:
    doc = _toc_doc()
    by_text = {e.text: e.order for e in doc.elements}
    nav = navigation_orders(doc.elements)
    assert {by_text["A"], by_text["B"], by_text["C"]} <= nav
    assert by_text["Alpha explains the first idea in plain words."] not in nav
    assert by_text["Contents"] not in nav  # headings are never navigation


@pytest.mark.parametrize("strategy", ["elements", "fixed", "recursive", "pages"])
def test_every_strategy_leaves_navigation_out_unless_asked(strategy: str) -> None:
    doc = _toc_doc()
    default = chunk_document(doc, ChunkOptions(strategy=strategy), COUNTER, doc_id="d")
    text = "\n".join(c.text for c in default)
    assert "Alpha explains the first idea" in text
    assert ". . . ." not in text
    kept = chunk_document(
        doc, ChunkOptions(strategy=strategy, include_furniture=True), COUNTER, doc_id="d"
    )
    assert "2 Beta . . . . . . . . . 3" in "\n".join(c.text for c in kept)


def test_r_manual_contents_and_indexes_are_left_out(corpus: Path) -> None:
    doc = parse_document(corpus / "R-intro.pdf")
    chunks = chunk_document(doc, ChunkOptions(), COUNTER, doc_id="r")
    leaders = [c for c in chunks if c.text.count(". . . .") >= 3]
    assert leaders == []
    # The parser rebuilds the contents pages and the indexes as (entry | page)
    # tables: those stay out too, the manual's real tables stay in.
    navigation = ("Table of Contents", "Appendix D Function and variable index")
    assert [c for c in chunks if c.type == "table" and c.heading_path[-1:] == navigation[:1]] == []
    index_tables = [c for c in chunks if c.type == "table" and navigation[1] in c.heading_path]
    assert len(index_tables) <= 3  # a few index columns are not in alphabetical order
    assert any(c.type == "table" and "additional arguments" in c.text for c in chunks)
    # The body survives: the text after the contents is still chunked.
    assert any("statistical tables" in c.text for c in chunks)


def test_contents_and_index_tables_are_navigation() -> None:
    contents = [("Preface", "1"), ("1 Introduction", "3"), ("1.1 Scope", "3"), ("2 Use", "12")]
    index = [("abline", "71"), ("boxplot", "40"), ("c", "8, 11, 27"), ("data", "34")]
    front = [("Notices", "vii"), ("Trademarks", "viii"), ("Preface", "ix"), ("1 Start", "1")]
    assert is_navigation_table(contents, 0)
    assert is_navigation_table(index, 0)
    assert is_navigation_table(front, 0)


def test_data_tables_are_not_navigation() -> None:
    counts = [("Apples", "12"), ("Pears", "3"), ("Kiwis", "40"), ("Figs", "7")]
    assert not is_navigation_table(counts, 0)  # numbers go up and down, labels unsorted
    assert not is_navigation_table([("Year", "Total"), *counts], 1)  # has a header row
    words = [("a", "one"), ("b", "two"), ("c", "three")]
    assert not is_navigation_table(words, 0)  # no page references
    assert not is_navigation_table([("Intro", "1"), ("Body", "2")], 0)  # too short

"""The retrieval benchmark's hit comparison and token cuts, and the benches' name lists."""

from __future__ import annotations

import pytest


def test_markup_normalize_drops_table_pipes_and_emphasis() -> None:
    from bench.chunk_retrieval import markup_normalize

    md = "## 3.1 Types\n\n| Type | Use |\n|:---|---:|\n| **DECIMAL** | exact<br>numbers |"
    assert markup_normalize(md) == "3.1 Types Type Use DECIMAL exact numbers"
    assert markup_normalize("R\\_HOME is `set`") == "RHOME is set"


def test_markup_normalize_keeps_plain_text_and_inner_hyphens() -> None:
    from bench.chunk_retrieval import markup_normalize

    # only rule rows lose their dashes; words, numbers and a '#' inside a line stay
    assert markup_normalize("well-known  C# value -3\n---") == "well-known C# value -3"


def test_markup_normalize_makes_markdown_table_cells_hits() -> None:
    """A cell split by pipes and bold is a hit under markup_normalize, not under normalize."""
    import numpy as np

    from bench.chunk_retrieval import markup_normalize
    from chunkweave.storage.evaluate import QAItem, rank_hits

    questions = [QAItem(question="q", evidence="exact numbers", doc="a.pdf")]
    texts = ["| **exact** numbers |", "| exact | numbers |"]
    vectors, query = np.array([[1.0, 0.0], [0.9, 0.1]]), np.array([[1.0, 0.0]])
    docs = ["a.pdf", "a.pdf"]
    assert rank_hits(questions, texts, docs, vectors, query, 10) == [None]
    assert rank_hits(questions, texts, docs, vectors, query, 10, norm=markup_normalize) == [1]
    # the doc must match too
    assert rank_hits(
        questions, texts, ["b.pdf"] * 2, vectors, query, 10, norm=markup_normalize
    ) == [None]


def test_cut_to_fit_keeps_the_longest_prefix_that_fits() -> None:
    from bench.chunk_retrieval import cut_to_fit

    text = "one two three four"
    ends = [3, 7, 13, 18]  # one "token" per word

    def count(s: str) -> int:
        return len(s.split()) + 2  # two specials, as BERT

    assert cut_to_fit(text, ends, count, 6) == text
    assert cut_to_fit(text, ends, count, 5) == "one two three"
    assert cut_to_fit(text, ends, count, 3) == "one"
    assert cut_to_fit(text, ends, count, 2) == ""


def test_name_list_keeps_order_and_refuses_unknown_names():
    import argparse

    from bench.options import name_list

    parse = name_list(["a", "b", "c"], "systems")
    assert parse("c,a,") == ["c", "a"]
    with pytest.raises(argparse.ArgumentTypeError, match="unknown systems: x, z"):
        parse("a,z,x")

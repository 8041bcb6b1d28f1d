"""Section numbers: normalising headings and citations, and the chunk field they become."""

from __future__ import annotations

import pytest

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.sections import (
    MAX_LENGTH,
    nearest_section_number,
    section_number,
    section_prefixes,
)
from tests.chunk_helpers import el, make_doc, words


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("7.3.1.1 Scope of the rules", "7.3.1.1"),
        ("7.3.1. Scope", "7.3.1"),
        ("Section 7.3.1 Scope", "7.3.1"),
        ("§ 12 Fees", "12"),
        ("§12.3", "12.3"),
        ("A.2 Tables", "A.2"),
        ("Article 5 Definitions", "article 5"),
        ("ART. 5", "article 5"),
        ("Article IV", "article IV"),
        ("Chapter 4: Results", "chapter 4"),
        ("Part iv Rules", "part IV"),
        ("Appendix b. Glossary", "appendix B"),
        ("II. Background", "II"),
        ("第二十三条 合同的解除", "第23条"),
        ("第三章 总则", "第3章"),
        ("1. Introduction", "1"),
    ],
)
def test_numbered_headings_normalise(text: str, number: str) -> None:
    assert section_number(text) == number


@pytest.mark.parametrize(
    ("citation", "heading"),
    [
        ("7.3.1", "7.3.1 Scope"),
        ("section 7.3.1", "7.3.1 Scope"),
        ("§ 7.3.1", "7.3.1 Scope"),
        ("a.2", "A.2 Tables"),
        ("article 5", "Article 5 Definitions"),
        ("第23条", "第二十三条 合同的解除"),
        ("chapter 4", "CHAPTER 4 Results"),
    ],
)
def test_a_citation_normalises_as_the_heading_it_cites(citation: str, heading: str) -> None:
    assert section_number(citation) == section_number(heading) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Introduction",
        "2023 Annual report",
        "12.5% of revenue",
        "(1) first item",
        "a) first item",
        "一、总则",
        "① 第一",
        "가. 항목",
        "",
        "1.2.3.4.5.6.7.8.9 too deep",
    ],
)
def test_unnumbered_and_list_numbered_headings_have_no_section_number(text: str) -> None:
    assert section_number(text) is None


def test_the_nearest_numbered_heading_wins() -> None:
    assert nearest_section_number(("3 Methods", "3.2 Data", "Sampling")) == "3.2"
    assert nearest_section_number(("Preface", "Thanks")) is None
    assert nearest_section_number(()) is None
    assert len(section_number("1" + ".1" * 6 + " x") or "") <= MAX_LENGTH


def test_a_section_is_held_by_the_sections_its_number_starts_with() -> None:
    assert section_prefixes("7.3.1") == ("7", "7.3", "7.3.1")
    assert "7.3" not in section_prefixes("7.30")
    assert section_prefixes("A.2") == ("A", "A.2")
    assert section_prefixes("article 5") == ("article 5",)
    assert section_prefixes(None) == ()


def _doc():
    return make_doc(
        [
            el("heading", "7 Operations", level=1),
            el("paragraph", words(80, "a")),
            el("heading", "7.3 Harbour", level=2),
            el("paragraph", words(80, "b")),
            el("heading", "Pilots", level=3),
            el("paragraph", words(80, "c")),
            el("heading", "Annex", level=1),
            el("paragraph", words(80, "d")),
        ]
    )


def test_chunks_carry_the_number_of_their_nearest_numbered_heading() -> None:
    opts = ChunkOptions(max_tokens=120, min_tokens=0, merge_sections="never")
    chunks = chunk_document(_doc(), opts, ApproxTokenCounter(), doc_id="d")
    by_text = {c.text.split()[-1][0]: c for c in chunks}
    assert by_text["a"].section_number == "7"
    assert by_text["b"].section_number == "7.3"
    assert by_text["c"].section_number == "7.3"  # "Pilots" is not numbered: 7.3 holds it
    assert by_text["c"].heading_path[-1] == "Pilots"  # the path keeps the whole titles
    assert by_text["d"].section_number is None

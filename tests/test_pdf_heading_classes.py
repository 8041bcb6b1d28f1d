"""Numbered sub-headings and outline-leaf headings, on small synthetic PDFs.

Sub-headings numbered "(1)", "一、", "（一）" ... under numbered sections are
found, siblings share a level (the scheme's place in the document's nesting), and
enumerated items of body text stay list items. The lowest-level entries of an
outline, set as short bold body-size lines, become headings at the outline's level.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.headings import (
    HeadingModel,
    is_bare_label,
    match_key,
    numbering_scheme,
    scheme_levels,
    uses_nested_schemes,
)

WORDS = [
    "committee",
    "reviewed",
    "figures",
    "year",
    "found",
    "programme",
    "met",
    "most",
    "targets",
    "costs",
    "close",
    "plan",
    "staff",
    "budget",
    "travel",
    "office",
    "repairs",
    "training",
    "software",
    "rent",
    "grants",
    "audit",
]


SECTIONS = {1: "Scope of the review", 2: "Funding and costs"}
CHAPTERS = {1: "Early printing presses", 2: "Broadcast radio licences"}
CHAPTER_TITLES = {1: "Getting started", 2: "Building the package", 3: "Uploading it"}
SECTION_TITLES = {
    3: "Tools you need",
    4: "Where to ask",
    5: "Choosing a program",
    6: "Naming the package",
    7: "Signing the upload",
    8: "After the upload",
}
ENTRIES = {
    4: "Movable type",
    5: "Paper mills",
    6: "Guild rules",
    7: "Spectrum auctions",
    8: "Station ownership",
    9: "Pirate transmitters",
}


def _sentence(seed: int) -> str:
    """A body sentence of about 140 characters, different for each ``seed``."""
    words = [WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(22)]
    return "The " + " ".join(words) + " were noted."


def _body(page: pymupdf.Page, y: float, font: str = "helv", text: str | None = None) -> float:
    """Write a two-line body paragraph from ``y``; return the y below it."""
    text = text or _sentence(int(y) + 31 * page.number)
    page.insert_text((72, y), text[:70], fontsize=10, fontname=font)
    page.insert_text((72, y + 13), text[70:], fontsize=10, fontname=font)
    return y + 34


def _headings(path: Path) -> list[Element]:
    doc = parse_document(path, ParseOptions(mode="fast"))
    return [e for e in doc.elements if e.type == "heading"]


def test_numbering_schemes() -> None:
    assert numbering_scheme("2.3 Results") == "dec2"
    assert numbering_scheme("(1) Costs") == "paren-digit"
    assert numbering_scheme("（2）費用") == "paren-digit"
    assert numbering_scheme("1) Costs") == "digit-paren"
    assert numbering_scheme("a) Costs") == "lower-paren"
    assert numbering_scheme("(iv) Costs") == "paren-roman"
    assert numbering_scheme("IV. TEXT DATA") == "roman"
    assert numbering_scheme("一、总体情况") == "cjk"
    assert numbering_scheme("（三）资金来源") == "cjk-paren"
    assert numbering_scheme("第二节 公司简介") == "cjk-part节"
    assert numbering_scheme("① 현황") == "circled"
    assert numbering_scheme("가. 개요") == "hangul"
    assert numbering_scheme("Chapter 4 Methods") == "named"
    assert numbering_scheme("Results") is None
    assert numbering_scheme("가격은 높다") is None


def test_scheme_levels_follow_the_documents_nesting() -> None:
    # Chinese report: 第N节 > 一、 > （一）; siblings keep one level wherever they are.
    seq = ["cjk-part节", "cjk", "cjk-paren", "cjk-paren", "cjk", "cjk-paren", "cjk-part节", "cjk"]
    assert scheme_levels(seq) == {"cjk-part节": 1, "cjk": 2, "cjk-paren": 3}
    # Decimal sections with "(1)" under "1." and "1.1" under that: "(1)" sits at 2.
    levels = scheme_levels(["dec1", "paren-digit", "paren-digit", "dec1", "paren-digit", "dec1"])
    assert levels == {"dec1": 1, "paren-digit": 2}
    # Roman parts over decimal sections.
    assert scheme_levels(["roman", "dec1", "dec2", "dec2", "roman", "dec1"]) == {
        "roman": 1,
        "dec1": 2,
        "dec2": 3,
    }
    # A scheme used once (a "(1)" on a cover page) is no level.
    assert scheme_levels(["paren-digit", "dec1", "dec1"]) == {"dec1": 1}
    assert not uses_nested_schemes({"dec1": 1, "dec2": 2, "named": 1})
    assert uses_nested_schemes({"dec1": 1, "paren-digit": 2})


def test_model_levels_numbered_headings_by_scheme() -> None:
    model = HeadingModel(
        body_size=10.0,
        style_levels={(10.0, True): 1},
        outline_levels={},
        title_style=None,
        has_outline=False,
        scheme_levels={"cjk": 1, "cjk-paren": 2},
    )
    assert model.resolve("一、总体情况", (10.0, True), 2, False, None) == ("heading", 1)
    assert model.resolve("（二）资金", (10.0, True), 2, False, None) == ("heading", 2)
    # Not numbered: the style's level.
    assert model.resolve("总结", (10.0, True), 2, False, None) == ("heading", 1)


def test_outline_keys_ignore_roman_and_spelled_numbers() -> None:
    assert match_key("II. BASICS OF MACHINE LEARNING") == match_key("II Basics of Machine Learning")
    assert match_key("A. Google DeepDream") == match_key("III-A Google DeepDream")
    assert match_key("CHAPTER ONE: Creators") == match_key("Chapter 1: Creators")
    # A pronoun is not a number.
    assert match_key("I think so") == "ithinkso"


def _paren_report(path: Path) -> None:
    """Decimal sections, bold "(N)" sub-headings, and a body enumeration in regular type."""
    doc = pymupdf.open()
    for sec in (1, 2):
        page = doc.new_page()
        y = 72.0 + 20 * sec
        page.insert_text((72, y), f"{sec}. {SECTIONS[sec]}", fontsize=14, fontname="hebo")
        y = _body(page, y + 26)
        for sub in (1, 2):
            page.insert_text(
                (72, y), f"({sub}) Topic {sec}{sub} costs", fontsize=10, fontname="hebo"
            )
            y = _body(page, y + 20)
        # Body enumeration: regular type, sentences.
        for item in (1, 2, 3):
            page.insert_text(
                (72, y), f"{item}) the item number {item} is a plain clause,", fontsize=10
            )
            y += 13
        y = _body(page, y + 10)
    doc.save(path)


def test_parenthesised_subheadings_found_siblings_same_level(tmp_path: Path) -> None:
    path = tmp_path / "paren.pdf"
    _paren_report(path)
    heads = _headings(path)
    by_text = {h.text: h.level for h in heads}
    subs = [t for t in by_text if t.startswith("(")]
    assert sorted(subs) == ["(1) Topic 11 costs", "(1) Topic 21 costs", "(2) Topic 12 costs",
                            "(2) Topic 22 costs"]  # fmt: skip
    sections = {by_text["1. Scope of the review"], by_text["2. Funding and costs"]}
    assert len(sections) == 1
    section = sections.pop()
    assert section is not None
    assert {by_text[t] for t in subs} == {section + 1}
    # Body enumerations are not headings.
    assert not any("plain clause" in h.text for h in heads)


def _cjk_report(path: Path) -> None:
    """Chinese report: 一、 sections (14 pt), （一） sub-headings (11 pt over 10 pt body)."""
    doc = pymupdf.open()
    chars = "本年度委员会审查了全部数据认为项目基本完成计划目标成本与预算大体一致人员差旅培训租金"
    n = 0
    for sec, name in (("一", "总体情况"), ("二", "资金来源")):
        page = doc.new_page()
        y = 72.0 + 20 * (sec == "二")
        page.insert_text((72, y), f"{sec}、{name}", fontsize=14, fontname="china-s")
        for sub in ("一", "二", "三"):
            n += 1
            body = (
                "".join(chars[(n * 5 + i * 7) % len(chars)] for i in range(50))
                + "。"
                + "".join(chars[(n * 3 + i * 5) % len(chars)] for i in range(50))
            )
            y = _body(page, y + 26, "china-s", body)
            page.insert_text((72, y), f"（{sub}）{name}细目", fontsize=11, fontname="china-s")
        y = _body(page, y + 20, "china-s", body[::-1])
    doc.save(path)


def test_cjk_numbered_subheadings_take_the_schemes_level(tmp_path: Path) -> None:
    path = tmp_path / "cjk.pdf"
    _cjk_report(path)
    heads = _headings(path)
    levels = {h.text: h.level for h in heads}
    subs = {t: lv for t, lv in levels.items() if t.startswith(("(", "（"))}
    secs = {t: lv for t, lv in levels.items() if t[:2] in ("一、", "二、")}
    assert len(secs) == 2 and len(subs) == 6, levels
    assert len(set(secs.values())) == 1 and len(set(subs.values())) == 1
    assert next(iter(subs.values())) == next(iter(secs.values())) + 1  # type: ignore[operator]


def _outlined_book(path: Path) -> list[tuple[int, str, str]]:
    """A book whose lowest outline level is short bold body-size titles, several a page.

    Returns (level, outline title, printed title). In the second chapter the printed
    numbering differs from the outline's, as it often does: "CHAPTER TWO:" for
    "Chapter 2:", "B." for "II-B".
    """
    doc = pymupdf.open()
    entries: list[tuple[int, str, str]] = []
    for chap in (1, 2):
        page = doc.new_page()
        name = CHAPTERS[chap]
        printed = f"Chapter {chap}: {name}" if chap == 1 else f"CHAPTER TWO: {name}"
        page.insert_text((72, 72 + 20 * chap), printed, fontsize=18, fontname="hebo")
        entries.append((1, f"Chapter {chap}: {name}", printed))
        y = _body(page, 130)
        for entry, letter in zip((1, 2, 3), "ABC", strict=True):
            title = f"{ENTRIES[chap * 3 + entry]} keyword"
            shown = title if chap == 1 else f"{letter}. {title}"
            listed = title if chap == 1 else f"II-{letter} {title}"
            page.insert_text((72, y), shown, fontsize=10, fontname="hebo")
            entries.append((2, listed, shown))
            y = _body(page, y + 16)
    doc.set_toc([[level, listed, 1 + (i > 3)] for i, (level, listed, _) in enumerate(entries)])
    doc.save(path)
    return entries


@pytest.mark.parametrize("mode", ["fast", "auto"])
def test_lowest_outline_entries_become_headings(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "book.pdf"
    entries = _outlined_book(path)
    doc = parse_document(path, ParseOptions(mode=mode))
    heads = {e.text: e.level for e in doc.elements if e.type == "heading"}
    for level, _, printed in entries:
        assert heads.get(printed) == level, (printed, heads)
    # Each entry opens its own section: the body under it is not packed into the chapter.
    body = [e for e in doc.elements if e.type == "paragraph"]
    for el in body:
        assert el.heading_path
    assert sum(len(e.heading_path) == 2 for e in body) >= 6


def test_bare_chapter_labels() -> None:
    assert is_bare_label("Chapter 2") and is_bare_label("PART IV") and is_bare_label("第三章")
    assert not is_bare_label("Chapter 2 Getting started")
    assert not is_bare_label("Chapter")


def _labelled_book(path: Path) -> None:
    """Chapters printed as a bold "Chapter N" label above a larger regular title."""
    doc = pymupdf.open()
    for chap in (1, 2, 3):
        page = doc.new_page()
        page.insert_text((72, 180), f"Chapter {chap}", fontsize=24, fontname="hebo")
        page.insert_text((72, 220), CHAPTER_TITLES[chap], fontsize=20)
        y = _body(page, 260)
        for sec in (1, 2):
            page.insert_text(
                (72, y + 12), f"{chap}.{sec} {SECTION_TITLES[chap * 2 + sec]}", fontsize=14
            )
            y = _body(page, y + 36)
    doc.save(path)


def test_title_under_a_bare_label_takes_the_labels_level(tmp_path: Path) -> None:
    path = tmp_path / "labelled.pdf"
    _labelled_book(path)
    levels = {h.text: h.level for h in _headings(path)}
    titles = {levels.get(t) for t in CHAPTER_TITLES.values()}
    sections = {lv for t, lv in levels.items() if t[:1].isdigit()}
    assert titles == {1}, levels
    assert sections == {2}, levels

"""Heading levels fitted over the whole document: numbering anchors, sizes placed between.

Pure :func:`rank_styles` cases on small synthetic style counts, then a corpus check
that can fail: ``corpus-extra/chelsea_pdta.pdf`` with its outline removed, where the
un-numbered 16 pt section titles of the appendix must sit at the level of the
numbered 16 pt bold sections ("1.1. ..."), as the outline has them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from bench.groundtruth import load_groundtruth
from bench.parse_quality import truncated
from bench.scoring import level_accuracy, match_headings
from bench.views import Item
from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.pdf.headings import rank_styles
from chunkweave.parsers.pdf.headings.styles import numbering_anchors


def test_style_of_an_anchors_size_shares_its_level() -> None:
    # 24 pt bold "1. ..." (level 1), 16 pt bold "1.1. ..." (level 2), and
    # un-numbered 16 pt regular titles: siblings of the numbered 16 pt ones.
    styles = {(24.0, True): 5, (16.0, True): 12, (16.0, False): 20, (14.0, True): 4}
    depths = {(24.0, True): {1: 5}, (16.0, True): {2: 12}, (14.0, True): {3: 4}}
    levels = rank_styles(styles, depths, 10.0)
    assert levels == {(24.0, True): 1, (16.0, True): 2, (16.0, False): 2, (14.0, True): 3}


def test_style_between_anchors_is_not_placed_below_the_smaller_one() -> None:
    styles = {(24.0, True): 5, (18.0, True): 3, (18.0, False): 3, (16.0, True): 12}
    depths = {(24.0, True): {1: 5}, (16.0, True): {2: 12}}
    levels = rank_styles(styles, depths, 10.0)
    # Dense ranking alone would give 18 pt bold 2, 18 pt regular 3, 16 pt bold 2.
    assert levels[(18.0, True)] == levels[(18.0, False)] == 2
    assert levels[(16.0, True)] == 2


def test_anchor_no_deeper_than_a_larger_one_places_nothing() -> None:
    # Numbered contents lines in 9 pt bold ("Chapter 2. ... 19") vote depth 1, like
    # the 15 pt chapter titles: the 11 pt bold sections between stay one level down.
    styles = {(15.0, True): 6, (11.0, True): 20, (9.0, True): 8}
    depths = {(15.0, True): {1: 6}, (9.0, True): {1: 8}}
    levels = rank_styles(styles, depths, 10.0)
    assert levels[(11.0, True)] == 2


def test_few_numbered_units_set_their_own_level_but_anchor_nothing() -> None:
    # Two numbered list steps among eight 12 pt units: their style takes depth 1
    # (as before), but the larger 16 pt bold style stays below the 18 pt one.
    styles = {(18.0, True): 1, (16.0, True): 2, (12.0, False): 8}
    depths = {(12.0, False): {1: 2}}
    levels = rank_styles(styles, depths, 10.5)
    assert levels[(18.0, True)] == 1 and levels[(16.0, True)] == 2
    assert levels[(12.0, False)] == 1
    assert numbering_anchors(styles, depths, 10.5) == {(12.0, False): 1}


def test_body_size_numbering_under_larger_headings_is_no_anchor() -> None:
    styles = {(14.0, True): 4, (10.0, True): 9}
    depths = {(10.0, True): {1: 9}}
    assert numbering_anchors(styles, depths, 10.0) == {}
    assert rank_styles(styles, depths, 10.0) == {(14.0, True): 1, (10.0, True): 2}


def test_without_numbering_styles_rank_densely() -> None:
    styles = {(18.0, True): 3, (14.0, True): 5, (14.0, False): 4, (12.0, True): 6}
    assert rank_styles(styles, {}, 10.0) == {
        (18.0, True): 1,
        (14.0, True): 2,
        (14.0, False): 3,
        (12.0, True): 4,
    }


@pytest.fixture(scope="module")
def extra() -> Path:
    path = Path(__file__).resolve().parents[1].parent / "shared" / "corpus-extra"
    if not path.is_dir():
        pytest.fail(f"corpus-extra not found at {path}")
    return path


def test_outline_blind_levels_follow_the_numbered_siblings(extra: Path) -> None:
    doc = extra / "chelsea_pdta.pdf"
    gt = load_groundtruth(doc)
    assert gt is not None
    with tempfile.TemporaryDirectory() as tmp:
        parsed = parse_document(
            truncated(doc, 60, Path(tmp), blind=True), ParseOptions(mode="fast")
        )
    items = [
        Item("heading", e.text, e.level, e.page) for e in parsed.elements if e.type == "heading"
    ]
    headings = [h for h in gt.headings if h.page is None or h.page <= 60]
    score = match_headings(items, headings)
    pairs = [(g, p) for g, p in score.level_pairs if g != 0]
    assert len(pairs) >= 30
    accuracy = level_accuracy(pairs)
    assert accuracy is not None and accuracy >= 0.95

"""Strategies as data: the table, its values, and the section boundary predicates."""

from __future__ import annotations

import dataclasses
from typing import get_args

import pytest

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.boundaries import (
    any_heading,
    by_every_heading,
    by_heading_level,
    by_section_level,
    heading_at_most,
)
from chunkweave.chunking.models import Strategy
from chunkweave.chunking.packing import pack_to_target
from chunkweave.chunking.strategies import STRATEGIES, ChunkStrategy
from tests.chunk_helpers import el, make_doc, words


def test_every_strategy_the_options_name_has_one_value_in_the_table():
    assert set(STRATEGIES) == set(get_args(Strategy))
    assert all(isinstance(s, ChunkStrategy) for s in STRATEGIES.values())


def test_a_strategy_is_frozen_and_packs_exactly_one_way():
    with pytest.raises(dataclasses.FrozenInstanceError):
        STRATEGIES["elements"].fold = False  # type: ignore[misc]
    with pytest.raises(ValueError, match="exactly one"):
        ChunkStrategy(boundary=by_section_level)
    with pytest.raises(ValueError, match="exactly one"):
        ChunkStrategy(
            boundary=by_section_level,
            pack=pack_to_target,
            pack_with_embedder=lambda e: pack_to_target,
        )
    assert [name for name, s in STRATEGIES.items() if s.needs_embedder] == ["semantic"]


def test_boundaries_are_plain_predicates():
    title, h1, h3, h7 = (
        el("title", "T"),
        el("heading", "A", level=1),
        el("heading", "B", level=3),
        el("heading", "C", level=7),
    )
    para = el("paragraph", "x")
    at_two = heading_at_most(2)
    assert [at_two(e) for e in (title, h1, h3, h7, para)] == [True, True, False, False, False]
    assert [any_heading(e) for e in (title, h1, h3, h7, para)] == [True, True, True, True, False]
    assert heading_at_most(1)(el("heading", "no level"))
    opts = ChunkOptions(section_level=3)
    items = [h1, h3, h3, h7]
    assert by_section_level(items, opts)(h3) and not by_section_level(items, opts)(h7)
    # headings: the deepest level used twice (3), unless heading_level says otherwise.
    assert by_heading_level(items, opts)(h3) and not by_heading_level(items, opts)(h7)
    assert not by_heading_level(items, ChunkOptions(heading_level=1))(h3)
    assert by_every_heading(items, opts)(h7)


def test_faq_cuts_at_every_heading_however_deep():
    doc = make_doc(
        [
            el("heading", "Questions", level=1),
            el("heading", "Deep question one?", level=7),
            el("paragraph", words(12, "a")),
            el("heading", "Deep question two?", level=7),
            el("paragraph", words(12, "b")),
        ]
    )
    opts = ChunkOptions(strategy="faq", max_tokens=256)
    chunks = chunk_document(doc, opts, ApproxTokenCounter(), doc_id="d")
    assert [c.heading_path[-1] for c in chunks] == ["Deep question one?", "Deep question two?"]
    assert chunks[0].text.startswith("Questions\n\nDeep question one?")

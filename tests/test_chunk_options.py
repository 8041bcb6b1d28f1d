"""Strategy options by family, and the one registration point of a strategy."""

from __future__ import annotations

from typing import get_args

import pytest

from chunkweave.chunking import ChunkOptions, needs_embedder
from chunkweave.chunking.boundaries import by_section_level
from chunkweave.chunking.fingerprint import chunker_fingerprint
from chunkweave.chunking.models import (
    SectionOptions,
    SemanticOptions,
    Strategy,
    StrategyOptions,
    WindowOptions,
)
from chunkweave.chunking.packing import pack_to_target
from chunkweave.chunking.strategies import (
    STRATEGIES,
    ChunkStrategy,
    register_chunking_strategy,
)

FAMILIES = (SectionOptions, WindowOptions, SemanticOptions)
#: The options every strategy reads (not a family's).
COMMON = {
    "strategy",
    "max_tokens",
    "target_tokens",
    "section_level",
    "table_format",
    "table_embed",
    "contextualize",
    "include_furniture",
    "parent_chunks",
}


def test_chunk_options_are_the_common_ones_plus_every_familys_and_nothing_else():
    family_fields = [f for model in FAMILIES for f in model.model_fields]
    assert len(family_fields) == len(set(family_fields)), "a knob belongs to one family"
    assert set(ChunkOptions.model_fields) == COMMON | set(family_fields)
    assert not COMMON & set(family_fields)


def test_each_strategy_declares_its_family():
    families = {name: s.options for name, s in STRATEGIES.items()}
    assert families == {
        "elements": SectionOptions,
        "headings": SectionOptions,
        "faq": SectionOptions,
        "fixed": WindowOptions,
        "sliding": WindowOptions,
        "sentences": WindowOptions,
        "recursive": WindowOptions,
        "pages": StrategyOptions,
        "semantic": SemanticOptions,
    }
    assert set(STRATEGIES) == set(get_args(Strategy))


def test_a_family_view_carries_only_its_own_knobs():
    opts = ChunkOptions(strategy="semantic", semantic_threshold=0.4, overlap_tokens=7)
    assert opts.family(SemanticOptions) == SemanticOptions(semantic_threshold=0.4)
    assert opts.family(WindowOptions) == WindowOptions(overlap_tokens=7)
    assert opts.family(StrategyOptions) == StrategyOptions()
    with pytest.raises(ValueError, match="extra"):
        SemanticOptions.model_validate({"semantic_threshold": 0.4, "overlap_tokens": 7})


def test_the_registry_not_the_name_says_who_needs_an_embedder():
    needing = [name for name in get_args(Strategy) if needs_embedder(ChunkOptions(strategy=name))]
    assert needing == ["semantic"]


def test_registration_refuses_a_taken_name_an_unknown_name_and_unknown_knobs():
    plain = ChunkStrategy(boundary=by_section_level, pack=pack_to_target)
    with pytest.raises(ValueError, match="already registered"):
        register_chunking_strategy("elements", plain)
    with pytest.raises(ValueError, match="add it to Strategy"):
        register_chunking_strategy("made_up", plain)  # type: ignore[arg-type]

    class Stray(StrategyOptions):
        not_a_chunk_option: int = 1

    stray = ChunkStrategy(boundary=by_section_level, pack=pack_to_target, options=Stray)
    saved = STRATEGIES.pop("pages")
    try:
        with pytest.raises(ValueError, match="not_a_chunk_option"):
            register_chunking_strategy("pages", stray)
    finally:
        STRATEGIES["pages"] = saved


@pytest.mark.parametrize(
    ("opts", "fingerprint"),
    [
        (ChunkOptions(), "elements/v4/dd60fd340acf"),
        (
            ChunkOptions(
                strategy="semantic", semantic_threshold=0.4, max_tokens=200, target_tokens=100
            ),
            "semantic/v4/fc6ed7844d57",
        ),
        (
            ChunkOptions(strategy="sliding", stride_tokens=30, overlap_tokens=5, max_tokens=256),
            "sliding/v4/3f7658041b22",
        ),
    ],
)
def test_fingerprints_are_those_of_the_flat_options_before_the_split(opts, fingerprint):
    # Chunk IDs include the fingerprint: the values were computed before the options
    # were split into families (main at fb88b16).
    assert chunker_fingerprint(opts, "approx") == fingerprint


def test_the_environment_names_of_every_family_still_load(monkeypatch):
    from chunkweave.worker.settings import Settings

    monkeypatch.setenv("CHUNKWEAVE_CHUNKING__STRATEGY", "sliding")
    monkeypatch.setenv("CHUNKWEAVE_CHUNKING__STRIDE_TOKENS", "40")
    monkeypatch.setenv("CHUNKWEAVE_CHUNKING__SEMANTIC_THRESHOLD", "0.5")
    monkeypatch.setenv("CHUNKWEAVE_CHUNKING__MIN_TOKENS", "12")
    chunking = Settings().chunking
    assert (chunking.strategy, chunking.stride_tokens) == ("sliding", 40)
    assert (chunking.semantic_threshold, chunking.min_tokens) == (0.5, 12)

"""The chunking strategies, as data: one :class:`ChunkStrategy` value each, in :data:`STRATEGIES`.

A strategy enters through :func:`register_chunking_strategy`, the one registration
point: its stages and its options family (a
:class:`~chunkweave.chunking.models.StrategyOptions` model naming the knobs it reads
beyond the common ones). Callers ask the registry what a strategy needs
(:func:`needs_embedder`), never compare strategy names.

Every strategy runs the same stages (:func:`strategy_drafts`): units with their
sections numbered by the strategy's boundary rule (:mod:`chunkweave.chunking.boundaries`),
heading-only sections folded into the next where it says so, prose runs packed by
its packer and tables by the table contract (:mod:`chunkweave.chunking.tables`:
tables are never packed with prose), then its merge rule
(:mod:`chunkweave.chunking.merging`).

Structure-aware strategies keep sections apart: a chunk never crosses a section
boundary except where sections merge.

- ``elements`` (the default): sections at headings of level <= ``section_level``;
  a section holding nothing but its heading (a chapter heading right before its
  first subsection) is folded into that subsection and packed as its opening
  lines; prose packed up to the target size (:mod:`chunkweave.chunking.packing`);
  tiny and short sibling sections merge inside their parent section.
- ``headings``: one chunk per section at a chosen heading level (auto: the deepest
  level used at least twice), sub-split over the hard budget; a chunk under
  ``min_tokens`` merges into its predecessor while it fits (a heading with nothing
  under it joins what follows instead).
- ``faq``: one chunk per heading (any level: each question) with its answer,
  sub-split only over the hard budget and never merged with another question; a
  heading with nothing of its own (the group heading above the first question)
  opens the next chunk.

How merged sections stay addressable is ``ChunkOptions.merge_sections``: ``listed``
(the default) keeps the common path as the chunk's heading path and names every
merged section's heading in the context line (see
:func:`chunkweave.chunking.emit.render`); ``never`` does not merge sections that
have a heading of their own.

The baselines (:mod:`chunkweave.chunking.baselines`, :mod:`chunkweave.chunking.semantic`)
pack each prose run between tables across section boundaries and merge nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import get_args

from chunkweave.chunking import baselines
from chunkweave.chunking.boundaries import (
    SectionRule,
    by_every_heading,
    by_heading_level,
    by_section_level,
)
from chunkweave.chunking.budget import Budget
from chunkweave.chunking.merging import MergeRule, merge_drafts
from chunkweave.chunking.models import (
    ChunkOptions,
    Embed,
    SectionOptions,
    SemanticOptions,
    Strategy,
    StrategyOptions,
    WindowOptions,
)
from chunkweave.chunking.packing import ProseChunker, pack_to_limit, pack_to_target
from chunkweave.chunking.semantic import semantic_chunker
from chunkweave.chunking.units import (
    Draft,
    Piece,
    TableUnit,
    Unit,
    fold_heading_only_sections,
    iter_units,
)
from chunkweave.parsers.elements import Element


@dataclass(frozen=True, slots=True)
class ChunkStrategy:
    """What one strategy does at each stage (see :func:`strategy_drafts`).

    Exactly one of ``pack`` and ``pack_with_embedder`` is set.
    """

    #: Where sections start.
    boundary: SectionRule
    #: Packs one prose run into the groups of pieces that become chunks.
    pack: ProseChunker | None = None
    #: Builds ``pack`` from the embedder, for a strategy that needs vectors.
    pack_with_embedder: Callable[[Embed], ProseChunker] | None = None
    #: Fold each section holding only headings into the section after it
    #: (:func:`chunkweave.chunking.units.fold_heading_only_sections`).
    fold: bool = False
    #: How drafts merge afterwards; ``None``: sections are not kept apart (a prose
    #: run between tables is packed across section boundaries) and nothing merges.
    merge: MergeRule | None = None
    #: The knobs this strategy reads beyond the common options (its family's model).
    options: type[StrategyOptions] = StrategyOptions

    def __post_init__(self) -> None:
        """Check that the strategy has exactly one way to pack."""
        if (self.pack is None) == (self.pack_with_embedder is None):
            raise ValueError("a strategy needs exactly one of pack, pack_with_embedder")

    @property
    def needs_embedder(self) -> bool:
        """True when packing needs the embedder (``embed=`` of ``chunk_document``)."""
        return self.pack_with_embedder is not None

    def packer(self, embed: Embed | None) -> ProseChunker:
        """Return the prose packer, built with ``embed`` when the strategy needs one."""
        if self.pack is not None:
            return self.pack
        assert self.pack_with_embedder is not None
        if embed is None:
            raise ValueError("this strategy needs an embedder (embed=...)")
        return self.pack_with_embedder(embed)


#: Every registered strategy, by the name ``ChunkOptions.strategy`` gives it.
STRATEGIES: dict[Strategy, ChunkStrategy] = {}


def register_chunking_strategy(name: Strategy, strategy: ChunkStrategy) -> None:
    """Make ``strategy`` the one named ``name``: the single place a strategy is added.

    ``name`` must be one ``ChunkOptions.strategy`` accepts, and the strategy's options
    family may only hold :class:`~chunkweave.chunking.models.ChunkOptions` fields: the
    settings, environment variables and CLI flags that set them. Raises ``ValueError``
    otherwise, or when the name is taken.
    """
    if name in STRATEGIES:
        raise ValueError(f"chunking strategy {name!r} is already registered")
    if name not in get_args(Strategy):
        raise ValueError(f"{name!r} is not a strategy ChunkOptions can name: add it to Strategy")
    unknown = sorted(set(strategy.options.model_fields) - set(ChunkOptions.model_fields))
    if unknown:
        raise ValueError(f"strategy {name!r} declares options ChunkOptions lacks: {unknown}")
    STRATEGIES[name] = strategy


def strategy_for(opts: ChunkOptions) -> ChunkStrategy:
    """Return the registered strategy ``opts`` names."""
    return STRATEGIES[opts.strategy]


def needs_embedder(opts: ChunkOptions) -> bool:
    """Tell whether chunking with ``opts`` needs vectors (``embed=`` of ``chunk_document``)."""
    return strategy_for(opts).needs_embedder


register_chunking_strategy(
    "elements",
    ChunkStrategy(
        boundary=by_section_level,
        pack=pack_to_target,
        fold=True,
        merge=MergeRule(tiny="neighbour", siblings=True),
        options=SectionOptions,
    ),
)
register_chunking_strategy(
    "headings",
    ChunkStrategy(
        boundary=by_heading_level,
        pack=pack_to_limit,
        merge=MergeRule(tiny="previous", siblings=False),
        options=SectionOptions,
    ),
)
register_chunking_strategy(
    "faq",
    ChunkStrategy(
        boundary=by_every_heading,
        pack=pack_to_limit,
        fold=True,
        merge=MergeRule(tiny=None, siblings=False),
        options=SectionOptions,
    ),
)
register_chunking_strategy(
    "fixed", ChunkStrategy(by_section_level, baselines.fixed, options=WindowOptions)
)
register_chunking_strategy(
    "sliding", ChunkStrategy(by_section_level, baselines.sliding, options=WindowOptions)
)
register_chunking_strategy(
    "sentences", ChunkStrategy(by_section_level, baselines.sentences, options=WindowOptions)
)
register_chunking_strategy(
    "recursive", ChunkStrategy(by_section_level, baselines.recursive, options=WindowOptions)
)
register_chunking_strategy("pages", ChunkStrategy(by_section_level, baselines.pages))
register_chunking_strategy(
    "semantic",
    ChunkStrategy(
        boundary=by_section_level, pack_with_embedder=semantic_chunker, options=SemanticOptions
    ),
)


def strategy_drafts(
    strategy: ChunkStrategy, elements: Iterable[Element], budget: Budget, embed: Embed | None
) -> Iterator[Draft]:
    """Drafts of ``elements`` under ``strategy``, in reading order.

    ``embed`` is used only by a strategy that :attr:`~ChunkStrategy.needs_embedder`.
    """
    items = list(elements)
    opts = budget.opts
    starts = strategy.boundary(items, opts)
    units = list(iter_units(items, starts, include_furniture=opts.include_furniture))
    if strategy.fold:
        units = fold_heading_only_sections(units)
    budget.tables.prefill(units, opts.table_format, budget.title)
    pack = strategy.packer(embed)
    if strategy.merge is None:
        return _run_drafts(units, budget, pack)
    drafts = itertools.chain.from_iterable(
        _run_drafts(list(group), budget, pack)
        for _, group in itertools.groupby(units, key=lambda u: u.section)
    )
    return merge_drafts(list(drafts), budget, strategy.merge)


def _run_drafts(units: list[Unit], budget: Budget, pack: ProseChunker) -> Iterator[Draft]:
    # Prose runs between tables are packed; each table takes its own path.
    for is_table, run in itertools.groupby(units, key=lambda u: isinstance(u, TableUnit)):
        if is_table:
            yield from _table_drafts(run, budget)
        else:
            pieces = [u for u in run if isinstance(u, Piece)]
            yield from (Draft(pieces=p) for p in pack(pieces, budget))


def _table_drafts(tables: Iterable[Unit], budget: Budget) -> Iterator[Draft]:
    # Each table within its hard budget (context line and caption included).
    fmt = budget.opts.table_format
    for table in tables:
        assert isinstance(table, TableUnit)
        yield from budget.tables.drafts(table, budget.hard(table.path, table.caption), fmt)

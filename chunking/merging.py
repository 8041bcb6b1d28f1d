"""Merging: whole sections that are too small to be chunks of their own join a neighbour.

Runs after packing, on one strategy's drafts in reading order, as the strategy's
:class:`MergeRule` says. ``elements``: a tiny section (under ``min_tokens``) merges
with a neighbour, and runs of short siblings (one of each pair at most half the
target) merge while they fit the target, so short subsections do not each make a
small chunk; merges stay inside one parent section. ``headings``: any draft under
``min_tokens`` merges into its predecessor. ``faq``: never (each question stays
its own chunk). Under every rule an empty section (a heading with nothing under
it, such as a contents page whose entries are left out) joins a neighbour, even at
the top level. A merged chunk is labelled with the common path (never with a
heading that does not cover all of it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from chunkweave.chunking.budget import Budget, common_path
from chunkweave.chunking.units import Draft


@dataclass(frozen=True, slots=True)
class MergeRule:
    """Which neighbouring drafts of a structural strategy merge afterwards.

    Every rule lets an empty section (a heading alone) join a neighbour; with
    ``merge_sections="never"`` that is the only merge, whatever the rule says.
    """

    #: A draft under ``min_tokens`` merges: ``"neighbour"``, a whole section (the
    #: only draft of its section) with either neighbour; ``"previous"``, any prose
    #: draft into its predecessor; ``None``, never.
    tiny: Literal["neighbour", "previous"] | None
    #: Whole sections also pack with a small sibling (one of the two at most half
    #: the target) while they fit the target, and no merge of non-empty sections
    #: leaves their parent section.
    siblings: bool


def merge_drafts(drafts: list[Draft], budget: Budget, rule: MergeRule) -> Iterator[Draft]:
    """Merge neighbouring ``drafts`` as ``rule`` says, in reading order.

    A merge needs the merged draft to fit (the target where ``rule.siblings`` keeps
    merges inside a parent, else the hard budget) and never involves a table part.
    """
    related_only = rule.siblings
    only_empty = rule.tiny is None or budget.opts.merge_sections == "never"
    per_section: dict[int, int] = {}
    for draft in drafts:
        per_section[_section(draft)] = per_section.get(_section(draft), 0) + 1
    out: list[_Merging] = []
    for draft in drafts:
        whole = draft.part is None and per_section[_section(draft)] == 1
        here = _Merging(
            draft,
            tiny=_is_tiny(draft, budget, per_section, whole_only=rule.tiny == "neighbour"),
            whole=whole,
            small=related_only and whole and _is_small(draft, budget),
            empty=_is_empty(draft),
        )
        prev = out[-1] if out else None
        if prev is None:
            wanted = False
        elif only_empty:
            wanted = here.empty or prev.empty
        else:
            wanted = here.tiny or here.empty or prev.empty
            if rule.tiny == "neighbour":
                wanted = wanted or prev.tiny
            if rule.siblings:
                wanted = wanted or (here.small and prev.whole) or (prev.small and here.whole)
        if prev is not None and wanted and _can_merge(prev.draft, draft, budget, related_only):
            merged = Draft(pieces=prev.draft.pieces + draft.pieces)
            both = prev.whole and here.whole
            out[-1] = _Merging(
                merged,
                tiny=_is_tiny_cost(merged, budget),
                whole=both,
                small=related_only and both and _is_small(merged, budget),
                empty=_is_empty(merged),
            )
        else:
            out.append(here)
    return (m.draft for m in out)


@dataclass(frozen=True, slots=True)
class _Merging:
    draft: Draft
    tiny: bool
    whole: bool
    small: bool
    empty: bool


def _is_empty(draft: Draft) -> bool:
    # A section with a heading and nothing under it (no text, no subsection: those
    # were folded in by :func:`.strategies.fold_heading_only_sections`), such as a contents page
    # whose entries are left out, or a stray line the parser took for a heading.
    return bool(draft.pieces) and all(p.kind == "heading" for p in draft.pieces)


def _is_small(draft: Draft, budget: Budget) -> bool:
    cost = sum(budget.piece_cost(p) for p in draft.pieces)
    return cost <= budget.soft(common_path(draft.pieces)) // 2


def _section(draft: Draft) -> int:
    if draft.part is not None:
        return draft.part.table.section
    return draft.pieces[0].section


def _is_tiny(
    draft: Draft, budget: Budget, per_section: dict[int, int], *, whole_only: bool
) -> bool:
    if draft.part is not None:
        return False
    if whole_only and per_section[_section(draft)] != 1:
        return False
    return _is_tiny_cost(draft, budget)


def _is_tiny_cost(draft: Draft, budget: Budget) -> bool:
    return sum(budget.piece_cost(p) for p in draft.pieces) < budget.opts.min_tokens


def _can_merge(left: Draft, right: Draft, budget: Budget, related_only: bool) -> bool:
    if left.part is not None or right.part is not None:
        return False
    pieces = left.pieces + right.pieces
    merged_path = common_path(pieces)
    heading_only = all(p.kind == "heading" for p in left.pieces)
    if (
        related_only
        and not (_is_empty(left) or _is_empty(right))
        and not _same_parent(
            common_path(left.pieces),
            common_path(right.pieces),
            merged_path,
            budget.root_depth,
            heading_only=heading_only,
        )
    ):
        return False
    cost = sum(budget.piece_cost(p) for p in pieces)
    # A heading with nothing under it but subsections is no chunk of its own: it
    # joins its first child as long as the hard limit allows; an empty section
    # joins a neighbour likewise.
    empty = heading_only or _is_empty(right)
    soft_limit = related_only and not empty
    limit = budget.soft(merged_path) if soft_limit else budget.hard(merged_path)
    return cost <= limit


def _same_parent(
    left: tuple[str, ...],
    right: tuple[str, ...],
    merged: tuple[str, ...],
    root: int,
    *,
    heading_only: bool,
) -> bool:
    # A heading-only parent section merges into its first child (the child's path
    # names the parent, so no heading is lost); otherwise the two must share a
    # parent heading below the document root (``root`` = 1 when paths start with
    # the document title), losing at most one heading level.
    if heading_only and right[: len(left)] == left:
        return True
    return len(merged) > root and len(merged) >= min(len(left), len(right)) - 1

"""Heading levels for PDFs: outline (bookmarks), numbering patterns, font styles.

Levels come from a document-wide :class:`~.levels.HeadingModel` (built by
``chunkweave.parsers.pdf.profile``) so that a page range parsed on its own gets the same
levels as the whole document. Evidence, strongest first:

1. The PDF outline (:mod:`.outline`): a short text unit whose normalised text matches an outline
   entry of its page (or the page before, as bookmarks often point just above a
   page break) takes that entry's level. Each entry matches once per parse.
   A body-styled (plain) unit must repeat the title exactly and not read like a
   table-of-contents line (leaders, page number); printed numbering that differs
   from the outline's ("CHAPTER ONE:" / "Chapter 1:", "B." / "II-B") is ignored.
2. Numbering: "2.3.1 Title" is level 3, "A.1 Title" level 2, "Chapter 4" level 1.
   Other schemes ("(1)", "1)", "a)", "I.", "一、", "（一）", "第二节", "①", "가.")
   take their level from the order in which the document nests them
   (:func:`~.numbering.scheme_levels`), like a word processor's multi-level list, so
   siblings share a level whatever their font.
3. Font style: heading styles (size, bold) ranked from largest to smallest; a
   style whose numbered headings mostly have depth d gets level d, so un-numbered
   headings ("Abstract", "References") line up with their numbered siblings; a
   regular style seen once beside a bold one of the same size shares its level
   (:func:`~.styles.rank_styles`).
   With an outline, styles learnt from matched entries give levels to headings
   the outline leaves out, but only to units in a display size (larger than the
   body) or with numbering: a body-size bold line the outline does not list is
   a label, table header or message code. Other styles are not trusted.

Evidence against, applied after the outline check: the text of a unit
(``chunkweave.parsers.pdf.headings.filters``: table-of-contents entries, dates, author
lines, labels ending in a colon), the running text around it (:mod:`.runon`: a
unit that a sentence runs into or out of is part of a paragraph) and, per page, its
neighbours (:mod:`.demotion`).
"""

from chunkweave.parsers.pdf.headings.demotion import (
    demote_figure_labels,
    demote_label_runs,
    demote_run_ins,
    demote_running_titles,
)
from chunkweave.parsers.pdf.headings.filters import is_toc_entry, plausible_heading_text
from chunkweave.parsers.pdf.headings.levels import HeadingKind, HeadingModel, Style
from chunkweave.parsers.pdf.headings.numbering import (
    MAX_LEVEL,
    is_bare_label,
    numbering_depth,
    numbering_scheme,
    scheme_levels,
    uses_nested_schemes,
)
from chunkweave.parsers.pdf.headings.outline import OutlineIndex, keys_match, match_key
from chunkweave.parsers.pdf.headings.styles import rank_styles

__all__ = [
    "MAX_LEVEL",
    "HeadingKind",
    "HeadingModel",
    "OutlineIndex",
    "Style",
    "demote_figure_labels",
    "demote_label_runs",
    "demote_run_ins",
    "demote_running_titles",
    "is_bare_label",
    "is_toc_entry",
    "keys_match",
    "match_key",
    "numbering_depth",
    "numbering_scheme",
    "plausible_heading_text",
    "rank_styles",
    "scheme_levels",
    "uses_nested_schemes",
]

"""The values flowing between chunking stages, and the first stage that makes them.

- :class:`Piece`: a verbatim span of one prose element (whole, or a fragment after
  splitting), with the element's metadata.
- :class:`TableUnit`: one table element with its linked caption.
- :class:`Draft`: what becomes one chunk: prose pieces, or one table row group.

:func:`iter_units` is the first stage of every strategy: it drops page furniture
and navigation furniture (contents/index entries, see :mod:`chunkweave.chunking.navigation`)
unless asked not to, drops empty elements, attaches captions to their tables and
assigns each unit the index of the section it belongs to.
:func:`fold_heading_only_sections` is the second stage of the strategies that fold.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

from chunkweave.chunking.boundaries import IsBoundary
from chunkweave.chunking.navigation import navigation_orders
from chunkweave.parsers.elements import FURNITURE_TYPES, HEADING_TYPES, Element

PieceKind = Literal[
    "heading", "text", "list_item", "code", "formula", "figure", "caption", "footnote", "furniture"
]

_KIND_BY_TYPE: dict[str, PieceKind] = {
    "title": "heading",
    "heading": "heading",
    "paragraph": "text",
    "list_item": "list_item",
    "code": "code",
    "formula": "formula",
    "figure": "figure",
    "caption": "caption",
    "footnote": "footnote",
    "page_header": "furniture",
    "page_footer": "furniture",
}


class Piece(NamedTuple):
    """A verbatim span ``source[start:end]`` of one prose element.

    ``path`` is the heading path the span sits under; for a heading it includes the
    heading itself (so a chunk opening with a heading is labelled with it).
    ``section`` is the index of the section (see :func:`iter_units`).
    Immutable (a named tuple: a document has thousands, and they are built fast).
    """

    source: str
    start: int
    end: int
    kind: PieceKind
    order: int
    page: int | None
    path: tuple[str, ...]
    section: int

    @property
    def text(self) -> str:
        """The span's text."""
        return self.source[self.start : self.end]

    def span(self, start: int, end: int) -> Piece:
        """Return the same element, narrowed to ``source[start:end]``."""
        return self._replace(start=start, end=end)

    @property
    def whole(self) -> bool:
        """True if the piece is the element's entire (trimmed) text."""
        return self.start == _lead(self.source) and self.end == _trail(self.source)


@dataclass(frozen=True, slots=True)
class TableUnit:
    """A table element: its rows, header row count and linked caption."""

    element: Element
    rows: tuple[tuple[str, ...], ...]
    header_rows: int
    caption: str | None
    caption_order: int | None
    path: tuple[str, ...]
    section: int


@dataclass(frozen=True, slots=True)
class TablePart:
    """Rows ``[row_start, row_end)`` of a table's data rows, headers repeated."""

    table: TableUnit
    row_start: int
    row_end: int
    first: bool
    whole: bool


@dataclass(frozen=True, slots=True)
class Draft:
    """One future chunk: prose ``pieces``, or a table ``part`` (never both)."""

    pieces: tuple[Piece, ...] = ()
    part: TablePart | None = None


Unit = Piece | TableUnit

#: Longest plain paragraph (words, characters) directly before an uncaptioned table
#: that is taken as its title.
MAX_TITLE_WORDS = 20
MAX_TITLE_CHARS = 120


def iter_units(
    elements: Iterable[Element], starts_section: IsBoundary, *, include_furniture: bool
) -> Iterator[Unit]:
    """Yield the document's chunkable units in reading order.

    A section starts at every element ``starts_section`` is true of (see
    :mod:`chunkweave.chunking.boundaries`); units carry the running section index.
    Captions linked (``ref``) to a table travel inside its :class:`TableUnit` instead
    of as prose. Furniture is dropped unless ``include_furniture``.
    """
    items = list(elements)
    if not include_furniture:
        navigation = navigation_orders(items)
        items = [e for e in items if e.type not in FURNITURE_TYPES and e.order not in navigation]
    captions = table_captions(items)
    attached = {c.order for c in captions.values()}
    section = 0
    for el in items:
        kind = el.type
        if attached and el.order in attached:
            if kind in HEADING_TYPES and starts_section(el):
                section += 1  # a heading that captions a table still opens its section
            continue
        if starts_section(el):
            section += 1
        if kind == "table":
            yield _table_unit(el, captions.get(el.order), section)
            continue
        text = el.text
        trimmed = text.strip()
        if not trimmed:
            continue
        start = 0 if trimmed is text else len(text) - len(text.lstrip())
        path = (
            el.heading_path + (" ".join(trimmed.split()),)
            if kind in HEADING_TYPES
            else el.heading_path
        )
        yield Piece(
            text, start, start + len(trimmed), _KIND_BY_TYPE[kind], el.order, el.page, path, section
        )


def fold_heading_only_sections(units: list[Unit]) -> list[Unit]:
    """Move each section that holds only headings into the section right after it.

    A chapter heading followed directly by its first subsection ("1 Intro", then
    "1.1 Scope" and its text) is not a chunk of its own: it is packed with the
    subsection's text (as its opening lines), so the packing accounts for it
    instead of leaving a heading-only chunk when the subsection fills a chunk
    alone. Only into a section of its own subtree (the next section's heading path
    extends the folded heading's), and only when that section opens with prose.
    """
    out: list[Unit] = []
    groups: list[list[Unit]] = [
        list(g) for _, g in itertools.groupby(units, key=lambda u: u.section)
    ]
    carried: list[Unit] = []
    for index, group in enumerate(groups):
        section = group[0].section
        moved: list[Unit] = [p._replace(section=section) for p in carried if isinstance(p, Piece)]
        group = moved + group
        carried = []
        nxt = groups[index + 1][0] if index + 1 < len(groups) else None
        last = group[-1]
        if (
            isinstance(nxt, Piece)
            and isinstance(last, Piece)
            and all(isinstance(u, Piece) and u.kind == "heading" for u in group)
            and nxt.path[: len(last.path)] == last.path
        ):
            carried = group
            continue
        out.extend(group)
    return out


def table_captions(items: list[Element]) -> dict[int, Element]:
    """Map a table's ``order`` to the element that travels with it as its caption.

    That is the parser-linked caption (``ref``: a caption, or a heading set as the
    table's caption, whose text then travels with the table while it still opens
    its section); failing one, a *title line* directly before the table in the same
    section: a single line with letters, of at most :data:`MAX_TITLE_WORDS` words
    and :data:`MAX_TITLE_CHARS` characters, such as "A non-uniform table with
    vertical spans" (documents without caption styles title tables with a plain
    paragraph, and alone it would be a near-empty chunk far from its table). With
    coordinates, a title line is on the table's page and above it: a line ending
    the page before ("See notes at end of table.") is the last table's note.
    ``items`` are the elements chunking keeps, in reading order.
    """
    # One pass finds the tables (most documents have few or none) and the captions.
    tables: list[int] = []  # positions in ``items``
    caption_items: list[Element] = []
    for index, e in enumerate(items):
        kind = e.type
        if kind == "table":
            tables.append(index)
        elif kind == "caption" or (e.ref is not None and kind in HEADING_TYPES):
            caption_items.append(e)
    if not tables:
        return {}
    table_orders = {items[i].order for i in tables}
    captions = {e.ref: e for e in caption_items if e.ref in table_orders and e.text.strip()}
    linked = {c.order for c in captions.values()}
    for index in tables:
        if index == 0:
            continue
        before, table = items[index - 1], items[index]
        if (
            table.order not in captions
            and before.order not in linked
            and _is_title_line(before)
            and before.heading_path == table.heading_path
            and _above(before, table)
        ):
            captions[table.order] = before
    return captions


def _is_title_line(el: Element) -> bool:
    text = el.text.strip()
    words = text.split()
    return (
        el.type == "paragraph"
        and "\n" not in text
        and 2 <= len(words) <= MAX_TITLE_WORDS
        and len(text) <= MAX_TITLE_CHARS
        and any(ch.isalpha() for ch in text)
    )


def _above(el: Element, table: Element) -> bool:
    """Tell whether ``el`` sits above ``table`` on its page (True without coordinates)."""
    if el.page is None or table.page is None:
        return True
    if el.page != table.page:
        return False
    return el.bbox is None or table.bbox is None or el.bbox[3] <= table.bbox[1] + 1.0


def _table_unit(el: Element, caption: Element | None, section: int) -> TableUnit:
    rows = el.rows
    if not rows:
        # A table the parser could not grid: its text lines become one-cell rows.
        rows = tuple(tuple(line.split("\t")) for line in el.text.splitlines() if line.strip())
    return TableUnit(
        element=el,
        rows=rows,
        header_rows=min(el.header_rows, len(rows)),
        caption=_clean(caption.text) if caption is not None else None,
        caption_order=caption.order if caption is not None else None,
        path=el.heading_path,
        section=section,
    )


def _clean(text: str) -> str:
    return " ".join(text.split())


def _lead(text: str) -> int:
    return len(text) - len(text.lstrip())


def _trail(text: str) -> int:
    return len(text.rstrip())

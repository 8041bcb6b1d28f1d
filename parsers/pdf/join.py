"""Paragraphs and tables that continue across a column, page or furniture break, joined.

A paragraph is continued by a paragraph starting in lower case; a table at the end of
a page by a table at the top of the next one with the same columns
(:func:`join_split_tables`).
"""

from __future__ import annotations

from collections.abc import Iterator

from chunkweave.parsers.elements import Element, table_text
from chunkweave.parsers.pdf.text import join_lines

_TERMINAL = (".", "!", "?", ":", ";", '"', "”")
#: Elements that may sit between a table's two parts (the page break's furniture).
_BETWEEN = ("page_header", "page_footer", "footnote")
#: Points by which the two parts' left and right edges may differ.
EDGE_TOLERANCE = 24.0


def join_split_tables(elements: Iterator[Element]) -> Iterator[Element]:
    """Join a table continued on the next page into one table.

    A table followed, past nothing but furniture and footnotes, by a table on the
    next page with as many columns whose left and right edges line up (within
    ``EDGE_TOLERANCE``) is one table split by the page break. The joined table keeps
    the first part's page, box and header rows; the later part's page and box go to
    ``continued`` (so its chunks keep both pages and both regions). A later part
    that repeats the header rows drops them; otherwise all its rows are data.
    """
    held: Element | None = None
    parked: list[Element] = []
    for el in elements:
        if held is not None and el.type in _BETWEEN:
            parked.append(el)
            continue
        if held is not None and _continues(held, el):
            held = _joined(held, el)
            continue
        if held is not None:
            yield held
            yield from parked
            held, parked = None, []
        if el.type == "table" and el.rows:
            held = el
        else:
            yield el
    if held is not None:
        yield held
    yield from parked


def _last_page(el: Element) -> int | None:
    return el.continued[-1][0] if el.continued else el.page


def _continues(table: Element, el: Element) -> bool:
    if el.type != "table" or not el.rows or not table.rows:
        return False
    last = _last_page(table)
    if last is None or el.page != last + 1:
        return False
    if len(el.rows[0]) != len(table.rows[0]):
        return False
    box = table.continued[-1][1] if table.continued else table.bbox
    if box is None or el.bbox is None:
        return False
    return abs(box[0] - el.bbox[0]) <= EDGE_TOLERANCE and abs(box[2] - el.bbox[2]) <= EDGE_TOLERANCE


def _joined(table: Element, part: Element) -> Element:
    assert table.rows is not None and part.rows is not None
    head = table.rows[: table.header_rows]
    rows = part.rows
    if head and rows[: len(head)] == head:
        rows = rows[len(head) :]  # the header repeated on the next page
    joined = table.rows + rows
    continued = (*table.continued, *((part.page, part.bbox),) * (part.bbox is not None))
    assert part.page is not None
    return table.model_copy(
        update={
            "rows": joined,
            "text": table_text(joined),
            "continued": (*continued, *part.continued),
        }
    )


def join_continuations(elements: Iterator[Element]) -> Iterator[Element]:
    """Merge a paragraph or list item with the next paragraph when it continues it.

    A paragraph or list item that does not end a sentence, followed (past any furniture or
    footnotes, e.g. across a column or page break) by a paragraph starting in
    lower case, is one paragraph: the text is joined with de-hyphenation, it keeps
    the first part's page and box, and the later parts' pages and boxes go to
    ``continued``. The skipped furniture follows it. Tables split by a page break
    are joined first (:func:`join_split_tables`).
    """
    elements = join_split_tables(elements)
    held: Element | None = None
    parked: list[Element] = []
    for el in elements:
        if held is not None and el.type in ("page_header", "page_footer", "footnote"):
            parked.append(el)
            continue
        if (
            held is not None
            and el.type == "paragraph"
            and el.text[:1].islower()
            and not held.text.rstrip().endswith(_TERMINAL)
        ):
            parts = held.continued
            if el.page is not None and el.bbox is not None:
                parts = (*parts, (el.page, el.bbox))
            held = held.model_copy(
                update={
                    "text": join_lines([held.text, el.text]),
                    "continued": (*parts, *el.continued),
                }
            )
            continue
        if held is not None:
            yield held
            yield from parked
            held, parked = None, []
        if el.type in ("paragraph", "list_item"):
            held = el
        else:
            yield el
    if held is not None:
        yield held
    yield from parked

"""Paragraphs that continue across a column, page or furniture break, joined into one."""

from __future__ import annotations

from collections.abc import Iterator

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.text import join_lines

_TERMINAL = (".", "!", "?", ":", ";", '"', "”")


def join_continuations(elements: Iterator[Element]) -> Iterator[Element]:
    """Merge a paragraph or list item with the next paragraph when it continues it.

    A paragraph or list item that does not end a sentence, followed (past any furniture or
    footnotes, e.g. across a column or page break) by a paragraph starting in
    lower case, is one paragraph: the text is joined with de-hyphenation, it keeps
    the first part's page and box, and the later parts' pages and boxes go to
    ``continued``. The skipped furniture follows it.
    """
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

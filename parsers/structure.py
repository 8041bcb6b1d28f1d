"""Document-wide structure shared by every format: order, heading paths, caption links.

Format parsers yield elements with ``order=0`` placeholders and empty heading paths;
:func:`finalize` numbers them in reading order, computes each element's heading
path from the heading levels seen so far, and links captions to the table or figure
next to them. Running it again on its own output (e.g. after joining page-range
parts) gives the same result.
"""

from __future__ import annotations

from collections.abc import Iterable

from chunkweave.parsers.elements import Element

_CAPTIONED = frozenset({"table", "figure"})


def finalize(elements: Iterable[Element]) -> tuple[Element, ...]:
    """Return ``elements`` renumbered, with heading paths and caption links set.

    Rules:
    - ``order`` is the position in the input sequence (which must be reading order).
    - A ``title`` acts as a level-0 heading: it heads everything after it until the
      next title. A heading of level L closes every open heading of level >= L.
    - Page furniture (headers/footers) gets an empty heading path and does not
      close or open sections.
    - A caption is linked (``ref``) to the nearest table/figure among its immediate
      neighbours that is not furniture: the next element first when the caption text
      starts like a table caption ("Table ..."), otherwise the previous one first.
    """
    items = list(elements)
    stack: list[tuple[int, str]] = []  # (level, text) of open headings
    out: list[Element] = []
    for i, el in enumerate(items):
        if el.is_furniture:
            out.append(el.model_copy(update={"order": i, "heading_path": ()}))
            continue
        level = _section_level(el)
        if level is not None:
            while stack and stack[-1][0] >= level:
                stack.pop()
            path = tuple(t for _, t in stack)
            stack.append((level, _clean(el.text)))
        else:
            path = tuple(t for _, t in stack)
        out.append(el.model_copy(update={"order": i, "heading_path": path}))
    return tuple(_link_captions(out))


def _section_level(el: Element) -> int | None:
    if el.type == "title":
        return 0
    if el.type == "heading":
        return el.level or 1
    return None


def _clean(text: str) -> str:
    return " ".join(text.split())


def _link_captions(els: list[Element]) -> list[Element]:
    out = list(els)
    for i, el in enumerate(els):
        if el.type != "caption" or el.ref is not None:
            continue
        prev = els[i - 1] if i > 0 else None
        nxt = els[i + 1] if i + 1 < len(els) else None
        table_like = el.text.lstrip().lower().startswith(("table", "tab."))
        candidates = [nxt, prev] if table_like else [prev, nxt]
        for cand in candidates:
            if cand is not None and cand.type in _CAPTIONED:
                out[i] = el.model_copy(update={"ref": cand.order})
                break
    return out

"""Document-wide structure shared by every format: order, heading paths, caption links.

Format parsers yield elements with ``order=0`` placeholders and empty heading paths;
:func:`finalize` numbers them in reading order, computes each element's heading
path from the heading levels seen so far, and links captions to the table or figure
next to them (and, through :mod:`chunkweave.parsers.captions`, a table's caption set
in another style to its table). Running it again on its own output (e.g. after
joining page-range parts) gives the same result.
"""

from __future__ import annotations

from collections.abc import Iterable

from chunkweave.parsers.captions import is_table_label, table_caption_blocks
from chunkweave.parsers.elements import BBox, Element

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
    - A table with no such caption gets the text right above (else below) it that
      opens with a table label (:func:`~chunkweave.parsers.captions.table_caption_blocks`):
      its lines become one caption element linked to the table, whatever they were
      typed (a running header, a paragraph); a heading stays a heading (it still
      opens its section) and is linked too.
    - A table's caption closes the section a heading that captions an earlier table
      opened: the caption of Table 18 is not under the heading "Table 17 ...".
    """
    items, links = _caption_blocks(list(elements))
    table_captions = set(links) | {
        i
        for i, el in enumerate(items)
        if (el.type == "caption" or el.ref is not None) and _first_captioned(items, i) is not None
    }
    stack: list[tuple[int, str, bool]] = []  # (level, text, captions a table) of open headings
    out: list[Element] = []
    for i, el in enumerate(items):
        if el.is_furniture:
            out.append(el.model_copy(update={"order": i, "heading_path": ()}))
            continue
        captions_table = i in table_captions
        if captions_table:
            while stack and stack[-1][2]:
                stack.pop()
        level = _section_level(el)
        if level is not None:
            while stack and stack[-1][0] >= level:
                stack.pop()
            path = tuple(t for _, t, _ in stack)
            stack.append((level, _clean(el.text), captions_table))
        else:
            path = tuple(t for _, t, _ in stack)
        update: dict[str, object] = {"order": i, "heading_path": path}
        if i in links:
            update["ref"] = links[i]
        out.append(el.model_copy(update=update))
    return tuple(_link_captions(out))


def _caption_blocks(items: list[Element]) -> tuple[list[Element], dict[int, int]]:
    """Merge each table's caption block into one element; map its position to the table's.

    The merged caption takes its label line's place in reading order; the block's
    other lines go. Positions are those after merging (``finalize`` numbers
    elements by position).
    """
    blocks = table_caption_blocks(items, _captioned_tables(items))
    if not blocks:
        return items, {}
    merged = {b.members[0]: b for b in blocks}
    dropped = {m for b in blocks for m in b.members[1:]}
    out: list[Element] = []
    new_of: dict[int, int] = {}
    for old, el in enumerate(items):
        if old in dropped:
            continue
        new_of[old] = len(out)
        block = merged.get(old)
        out.append(el if block is None else _merged([items[m] for m in block.members]))
    return out, {new_of[b.members[0]]: new_of[b.table] for b in blocks}


def _captioned_tables(items: list[Element]) -> set[int]:
    # Tables an adjacent caption element with a label will be linked to (see
    # ``_link_captions``), or are linked to already (``finalize`` run again).
    found: set[int] = set()
    for i, el in enumerate(items):
        if el.ref is not None or (el.type == "caption" and is_table_label(el.text, loose=True)):
            j = _first_captioned(items, i)
            if j is not None:
                found.add(j)
    return found


def _first_captioned(items: list[Element], i: int) -> int | None:
    """Position of the table or figure the caption at ``i`` is (or will be) linked to."""
    el = items[i]
    if el.ref is not None:
        ref = el.ref
        # Run again on its own output, positions are orders.
        hit = 0 <= ref < len(items) and items[ref].order == ref
        found = ref if hit else next((j for j, e in enumerate(items) if e.order == ref), None)
        return found if found is not None and items[found].type == "table" else None
    for j in _caption_candidates(items, i):
        if items[j].type in _CAPTIONED:
            return j if items[j].type == "table" else None
    return None


def _merged(block: list[Element]) -> Element:
    """One element of a caption's lines: a heading stays one, anything else is a caption."""
    first = block[0]
    kind = "heading" if first.type == "heading" else "caption"
    text = " ".join(" ".join(e.text.split()) for e in block)
    boxes = [e.bbox for e in block if e.bbox is not None]
    return first.model_copy(
        update={
            "type": kind,
            "text": text,
            "bbox": _enclose(boxes) if boxes else None,
            "level": first.level if kind == "heading" else None,
        }
    )


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
        for j in _caption_candidates(els, i):
            if els[j].type in _CAPTIONED:
                out[i] = el.model_copy(update={"ref": els[j].order})
                break
    return out


def _caption_candidates(els: list[Element], i: int) -> list[int]:
    # The neighbours a caption element may describe, in the order they are tried.
    table_like = els[i].text.lstrip().lower().startswith(("table", "tab."))
    prev = [i - 1] if i > 0 else []
    nxt = [i + 1] if i + 1 < len(els) else []
    return nxt + prev if table_like else prev + nxt


def _enclose(boxes: list[BBox]) -> BBox:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )

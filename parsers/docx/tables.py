"""DOCX tables (``w:tbl``) as a rectangular grid of cell strings.

Rules (documented because every reader does this differently):

- Merged cells are **repeated**: a cell spanning N grid columns (``w:gridSpan``)
  puts its text in each of the N columns, and a vertically merged cell
  (``w:vMerge`` continue) repeats the text of the cell above. Every row therefore
  has the full grid width and stands on its own when chunking splits a long table
  into row groups with the header repeated.
- ``w:gridBefore`` / ``w:gridAfter`` leave empty cells; ragged rows are padded.
- Cell text is the cell's paragraphs joined by single spaces (``table_text`` uses
  tabs and newlines as the grid separators, so cells stay on one line).
- A nested table is flattened into the text of its cell: its cells joined by
  " | " and its rows by " ; ", in place among the cell's paragraphs.
- Header rows: the leading rows marked "repeat as header row" (``w:tblHeader``);
  without that mark, the first row when the table has at least two rows and its
  ``w:tblLook`` asks for first-row formatting (Word's default for new tables).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lxml import etree

from chunkweave.parsers.docx.package import NS

W = f"{{{NS['w']}}}"
CellText = Callable[[etree._Element], str]

#: Joins the cells and rows of a nested table flattened into its parent cell.
NESTED_CELL_SEP = " | "
NESTED_ROW_SEP = " ; "
_MAX_SPAN = 64


def read_table(tbl: etree._Element, cell_text: CellText) -> tuple[tuple[tuple[str, ...], ...], int]:
    """Return ``(rows, header_rows)`` of table ``tbl``; ``cell_text`` reads one ``w:tc``."""
    grid: list[list[str]] = []
    header_rows = 0
    counting_header = True
    for tr in _rows(tbl):
        row: list[str] = []
        trpr = tr.find(f"{W}trPr")
        row.extend([""] * _int_prop(trpr, "gridBefore", 0))
        for tc in _cells(tr):
            tcpr = tc.find(f"{W}tcPr")
            span = max(1, _int_prop(tcpr, "gridSpan", 1))
            vmerge = tcpr.find(f"{W}vMerge") if tcpr is not None else None
            col = len(row)
            if vmerge is not None and vmerge.get(f"{W}val", "continue") == "continue":
                above = grid[-1] if grid else []
                text = above[col] if col < len(above) else ""
            else:
                text = cell_text(tc)
            row.extend([text] * span)
        row.extend([""] * _int_prop(trpr, "gridAfter", 0))
        if counting_header and trpr is not None and _on(trpr.find(f"{W}tblHeader")):
            header_rows += 1
        else:
            counting_header = False
        grid.append(row)
    width = max((len(r) for r in grid), default=0)
    rows = tuple(tuple(r) + ("",) * (width - len(r)) for r in grid)
    if header_rows == 0 and len(rows) >= 2 and _first_row_look(tbl):
        header_rows = 1
    return rows, header_rows


def flatten_rows(rows: tuple[tuple[str, ...], ...]) -> str:
    """Return a nested table's text for inlining in its parent cell (see module rules)."""
    lines = []
    for row in rows:
        cells: list[str] = []
        for cell in row:
            # Merged cells repeat; inline them once.
            if cell and (not cells or cells[-1] != cell):
                cells.append(cell)
        if cells:
            lines.append(NESTED_CELL_SEP.join(cells))
    return NESTED_ROW_SEP.join(lines)


def _rows(tbl: etree._Element) -> Iterator[etree._Element]:
    # Rows may be wrapped in content controls or custom XML.
    for child in tbl:
        if child.tag == f"{W}tr":
            yield child
        elif child.tag in (f"{W}sdt", f"{W}customXml"):
            yield from child.iter(f"{W}tr")


def _cells(tr: etree._Element) -> Iterator[etree._Element]:
    for child in tr:
        if child.tag == f"{W}tc":
            yield child
        elif child.tag in (f"{W}sdt", f"{W}customXml"):
            for inner in child.iter(f"{W}tc"):
                # Only this row's cells, not cells of tables nested inside them.
                if next(inner.iterancestors(f"{W}tr"), None) is tr:
                    yield inner


def _int_prop(pr: etree._Element | None, tag: str, default: int) -> int:
    if pr is None:
        return default
    el = pr.find(f"{W}{tag}")
    if el is None:
        return default
    try:
        # Word allows 63 columns; the cap keeps a hostile span from allocating gigabytes.
        return min(max(0, int(el.get(f"{W}val", str(default)))), _MAX_SPAN)
    except ValueError:
        return default


def _on(el: etree._Element | None) -> bool:
    return el is not None and el.get(f"{W}val", "true") not in ("0", "false", "off")


def _first_row_look(tbl: etree._Element) -> bool:
    look = tbl.find(f"{W}tblPr/{W}tblLook")
    if look is None:
        return False
    first = look.get(f"{W}firstRow")
    if first is not None:
        return first in ("1", "true", "on")
    try:
        return bool(int(look.get(f"{W}val", "0"), 16) & 0x0020)
    except ValueError:
        return False

"""The ``table`` element every table detector returns: rows of cell text, boxed."""

from __future__ import annotations

from collections.abc import Sequence

from chunkweave.parsers.elements import BBox, Element, table_text
from chunkweave.parsers.pdf.geometry import enclose
from chunkweave.parsers.pdf.text import Line


def table_element(
    rows: tuple[tuple[str, ...], ...], header_rows: int, bbox: BBox, page_no: int
) -> Element:
    """Return the ``table`` element of ``rows`` (``order`` 0), its text rendered from them."""
    return Element(
        type="table",
        text=table_text(rows),
        page=page_no,
        bbox=bbox,
        rows=rows,
        header_rows=header_rows,
        order=0,
    )


def table_from_lines(
    pieces: Sequence[Line], rows: tuple[tuple[str, ...], ...], header_rows: int, page_no: int
) -> Element:
    """Return the ``table`` element of ``rows``, boxed around the text ``pieces`` it came from."""
    return table_element(rows, header_rows, enclose([ln.bbox for ln in pieces]), page_no)

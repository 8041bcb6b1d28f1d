"""A ``table`` element boxed around the text lines its cells came from."""

from __future__ import annotations

from collections.abc import Sequence

from chunkweave.parsers.elements import Element, table_element
from chunkweave.parsers.pdf.geometry import enclose
from chunkweave.parsers.pdf.text import Line


def table_from_lines(
    pieces: Sequence[Line], rows: tuple[tuple[str, ...], ...], header_rows: int, page_no: int
) -> Element:
    """Return the ``table`` element of ``rows``, boxed around the text ``pieces`` it came from."""
    return table_element(rows, header_rows, page=page_no, bbox=enclose([ln.bbox for ln in pieces]))

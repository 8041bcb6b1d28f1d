"""Helpers for the PDF parser tests: hand-built text lines, ruled tables drawn on a page."""

from __future__ import annotations

from collections.abc import Sequence

import pymupdf

from chunkweave.parsers.pdf.text import Line


def make_line(
    text: str, x0: float, y0: float, x1: float, size: float = 10.0, bold: bool = False
) -> Line:
    """One text line at ``(x0, y0)``-``(x1, y0 + size)``, regular (or bold) and not mono."""
    return Line(
        text=text,
        bbox=(x0, y0, x1, y0 + size),
        size=size,
        bold=bold,
        mono=False,
        block=0,
        chars=len(text),
    )


def draw_ruled_table(page: pymupdf.Page, top: float, rows: Sequence[Sequence[str]]) -> float:
    """Draw ``rows`` as a ruled three-column grid from ``top`` (20 pt rows, 120 pt columns).

    Returns the y of the grid's bottom rule.
    """
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            page.insert_text((80 + 120 * c, top + 14 + 20 * r), cell, fontsize=10)
    bottom = top + 20 * len(rows)
    for r in range(len(rows) + 1):
        page.draw_line((72, top + 20 * r), (432, top + 20 * r))
    for c in range(4):
        page.draw_line((72 + 120 * c, top), (72 + 120 * c, bottom))
    return bottom

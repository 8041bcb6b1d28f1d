"""Helpers for the PDF parser tests: hand-built text lines."""

from __future__ import annotations

from chunkweave.parsers.pdf_text import Line


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

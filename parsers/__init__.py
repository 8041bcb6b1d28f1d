"""File -> typed elements. The public entry point is :func:`parse_document`.

The layers above import parsing from here (or :mod:`chunkweave.parsers.page_images`
for page images), never from a backend's package.
"""

from chunkweave.parsers.api import (
    calibration_report,
    numbering_scheme,
    page_count,
    parse_document,
    warm_up,
)
from chunkweave.parsers.document import SUPPORTED_SUFFIXES, ParsedDocument, ParseOptions
from chunkweave.parsers.elements import Element, table_to_html, table_to_markdown
from chunkweave.parsers.errors import ParseError

__all__ = [
    "SUPPORTED_SUFFIXES",
    "Element",
    "ParseError",
    "ParseOptions",
    "ParsedDocument",
    "calibration_report",
    "numbering_scheme",
    "page_count",
    "parse_document",
    "table_to_html",
    "table_to_markdown",
    "warm_up",
]

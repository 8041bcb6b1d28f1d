"""File -> typed elements. The public entry point is :func:`parse_document`."""

from chunkweave.parsers.api import parse_document
from chunkweave.parsers.document import SUPPORTED_SUFFIXES, ParsedDocument, ParseOptions
from chunkweave.parsers.elements import Element, table_to_html, table_to_markdown
from chunkweave.parsers.errors import ParseError

__all__ = [
    "SUPPORTED_SUFFIXES",
    "Element",
    "ParseError",
    "ParseOptions",
    "ParsedDocument",
    "parse_document",
    "table_to_html",
    "table_to_markdown",
]

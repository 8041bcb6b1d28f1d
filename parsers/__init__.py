"""File -> typed elements. The public entry point is :func:`parse_document`."""

from parsers.api import parse_document
from parsers.document import ParsedDocument, ParseOptions
from parsers.elements import Element, table_to_html, table_to_markdown
from parsers.errors import ParseError

__all__ = [
    "Element",
    "ParseError",
    "ParseOptions",
    "ParsedDocument",
    "parse_document",
    "table_to_html",
    "table_to_markdown",
]

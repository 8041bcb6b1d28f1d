"""Parse a document and keep the route each PDF page took (heuristics or layout model).

The PDF parser logs its routes once per document at DEBUG, with the mapping in
the record's ``routes`` attribute (:func:`chunkweave.parsers.pdf.parse._log_routes`).
:func:`parse_with_routes` listens for that record with a logger filter for the
duration of the parse, so the report can show each page's route without the
parser growing an output for it; the filter lets no DEBUG record through that
the logger's own level would have dropped.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from chunkweave.parsers import ParsedDocument, parse_document
from chunkweave.parsers.document import ParseOptions

#: The PDF parser's logger (where the route record is emitted).
_PDF_LOGGER = "chunkweave.parsers.pdf"


class _RouteCatcher(logging.Filter):
    """Keeps the ``routes`` of the records it sees; passes only what was enabled before."""

    def __init__(self, threshold: int) -> None:
        super().__init__()
        self.threshold = threshold
        self.routes: dict[int, str] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        routes: Any = getattr(record, "routes", None)
        if isinstance(routes, dict):
            for key, pages in routes.items():
                for page in pages:
                    self.routes[int(page)] = str(key)
        return record.levelno >= self.threshold


def parse_with_routes(
    path: str | Path, opts: ParseOptions
) -> tuple[ParsedDocument, dict[int, str]]:
    """Parse ``path`` like :func:`parse_document`; also return page -> ``"route:reason"``.

    The mapping is empty for DOCX and for PDF backends that do not log routes.
    """
    logger = logging.getLogger(_PDF_LOGGER)
    before = logger.level
    catcher = _RouteCatcher(logger.getEffectiveLevel())
    logger.addFilter(catcher)
    logger.setLevel(logging.DEBUG)
    try:
        doc = parse_document(path, opts)
    finally:
        logger.setLevel(before)
        logger.removeFilter(catcher)
    return doc, catcher.routes

"""Dispatch: detect the format from the bytes, then call that format's parser."""

from __future__ import annotations

from pathlib import Path

from parsers.document import ParsedDocument, ParseOptions


def parse_document(path: str | Path, opts: ParseOptions | None = None) -> ParsedDocument:
    """Parse one file into a :class:`ParsedDocument`.

    Raises a :class:`parsers.errors.ParseError` subclass, naming the file and the
    reason, for anything that cannot be parsed.
    """
    raise NotImplementedError("parse_document: implemented by the parsers work (issue 2)")

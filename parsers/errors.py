"""Typed parse errors: each names the file and gives a one-line reason.

Every error has a stable machine-readable ``code`` (used in failure records, the
ledger and metrics) and a human message that names the file.
"""

from __future__ import annotations


class ParseError(Exception):
    """A document could not be parsed. ``str(err)`` is one line naming the file."""

    code = "parse_error"

    def __init__(self, path: str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class UnsupportedFormatError(ParseError):
    """The bytes are not a supported format (or do not match the requested parser)."""

    code = "unsupported_format"


class EncryptedDocumentError(ParseError):
    """The document needs a password that was not given (or was wrong)."""

    code = "encrypted"


class CorruptDocumentError(ParseError):
    """The file is damaged or truncated beyond repair."""

    code = "corrupt"


class EmptyDocumentError(ParseError):
    """The file is empty or holds no extractable content at all."""

    code = "empty"


class TooLargeError(ParseError):
    """The file exceeds a configured limit (bytes, pages, decompressed size)."""

    code = "too_large"


class UnsafeDocumentError(ParseError):
    """The file looks hostile (entity expansion, external entities, zip bomb, nesting)."""

    code = "unsafe"


class ParserUnavailableError(ParseError):
    """An optional parser backend was requested but is not installed."""

    code = "parser_unavailable"

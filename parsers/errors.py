"""Typed parse errors: each names the file and gives a one-line reason.

Every error has a stable machine-readable ``code`` (used in failure records, the
ledger and metrics) and a human message that names the file. They are the
:class:`~chunkweave.errors.ChunkweaveError` family of the document itself (none is
transient: a bad document is never retried).
"""

from __future__ import annotations

from chunkweave.errors import ChunkweaveError, ErrorCode

#: ``ErrorCode`` lives in :mod:`chunkweave.errors` (every layer's codes); importable here too.
__all__ = [
    "CorruptDocumentError",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "ErrorCode",
    "ParseError",
    "ParserUnavailableError",
    "TooLargeError",
    "UnsafeDocumentError",
    "UnreadableTextError",
    "UnsupportedFormatError",
]


class ParseError(ChunkweaveError):
    """A document could not be parsed. ``str(err)`` is one line naming the file."""

    code: ErrorCode = ErrorCode.PARSE_ERROR

    def __init__(self, path: str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class UnsupportedFormatError(ParseError):
    """The bytes are not a supported format (or do not match the requested parser)."""

    code = ErrorCode.UNSUPPORTED_FORMAT


class EncryptedDocumentError(ParseError):
    """The document needs a password that was not given (or was wrong)."""

    code = ErrorCode.ENCRYPTED


class CorruptDocumentError(ParseError):
    """The file is damaged or truncated beyond repair."""

    code = ErrorCode.CORRUPT


class EmptyDocumentError(ParseError):
    """The file is empty or holds no extractable content at all."""

    code = ErrorCode.EMPTY


class UnreadableTextError(ParseError):
    """The text layer is not language (glyph codes, private-use characters) and OCR failed."""

    code = ErrorCode.UNREADABLE_TEXT


class TooLargeError(ParseError):
    """The file exceeds a configured limit (bytes, pages, decompressed size)."""

    code = ErrorCode.TOO_LARGE


class UnsafeDocumentError(ParseError):
    """The file looks hostile (entity expansion, external entities, zip bomb, nesting)."""

    code = ErrorCode.UNSAFE


class ParserUnavailableError(ParseError):
    """An optional parser backend was requested but is not installed."""

    code = ErrorCode.PARSER_UNAVAILABLE

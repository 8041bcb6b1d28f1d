"""Typed parse errors: each names the file and gives a one-line reason.

Every error has a stable machine-readable ``code`` (used in failure records, the
ledger and metrics) and a human message that names the file.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Every failure code chunkweave records, from any stage (one set, documented in README).

    Parsers define them because they are the lowest layer: storage and the worker
    import this set, never spell a code as a bare string. Values are stable: they are
    stored in the ledger, in job state and in metrics labels.
    """

    # the document itself (parsers)
    PARSE_ERROR = "parse_error"
    UNSUPPORTED_FORMAT = "unsupported_format"
    ENCRYPTED = "encrypted"
    CORRUPT = "corrupt"
    EMPTY = "empty"
    #: the text layer is glyph codes, not language (fonts without Unicode maps), and
    #: OCR could not read the pages instead
    UNREADABLE_TEXT = "unreadable_text"
    TOO_LARGE = "too_large"
    UNSAFE = "unsafe"
    PARSER_UNAVAILABLE = "parser_unavailable"
    # the source (worker)
    NOT_FOUND = "not_found"
    CHANGED = "changed"
    #: caller metadata refused (undeclared key, wrong type, over a bound, bad sidecar)
    BAD_METADATA = "bad_metadata"
    # the vector store and the embedder (storage)
    STORE_ERROR = "store_error"
    STORE_UNAVAILABLE = "store_unavailable"
    EMBEDDER_MISMATCH = "embedder_mismatch"
    EMBEDDER_ERROR = "embedder_error"
    EMBEDDER_UNAVAILABLE = "embedder_unavailable"
    # the worker's bounds
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out_of_memory"
    POISON = "poison"
    LEASE_LOST = "lease_lost"
    # a bug: anything not classified above
    INTERNAL = "internal"


class ParseError(Exception):
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

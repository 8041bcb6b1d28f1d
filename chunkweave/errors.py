"""The root of every chunkweave error, the transient family, and the failure codes.

Outside the four parts, so every layer may import it (``parsers`` included); it imports
no part itself. Each error carries a stable :class:`ErrorCode`; the task decides a
retry with ``isinstance(err, TransientError)``, never by probing attributes.

The tree (codes in brackets; an error with no code of its own is ``internal``)::

    ChunkweaveError [internal]
    ├── TransientError: try again later; the worker retries it, then records its code
    │   ├── StoreUnavailableError [store_unavailable]            (also a StoreError)
    │   └── EmbeddingServiceUnavailableError [embedder_unavailable]
    │                                              (also an EmbeddingServiceError)
    ├── ParseError [parse_error]: the document itself              (parsers/errors.py)
    │   ├── UnsupportedFormatError [unsupported_format]
    │   ├── EncryptedDocumentError [encrypted]
    │   ├── CorruptDocumentError [corrupt]
    │   ├── EmptyDocumentError [empty]
    │   ├── TooLargeError [too_large]
    │   ├── UnsafeDocumentError [unsafe]
    │   └── ParserUnavailableError [parser_unavailable]
    ├── MetadataError [bad_metadata]                               (storage/metadata.py)
    ├── StoreError [store_error]                                   (storage/errors.py)
    │   ├── StoreUnavailableError [store_unavailable]
    │   ├── EmbedderMismatchError [embedder_mismatch]
    │   └── TooManyChunksError [store_error]
    ├── EmbedderError [embedder_error]                    (storage/embedders/errors.py)
    │   ├── EmbedderConfigError, TextTooLongError [embedder_error]
    │   └── EmbeddingServiceError [embedder_error]
    │       └── EmbeddingServiceUnavailableError [embedder_unavailable]
    ├── LocalServiceError > LocalWeaviateError: an embedded server would not start
    ├── SourceNotFoundError [not_found], InvalidSourceError, TooManyDocumentsError
    │                                                         (worker/sources/base.py)
    └── the worker's refusals: WebhookError, WebhookRefusedError, NoRedisConfiguredError,
        InsecureBindError, BodyTooLargeError, ReindexRefusedError

Classes that were a ``ValueError``, ``RuntimeError`` or ``FileNotFoundError`` still
are (they derive from both), so every ``except`` written against them still holds.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ChunkweaveError", "ErrorCode", "TransientError"]


class ErrorCode(StrEnum):
    """Every failure code chunkweave records, from any stage (one set, documented in README).

    Storage and the worker import this set, never spell a code as a bare string. Values
    are stable: they are stored in the ledger, in job state and in metrics labels.
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


class ChunkweaveError(Exception):
    """Any error chunkweave raises on purpose; ``code`` says which kind for the records."""

    code: ErrorCode = ErrorCode.INTERNAL

    @property
    def transient(self) -> bool:
        """Whether trying again later may succeed (the error is a :class:`TransientError`)."""
        return isinstance(self, TransientError)


class TransientError(ChunkweaveError):
    """A service chunkweave needs (store, embedding service) is down, slow or throttling.

    The document is not at fault: the task retries it with backoff, and records the
    error's ``code`` only when every retry failed too.
    """

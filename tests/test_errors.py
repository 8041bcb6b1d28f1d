"""The error tree: one root, a transient family the worker retries, a code on each error."""

from __future__ import annotations

import pickle

import pytest

from chunkweave.errors import ChunkweaveError, ErrorCode, TransientError
from chunkweave.parsers.errors import CorruptDocumentError, ParseError
from chunkweave.parsers.errors import ErrorCode as ParsersErrorCode
from chunkweave.storage.embedders import (
    EmbedderConfigError,
    EmbeddingServiceError,
    EmbeddingServiceUnavailableError,
)
from chunkweave.storage.errors import StoreError, StoreUnavailableError
from chunkweave.storage.metadata import MetadataError
from chunkweave.worker.sources import SourceNotFoundError
from chunkweave.worker.tasks.base import is_transient


def test_error_code_is_one_set_importable_from_the_parsers_too():
    assert ParsersErrorCode is ErrorCode
    assert ErrorCode.LEASE_LOST == "lease_lost" and ErrorCode.INTERNAL == "internal"


@pytest.mark.parametrize("status", [None, 429, 500, 503])
def test_an_embedding_service_that_may_come_back_is_transient(status):
    err = EmbeddingServiceError("https://e.example: down", status)
    assert isinstance(err, EmbeddingServiceUnavailableError)
    assert isinstance(err, TransientError) and err.transient
    assert (err.code, err.status, str(err)) == (
        ErrorCode.EMBEDDER_UNAVAILABLE,
        status,
        "https://e.example: down",
    )


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_an_embedding_service_that_refused_is_not(status):
    err = EmbeddingServiceError("refused", status=status)
    assert type(err) is EmbeddingServiceError
    assert not isinstance(err, TransientError) and not err.transient
    assert err.code == ErrorCode.EMBEDDER_ERROR


def test_transient_errors_survive_pickling_as_their_class():
    # Celery carries the exception of a retry across processes.
    err = pickle.loads(pickle.dumps(EmbeddingServiceError("down", status=503)))
    assert isinstance(err, EmbeddingServiceUnavailableError)


def test_each_family_keeps_its_builtin_base_and_its_code():
    cases = [
        (StoreUnavailableError("x"), RuntimeError, ErrorCode.STORE_UNAVAILABLE, True),
        (StoreError("x"), RuntimeError, ErrorCode.STORE_ERROR, False),
        (EmbedderConfigError("x"), ValueError, ErrorCode.EMBEDDER_ERROR, False),
        (MetadataError("x"), ValueError, ErrorCode.BAD_METADATA, False),
        (SourceNotFoundError("x"), FileNotFoundError, ErrorCode.NOT_FOUND, False),
        (CorruptDocumentError("x.pdf", "cut"), ParseError, ErrorCode.CORRUPT, False),
    ]
    for err, builtin, code, transient in cases:
        assert isinstance(err, ChunkweaveError) and isinstance(err, builtin)
        assert (err.code, isinstance(err, TransientError)) == (code, transient), err


def test_the_task_retries_by_family_not_by_attribute():
    class Duck(Exception):
        transient = True

    assert is_transient(EmbeddingServiceUnavailableError("down"))
    assert not is_transient(RuntimeError("a bug"))
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = StoreUnavailableError("down")
    assert is_transient(wrapped)
    assert not is_transient(Duck())

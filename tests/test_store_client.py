"""Pure logic of chunkweave.storage.weaviate.client: failure classification and vector packing."""

from __future__ import annotations

import logging

import httpx
import numpy as np
import pytest
from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateStartUpError

from chunkweave.storage.weaviate.client import _as_list, is_transient


@pytest.mark.parametrize(
    "message",
    [
        "server unavailable",
        "failed to connect to all addresses; last error: Connection refused",
        "Deadline Exceeded",
        "request timed out",
        # A restarted server answers before it has loaded its schema.
        "could not find class Chunk in schema",
        "invalid object: class 'Chunk' not present in schema",
        "explorer: list class: search: tried to browse non-existing index for Ledger_v1",
        "local chunk_abc shard is not ready",
        "Unexpected status code: 503, with response body: None.",
        "Unexpected status code: 502, with response body: bad gateway.",
    ],
)
def test_server_trouble_is_transient(message):
    assert is_transient(message)


@pytest.mark.parametrize(
    "message",
    [
        # HNSW says "connect neighbors" when it rejects a vector: not a network problem.
        "insert to vector index: find and connect neighbors: vector lengths don't match",
        "vector dimensions do not match the index dimensions",
        "no such prop with name 'x' found in class 'Chunk'",
        "Unexpected status code: 422, with response body: invalid object.",
    ],
)
def test_rejections_are_not_transient(message):
    assert not is_transient(message)


def test_vectors_become_plain_lists_once():
    row = np.arange(4, dtype=np.float32)
    as_list = [0.5, 1.5]
    assert _as_list(row) == [0.0, 1.0, 2.0, 3.0] and isinstance(_as_list(row), list)
    assert _as_list(as_list) is as_list
    assert _as_list((1.0, 2.0)) == [1.0, 2.0]
    assert _as_list(None) is None


def test_failed_object_dumps_stay_out_of_the_log(caplog):
    client_log = logging.getLogger("weaviate-client")
    with caplog.at_level(logging.ERROR, logger="weaviate-client"):
        client_log.error({"message": "Failed to send 2 objects in a batch of 3.", "errors": {}})
        client_log.error("something else went wrong")
    assert [r.getMessage() for r in caplog.records] == ["something else went wrong"]


def test_status_errors_are_transient_by_their_code():
    def status_error(code: int) -> UnexpectedStatusCodeError:
        request = httpx.Request("POST", "http://weaviate/v1/batch/objects")
        return UnexpectedStatusCodeError("batch", httpx.Response(code, request=request))

    assert is_transient(status_error(500)) and is_transient(status_error(503))
    assert not is_transient(status_error(422)) and not is_transient(status_error(404))


def test_a_server_that_refuses_connections_at_start_up_is_transient():
    down = "Could not connect to Weaviate:Connection to Weaviate failed. Details: ."
    assert is_transient(WeaviateStartUpError(down))
    assert not is_transient(WeaviateStartUpError("Weaviate version 1.20 is not supported"))

""":mod:`chunkweave.storage.weaviate.grpc_batch`, checked against the client's own encoding.

The client's encoding (``insert_many``'s) is the oracle: for the objects the stores
write, our request must be the same message. Integration tests write through both
paths into the session's real Weaviate and read the objects back.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest
from weaviate.collections.batch.grpc_batch import _BatchGRPC
from weaviate.collections.classes.batch import _BatchObject
from weaviate.proto.v1 import batch_pb2
from weaviate.util import _ServerVersion

from chunkweave.chunking.models import Chunk, Region
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.weaviate.client import send_objects
from chunkweave.storage.weaviate.grpc_batch import BatchSender, encode_request, vector_bytes
from chunkweave.storage.weaviate.schema import chunk_properties
from chunkweave.storage.weaviate.store import WeaviateStore
from tests.store_helpers import ID16, make_chunk, vectors

WHEN = datetime(2026, 12, 1, 15, 4, 5, 123456, tzinfo=UTC)


def table_chunk() -> Chunk:
    """A table row-group chunk: every optional field set, no heading path, two pages.

    Its regions: one box on each page (integral coordinates are floats all the same).
    """
    base = make_chunk("doc-t", 7, text="| a | b |\n| --- | --- |\n| 1 | 2 |")
    return base.model_copy(
        update={
            "type": "table",
            "heading_path": (),
            "pages": (3, 4),
            "page_end": 4,
            "table_id": "t" * 40,
            "table_row_start": 0,
            "table_row_end": 1,
            "table_markdown": "| a | b |",
            "table_html": "<table><tr><td>a</td></tr></table>",
            "caption": "Table 1: Ünïcode — caption",
            "parent_id": "p" * 40,
            "regions": (
                Region(page=3, bbox=(72.0, 600.25, 523.5, 770.0)),
                Region(page=4, bbox=(72, 60, 523.5, 140.75)),
            ),
        }
    )


def client_request(objects: list[tuple[str, dict[str, Any], Any]], tenant: str | None):
    """The request weaviate-client's ``insert_many`` sends for the same objects."""
    encoder = _BatchGRPC(_ServerVersion(1, 35, 2), None, None)
    batch = [
        _BatchObject(
            collection="Chunk",
            vector=vec,
            uuid=uuid,
            properties=props,
            tenant=tenant,
            references=None,
            index=i,
        )
        for i, (uuid, props, vec) in enumerate(objects)
    ]
    return batch_pb2.BatchObjectsRequest(objects=encoder.grpc_objects(batch))


@pytest.mark.parametrize("tenant", [None, "tenant-a"])
def test_request_equals_the_clients_encoding(tenant):
    chunks = [make_chunk("doc-a", i) for i in range(5)] + [table_chunk()]
    vecs = vectors(chunks)
    objects = [
        (chunk_uuid(c.id), chunk_properties(c, WHEN), v) for c, v in zip(chunks, vecs, strict=True)
    ]
    ours = encode_request(((u, (p, v)) for u, p, v in objects), collection="Chunk", tenant=tenant)
    assert ours == client_request(objects, tenant)
    assert len(ours.objects) == 6 and ours.objects[5].uuid == objects[5][0]  # order kept


def test_every_supported_value_type_matches_the_client():
    props = {
        "s": "text",
        "i": 3,
        "f": 2.5,
        "b": True,
        "d": datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))),
        "none": None,
        "ss": ["x", "y"],
        "ii": [1, 2],
        "ff": [0.5, 1.5],
        "bb": [True, False],
        "dd": [WHEN],
        "empty": [],
        "o": {"i": 1, "ff": [0.5], "inner": {"d": WHEN, "empty": []}, "oo": [{"b": False}]},
        "oo": [{"page": 3, "bbox": [1.5, 2.0, 3.25, 4.0]}, {"page": 4, "bbox": [0.0, 1.0]}],
        "o_empty": {},
    }
    ours = encode_request([("u-1", (props, None))], collection="Chunk")
    assert ours == client_request([("u-1", props, None)], None)
    assert not ours.objects[0].vector_bytes


def test_numpy_rows_and_lists_pack_to_the_same_float32_bytes():
    row = np.array([0.25, -1.5, 3.0], dtype=np.float64)  # any dtype becomes float32
    assert vector_bytes(row) == vector_bytes([0.25, -1.5, 3.0]) == vector_bytes((0.25, -1.5, 3.0))
    assert np.frombuffer(vector_bytes(row), dtype="<f4").tolist() == [0.25, -1.5, 3.0]


@pytest.mark.parametrize("bad", [[], np.zeros((2, 2), dtype=np.float32)])
def test_empty_or_2d_vectors_are_refused(bad):
    with pytest.raises(ValueError, match="empty|1-d"):
        vector_bytes(bad)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({1, 2}, "'p': unsupported type set"),
        ([{"page": 1}, 2], "'p': unsupported list item int"),
        (datetime(2026, 1, 1), "'p': datetime without a timezone"),  # noqa: DTZ001
        ({"when": datetime(2026, 1, 1)}, "'when': datetime without a timezone"),  # noqa: DTZ001
    ],
)
def test_unsupported_values_name_the_property(value, message):
    with pytest.raises(TypeError, match=message):
        encode_request([("u", ({"p": value}, None))], collection="Chunk")


@pytest.mark.integration
def test_installed_client_takes_our_encoding(weaviate_cfg):
    # If a client upgrade moves the connection, upserts silently fall back to the
    # slower insert_many: this test says so instead.
    store = WeaviateStore.open(weaviate_cfg, ID16)
    try:
        sender = BatchSender.of(store.collection())
        assert sender is not None and sender.collection == weaviate_cfg.collection
        assert BatchSender.of(object()) is None
    finally:
        store.client.collections.delete(weaviate_cfg.collection)
        store.close()


@pytest.mark.integration
def test_both_encodings_store_the_same_objects(weaviate_cfg):
    chunks = [make_chunk("doc-a", i) for i in range(30)] + [table_chunk()]
    pending = {
        chunk_uuid(c.id): (chunk_properties(c, WHEN), v)
        for c, v in zip(chunks, vectors(chunks), strict=True)
    }
    stored = {}
    for label, client_encoder in (("ours", False), ("client", True)):
        cfg = weaviate_cfg.model_copy(update={"collection": f"{weaviate_cfg.collection}{label}"})
        store = WeaviateStore.open(cfg, ID16)
        try:
            coll = store.collection()
            failed = send_objects(
                coll,
                pending,
                batch_size=8,
                concurrent_requests=2,
                client_encoder=client_encoder,
            )
            assert failed == {}
            stored[label] = {
                str(o.uuid): (o.properties, o.vector["default"])
                for o in coll.iterator(include_vector=True)
            }
        finally:
            store.client.collections.delete(cfg.collection)
            store.close()
    assert stored["ours"] == stored["client"]
    assert set(stored["ours"]) == set(pending)
    table = stored["ours"][chunk_uuid(chunks[-1].id)][0]
    assert table["caption"] == "Table 1: Ünïcode — caption" and table["pages"] == [3, 4]
    assert table["heading_path"] == [] and table["ingested_at"] == WHEN
    assert table["regions"] == [
        {"page": 3, "bbox": [72.0, 600.25, 523.5, 770.0]},
        {"page": 4, "bbox": [72.0, 60.0, 523.5, 140.75]},
    ]
    assert stored["ours"][chunk_uuid(chunks[0].id)][0]["regions"] == []


@pytest.mark.integration
def test_refused_objects_come_back_by_uuid(weaviate_cfg):
    store = WeaviateStore.open(weaviate_cfg, ID16)
    try:
        chunks = [make_chunk("doc-a", i) for i in range(3)]
        vecs = vectors(chunks)
        vecs[1] = vecs[1][:5]  # wrong dimension, after the first fixed the index's
        pending = {
            chunk_uuid(c.id): (chunk_properties(c, WHEN), v)
            for c, v in zip(chunks, vecs, strict=True)
        }
        failed = send_objects(store.collection(), pending, batch_size=1, concurrent_requests=1)
        assert list(failed) == [chunk_uuid(chunks[1].id)]
        assert "length" in failed[chunk_uuid(chunks[1].id)] or "dimension" in str(failed)
    finally:
        store.client.collections.delete(weaviate_cfg.collection)
        store.close()

"""Objects straight into Weaviate's gRPC ``BatchObjects`` request: the client-side write path.

``collection.data.insert_many`` spends about 60% of the client's CPU of an upsert on
encoding (``bench/upsert.py``'s 4,000 chunks: 0.37 of 0.6 CPU-s): a dozen type
checks per property value, and the protobuf ``Struct`` filled through protobuf's
pure-Python ``Struct.update``. On two cores the client's CPU is taken from the
server, so :func:`encode_request` builds the same message with protobuf's native
setters instead (0.11 CPU-s for those chunks), and :class:`BatchSender` sends it
through the client's own connection (its channel, auth headers, timeout and
``UNAVAILABLE`` retries): only the encoding is ours.

The encoding follows the client's (weaviate-client 4.24): ``str``, ``int``, ``float``,
``bool``, timezone-aware ``datetime`` (RFC 3339) and ``None`` values; lists of
``str``, ``int``, ``float``, ``bool`` or ``datetime``; nested objects (a ``dict``,
``object`` properties) and lists of them (``object[]``, as a chunk's ``regions``),
their values encoded by the same rules; an empty list is sent as an empty-list
property. Anything else (references, naive datetimes, other types) raises
``TypeError`` naming the property: the stores here never write those.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from google.protobuf import struct_pb2
from weaviate.proto.v1 import batch_pb2

#: A 1-d vector: a list or tuple of floats, or a numpy row of any float dtype.
Vector = Sequence[float] | np.ndarray[Any, Any]
#: One object's properties and its vector (``None``: no vector).
Pending = tuple[Mapping[str, Any], Vector | None]
#: One object to write: its UUID, its properties and its vector.
Item = tuple[str, Pending]


def vector_bytes(vector: Vector) -> bytes:
    """Little-endian float32 bytes of a 1-d vector (a list, tuple or numpy row).

    Raises ``ValueError`` for an empty or multi-dimensional vector.
    """
    if isinstance(vector, list):
        packed = struct.pack(f"<{len(vector)}f", *vector)
    else:
        array = np.asarray(vector, dtype="<f4")
        if array.ndim != 1:
            raise ValueError(f"a vector must be 1-d, got shape {array.shape}")
        packed = array.tobytes()
    if not packed:
        raise ValueError("empty vector")
    return packed


def _rfc3339(value: datetime, name: str) -> str:
    if value.tzinfo is None:
        # The client assumes UTC (with a warning); a store must not guess.
        raise TypeError(f"property {name!r}: datetime without a timezone: {value!r}")
    return value.isoformat(sep="T", timespec="microseconds")


def _add_list(props: Any, name: str, values: Sequence[Any]) -> None:
    if not values:
        props.empty_list_props.append(name)
        return
    first = values[0]
    # bool before int (bool is an int); the same order as the client.
    if isinstance(first, bool):
        props.boolean_array_properties.add(prop_name=name, values=values)
    elif isinstance(first, str):
        props.text_array_properties.add(prop_name=name, values=values)
    elif isinstance(first, datetime):
        texts = [_rfc3339(v, name) for v in values]
        props.text_array_properties.add(prop_name=name, values=texts)
    elif isinstance(first, int):
        props.int_array_properties.add(prop_name=name, values=values)
    elif isinstance(first, float):
        packed = struct.pack(f"<{len(values)}d", *values)
        props.number_array_properties.add(prop_name=name, values_bytes=packed)
    elif isinstance(first, dict):
        array = props.object_array_properties.add(prop_name=name)
        for value in values:
            _fill_nested(array.values.add(), value, name)
    else:
        raise TypeError(f"property {name!r}: unsupported list of {type(first).__name__}")


def _fill_nested(props: Any, values: Any, name: str) -> None:
    # An ``ObjectPropertiesValue``: the same fields as an object's properties.
    if not isinstance(values, Mapping):
        raise TypeError(f"property {name!r}: unsupported list item {type(values).__name__}")
    props.non_ref_properties.SetInParent()  # as the client: present even when empty
    _fill_properties(props, values)


def _fill_properties(props: Any, values: Mapping[str, Any]) -> None:
    props.SetInParent()  # an object without properties still sends an empty message
    fields = props.non_ref_properties.fields
    for name, value in values.items():
        # Most common first; bool before int (bool is an int).
        if isinstance(value, str):
            fields[name].string_value = value
        elif isinstance(value, bool):
            fields[name].bool_value = value
        elif isinstance(value, int | float):
            fields[name].number_value = value
        elif isinstance(value, list | tuple):
            _add_list(props, name, value)
        elif isinstance(value, dict):
            _fill_nested(props.object_properties.add(prop_name=name).value, value, name)
        elif isinstance(value, datetime):
            fields[name].string_value = _rfc3339(value, name)
        elif value is None:
            fields[name].null_value = struct_pb2.NULL_VALUE
        else:
            raise TypeError(f"property {name!r}: unsupported type {type(value).__name__}")


def encode_request(
    items: Iterable[Item], *, collection: str, tenant: str | None = None
) -> batch_pb2.BatchObjectsRequest:
    """Build the ``BatchObjectsRequest`` that writes ``items`` into ``collection``.

    Objects keep the order of ``items`` (the server reports failures by index).
    """
    request = batch_pb2.BatchObjectsRequest()
    for uuid, (values, vector) in items:
        obj = request.objects.add()  # filled in place: no message copies
        obj.collection = collection
        obj.uuid = uuid
        if tenant:
            obj.tenant = tenant
        if vector is not None:
            obj.vector_bytes = vector_bytes(vector)
        _fill_properties(obj.properties, values)
    return request


class BatchSender:
    """Sends encoded batches over a collection handle's own client connection."""

    def __init__(self, connection: Any, collection: str, tenant: str | None) -> None:
        self._connection = connection
        self.collection = collection
        self.tenant = tenant

    @classmethod
    def of(cls, coll: Any) -> BatchSender | None:
        """Return a sender for collection handle ``coll``, or ``None`` if its client has none.

        Reads the handle's connection, name and tenant, which weaviate-client 4.24
        keeps on ``coll.data``. ``None`` (the caller then uses ``insert_many``) when
        those are missing (another client version) or a consistency level is set
        (the stores never set one; its encoding is the client's business).
        """
        data: Any = getattr(coll, "data", None)
        connection = getattr(data, "_connection", None)
        name = getattr(data, "name", None)
        if (
            not callable(getattr(connection, "grpc_batch_objects", None))
            or not hasattr(connection, "timeout_config")
            or not isinstance(name, str)
            or not hasattr(data, "_tenant")
            or getattr(data, "_consistency_level", None) is not None
        ):
            return None
        tenant = data._tenant
        return cls(connection, name, tenant if isinstance(tenant, str) else None)

    def send(self, items: Sequence[Item]) -> dict[int, str]:
        """Write ``items`` in one call; return ``{index in items: error}`` for refusals.

        Raises what the client's ``insert_many`` raises for a failed call
        (``WeaviateBatchError``, ``WeaviateRetryError`` after its ``UNAVAILABLE``
        retries).
        """
        request = encode_request(items, collection=self.collection, tenant=self.tenant)
        errors: dict[int, str] = self._connection.grpc_batch_objects(
            request=request, timeout=self._connection.timeout_config.insert, max_retries=2
        )
        return errors

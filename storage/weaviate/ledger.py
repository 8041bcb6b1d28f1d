"""The document ledger: one object per document in a second Weaviate collection.

:class:`LedgerEntry` is the store-independent record (the pipeline reads and writes
it through the ``DocumentLedger`` protocol); :class:`WeaviateLedger` keeps it in Weaviate.

Shared state any number of workers can read: which version of each document
(``doc_sha1``), chunked how (``chunker``) and embedded by what (``embedder``) is
stored, with how many chunks, and whether the last attempt failed and why. The
pipeline reads it to skip unchanged documents before parsing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from weaviate.classes.config import Configure, DataType, Property, Tokenization
from weaviate.exceptions import WeaviateBaseError

from chunkweave.storage.errors import StoreError, StoreUnavailableError
from chunkweave.storage.uuids import ledger_uuid
from chunkweave.storage.values import LedgerEntry
from chunkweave.storage.weaviate.client import WeaviateSession, is_transient

if TYPE_CHECKING:
    pass


def _field(name: str) -> Property:
    return Property(
        name=name, data_type=DataType.TEXT, tokenization=Tokenization.FIELD, index_searchable=False
    )


LEDGER_PROPERTIES: tuple[Property, ...] = (
    _field("doc_id"),
    _field("source"),
    _field("doc_sha1"),
    _field("chunker"),
    _field("embedder"),
    Property(name="chunk_count", data_type=DataType.INT),
    Property(name="pages", data_type=DataType.INT),
    _field("status"),
    Property(name="error", data_type=DataType.TEXT, index_filterable=False),
    _field("error_code"),
    Property(name="created_at", data_type=DataType.DATE),
    Property(name="updated_at", data_type=DataType.DATE),
    # The stored version's caller metadata (canonical JSON), its hash and its tenant.
    Property(name="metadata", data_type=DataType.TEXT, index_filterable=False),
    _field("meta_sha1"),
    _field("tenant"),
    # The parser's warnings on the last attempt.
    Property(name="warnings", data_type=DataType.TEXT_ARRAY, index_filterable=False),
)
#: Properties a ledger collection created before they existed gets when next opened.
_ADDED_LATER = ("metadata", "meta_sha1", "tenant", "warnings")


class WeaviateLedger:
    """Ledger entries in their own Weaviate collection (``WeaviateConfig.ledger_collection``).

    Built from the :class:`WeaviateSession` the chunk store uses (one client per
    process): see ``WeaviateStore.open_ledger``. Every call is retried through the
    session, so failures raise :class:`StoreError` or :class:`StoreUnavailableError`.
    """

    def __init__(self, session: WeaviateSession) -> None:
        self.session = session
        self.name = session.cfg.ledger_collection

    def ensure_schema(self) -> None:
        """Create the ledger collection if missing (no vectors)."""
        collections = self.session.client.collections

        def _ensure() -> None:
            if collections.exists(self.name):
                have = {p.name for p in collections.use(self.name).config.get().properties}
                for prop in LEDGER_PROPERTIES:
                    if prop.name in _ADDED_LATER and prop.name not in have:
                        collections.use(self.name).config.add_property(prop)
                return
            collections.create(
                self.name,
                description="chunkweave document ledger",
                properties=list(LEDGER_PROPERTIES),
                vector_config=Configure.Vectors.self_provided(),
                multi_tenancy_config=self.session.multi_tenancy(),
            )

        self.session.retry(f"creating collection {self.name}", _ensure)
        self.session.ensure_tenant(self.name)

    def get(self, doc_id: str) -> LedgerEntry | None:
        """Return the entry for ``doc_id``, or ``None`` if the document is not known."""
        coll = self.session.handle(self.name)
        obj = self.session.retry(
            "ledger read", lambda: coll.query.fetch_object_by_id(ledger_uuid(doc_id))
        )
        return None if obj is None else _entry(obj.properties)

    def put(self, entry: LedgerEntry) -> LedgerEntry:
        """Write (replace) the entry for ``entry.doc_id``; keeps the first ``created_at``."""
        now = datetime.now(UTC)
        previous = self.get(entry.doc_id)
        created = previous.created_at if previous and previous.created_at else now
        entry = entry.model_copy(update={"created_at": created, "updated_at": now})
        props = {k: v for k, v in entry.model_dump().items() if v is not None}
        props["metadata"] = json.dumps(entry.metadata, sort_keys=True)
        props["warnings"] = list(entry.warnings)
        coll = self.session.handle(self.name)
        self.session.put_object(
            coll, ledger_uuid(entry.doc_id), props, f"ledger write for {entry.doc_id}"
        )
        return entry

    def delete(self, doc_id: str) -> bool:
        """Remove the entry for ``doc_id``; ``True`` if there was one."""
        coll = self.session.handle(self.name)
        return bool(
            self.session.retry("ledger delete", lambda: coll.data.delete_by_id(ledger_uuid(doc_id)))
        )

    def entries(self) -> Iterator[LedgerEntry]:
        """Every entry, in no particular order (cursor-paged: no size limit).

        The cursor's pages are fetched as the iteration goes; a failure raises
        :class:`StoreUnavailableError` (transient) or :class:`StoreError`.
        """
        coll = self.session.handle(self.name)
        try:
            for obj in coll.iterator():
                yield _entry(obj.properties)
        except WeaviateBaseError as err:
            kind = StoreUnavailableError if is_transient(err) else StoreError
            raise kind(f"ledger listing: {err}") from err


def _entry(props: dict[str, Any]) -> LedgerEntry:
    known = set(LedgerEntry.model_fields)
    fields = {k: v for k, v in props.items() if k in known and v is not None}
    raw = fields.pop("metadata", None)
    metadata = json.loads(raw) if isinstance(raw, str) and raw else {}
    return LedgerEntry(**fields, metadata=metadata if isinstance(metadata, dict) else {})

"""The chunk collection's schema and the embedder identity recorded on it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from weaviate.classes.config import DataType, Property, Tokenization

from chunking.models import Chunk

_SCHEMA_TAG = "chunkweave:"


@dataclass(frozen=True)
class EmbedderIdentity:
    """What a collection's vectors were made with; recorded on it and on the ledger."""

    name: str
    dimension: int

    def __str__(self) -> str:
        return f"{self.name} ({self.dimension}-d)"


def _text(name: str, *, searchable: bool = False, indexed: bool = True) -> Property:
    # Identifiers are matched whole (FIELD tokenisation); prose is word-tokenised for BM25.
    return Property(
        name=name,
        data_type=DataType.TEXT,
        tokenization=Tokenization.WORD if searchable else Tokenization.FIELD,
        index_filterable=indexed,
        index_searchable=searchable,
    )


def _int(name: str, *, ranged: bool = False) -> Property:
    return Property(name=name, data_type=DataType.INT, index_range_filters=ranged)


CHUNK_PROPERTIES: tuple[Property, ...] = (
    _text("chunk_id"),
    _text("doc_id"),
    _text("source"),
    _text("text", searchable=True, indexed=False),
    _text("type"),
    Property(name="heading_path", data_type=DataType.TEXT_ARRAY, tokenization=Tokenization.WORD),
    _int("page_start", ranged=True),
    _int("page_end", ranged=True),
    Property(name="pages", data_type=DataType.INT_ARRAY),
    _int("chunk_index", ranged=True),
    _int("token_count"),
    _text("content_sha1"),
    _text("doc_sha1"),
    _text("chunker"),
    _text("table_id"),
    _int("table_row_start"),
    _int("table_row_end"),
    _text("table_markdown", indexed=False),
    _text("table_html", indexed=False),
    _text("caption", searchable=True, indexed=False),
    _text("parent_id"),
    Property(name="ingested_at", data_type=DataType.DATE),
)


def chunk_properties(chunk: Chunk, ingested_at: datetime) -> dict[str, Any]:
    """Build the stored properties of ``chunk`` (``None`` fields are left out)."""
    props: dict[str, Any] = {
        "chunk_id": chunk.id,
        "doc_id": chunk.doc_id,
        "source": chunk.source,
        "text": chunk.text,
        "type": chunk.type,
        "heading_path": list(chunk.heading_path),
        "pages": list(chunk.pages),
        "chunk_index": chunk.chunk_index,
        "token_count": chunk.token_count,
        "content_sha1": chunk.content_sha1,
        "doc_sha1": chunk.doc_sha1,
        "chunker": chunk.chunker,
        "ingested_at": ingested_at,
    }
    optional = {
        "page_start": chunk.page_start,
        "page_end": chunk.page_end,
        "table_id": chunk.table_id,
        "table_row_start": chunk.table_row_start,
        "table_row_end": chunk.table_row_end,
        "table_markdown": chunk.table_markdown,
        "table_html": chunk.table_html,
        "caption": chunk.caption,
        "parent_id": chunk.parent_id,
    }
    props.update({k: v for k, v in optional.items() if v is not None})
    return props


def identity_description(identity: EmbedderIdentity) -> str:
    """Build the collection description that records the embedder identity."""
    info = {"embedder": identity.name, "dimension": identity.dimension}
    return _SCHEMA_TAG + json.dumps(info, sort_keys=True)


def parse_identity(description: str | None) -> EmbedderIdentity | None:
    """Read back the identity written by :func:`identity_description`, if any."""
    if not description or not description.startswith(_SCHEMA_TAG):
        return None
    info = json.loads(description[len(_SCHEMA_TAG) :])
    return EmbedderIdentity(name=str(info["embedder"]), dimension=int(info["dimension"]))

"""The chunk collection's schema and the embedder identity recorded on it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from weaviate.classes.config import DataType, Property, Tokenization

from chunkweave.chunking.models import Chunk, Region
from chunkweave.chunking.sections import all_section_prefixes
from chunkweave.storage.errors import StoreError
from chunkweave.storage.language import CJK, document_language
from chunkweave.storage.metadata import (
    ACL,
    HAS_ACL,
    META_SHA1,
    FieldType,
    MetadataConfig,
    metadata_sha1,
)
from chunkweave.storage.values import EmbedderIdentity

_SCHEMA_TAG = "chunkweave:"


#: The property holding a chunk's source regions (schema version 3 and later).
REGIONS = "regions"
#: The language of the chunk's document (ISO 639-1, :mod:`chunkweave.storage.language`).
LANGUAGE = "language"
#: The keyword field of chunks in languages written without spaces (Chinese, Japanese)
#: or gluing particles to words (Korean): heading path, caption and text again,
#: tokenised into trigrams, since the ``word`` tokenizer sees a run of CJK
#: characters as one token. Empty for other languages (nothing indexed).
TEXT_CJK = "text_cjk"
#: Languages whose chunks fill :data:`TEXT_CJK`.
CJK_LANGUAGES = CJK


def text_property(name: str, *, filterable: bool = False, searchable: bool = False) -> Property:
    """Return a text property: identifiers matched whole (FIELD), prose word-tokenised for BM25."""
    return Property(
        name=name,
        data_type=DataType.TEXT,
        tokenization=Tokenization.WORD if searchable else Tokenization.FIELD,
        index_filterable=filterable,
        index_searchable=searchable,
    )


def _int(name: str, *, filterable: bool = False) -> Property:
    # No range index anywhere: ``chunkweave search --filter`` only tests equality, and
    # the keyset paging of ``doc_uuids`` (``chunk_index >=``) works on the filterable
    # index within one document's chunks.
    return Property(
        name=name, data_type=DataType.INT, index_filterable=filterable, index_range_filters=False
    )


#: Version of the chunk collection's layout (properties and their indexes), recorded
#: on the collection next to the embedder identity. History:
#:
#: 1. every identifier filterable, range indexes on pages and ``chunk_index``, Weaviate's
#:    HNSW defaults (collections without a ``schema`` key in their description).
#: 2. an inverted index only where something filters or searches (below), HNSW build
#:    parameters from ``WeaviateConfig``. A version 1 collection has every index
#:    version 2 uses, so it keeps working (more slowly); see
#:    :func:`chunkweave.storage.weaviate.collection.ensure_collection`.
#: 3. ``regions`` (the chunk's source regions, :attr:`Chunk.regions`), not indexed. A
#:    version 1 or 2 collection has no such property: it is used as is, and its chunks
#:    are written and read without regions (see ``ensure_collection``).
SCHEMA_VERSION = 3

#: Every inverted index costs write time on each object, so each one has a reader:
#:
#: - filterable: ``doc_id`` (prune, delete, count), ``chunk_index`` (keyset paging of a
#:   document's chunks), and what users pass to ``chunkweave search --filter``:
#:   ``source``, ``type``, ``pages``, ``page_start``, ``page_end``, ``table_id`` (all row
#:   groups of one table), ``parent_id`` (the children of a section).
#: - searchable (BM25, the keyword half of hybrid search): ``text``, ``heading_path``
#:   (the stored text does not repeat its headings) and ``caption``.
#: - neither: hashes, chunker fingerprint, counters, table bodies, source regions and
#:   timestamps are read back, never looked up (an object's UUID already derives from
#:   ``chunk_id``).
CHUNK_PROPERTIES: tuple[Property, ...] = (
    text_property("chunk_id"),
    text_property("doc_id", filterable=True),
    text_property("source", filterable=True),
    text_property("text", searchable=True),
    text_property("type", filterable=True),
    Property(
        name="heading_path",
        data_type=DataType.TEXT_ARRAY,
        tokenization=Tokenization.WORD,
        index_filterable=False,
        index_searchable=True,
    ),
    _int("page_start", filterable=True),
    _int("page_end", filterable=True),
    Property(name="pages", data_type=DataType.INT_ARRAY, index_filterable=True),
    _int("chunk_index", filterable=True),
    _int("token_count"),
    text_property("content_sha1"),
    text_property("doc_sha1"),
    text_property("chunker"),
    text_property("table_id", filterable=True),
    _int("table_row_start"),
    _int("table_row_end"),
    text_property("table_markdown"),
    text_property("table_html"),
    text_property("caption", searchable=True),
    text_property("parent_id", filterable=True),
    text_property("section_number", filterable=True),  # Chunk.section_number ("7.3.1", "A.2")
    Property(
        name="section_numbers",
        data_type=DataType.TEXT_ARRAY,
        tokenization=Tokenization.FIELD,
        index_filterable=True,
        index_searchable=False,
    ),  # Chunk.section_numbers: ["2", "2.3.1"] for sections 2 and 2.3.1 merged
    Property(
        name="section_prefix",
        data_type=DataType.TEXT_ARRAY,
        tokenization=Tokenization.FIELD,
        index_filterable=True,
        index_searchable=False,
    ),  # ["7", "7.3", "7.3.1"]
    Property(name="ingested_at", data_type=DataType.DATE, index_filterable=False),
    text_property(LANGUAGE, filterable=True),
    Property(
        name=TEXT_CJK,
        data_type=DataType.TEXT,
        tokenization=Tokenization.TRIGRAM,
        index_filterable=False,
        index_searchable=True,
    ),
    # One object per region: {"page": 3, "bbox": [x0, y0, x1, y1]} (points, top-left).
    Property(
        name=REGIONS,
        data_type=DataType.OBJECT_ARRAY,
        index_filterable=False,
        index_searchable=False,
        nested_properties=[
            Property(
                name="page",
                data_type=DataType.INT,
                index_filterable=False,
                index_range_filters=False,
            ),
            Property(name="bbox", data_type=DataType.NUMBER_ARRAY, index_filterable=False),
        ],
    ),
)

#: The properties of the keyword (BM25) index, the keyword half of hybrid search.
KEYWORD_PROPERTIES: frozenset[str] = frozenset(
    p.name for p in CHUNK_PROPERTIES if p.indexSearchable
)


def collection_properties(keyword_index: bool = True) -> list[Property]:
    """Return the properties a new chunk collection is created with.

    Without ``keyword_index`` nothing is searchable: no BM25 index is written, and
    the collection answers vector searches only (``WeaviateConfig.keyword_index``).
    """
    if keyword_index:
        return list(CHUNK_PROPERTIES)
    return [
        p.model_copy(update={"indexSearchable": False}) if p.name in KEYWORD_PROPERTIES else p
        for p in CHUNK_PROPERTIES
    ]


#: The properties with a filter index: those of :data:`chunkweave.storage.filters.FILTERABLE`,
#: which ``ChunkStore.search`` filters on (a test checks they agree).
FILTERABLE_PROPERTIES: frozenset[str] = frozenset(
    p.name for p in CHUNK_PROPERTIES if p.indexFilterable
)


_META_TYPES: dict[FieldType, DataType] = {
    "string": DataType.TEXT,
    "number": DataType.NUMBER,
    "bool": DataType.BOOL,
    "date": DataType.DATE,
    "string[]": DataType.TEXT_ARRAY,
}


def metadata_properties(cfg: MetadataConfig) -> list[Property]:
    """Return the chunk properties caller metadata is stored in: ``acl``, flags, keys.

    Each declared key is its own filterable property (strings matched whole, numbers
    and dates with a range index); ``has_acl`` says whether the document had an
    ``acl`` at all (what a search treats as public when the config says so);
    ``meta_sha1`` is read back to tell a metadata-only change. Added to an existing
    collection when missing (:meth:`WeaviateStore.ensure_schema`): properties are only
    ever added, never changed.
    """
    props = [
        Property(name=HAS_ACL, data_type=DataType.BOOL, index_filterable=True),
        text_property(META_SHA1),
    ]
    for key, kind in cfg.declared().items():
        data_type = _META_TYPES[kind]
        text = data_type in (DataType.TEXT, DataType.TEXT_ARRAY)
        props.append(
            Property(
                name=key,
                data_type=data_type,
                tokenization=Tokenization.FIELD if text else None,
                index_filterable=True,
                index_searchable=False,
                index_range_filters=kind in ("number", "date"),
            )
        )
    return props


def meta_values(metadata: Mapping[str, Any], cfg: MetadataConfig) -> dict[str, Any]:
    """Return the metadata properties of every chunk of a document with ``metadata``.

    Dates come as ISO strings (their JSON form) and are stored as dates. A declared
    key the document lacks is left out, so it reads back as null.
    """
    declared = cfg.declared()
    unknown = sorted(set(metadata) - set(declared))
    if unknown:  # never left to Weaviate's auto-schema: it would add them silently
        raise StoreError(f"metadata keys {unknown} are not declared (see MetadataConfig)")
    props: dict[str, Any] = {
        k: datetime.fromisoformat(v) if declared.get(k) == "date" and isinstance(v, str) else v
        for k, v in metadata.items()
    }
    props[HAS_ACL] = ACL in metadata
    props[META_SHA1] = metadata_sha1(metadata)
    return props


def chunk_properties(
    chunk: Chunk,
    ingested_at: datetime,
    *,
    regions: bool = True,
    meta: Mapping[str, Any] | None = None,
    language: str | None = None,
) -> dict[str, Any]:
    """Build the stored properties of ``chunk`` (``None`` fields are left out).

    ``regions`` off leaves out the source regions (a collection older than schema
    version 3 has no property for them). ``meta``: the document's metadata
    properties (:func:`meta_values`), the same on every chunk. ``language``: its
    document's (:func:`doc_languages`); a CJK one also fills :data:`TEXT_CJK`.
    """
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
        "section_number": chunk.section_number,
        "section_numbers": list(_numbers(chunk)) or None,
        # The sections holding any of them: merged 1.1 and 2.3.1 are under 1, 2 and 2.3.
        "section_prefix": list(all_section_prefixes(_numbers(chunk))) or None,
        LANGUAGE: language,
        TEXT_CJK: _cjk_text(chunk) if language in CJK_LANGUAGES else None,
    }
    props.update({k: v for k, v in optional.items() if v is not None})
    if regions:
        props[REGIONS] = [{"page": r.page, "bbox": list(r.bbox)} for r in chunk.regions]
    if meta:
        props.update(meta)
    return props


def _cjk_text(chunk: Chunk) -> str:
    return "\n".join([*chunk.heading_path, chunk.caption or "", chunk.text])


def doc_languages(chunks: Sequence[Chunk]) -> dict[str, str | None]:
    """Return the language of each document among ``chunks`` (from its chunks' text)."""
    texts: dict[str, list[str]] = {}
    for c in chunks:
        texts.setdefault(c.doc_id, []).append(c.text)
    return {doc: document_language(t) for doc, t in texts.items()}


def _numbers(chunk: Chunk) -> tuple[str, ...]:
    """Every section number of ``chunk`` (one built before it had ``section_numbers``: its own)."""
    if chunk.section_numbers:
        return chunk.section_numbers
    return (chunk.section_number,) if chunk.section_number is not None else ()


def read_regions(value: Any) -> tuple[Region, ...]:
    """Regions from a stored ``regions`` value (``None`` or missing: none)."""
    return tuple(
        Region(page=int(r["page"]), bbox=tuple(float(v) for v in r["bbox"])) for r in value or ()
    )


#: Chunk fields read back as they are stored (:func:`chunk_from_properties` types the rest).
_PLAIN = (
    "page_start",
    "page_end",
    "table_id",
    "table_row_start",
    "table_row_end",
    "table_markdown",
    "table_html",
    "caption",
    "parent_id",
    "section_number",
    "section_numbers",
)


def chunk_from_properties(props: Mapping[str, Any]) -> Chunk:
    """Rebuild a :class:`Chunk` from its stored properties, ``embed_text`` empty.

    The store keeps the vector, not the text it was made from, so a chunk read back
    has no ``embed_text``; everything else it stores comes back as written.
    """
    return Chunk(
        id=str(props["chunk_id"]),
        doc_id=str(props["doc_id"]),
        source=str(props["source"]),
        text=str(props.get("text") or ""),
        embed_text="",
        type=props["type"],
        heading_path=tuple(props.get("heading_path") or ()),
        pages=tuple(int(p) for p in props.get("pages") or ()),
        regions=read_regions(props.get(REGIONS)),
        chunk_index=int(props["chunk_index"]),
        token_count=int(props.get("token_count") or 0),
        content_sha1=str(props.get("content_sha1") or ""),
        doc_sha1=str(props.get("doc_sha1") or ""),
        chunker=str(props.get("chunker") or ""),
        **{k: props[k] for k in _PLAIN if props.get(k) is not None},
    )


def identity_description(identity: EmbedderIdentity, schema: int = SCHEMA_VERSION) -> str:
    """Build the collection description that records the embedder and the schema version."""
    info = {"embedder": identity.name, "dimension": identity.dimension, "schema": schema}
    return _SCHEMA_TAG + json.dumps(info, sort_keys=True)


def _recorded(description: str | None) -> dict[str, Any] | None:
    if not description or not description.startswith(_SCHEMA_TAG):
        return None
    info = json.loads(description[len(_SCHEMA_TAG) :])
    return info if isinstance(info, dict) else None


def parse_identity(description: str | None) -> EmbedderIdentity | None:
    """Read back the identity written by :func:`identity_description`, if any."""
    info = _recorded(description)
    if info is None:
        return None
    return EmbedderIdentity(name=str(info["embedder"]), dimension=int(info["dimension"]))


def parse_schema_version(description: str | None) -> int | None:
    """Read back the schema version; ``None`` if chunkweave did not write ``description``.

    Collections written before versions were recorded carry no ``schema`` key: they
    are version 1.
    """
    info = _recorded(description)
    if info is None:
        return None
    return int(info.get("schema", 1))

"""Caller metadata: a small, typed, bounded mapping every chunk of a document carries.

A document may carry metadata (``version``, ``source_url``, ``tags``...) given at
enqueue time, in a sidecar ``NAME.meta.json``, or by an S3 object. Only keys
declared in :class:`MetadataConfig` are accepted, each with its type; unknown keys
are refused with an error naming where the metadata came from, the key and the
reason (never silently dropped). Values are checked against the bounds of the
config before anything is queued (:func:`validate_metadata`).

The reserved key ``acl`` (a list of principals) is always accepted: a search given
principals returns only chunks whose ``acl`` intersects them
(:class:`chunkweave.storage.filters.SearchRequest`). Tenants are not metadata: they
choose the Weaviate shard a document lives in (:func:`check_tenant`).

Metadata is not identity: chunk IDs stay content-derived, and a change of metadata
alone rewrites the stored chunks with their stored vectors (nothing is re-embedded).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chunkweave.errors import ChunkweaveError, ErrorCode

#: The types a metadata value may have (``string[]``: a list of strings).
FieldType = Literal["string", "number", "bool", "date", "string[]"]
#: A validated value: dates are timezone-aware, lists are lists of strings.
Value = str | int | float | bool | datetime | list[str]
Metadata = dict[str, Value]

#: The reserved key holding a document's principals (who may read it).
ACL = "acl"
#: Chunk property saying whether the chunk's document has an ``acl`` at all.
HAS_ACL = "has_acl"
#: Chunk property holding the hash of the metadata the chunk was written with.
META_SHA1 = "meta_sha1"

#: Metadata keys: what Weaviate accepts as a property name (``[_A-Za-z][_0-9A-Za-z]*``),
#: narrowed to lower case so two keys never differ by case only.
KEY_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
#: Tenant names Weaviate accepts: 1-64 of ``A-Z a-z 0-9 _ -``.
TENANT_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")


#: Names no metadata key may take: the chunk's own properties (a test checks this
#: covers the Weaviate chunk schema), the metadata flags, and names kept for later.
RESERVED_KEYS: frozenset[str] = frozenset(
    {
        "chunk_id", "doc_id", "source", "text", "type", "heading_path", "page_start",
        "page_end", "pages", "chunk_index", "token_count", "content_sha1", "doc_sha1",
        "chunker", "table_id", "table_row_start", "table_row_end", "table_markdown",
        "table_html", "caption", "parent_id", "ingested_at", "regions", "section_number",
        "section_numbers", "section_prefix", "language", "text_cjk",
        "match_unit", "unit_of", "unit_kind", "unit_span",
        HAS_ACL, META_SHA1, "tenant", "id", "vector", "metadata",
    }
)  # fmt: skip


class MetadataError(ChunkweaveError, ValueError):
    """Metadata that cannot be accepted: the message names its origin, the key and why."""

    code = ErrorCode.BAD_METADATA


class MetadataConfig(BaseModel):
    """The declared metadata schema and its bounds (``CHUNKWEAVE_WEAVIATE__METADATA__*``).

    ``fields`` maps each allowed key to its type, e.g.
    ``{"version": "string", "year": "number", "tags": "string[]"}``; ``acl`` is
    reserved and always allowed. A key added here becomes a chunk property of the
    collection when the store next opens it (properties are only ever added).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    fields: dict[str, FieldType] = Field(default_factory=dict)
    #: Keys one document may carry.
    max_keys: int = Field(default=32, gt=0, le=256)
    #: Characters of a key.
    max_key_chars: int = Field(default=64, gt=0, le=230)
    #: Characters of one string value (each item of a list counts alone).
    max_value_chars: int = Field(default=1024, gt=0)
    #: Items of one list value (``acl`` included).
    max_list_items: int = Field(default=64, gt=0)
    #: Bytes of a document's whole metadata as canonical JSON.
    max_bytes: int = Field(default=8192, gt=0)
    #: Whether a chunk whose document has no ``acl`` is returned to a search given
    #: principals. Off: such chunks are returned only to searches without principals.
    public_without_acl: bool = False

    @field_validator("fields")
    @classmethod
    def _keys(cls, fields: dict[str, FieldType]) -> dict[str, FieldType]:
        for key in fields:
            if key == ACL:
                raise ValueError(f"metadata field {key!r} is reserved (always a list of strings)")
            try:
                check_key(key, cls(), reserved=RESERVED_KEYS)
            except MetadataError as err:
                raise ValueError(f"metadata field {key!r}: {err}") from None
        return fields

    def declared(self) -> dict[str, FieldType]:
        """Every accepted key with its type: the declared fields plus ``acl``."""
        return {**self.fields, ACL: "string[]"}


def check_key(key: str, cfg: MetadataConfig, *, reserved: frozenset[str] = frozenset()) -> None:
    """Refuse a key Weaviate would not accept as a property, or one that is taken."""
    if len(key) > cfg.max_key_chars:
        raise MetadataError(f"longer than {cfg.max_key_chars} characters")
    if not KEY_PATTERN.fullmatch(key):
        raise MetadataError("use a-z, 0-9 and _ only, starting with a letter")
    if key in reserved:
        raise MetadataError("is a chunk property of chunkweave's own (reserved)")


def check_tenant(tenant: str) -> str:
    """Return ``tenant`` if Weaviate accepts it as a tenant name; raise ``MetadataError``."""
    if not TENANT_PATTERN.fullmatch(tenant):
        raise MetadataError(f"tenant {tenant!r}: use 1-64 of A-Z a-z 0-9 _ -")
    return tenant


def validate_metadata(
    raw: Mapping[str, object], cfg: MetadataConfig, *, where: str, from_text: bool = False
) -> Metadata:
    """Return ``raw`` typed as declared, or raise :class:`MetadataError`.

    ``where`` names the origin (a file, a sidecar, ``--meta``) in every error.
    ``from_text``: every value is a string to be read as its declared type (the
    command line, S3 user metadata): numbers, ``true``/``false``, ISO dates, and
    lists as comma-separated items or a JSON array. Otherwise values must already
    have their type (JSON), dates as ISO 8601 strings. Dates without a timezone are
    UTC.
    """
    declared = cfg.declared()
    if len(raw) > cfg.max_keys:
        raise MetadataError(f"{where}: {len(raw)} metadata keys, more than {cfg.max_keys}")
    out: Metadata = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise MetadataError(f"{where}: metadata key {key!r}: not a string")
        kind = declared.get(key)
        if kind is None:
            known = ", ".join(sorted(declared))
            raise MetadataError(
                f"{where}: metadata key {key!r}: not declared (declared keys: {known}; "
                "declare it in CHUNKWEAVE_WEAVIATE__METADATA__FIELDS)"
            )
        try:
            out[key] = _typed(value, kind, cfg, from_text)
        except MetadataError as err:
            raise MetadataError(f"{where}: metadata key {key!r}: {err}") from None
    size = len(metadata_json(out).encode())
    if size > cfg.max_bytes:
        raise MetadataError(f"{where}: metadata is {size} bytes, more than {cfg.max_bytes}")
    return out


def _typed(value: object, kind: FieldType, cfg: MetadataConfig, from_text: bool) -> Value:
    if from_text and kind != "string":
        if not isinstance(value, str):
            raise MetadataError(f"expected text, got {type(value).__name__}")
        value = _from_text(value, kind)
    if kind == "string":
        return _string(value, cfg)
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MetadataError(f"expected a number, got {_shown(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise MetadataError("expected a finite number")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise MetadataError(f"expected true or false, got {_shown(value)}")
        return value
    if kind == "date":
        return _date(value)
    if not isinstance(value, list | tuple):
        raise MetadataError(f"expected a list of strings, got {_shown(value)}")
    if len(value) > cfg.max_list_items:
        raise MetadataError(f"{len(value)} items, more than {cfg.max_list_items}")
    return [_string(item, cfg) for item in value]


def _from_text(text: str, kind: FieldType) -> object:
    text = text.strip()
    if kind == "number":
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                raise MetadataError(f"expected a number, got {text!r}") from None
    if kind == "bool":
        lowered = text.lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise MetadataError(f"expected true or false, got {text!r}")
    if kind == "string[]":
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError as err:
                raise MetadataError(f"not a JSON list: {err}") from None
        return [item.strip() for item in text.split(",") if item.strip()]
    return text  # date: parsed by _date


def _string(value: object, cfg: MetadataConfig) -> str:
    if not isinstance(value, str):
        raise MetadataError(f"expected a string, got {_shown(value)}")
    if len(value) > cfg.max_value_chars:
        raise MetadataError(f"{len(value)} characters, more than {cfg.max_value_chars}")
    if "\x00" in value:
        raise MetadataError("contains a NUL character")
    return value


def _date(value: object) -> datetime:
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise MetadataError(f"expected an ISO 8601 date, got {value!r}") from None
    else:
        raise MetadataError(f"expected an ISO 8601 date, got {_shown(value)}")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _shown(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'...' if len(text) > 40 else ''}"


def jsonable(metadata: Mapping[str, Value]) -> dict[str, object]:
    """Return the metadata as plain JSON values (dates as ISO 8601 strings)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in sorted(metadata.items())}


def metadata_json(metadata: Mapping[str, Value]) -> str:
    """Canonical JSON of the metadata (sorted keys, no spaces): what is hashed and stored."""
    return json.dumps(jsonable(metadata), sort_keys=True, separators=(",", ":"))


def metadata_sha1(metadata: Mapping[str, Value]) -> str:
    """Hash of the metadata a chunk was written with (``""`` for none)."""
    if not metadata:
        return ""
    return hashlib.sha1(metadata_json(metadata).encode()).hexdigest()


def merge(*layers: Mapping[str, Value] | None) -> Metadata:
    """Later layers win key by key (sidecar, then S3 object metadata, then the caller's)."""
    out: Metadata = {}
    for layer in layers:
        out.update(layer or {})
    return out


def read_sidecar(path: str, cfg: MetadataConfig) -> Metadata | None:
    """Read ``NAME.meta.json`` beside ``path`` (``None`` when there is none).

    Raises :class:`MetadataError` naming the sidecar for unreadable JSON, a
    non-object, or any key or value :func:`validate_metadata` refuses.
    """
    sidecar = sidecar_path(path)
    try:
        with open(sidecar, "rb") as fh:
            data = fh.read(cfg.max_bytes + 1)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise MetadataError(f"{sidecar}: {err.strerror or type(err).__name__}") from None
    if len(data) > cfg.max_bytes:
        raise MetadataError(f"{sidecar}: larger than {cfg.max_bytes} bytes")
    try:
        parsed = json.loads(data)
    except ValueError as err:
        raise MetadataError(f"{sidecar}: not valid JSON: {err}") from None
    if not isinstance(parsed, dict):
        raise MetadataError(f"{sidecar}: expected a JSON object of metadata")
    return validate_metadata(parsed, cfg, where=sidecar)


SIDECAR_SUFFIX = ".meta.json"


def sidecar_path(path: str) -> str:
    """Return the sidecar of a document: ``report.pdf`` -> ``report.pdf.meta.json``."""
    return path + SIDECAR_SUFFIX

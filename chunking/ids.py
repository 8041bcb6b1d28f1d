"""Chunk identity: one pure function from (doc, chunker, content, occurrence) to an ID.

Why these inputs:
- ``doc_id`` is the source's stable identity (not its bytes), so a document keeps
  its chunk IDs across edits wherever the chunk content did not change.
- ``chunker`` (the fingerprint of strategy + options + version + token counter)
  changes every ID when the chunking changes: old and new chunks never collide.
- ``content`` is the canonical content key (:func:`content_key`): everything that is
  embedded or stored about the chunk and does not merely reflect its position.
- ``occurrence`` numbers repeated identical content within one document (0 for the
  first), so identical boilerplate chunks get distinct, stable IDs.

Positional fields (``chunk_index``, ``element_orders``) are deliberately left out:
editing one paragraph can shift every later chunk's index, and that must not change
their IDs (downstream skips re-embedding chunks whose ID it already has).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

_SEP = "\x1f"  # ASCII unit separator: cannot occur in a SHA1 hex or fingerprint.
# The canonical JSON of a content key is ``json.dumps(payload, ensure_ascii=False,
# sort_keys=True, separators=(",", ":"))``. It is written out directly (keys in
# sorted order, strings through the json module's own escaper): the same bytes,
# without building an encoder and sorting a dict for every chunk.
_JSON_STR = json.encoder.encode_basestring


def sha1_hex(text: str) -> str:
    """SHA1 hex digest of ``text`` encoded as UTF-8."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def content_key(
    *,
    text: str,
    embed_text: str,
    type: str,
    heading_path: tuple[str, ...],
    pages: tuple[int, ...],
    table: tuple[str, int, int] | None = None,
    parent_id: str | None = None,
    text_sha1: str | None = None,
) -> str:
    """SHA1 of a chunk's content as a canonical JSON document.

    Includes what the embedder sees (``embed_text``), what is stored and shown
    (``text``, ``type``, ``heading_path``, ``pages``, ``table``: the table ID and row
    range) and the link to a parent chunk. Two chunks with equal keys are
    interchangeable. The two long texts enter as their SHA1 digests (hashing is
    several times cheaper than JSON-escaping them); ``text_sha1``, when given, must
    be ``sha1_hex(text)`` (the chunk's ``content_sha1``, so it is hashed only once).
    """
    text_sha1 = text_sha1 if text_sha1 is not None else sha1_hex(text)
    table_json = (
        "null"
        if table is None
        else f"[{_JSON_STR(table[0])},{int.__repr__(table[1])},{int.__repr__(table[2])}]"
    )
    canonical = "".join(
        (
            '{"embed_text_sha1":"',
            sha1_hex(embed_text),
            '","heading_path":[',
            ",".join(map(_JSON_STR, heading_path)),
            '],"pages":[',
            ",".join(map(int.__repr__, pages)),
            '],"parent_id":',
            "null" if parent_id is None else _JSON_STR(parent_id),
            ',"table":',
            table_json,
            ',"text_sha1":',
            _JSON_STR(text_sha1),
            ',"type":',
            _JSON_STR(type),
            "}",
        )
    )
    return sha1_hex(canonical)


def chunk_id(doc_id: str, chunker: str, content: str, occurrence: int) -> str:
    """Return the chunk ID: SHA1 hex over ``doc_id``, ``chunker``, ``content`` and ``occurrence``.

    ``content`` is a :func:`content_key`; ``occurrence`` is how many earlier chunks of
    the same document have the same content key. Pure and deterministic across
    processes and platforms.
    """
    if occurrence < 0:
        raise ValueError(f"occurrence must be >= 0, got {occurrence}")
    return sha1_hex(_SEP.join((doc_id, chunker, content, str(occurrence))))


def assign_ids(doc_id: str, chunker: str, contents: Iterable[str]) -> list[str]:
    """IDs for a document's chunks given their content keys in order.

    Unique within the document (equal content keys get increasing occurrences).
    """
    seen: dict[str, int] = {}
    ids = []
    for content in contents:
        occurrence = seen.get(content, 0)
        seen[content] = occurrence + 1
        ids.append(chunk_id(doc_id, chunker, content, occurrence))
    return ids

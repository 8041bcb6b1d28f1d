"""Hypothesis property tests of the chunking invariants.

Prose kept in order, tables whole or row groups with their header and never mixed with
prose, size bounds, IDs unique, deterministic and local to what changed, overlap losing
no word.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.ids import content_key, sha1_hex
from chunkweave.chunking.models import Chunk
from chunkweave.chunking.units import table_captions
from chunkweave.parsers.document import ParsedDocument
from tests.chunk_helpers import (
    attached_captions,
    children,
    documents,
    norm,
    prose_elements,
)

COUNTER = ApproxTokenCounter()
NO_OVERLAP = ["elements", "headings", "faq", "fixed", "sentences", "recursive", "pages"]
PROPS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REPO = Path(__file__).resolve().parents[1]


def _chunk(doc: ParsedDocument, **kw) -> list[Chunk]:
    opts = ChunkOptions(**{"max_tokens": 96, "min_tokens": 20, **kw})
    return chunk_document(doc, opts, COUNTER, doc_id="doc-1")


@PROPS
@given(doc=documents(), strategy=st.sampled_from(NO_OVERLAP), parents=st.booleans())
def test_prose_is_preserved_in_order(doc: ParsedDocument, strategy: str, parents: bool) -> None:
    """Nothing lost, nothing invented, in order: prose chunks tile the prose elements."""
    chunks = children(_chunk(doc, strategy=strategy, parent_chunks=parents))
    got = "".join(norm(c.text) for c in chunks if c.type != "table")
    want = "".join(norm(e.text) for e in prose_elements(doc))
    assert got == want


@PROPS
@given(doc=documents(), strategy=st.sampled_from(NO_OVERLAP + ["sliding"]))
def test_tables_are_whole_or_row_groups_with_header(doc: ParsedDocument, strategy: str) -> None:
    chunks = _chunk(doc, strategy=strategy, overlap_tokens=0)
    captions = table_captions([e for e in doc.elements if not e.is_furniture])
    for table in (e for e in doc.elements if e.type == "table"):
        pieces = [c for c in chunks if c.type == "table" and table.order in c.element_orders]
        assert table.rows is not None
        n_data = len(table.rows) - table.header_rows
        # The pieces tile the data rows in order.
        ranges = [
            r for r, _ in itertools.groupby((c.table_row_start, c.table_row_end) for c in pieces)
        ]
        assert ranges[0][0] == 0 and ranges[-1][1] == n_data
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
        assert len({c.table_id for c in pieces}) == 1
        for _, group in itertools.groupby(pieces, key=lambda c: c.table_row_start):
            group_pieces = list(group)
            first = group_pieces[0]
            assert first.table_row_start is not None and first.table_row_end is not None
            # One oversized row may be cut into fragments (same row range).
            body = norm("".join(c.text for c in group_pieces))
            assert len(group_pieces) == 1 or first.table_row_end - first.table_row_start <= 1
            for row in table.rows[: table.header_rows]:  # header repeated in every group
                assert all(norm(cell.replace("|", "\\|")) in body for cell in row)
            lo = table.header_rows + first.table_row_start
            for row in table.rows[lo : table.header_rows + first.table_row_end]:
                assert all(norm(cell.replace("|", "\\|")) in body for cell in row)
            caption = captions.get(table.order)
            for c in group_pieces:  # caption (its lead, if very long) in every embed text
                if caption is not None:
                    assert c.caption == " ".join(caption.text.split())
                    assert norm(caption.text.split()[0]) in norm(c.embed_text)
        if caption := captions.get(table.order):
            head, cap = norm(pieces[0].text), norm(caption.text)
            assert head.startswith(cap) or cap.startswith(head)  # a huge caption is cut


@PROPS
@given(doc=documents(), strategy=st.sampled_from(NO_OVERLAP + ["sliding"]))
def test_tables_never_share_a_chunk_with_prose(doc: ParsedDocument, strategy: str) -> None:
    chunks = children(_chunk(doc, strategy=strategy))
    tables = {e.order for e in doc.elements if e.type == "table"}
    captions = attached_captions(doc)
    for c in chunks:
        orders = set(c.element_orders)
        if c.type == "table":
            assert len(orders & tables) == 1
            assert orders <= tables | captions
        else:
            assert not orders & tables


@PROPS
@given(
    doc=documents(),
    strategy=st.sampled_from(NO_OVERLAP + ["sliding"]),
    max_tokens=st.integers(24, 300),
    parents=st.booleans(),
)
def test_no_chunk_exceeds_the_hard_max(
    doc: ParsedDocument, strategy: str, max_tokens: int, parents: bool
) -> None:
    """Nothing exceeds the max: even a single oversized table row is cut between words."""
    chunks = _chunk(doc, strategy=strategy, max_tokens=max_tokens, parent_chunks=parents)
    for c in chunks:
        assert c.token_count == COUNTER.count(c.embed_text)
        assert c.token_count <= max_tokens, (c.token_count, c.type)


@PROPS
@given(doc=documents(), strategy=st.sampled_from(NO_OVERLAP + ["sliding"]))
def test_ids_unique_and_deterministic(doc: ParsedDocument, strategy: str) -> None:
    first = _chunk(doc, strategy=strategy, parent_chunks=True)
    second = _chunk(doc, strategy=strategy, parent_chunks=True)
    assert [c.model_dump_json() for c in first] == [c.model_dump_json() for c in second]
    ids = [c.id for c in first]
    assert len(ids) == len(set(ids))
    assert [c.chunk_index for c in first] == list(range(len(first)))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), data=st.data())
def test_editing_one_paragraph_changes_only_its_chunks(doc: ParsedDocument, data) -> None:
    paragraphs = [e for e in doc.elements if e.type == "paragraph"]
    if not paragraphs:
        return
    target = data.draw(st.sampled_from(paragraphs))
    new_text = data.draw(st.sampled_from(["EDITEDzz short.", target.text + " EDITEDzz more."]))
    edited = doc.model_copy(
        update={
            "elements": tuple(
                e.model_copy(update={"text": new_text}) if e.order == target.order else e
                for e in doc.elements
            )
        }
    )
    before, after = _chunk(doc), _chunk(edited)
    section_of = _sections(doc)
    affected = {
        section_of[o]
        for c in before + after
        if target.order in c.element_orders
        for o in c.element_orders
    }
    after_ids = {c.id for c in after}
    for c in before:
        if not {section_of[o] for o in c.element_orders} & affected:
            assert c.id in after_ids, c.text[:80]
    # The edited text is in at least one chunk whose ID is new.
    new = [c for c in after if c.id not in {b.id for b in before}]
    assert any(target.order in c.element_orders for c in new)


def _sections(doc: ParsedDocument, section_level: int = 3) -> dict[int, int]:
    # Independent recomputation of the section rule: a title or a heading of level
    # <= section_level starts a new section.
    out, section = {}, 0
    for e in doc.elements:
        if e.type == "title" or (e.type == "heading" and (e.level or 1) <= section_level):
            section += 1
        out[e.order] = section
    return out


_SCRIPT = """
import json, sys
sys.path.insert(0, {repo!r})
from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.parsers.document import ParsedDocument
doc = ParsedDocument.model_validate_json(sys.stdin.read())
chunks = chunk_document(doc, ChunkOptions(max_tokens=96, parent_chunks=True),
                        ApproxTokenCounter(), doc_id="doc-1")
print(json.dumps([c.id for c in chunks]))
"""


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents())
def test_ids_are_identical_in_another_process(doc: ParsedDocument) -> None:
    here = [c.id for c in _chunk(doc, parent_chunks=True, min_tokens=48)]
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(repo=str(REPO))],
        input=doc.model_dump_json(),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == here


@pytest.mark.parametrize("strategy", ["fixed", "sentences", "recursive"])
@PROPS
@given(doc=documents())
def test_overlap_keeps_every_word(doc: ParsedDocument, strategy: str) -> None:
    chunks = _chunk(doc, strategy=strategy, overlap_tokens=16)
    text = norm("".join(c.text for c in chunks if c.type != "table"))
    for e in prose_elements(doc):
        for word in e.text.split():
            assert word in text


@settings(max_examples=200, deadline=None)
@given(
    path=st.lists(st.text(), max_size=4),
    pages=st.lists(st.integers(min_value=-5, max_value=10_000), max_size=4),
    table=st.none() | st.tuples(st.text(), st.integers(0, 99), st.integers(0, 99)),
    parent=st.none() | st.text(),
    kind=st.text(),
)
def test_content_key_hashes_the_canonical_json(path, pages, table, parent, kind):
    """The hand-written canonical JSON is byte for byte what ``json.dumps`` writes."""
    payload = {
        "embed_text_sha1": sha1_hex("e"),
        "heading_path": path,
        "pages": pages,
        "parent_id": parent,
        "table": list(table) if table is not None else None,
        "text_sha1": sha1_hex("t"),
        "type": kind,
    }
    canonical = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    key = content_key(
        text="t",
        embed_text="e",
        type=kind,
        heading_path=tuple(path),
        pages=tuple(pages),
        table=table,
        parent_id=parent,
    )
    assert key == sha1_hex(canonical)

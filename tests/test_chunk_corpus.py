"""Chunking real corpus documents: the IBM Redbook's tables, the R manual's sections."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from chunkweave.chunking import Chunk, ChunkOptions, chunk_document, resolve_options
from chunkweave.chunking.models import TokenCounter
from chunkweave.parsers import ParsedDocument, parse_document
from tests.chunk_helpers import norm


@pytest.fixture(scope="module")
def counter() -> tuple[TokenCounter, int]:
    """The default embedder's own tokenizer (the budget the chunks must respect)."""
    from chunkweave.storage.config import EmbedderConfig
    from chunkweave.storage.embedders import make_embedder

    embedder = make_embedder(EmbedderConfig())
    return embedder, embedder.max_tokens


@pytest.fixture(scope="module")
def redp(corpus: Path) -> ParsedDocument:
    return parse_document(corpus / "redp5110_sampled.pdf")


@pytest.fixture(scope="module")
def rintro(corpus: Path) -> ParsedDocument:
    return parse_document(corpus / "R-intro.pdf")


def _chunks(doc: ParsedDocument, counter: tuple[TokenCounter, int], **kw) -> list[Chunk]:
    opts = resolve_options(ChunkOptions(**kw), counter[1])
    return chunk_document(doc, opts, counter[0], doc_id=Path(doc.path).name)


def _check_honest_paths(doc: ParsedDocument, chunks: list[Chunk]) -> None:
    # A chunk's heading path is a prefix of the path of every element in it, or,
    # for a heading that opens the chunk, that heading is one of its ancestors.
    by_order = {e.order: e for e in doc.elements}
    for c in chunks:
        for order in c.element_orders:
            el = by_order[order]
            own = el.heading_path + ((" ".join(el.text.split()),) if el.is_heading else ())
            ancestor = el.is_heading and c.heading_path[: len(own)] == own
            assert own[: len(c.heading_path)] == c.heading_path or ancestor, (c.heading_path, own)


def test_redbook_tables_kept_whole_with_captions(redp, counter) -> None:
    chunks = _chunks(redp, counter)
    tables = [e for e in redp.elements if e.type == "table"]
    # The contents page is rebuilt as an (entry | page) table: navigation, left out.
    contents = [t for t in tables if t.heading_path[-1:] == ("Contents",)]
    assert len(contents) == 1
    assert not any(contents[0].order in c.element_orders for c in chunks)
    tables = [t for t in tables if t not in contents]
    assert len(tables) >= 3
    for table in tables:
        pieces = [c for c in chunks if table.order in c.element_orders]
        assert pieces and all(c.type == "table" for c in pieces)
        if len(pieces) > 1:  # split: the header row is repeated in every piece
            header = table.rows[0] if table.rows and table.header_rows else ()
            assert all(norm(cell) in norm(c.text) for c in pieces for cell in header)
    usage = [c for c in chunks if c.type == "table" and "USER_NAME" in c.text]
    assert len(usage) == 1  # Table 2-1 fits the budget: one chunk
    assert usage[0].text.startswith("Table 2-1 FUNCTION_USAGE view\n")
    assert all(c.token_count <= counter[1] for c in chunks)
    _check_honest_paths(redp, chunks)


def test_redbook_leaves_out_running_furniture(redp, counter) -> None:
    chunks = _chunks(redp, counter)
    body = {norm(e.text) for e in redp.elements if not e.is_furniture}
    furniture = {norm(e.text) for e in redp.elements if e.is_furniture} - body
    # Short furniture (a page number) also occurs inside body text by chance.
    running = [text for text in furniture if len(text) > 12]
    assert running, "no running header or footer found to check"
    texts = [norm(c.text) for c in chunks]
    for text in running:
        assert not any(text in t for t in texts), text


def test_redbook_section_heading_reaches_the_embed_text(redp, counter) -> None:
    chunks = _chunks(redp, counter)
    [c] = [c for c in chunks if "Jim Bainbridge is a senior DB2 consultant" in c.text]
    assert c.heading_path[-1] == "Authors"
    assert "Authors" in c.embed_text.splitlines()[0]


@pytest.mark.slow
def test_r_manual_sections_follow_the_outline(rintro, counter, corpus: Path) -> None:
    chunks = _chunks(rintro, counter)
    assert all(c.token_count <= counter[1] for c in chunks)
    _check_honest_paths(rintro, chunks)
    with open(corpus / "R-intro.groundtruth.pdf-outline.tsv", encoding="utf-8") as fh:
        outline = [row for row in csv.DictReader(fh, delimiter="\t") if int(row["level"]) <= 3]
    labels = {norm(part) for c in chunks for part in c.heading_path}
    found = [
        row["title"]
        for row in outline
        if any(label.endswith(norm(row["title"])) for label in labels)
    ]
    # Headings the parser found become chunk labels (parser recall is its own test).
    assert len(found) / len(outline) >= 0.8, sorted(set(r["title"] for r in outline) - set(found))
    again = _chunks(rintro, counter)
    assert [c.model_dump_json() for c in again] == [c.model_dump_json() for c in chunks]


@pytest.mark.slow
def test_r_manual_elements_needs_fewer_tokens_than_fixed_with_overlap(rintro, counter) -> None:
    elements = _chunks(rintro, counter)
    fixed = _chunks(rintro, counter, strategy="fixed", overlap_tokens=50)
    assert sum(c.token_count for c in elements) < sum(c.token_count for c in fixed)

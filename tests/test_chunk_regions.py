"""Source regions on chunks: drawn on their pages they cover the chunk's text, they
survive the store and come back from search (Python API and ``chunkweave search --json``).

Coverage is checked the way an app would highlight a hit: PyMuPDF's text inside the
region boxes (``page.get_text("text", clip=box)``) must hold the chunk's words.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import docx
import pymupdf
import pytest

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.models import Chunk, Region
from chunkweave.chunking.regions import merge_boxes
from chunkweave.parsers import ParsedDocument, ParseOptions, parse_document
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.join import join_continuations
from chunkweave.storage.config import EmbedderConfig, server_env
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.filters import SearchRequest
from chunkweave.storage.pipeline.conductor import open_pipeline
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.store import WeaviateStore
from tests.pdf_helpers import draw_ruled_table
from tests.store_helpers import CountingEmbedder, det_vector

ROOT = Path(__file__).resolve().parents[1]
CHUNKWEAVE = str(Path(sys.executable).parent / "chunkweave")
#: Share of a chunk's words its regions must show (the stored text is clean: a
#: de-hyphenated or ligature-expanded word may read differently on the page).
MIN_COVERED = 0.95
_WORD = re.compile(r"\w+")

# -- helpers ------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


def covered_share(pdf: pymupdf.Document, text: str, regions: tuple[Region, ...]) -> float:
    """Share of the words of ``text`` found in PyMuPDF's text inside ``regions``."""
    need = collections.Counter(_words(text))
    if not need:
        return 1.0
    found: collections.Counter[str] = collections.Counter()
    for region in regions:
        shown = pdf[region.page - 1].get_text("text", clip=pymupdf.Rect(region.bbox))
        found.update(_words(shown))
        found.update(_words(re.sub(r"-\n(?=\w)", "", shown)))  # words hyphenated at a line end
    return sum(min(n, found[w]) for w, n in need.items()) / sum(need.values())


def _paragraph(i: int) -> str:
    # Words unique to each paragraph ("p3w12"): a box showing another paragraph shows.
    return " ".join(f"p{i}w{j}" for j in range(42)) + "."


def build_pdf(path: Path) -> Path:
    """Page 1: a title over two columns of four paragraphs each; page 2: a 30-row table."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Where The Answer Came From", fontsize=18, fontname="hebo")
    page.insert_text((72, 110), "1 Two columns", fontsize=14, fontname="hebo")
    for col, x0 in enumerate((72, 316)):
        y = 130.0
        for k in range(4):
            rect = pymupdf.Rect(x0, y, x0 + 224, y + 120)
            left = page.insert_textbox(rect, _paragraph(col * 4 + k), fontsize=10, fontname="helv")
            y += 120 - left + 14
    page = doc.new_page()
    page.insert_text((72, 72), "2 A long table", fontsize=14, fontname="hebo")
    page.insert_text((72, 100), "Table 1: Scores of thirty runs", fontsize=10)
    top = 110
    rows = [("Run", "Score", "Time")] + [(f"run{r}", f"0.{r:02d}", f"{r}s") for r in range(1, 31)]
    draw_ruled_table(page, top, rows)
    doc.save(path)
    return path


SMALL = ChunkOptions(max_tokens=200, target_tokens=200)


def _chunk(doc: ParsedDocument, opts: ChunkOptions = SMALL) -> list[Chunk]:
    return chunk_document(doc, opts, ApproxTokenCounter(), doc_id="doc")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_pdf(tmp_path_factory.mktemp("regions") / "two-columns.pdf")


# -- pure ---------------------------------------------------------------------------------


def test_boxes_merge_down_a_column_but_not_across_other_text():
    col1 = [(72.0, 100.0, 290.0, 200.0), (72.0, 210.0, 290.0, 300.0)]
    col2 = [(316.0, 100.0, 540.0, 200.0)]
    # Down one column: one box; on into the next column, the union would cover
    # col1's second paragraph (another chunk's): a second box.
    assert merge_boxes(col1, col2) == [(72.0, 100.0, 290.0, 300.0)]
    assert merge_boxes([col1[1], col2[0]], [col1[0]]) == [col1[1], col2[0]]
    # Nothing else on the page: the union is fine.
    assert merge_boxes([col1[1], col2[0]], []) == [(72.0, 100.0, 540.0, 300.0)]
    # Neighbours whose line boxes touch (by less than the tolerance) do not split it.
    touching = [(72.0, 299.0, 290.0, 320.0)]
    assert merge_boxes(col1, touching) == [(72.0, 100.0, 290.0, 300.0)]
    # A box that both parts already overlap (a page-sized background) does not either.
    assert merge_boxes(col1, [(0.0, 0.0, 600.0, 800.0)]) == [(72.0, 100.0, 290.0, 300.0)]


def test_synthetic_regions_cover_their_chunk_and_show_no_other_text(synthetic):
    doc = parse_document(synthetic, ParseOptions())
    chunks = _chunk(doc)
    pdf = pymupdf.open(synthetic)
    assert [c.type for c in chunks].count("table") >= 2  # the table was split by rows
    for chunk in chunks:
        assert chunk.regions, chunk.text[:60]
        assert {r.page for r in chunk.regions} == set(chunk.pages)
        assert covered_share(pdf, chunk.text, chunk.regions) >= MIN_COVERED, chunk.text[:60]
        if chunk.type == "table":
            continue  # a row group shows its whole table (elements carry no row boxes)
        own = set(_words(chunk.text))
        for region in chunk.regions:
            shown = pdf[region.page - 1].get_text("text", clip=pymupdf.Rect(region.bbox))
            assert set(_words(shown)) <= own, (chunk.text[:60], region)
    # The first chunk runs from the full-width title down column 1: the title's box and
    # the column's are apart, as one union box would show column 2's paragraphs.
    first = chunks[0]
    assert "p0w0" in first.text and "p4w0" not in first.text
    assert len([r for r in first.regions if r.page == 1]) == 2


def test_table_row_groups_show_the_table_and_its_caption(synthetic):
    doc = parse_document(synthetic, ParseOptions())
    table = next(e for e in doc.elements if e.type == "table")
    caption = next(e for e in doc.elements if e.type == "caption")
    assert table.bbox is not None and caption.bbox is not None
    parts = [c for c in _chunk(doc) if c.type == "table"]
    assert len(parts) >= 2 and parts[0].table_row_start == 0
    for part in parts:
        [region] = part.regions  # caption and table merge: nothing lies between them
        x0, y0, x1, y1 = region.bbox
        assert region.page == table.page
        assert x0 <= min(table.bbox[0], caption.bbox[0]) and y0 <= caption.bbox[1]
        assert x1 >= max(table.bbox[2], caption.bbox[2]) and y1 >= table.bbox[3]


def test_regions_do_not_change_chunk_ids(synthetic):
    doc = parse_document(synthetic, ParseOptions())

    def moved(dx: float, dy: float) -> ParsedDocument:
        elements = tuple(
            e.model_copy(
                update={"bbox": (e.bbox[0] + dx, e.bbox[1] + dy, e.bbox[2] + dx, e.bbox[3] + dy)}
            )
            if e.bbox
            else e
            for e in doc.elements
        )
        return doc.model_copy(update={"elements": elements})

    boxless = doc.model_copy(
        update={"elements": tuple(e.model_copy(update={"bbox": None}) for e in doc.elements)}
    )
    for opts in (SMALL, SMALL.model_copy(update={"parent_chunks": True})):
        base, shifted, bare = _chunk(doc, opts), _chunk(moved(5, 7), opts), _chunk(boxless, opts)
        assert [c.id for c in base] == [c.id for c in shifted] == [c.id for c in bare]
        assert [c.regions for c in base] != [c.regions for c in shifted]
        assert all(c.regions for c in base) and not any(c.regions for c in bare)
        section = next(c for c in base if c.type == "section") if opts.parent_chunks else None
        assert section is None or {r.page for r in section.regions} == set(section.pages)


def test_docx_chunks_have_no_regions(tmp_path):
    path = tmp_path / "plain.docx"
    document = docx.Document()
    document.add_heading("Report", level=1)
    document.add_paragraph("A paragraph of the report with some words in it.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"cell {r}{c}"
    document.save(path)
    chunks = _chunk(parse_document(path, ParseOptions()), ChunkOptions())
    assert chunks and {c.type for c in chunks} >= {"table"}
    assert all(c.regions == () for c in chunks)


#: Corpus PDFs whose elements' boxes hold all of their text (see the xfail below).
CORPUS_PDFS = [
    "multi_page.pdf",  # paragraphs and lists over 5 pages
    "redp5110_sampled.pdf",  # tables, running furniture, chunks in two boxes on a page
    "2305.03393v1-pg9.pdf",  # a results table with a caption
    "reliance.pdf",  # a multi-column brochure
    "korean-text-with-tables.pdf",  # CJK text and tables
]


@pytest.mark.parametrize("name", CORPUS_PDFS)
def test_corpus_regions_cover_their_chunk_text(corpus, name):
    path = corpus / name
    chunks = _chunk(parse_document(path, ParseOptions()), ChunkOptions(parent_chunks=True))
    pdf = pymupdf.open(path)
    short = []
    for chunk in chunks:
        assert chunk.regions and {r.page for r in chunk.regions} == set(chunk.pages)
        share = covered_share(pdf, chunk.text, chunk.regions)
        if share < MIN_COVERED:
            short.append((round(share, 3), chunk.type, chunk.text[:60]))
    assert not short


def test_a_paragraph_joined_across_a_page_break_keeps_both_parts():
    def para(order, text, page, bbox):
        return Element(type="paragraph", text=text, page=page, bbox=bbox, order=order)

    first = para(0, "The sentence runs on to the next", 1, (72.0, 700.0, 540.0, 720.0))
    footer = Element(type="page_footer", text="1", page=1, bbox=(300, 760, 310, 770), order=1)
    rest = para(2, "page and ends there.", 2, (72.0, 72.0, 300.0, 86.0))
    joined = list(join_continuations(iter([first, footer, rest])))
    assert [e.type for e in joined] == ["paragraph", "page_footer"]
    assert joined[0].page == 1 and joined[0].bbox == first.bbox
    assert joined[0].continued == ((2, rest.bbox),)
    doc = ParsedDocument(
        path="x.pdf", format="pdf", sha1="0" * 40, elements=tuple(joined), page_count=2
    )
    [chunk] = _chunk(doc, ChunkOptions())
    assert chunk.pages == (1, 2) and (chunk.page_start, chunk.page_end) == (1, 2)
    assert [r.page for r in chunk.regions] == [1, 2]
    assert chunk.regions[1].bbox == (72.0, 72.0, 300.0, 86.0)


def test_continued_paragraphs_are_covered(corpus):
    path = corpus / "multi-column-2p.pdf"
    pdf = pymupdf.open(path)
    chunks = _chunk(parse_document(path, ParseOptions()), ChunkOptions())
    assert all(covered_share(pdf, c.text, c.regions) >= MIN_COVERED for c in chunks)


# -- real server --------------------------------------------------------------------------


@pytest.mark.integration
def test_regions_survive_upsert_and_come_back_from_search(weaviate_cfg, synthetic):
    pipeline = open_pipeline(weaviate_cfg, CountingEmbedder(), chunk_opts=SMALL)
    try:
        source = str(synthetic)
        outcome = pipeline.ingest(synthetic, source=source, doc_id="two-columns")
        assert outcome.status == "added", outcome
        chunks = pipeline.chunk(
            parse_document(synthetic, pipeline.parse_opts), source=source, doc_id="two-columns"
        )
        assert len(chunks) >= 4
        pdf = pymupdf.open(synthetic)
        texts = [set(_words(c.text)) for c in chunks]
        for i, chunk in enumerate(chunks):
            # A word of this chunk only (the longest: no stop word): ranked first.
            unique = texts[i] - set().union(*texts[:i], *texts[i + 1 :])
            word = max(unique, key=lambda w: (len(w), w))
            [hit] = pipeline.store.search(SearchRequest(word, None, k=1))
            assert hit.text == chunk.text
            assert hit.regions == chunk.regions and hit.regions
            assert covered_share(pdf, hit.text, hit.regions) >= MIN_COVERED
        # Re-chunked, the document keeps its chunk IDs: nothing is written again.
        again = pipeline.ingest(synthetic, source=source, doc_id="two-columns", force=True)
        assert again.chunks_added == 0, again
    finally:
        pipeline.store.client.collections.delete(weaviate_cfg.collection)
        pipeline.store.client.collections.delete(weaviate_cfg.ledger_collection)
        pipeline.close()


@pytest.mark.integration
def test_search_json_prints_the_regions(weaviate_cfg, synthetic):
    env = {
        **os.environ,
        **server_env(weaviate_cfg),
        "CHUNKWEAVE_WEAVIATE__COLLECTION": weaviate_cfg.collection,
        "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": weaviate_cfg.ledger_collection,
        "CHUNKWEAVE_EMBEDDER__KIND": "none",  # keyword search: no model to load
    }
    ingest = [CHUNKWEAVE, "ingest", str(synthetic), "--workers", "1", "--json"]
    run = subprocess.run(ingest, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    search = [CHUNKWEAVE, "search", "p5w7", "-k", "1", "--json"]
    found = subprocess.run(search, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stderr
    [hit] = json.loads(found.stdout)
    assert "p5w7" in hit["text"]
    regions = tuple(Region.model_validate(r) for r in hit["regions"])
    assert regions and all(set(r) == {"page", "bbox"} for r in hit["regions"])
    assert covered_share(pymupdf.open(synthetic), hit["text"], regions) >= MIN_COVERED
    # The Python search API returns the same regions.
    embedder = make_embedder(EmbedderConfig(kind="none"))
    store = WeaviateStore.open(weaviate_cfg, EmbedderIdentity(embedder.name, embedder.dimension))
    try:
        [api_hit] = store.search(SearchRequest("p5w7", None, k=1))
        assert api_hit.regions == regions
    finally:
        store.client.collections.delete(weaviate_cfg.collection)
        store.client.collections.delete(weaviate_cfg.ledger_collection)
        store.close()


@pytest.mark.integration
@pytest.mark.integration
def test_an_edit_that_moves_a_chunk_on_its_page_updates_its_regions(weaviate_cfg, synthetic):
    embedder = CountingEmbedder()
    pipeline = open_pipeline(weaviate_cfg, embedder, chunk_opts=SMALL)
    try:
        doc = parse_document(synthetic, pipeline.parse_opts)
        pipeline.ingest_parsed(doc, source=str(synthetic), doc_id="moved")
        # The same text 20 points lower on its page (a line inserted above it).
        lower = tuple(
            e.model_copy(update={"bbox": (e.bbox[0], e.bbox[1] + 20, e.bbox[2], e.bbox[3] + 20)})
            if e.bbox
            else e
            for e in doc.elements
        )
        edited = doc.model_copy(update={"elements": lower, "sha1": "e" * 40})
        embedded = len(embedder.embedded)
        outcome = pipeline.ingest_parsed(edited, source=str(synthetic), doc_id="moved")
        assert outcome.chunks_added == 0  # same IDs: nothing re-embedded
        assert len(embedder.embedded) == embedded
        chunk = pipeline.chunk(edited, source=str(synthetic), doc_id="moved")[0]
        [hit] = pipeline.store.search(SearchRequest("p0w10", None, k=1))
        assert hit.regions == chunk.regions
        assert (hit.uuid, chunk.chunk_index) == (chunk_uuid(chunk.id), 0)
        # Written again with the vector it was stored with.
        stored = pipeline.store.vectors([hit.uuid])[hit.uuid]
        assert stored == pytest.approx(det_vector(chunk.embed_text, 16), abs=1e-6)
        # The first chunk's text removed: every later chunk moves up one index.
        first = set(chunk.element_orders)
        shorter = tuple(e for e in lower if e.order not in first)
        cut = edited.model_copy(update={"elements": shorter, "sha1": "f" * 40})
        outcome = pipeline.ingest_parsed(cut, source=str(synthetic), doc_id="moved")
        assert (outcome.chunks_added, outcome.chunks_deleted) == (0, 1)
        now = pipeline.chunk(cut, source=str(synthetic), doc_id="moved")
        stored_at = pipeline.store.positions([chunk_uuid(c.id) for c in now])
        assert [stored_at[chunk_uuid(c.id)].chunk_index for c in now] == list(range(len(now)))
        assert len(embedder.embedded) == embedded
    finally:
        pipeline.store.client.collections.delete(weaviate_cfg.collection)
        pipeline.store.client.collections.delete(weaviate_cfg.ledger_collection)
        pipeline.close()

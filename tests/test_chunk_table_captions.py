"""Table captions by label and place; row groups as large as the budget allows."""

from __future__ import annotations

import statistics

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.context import context_lines
from chunkweave.parsers.elements import Element
from chunkweave.parsers.structure import finalize
from tests.chunk_helpers import make_doc

ROWS = (("Year", "Total"), *((str(1990 + i), str(100 + i)) for i in range(6)))


def _pdf(type: str, text: str, page: int, y0: float, y1: float, **kw) -> Element:
    return Element(type=type, text=text, page=page, bbox=(40.0, y0, 560.0, y1), order=0, **kw)


def _table(page: int, y0: float = 63.0) -> Element:
    text = "\n".join("\t".join(r) for r in ROWS)
    return _pdf("table", text, page, y0, y0 + 300, rows=ROWS, header_rows=1)


def _by_order(els: tuple[Element, ...]) -> dict[int, Element]:
    return {e.order: e for e in els}


def test_a_running_header_with_a_label_above_a_table_is_its_caption() -> None:
    # The caption repeats over the next page's part ("—Continued"), so it was typed
    # a running header: it is the table's caption, its second line joined to it.
    els = finalize(
        [
            _pdf("page_header", "Table 14. Graduates by state: School years 2003", 1, 38, 47),
            _pdf("page_header", "through 2021", 1, 49, 57),
            _table(1),
            _pdf("paragraph", "See notes at end of table.", 1, 370, 378),
            _pdf("page_header", "Table 14. Graduates by state—Continued", 2, 38, 47),
            _table(2, 55),
        ]
    )
    orders = _by_order(els)
    captions = [e for e in els if e.type == "caption"]
    assert [c.text for c in captions] == [
        "Table 14. Graduates by state: School years 2003 through 2021",
        "Table 14. Graduates by state—Continued",
    ]
    assert all(orders[c.ref].type == "table" for c in captions if c.ref is not None)
    assert [orders[c.ref].page for c in captions if c.ref is not None] == [1, 2]
    assert finalize(els) == els  # idempotent


def test_a_note_under_a_table_is_not_the_next_tables_caption() -> None:
    doc = make_doc(
        list(
            finalize(
                [
                    _table(1),
                    _pdf("paragraph", "See notes at end of table.", 1, 370, 378),
                    _table(2),
                ]
            )
        )
    )
    chunks = chunk_document(doc, ChunkOptions(), ApproxTokenCounter(), doc_id="d")
    assert all(c.caption is None for c in chunks if c.type == "table")


def test_a_table_caption_closes_the_section_of_a_heading_that_captions_a_table() -> None:
    els = finalize(
        [
            _pdf("heading", "Table 17. Pupil/teacher ratios", 1, 38, 57, level=1),
            _table(1),
            _pdf("caption", "Table 18. Current expenditures", 2, 38, 57),
            _table(2),
            _pdf("page_header", "Table 19. Expenditures per pupil", 3, 38, 57),
            _table(3),
        ]
    )
    tables = [e for e in els if e.type == "table"]
    assert tables[0].heading_path == ("Table 17. Pupil/teacher ratios",)
    assert tables[1].heading_path == () and tables[2].heading_path == ()
    heading = next(e for e in els if e.type == "heading")
    assert heading.ref == tables[0].order  # still a heading, and the table's caption
    doc = make_doc(list(els), title=None)
    chunks = chunk_document(doc, ChunkOptions(), ApproxTokenCounter(), doc_id="d")
    table_chunks = [c for c in chunks if c.type == "table"]
    assert [c.caption for c in table_chunks] == [
        "Table 17. Pupil/teacher ratios",
        "Table 18. Current expenditures",
        "Table 19. Expenditures per pupil",
    ]
    # The caption is said once in the embed text, not again after the same heading.
    assert table_chunks[0].embed_text.count("Table 17.") == 1


def test_a_caption_read_after_its_table_is_found_by_position() -> None:
    # Reading order put the label after the table it sits above.
    els = finalize(
        [
            _pdf("caption", "Table 1: Sizes", 1, 40, 52),
            _table(1, 60),
            _table(1, 420),
            _pdf("paragraph", "Source: a survey of counts and sizes.", 1, 365, 375),
            _pdf("caption", "Table 2: Counts", 1, 400, 412),
        ]
    )
    orders = _by_order(els)
    links = {e.text: orders[e.ref].bbox for e in els if e.type == "caption" and e.ref is not None}
    assert links["Table 2: Counts"] is not None and links["Table 2: Counts"][1] == 420


def test_caption_is_not_repeated_after_a_path_that_ends_with_it() -> None:
    assert context_lines(None, ("Table 3. Costs",), "Table 3. Costs") == ["Table 3. Costs"]
    assert context_lines(None, ("Costs",), "Table 3. Costs") == ["Costs", "Table 3. Costs"]


def test_row_groups_hold_as_many_rows_as_the_embed_text_allows() -> None:
    # Rows cost more embedded (labelled cells) than stored (a Markdown line): sized
    # on the larger of the two per row plus the stored header line, tables with a
    # long header got a few rows a chunk though many more fit.
    header = tuple(f"heading {i} " + " ".join(f"w{i}{k}" for k in range(12)) for i in range(3))
    rows = (header, *(tuple(f"{r}{c}" for c in range(3)) for r in range(40)))
    doc = make_doc([Element(type="table", text="x", rows=rows, header_rows=1, order=0)])
    opts = ChunkOptions(max_tokens=256)
    chunks = chunk_document(doc, opts, ApproxTokenCounter(), doc_id="d")
    sizes = [c.table_row_end - c.table_row_start for c in chunks if c.type == "table"]
    assert all(c.token_count <= 256 for c in chunks)
    assert statistics.median(sizes) >= 4  # 3 before

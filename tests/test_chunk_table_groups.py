"""Tables: row groups as few as greedy filling but even in size; plain title lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.row_groups import balanced_row_groups
from tests.chunk_helpers import el, make_doc

ROWS = (("Name", "Size"), ("alpha", "1"), ("beta", "2"))


def _chunks(elements):
    doc = make_doc([el("heading", "1 Data", level=1), *elements])
    return chunk_document(doc, ChunkOptions(), ApproxTokenCounter(), doc_id="d")


def _groups(costs: list[int], starts: list[int]) -> list[list[int]]:
    ends = [*starts[1:], len(costs)]
    return [costs[s:e] for s, e in zip(starts, ends, strict=True)]


def _greedy_count(costs: list[int], rooms: tuple[int, int]) -> int:
    count, used, first = 1, 0, True
    for i, cost in enumerate(costs):
        room = rooms[0] if first else rooms[1]
        if i > 0 and used > 0 and used + cost > room:
            count, used, first = count + 1, 0, False
        used += cost
    return count


def test_no_runt_group_at_the_end() -> None:
    # Twenty equal rows, room for seventeen: greedy gives 17 + 3; balanced 10 + 10.
    starts = balanced_row_groups([10] * 20, (170, 170))
    assert [len(g) for g in _groups([10] * 20, starts)] == [10, 10]


@given(
    costs=st.lists(st.integers(1, 60), min_size=1, max_size=40),
    first=st.integers(40, 200),
    extra=st.integers(0, 40),
)
def test_groups_are_contiguous_fit_and_no_more_than_greedy(
    costs: list[int], first: int, extra: int
) -> None:
    rooms = (first, first + extra)
    starts = balanced_row_groups(costs, rooms)
    assert starts[0] == 0 and starts == sorted(set(starts))
    groups = _groups(costs, starts)
    assert sum(groups, []) == costs
    assert len(groups) <= _greedy_count(costs, rooms)
    for index, group in enumerate(groups):
        room = rooms[0] if index == 0 else rooms[1]
        assert len(group) == 1 or sum(group) <= room


def test_plain_title_line_before_a_table_travels_as_its_caption() -> None:
    chunks = _chunks(
        [
            el("paragraph", "Some prose about the data, long enough to stand alone here."),
            el("paragraph", "A table with the sizes of things"),
            el("table", "x", rows=ROWS, header_rows=1),
        ]
    )
    [table] = [c for c in chunks if c.type == "table"]
    assert table.caption == "A table with the sizes of things"
    assert table.text.startswith("A table with the sizes of things\n")
    prose = " ".join(c.text for c in chunks if c.type != "table")
    assert "A table with the sizes" not in prose and "Some prose about" in prose


@pytest.mark.parametrize(
    "before",
    [
        el("paragraph", "A lead-in paragraph that goes on. " * 8),  # too long for a title
        el("paragraph", "Two lines\nof text"),
        el("list_item", "an item", level=1),
        el("paragraph", "12"),
    ],
)
def test_other_text_before_a_table_stays_prose(before) -> None:
    chunks = _chunks([before, el("table", "x", rows=ROWS, header_rows=1)])
    [table] = [c for c in chunks if c.type == "table"]
    assert table.caption is None
    assert not table.text.startswith(before.text.split()[0])


def test_a_real_caption_wins_over_a_title_line() -> None:
    chunks = _chunks(
        [
            el("paragraph", "Sizes of things"),
            el("table", "x", rows=ROWS, header_rows=1),
            el("caption", "Table 1. Sizes"),
        ]
    )
    [table] = [c for c in chunks if c.type == "table"]
    assert table.caption == "Table 1. Sizes"


_cell = st.text(alphabet=st.sampled_from("ab |\n\t<>&\"'x1"), max_size=6)


@given(
    width=st.integers(1, 4),
    header_rows=st.integers(0, 2),
    data=st.data(),
)
def test_table_parts_render_like_their_rows_alone(width: int, header_rows: int, data) -> None:
    """A part cut from the whole table's rendering equals rendering the part's rows."""
    from chunkweave.chunking.tables import Tables
    from chunkweave.chunking.tokens import Meter
    from chunkweave.chunking.units import TableUnit
    from chunkweave.parsers.elements import table_to_html, table_to_markdown

    n = data.draw(st.integers(header_rows + 1, header_rows + 6))
    ragged = data.draw(st.booleans())
    rows = tuple(
        tuple(
            data.draw(_cell) for _ in range(data.draw(st.integers(1, width)) if ragged else width)
        )
        for _ in range(n)
    )
    unit = TableUnit(
        element=el("table", "x", rows=rows, header_rows=header_rows),
        rows=rows,
        header_rows=header_rows,
        caption=None,
        caption_order=None,
        path=(),
        section=0,
    )
    count = n - header_rows
    start = data.draw(st.integers(0, count - 1))
    end = data.draw(st.integers(start + 1, count))
    part_rows = rows[:header_rows] + rows[header_rows + start : header_rows + end]
    tables = Tables(Meter(ApproxTokenCounter()))
    tables.body(unit, 0, count, "markdown")  # the whole table first, as chunking does
    assert tables.body(unit, start, end, "markdown") == table_to_markdown(part_rows, header_rows)
    assert tables.body(unit, start, end, "html") == table_to_html(part_rows, header_rows)


def test_row_groups_are_sized_on_the_stored_rendering() -> None:
    # Escaped HTML rows cost more than their cells: sized on the cells, groups came
    # out too large, and halving them afterwards left pieces of uneven size.
    rows = (("Key", "Value"), *((f"k{i} <a>", "x & y") for i in range(40)))
    doc = make_doc([el("heading", "1 Data", level=1), el("table", "x", rows=rows, header_rows=1)])
    opts = ChunkOptions(table_format="html", max_tokens=512)
    chunks = chunk_document(doc, opts, ApproxTokenCounter(), doc_id="d")
    sizes = [c.table_row_end - c.table_row_start for c in chunks if c.type == "table"]
    assert len(sizes) > 1 and max(sizes) - min(sizes) <= 1

"""The ICDAR 2013 table-structure measure on small hand-made tables (pure logic)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.adjacency import (
    DOWN,
    RIGHT,
    cell_key,
    grid_cells,
    gt_relations,
    relations,
    score_adjacency,
)
from bench.groundtruth import GtCell, GtTable
from bench.views import Item


def grid_table(rows: list[list[str]], page: int | None = 1) -> GtTable:
    grid = tuple(tuple(r) for r in rows)
    cells = tuple(c for r in grid for c in r if c)
    return GtTable(len(grid), max(len(r) for r in grid), cells, page, grid=grid)


def item(rows: list[list[str]], page: int | None = 1) -> Item:
    grid = tuple(tuple(r) for r in rows)
    return Item("table", "\n".join("\t".join(r) for r in grid), page=page, rows=grid)


SHEET = [["region", "2019", "2020"], ["north", "157", "42"], ["south", "276", "31"]]


def test_relations_of_a_plain_grid() -> None:
    rels = relations(grid_cells(SHEET))
    # 3 rows x 2 horizontal + 3 columns x 2 vertical neighbours.
    assert sum(rels.values()) == 12
    assert rels[("region", "2019", RIGHT)] == 1
    assert rels[("2019", "157", DOWN)] == 1
    assert ("region", "157", DOWN) not in rels


def test_blank_cells_are_skipped_to_the_next_neighbour() -> None:
    rels = relations(grid_cells([["a", "", "b"], ["", "", "c"]]))
    assert rels == Counter({("a", "b", RIGHT): 1, ("b", "c", DOWN): 1})


def test_spanning_cell_relates_to_every_cell_along_its_side() -> None:
    cells = [
        GtCell(0, 0, "Actual", 1, 2),
        GtCell(0, 2, "Projected"),
        GtCell(1, 0, "2003"),
        GtCell(1, 1, "2004"),
        GtCell(1, 2, "2010"),
    ]
    rels = relations(cells)
    assert rels[("actual", "2003", DOWN)] == 1
    assert rels[("actual", "2004", DOWN)] == 1
    assert rels[("actual", "projected", RIGHT)] == 1
    assert sum(rels.values()) == 6  # + 2003>2004, 2004>2010, projected>2010


def test_repeated_text_in_a_grid_reads_as_a_span() -> None:
    cells = grid_cells([["Actual", "Actual", "Projected"], ["3", "4", "5"]])
    assert GtCell(0, 0, "Actual", 1, 2) in cells
    assert [c.col_span for c in cells if c.row == 1] == [1, 1, 1]
    # A value spanning two rows, written in both, is one cell: no relation to itself.
    rels = relations(grid_cells([["Delhi", "8"], ["Rajasthan", "8"], ["Gujarat", "6"]]))
    assert ("8", "8", DOWN) not in rels
    assert rels[("rajasthan", "8", RIGHT)] == 1
    # A row-spanning key repeated down its column is one cell.
    keys = grid_cells([["GMC", "a"], ["GMC", "b"], ["HMO", "c"]])
    assert GtCell(0, 0, "GMC", 2, 1) in keys


def test_cell_key_normalises_and_keeps_placeholders() -> None:
    assert cell_key("North<br>South **Total**") == "north south total"
    assert cell_key(" – ") == "–"
    assert cell_key("  ") == ""


def test_right_to_left_cells_compare_in_either_order() -> None:
    logical = "اسمي سلطان"
    visual = logical[::-1]
    assert cell_key(logical) == cell_key(visual)
    gt = [grid_table([[visual, "1234"], ["x", "y"]])]
    assert score_adjacency([item([[logical, "1234"], ["x", "y"]])], gt).f1 == pytest.approx(1.0)


def test_perfect_structure_scores_one_and_stacked_lines_do_not() -> None:
    gt = [grid_table(SHEET)]
    assert score_adjacency([item(SHEET)], gt).f1 == pytest.approx(1.0)
    # The failure of issue 31: each column's values stacked in one cell.
    collapsed = [["region", "2019", "2020"], ["north south", "157 276", "42 31"]]
    score = score_adjacency([item(collapsed)], gt)
    assert score.tp == 2  # only region>2019 and 2019>2020 survive
    assert score.recall == pytest.approx(2 / 12)


def test_tables_elsewhere_are_not_compared() -> None:
    gt = [grid_table(SHEET)]
    other = item([["foo", "bar"], ["baz", "qux"]])
    wrong_page = item(SHEET, page=2)
    score = score_adjacency([item(SHEET), other, wrong_page], gt)
    assert (score.tp, score.n_pred, score.n_gt) == (12, 12, 12)


def test_a_split_table_is_pooled_per_page() -> None:
    gt = [grid_table(SHEET)]
    top, bottom = item(SHEET[:2]), item(SHEET[2:])
    score = score_adjacency([top, bottom], gt)
    # Lost: the three vertical relations across the cut.
    assert (score.tp, score.n_pred, score.n_gt) == (9, 9, 12)
    assert score.precision == pytest.approx(1.0)


def test_missing_table_scores_zero() -> None:
    score = score_adjacency([], [grid_table(SHEET)])
    assert (score.tp, score.n_pred, score.n_gt, score.f1) == (0, 0, 12, 0.0)


def test_spanning_header_check() -> None:
    spanned = (
        GtCell(0, 1, "Actual", 1, 2),
        GtCell(1, 1, "2003"),
        GtCell(1, 2, "2004"),
        GtCell(2, 0, "Maine"),
        GtCell(2, 1, "13"),
        GtCell(2, 2, "14"),
    )
    gt = [GtTable(3, 3, tuple(c.text for c in spanned), 1, spanned=spanned)]
    right = item([["", "Actual", "Actual"], ["", "2003", "2004"], ["Maine", "13", "14"]])
    once = item([["", "Actual", ""], ["", "2003", "2004"], ["Maine", "13", "14"]])
    assert score_adjacency([right], gt).spans_ok == 1
    assert score_adjacency([right], gt).f1 == pytest.approx(1.0)
    assert (score_adjacency([once], gt).spans_ok, score_adjacency([once], gt).spans) == (0, 1)
    assert gt_relations(gt[0])[("actual", "2004", DOWN)] == 1


def test_grid_ground_truth_header_label_spans_its_blanks() -> None:
    # Camelot's convention: the spanning label in the first cell, the rest blank.
    gt = grid_table(
        [["State", "Status", "", ""], ["", "Illiterate", "Read", "Std"], ["K", "1", "2", "3"]]
    )
    rels = gt_relations(gt)
    assert rels[("status", "read", DOWN)] == 1
    assert rels[("status", "std", DOWN)] == 1
    # A blank over a blank stays blank; data rows are left alone.
    assert ("state", "k", DOWN) in rels

"""The benchmarks' ground-truth loaders: docling JSON, PDF outlines, ``.tables.json``."""

from __future__ import annotations

import json
from pathlib import Path

from bench.groundtruth import GtHeading, GtTable, load_docling_json, load_groundtruth
from bench.markdown_items import markdown_items


def test_load_docling_json_built(tmp_path: Path) -> None:
    doc = {
        "body": {"children": [{"$ref": "#/texts/0"}, {"$ref": "#/groups/0"}]},
        "groups": [
            {"self_ref": "#/groups/0", "children": [{"$ref": "#/texts/1"}, {"$ref": "#/tables/0"}]}
        ],
        "texts": [
            {"self_ref": "#/texts/0", "label": "section_header", "level": 2, "text": "Intro"},
            {"self_ref": "#/texts/1", "label": "text", "text": "Body text"},
            {
                "self_ref": "#/texts/2",
                "label": "page_footer",
                "text": "Page 1",
                "content_layer": "furniture",
            },
        ],
        "tables": [
            {
                "self_ref": "#/tables/0",
                "prov": [{"page_no": 4}],
                "data": {
                    "num_rows": 2,
                    "num_cols": 1,
                    "table_cells": [{"text": "a"}, {"text": "b"}],
                },
            }
        ],
    }
    path = tmp_path / "x.groundtruth.json"
    path.write_text(json.dumps(doc))
    gt = load_docling_json(path, tmp_path / "x.pdf")
    assert gt.headings == [GtHeading("Intro", 2, None)]
    assert gt.tables == [GtTable(2, 1, ("a", "b"), 4)]
    assert gt.furniture == ["Page 1"]
    assert gt.stream == [(True, "Intro"), (False, "Body text"), (False, "a b")]
    assert not gt.levels_informative


def test_corpus_groundtruth_files_agree(corpus: Path) -> None:
    """The JSON loader finds as many tables and headings as the GT Markdown shows."""
    doc = corpus / "redp5110_sampled.pdf"
    gt = load_groundtruth(doc)
    assert gt is not None and gt.markdown is not None
    md_items = markdown_items(gt.markdown)
    assert len(gt.tables) == sum(1 for i in md_items if i.kind == "table")
    assert len(gt.headings) == sum(1 for i in md_items if i.kind == "heading")
    assert gt.furniture  # running footers are furniture in the GT


def test_corpus_outline_loader(corpus: Path) -> None:
    doc = corpus / "R-intro.pdf"
    gt = load_groundtruth(doc)
    assert gt is not None and gt.source == "outline"
    tsv = corpus / "R-intro.groundtruth.pdf-outline.tsv"
    assert len(gt.headings) == len(tsv.read_text().strip().splitlines()) - 1
    assert gt.levels_informative


def test_tables_json_loads_shapes_and_cells(tmp_path: Path) -> None:
    doc = tmp_path / "t.pdf"
    doc.write_bytes(b"%PDF-1.4")
    data = {
        "source": "x",
        "complete": True,
        "tables": [{"page": 2, "rows": [["a", ""], ["b", "c"], ["d"]]}],
    }
    (tmp_path / "t.groundtruth.tables.json").write_text(json.dumps(data), encoding="utf-8")
    gt = load_groundtruth(doc)
    assert gt is not None and gt.source == "tables" and gt.tables_known
    assert gt.tables == [GtTable(3, 2, ("a", "b", "c", "d"), 2)]


def test_tables_json_next_to_an_outline_is_scored_too(tmp_path: Path) -> None:
    doc = tmp_path / "t.pdf"
    doc.write_bytes(b"%PDF-1.4")
    (tmp_path / "t.groundtruth.pdf-outline.tsv").write_text(
        "level\ttitle\tpage\n1\tIntro\t1\n", encoding="utf-8"
    )
    data = {"tables": [{"page": 1, "rows": [["a", "b"]]}]}
    (tmp_path / "t.groundtruth.tables.json").write_text(json.dumps(data), encoding="utf-8")
    gt = load_groundtruth(doc)
    assert gt is not None and gt.source == "outline" and gt.tables_known
    assert [h.text for h in gt.headings] == ["Intro"] and len(gt.tables) == 1

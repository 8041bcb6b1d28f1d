"""Fan-out of large PDFs: page ranges and the join (the worker run is in test_worker_e2e)."""

from __future__ import annotations

from pathlib import Path

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.worker.tasks.fanout import join_parts, plan_ranges


def test_plan_ranges_cover_every_page_once():
    assert plan_ranges(5, 2) == [(1, 2), (3, 4), (5, 5)]
    assert plan_ranges(4, 2) == [(1, 2), (3, 4)]
    assert plan_ranges(1, 100) == [(1, 1)]
    for pages in range(1, 40):
        for size in range(1, 12):
            covered = [p for a, b in plan_ranges(pages, size) for p in range(a, b + 1)]
            assert covered == list(range(1, pages + 1))


def test_joined_parts_equal_whole_parse(corpus: Path):
    # Headings on early pages must head paragraphs of later parts after the join.
    path = corpus / "multi_page.pdf"
    whole = parse_document(path, ParseOptions())
    assert whole.page_count is not None and whole.page_count > 2
    parts = [
        parse_document(path, ParseOptions(page_range=r)) for r in plan_ranges(whole.page_count, 2)
    ]
    joined = join_parts(parts, source=str(path))
    assert [e.model_dump() for e in joined.elements] == [e.model_dump() for e in whole.elements]
    assert [e.order for e in joined.elements] == list(range(len(joined.elements)))
    crossing = [e for e in joined.elements if e.page and e.page > 2 and e.heading_path]
    assert crossing, "expected later-part elements under earlier headings"

"""The inspector's pure logic: heading tree, left-out elements, colours, warnings, frames."""

from __future__ import annotations

import pymupdf
import pytest

from chunkweave.chunking import Chunk
from chunkweave.parsers.elements import Element
from chunkweave.parsers.page_images import PageFrame
from chunkweave.worker.inspect.report import build_report, chunk_colour, heading_tree, left_out
from chunkweave.worker.inspect.write import _route_label


def _chunk(i: int, path: tuple[str, ...], orders: tuple[int, ...], **kw: object) -> Chunk:
    return Chunk(
        id=f"c{i}", doc_id="d", source="s", text=f"text {i}", embed_text=f"ctx\n\ntext {i}",
        type="text", heading_path=path, element_orders=orders, chunk_index=i, token_count=3,
        content_sha1="x", doc_sha1="y", chunker="elements/v4", **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def test_heading_tree_nests_paths_and_lists_merged_sections() -> None:
    chunks = [
        _chunk(0, (), ()),
        _chunk(1, ("A",), ()),
        _chunk(2, ("A", "A.1"), (), section_headings=("A.2",)),
        _chunk(3, ("B",), ()),
    ]
    tree = heading_tree(chunks)
    assert [n["title"] for n in tree] == ["(no heading)", "A", "B"]
    a = tree[1]
    assert a["chunks"] == [1]
    assert [(n["title"], n["chunks"]) for n in a["children"]] == [("A.1", [2])]
    assert [(n["title"], n["chunks"]) for n in a["children"][0]["children"]] == [("A.2", [2])]


def test_left_out_names_furniture_navigation_and_the_rest() -> None:
    els = [
        Element(type="page_header", text="Running head", page=1, bbox=(0, 0, 10, 5), order=0),
        Element(type="paragraph", text="Body.", page=1, bbox=(0, 10, 10, 20), order=1),
        Element(
            type="paragraph",
            text="Intro . . . . . . . 3\nMethods . . . . . . 7",
            page=1,
            bbox=(0, 30, 10, 40),
            order=2,
        ),  # fmt: skip
        Element(
            type="figure",
            text="",
            page=2,
            bbox=(0, 0, 5, 5),
            order=3,
            continued=((3, (1, 1, 2, 2)),),
        ),  # fmt: skip
        Element(type="paragraph", text="no box", order=4),
        Element(type="caption", text="Dropped.", page=4, bbox=(0, 0, 5, 5), order=5),
    ]
    out = left_out(els, [_chunk(0, (), (1,))])
    assert [(lo.page, lo.kind) for lo in out] == [
        (1, "furniture"),
        (1, "navigation"),
        (2, "empty"),
        (3, "empty"),
        (4, "other"),
    ]
    assert "Running head" in out[0].label and "page header" in out[0].label


def test_colours_of_neighbouring_chunks_differ() -> None:
    colours = [chunk_colour(i) for i in range(40)]
    assert all(len(c) == 7 and c.startswith("#") for c in colours)
    assert all(a != b for a, b in zip(colours, colours[1:], strict=False))
    assert len(set(colours)) == len(colours)


def test_page_warnings_are_put_on_their_page() -> None:
    report = build_report(
        [], source="/x/a.pdf", format="pdf",
        warnings=["page 3: unreadable (boom)", "file was damaged; MuPDF repaired it",
                  "page 12 has no text layer and OCR is off"],
    )  # fmt: skip
    assert report.page_warnings == {
        3: ["page 3: unreadable (boom)"],
        12: ["page 12 has no text layer and OCR is off"],
    }
    assert report.warnings == ["file was damaged; MuPDF repaired it"]
    assert report.title == "a.pdf"


def test_route_labels() -> None:
    assert _route_label("heuristic:plain", False) == "fast (heuristics) (plain)"
    assert _route_label("model:complex", False) == "layout model (complex)"
    assert _route_label("heuristic:plain", True) == "OCR + fast (heuristics) (plain)"
    assert _route_label(None, False) == ""


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_frame_maps_a_box_onto_the_shown_page(rotation: int) -> None:
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=800)
    page.set_rotation(rotation)
    frame = PageFrame.of(page)
    x0, y0, x1, y1 = frame.fractions((60, 80, 120, 160))  # top-left corner region
    # Where the unrotated top-left corner is shown after turning the page clockwise.
    corner = {0: (0, 0), 90: (1, 0), 180: (1, 1), 270: (0, 1)}[rotation]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    assert abs(cx - corner[0]) < 0.5 and abs(cy - corner[1]) < 0.5
    if rotation in (90, 270):
        assert frame.width == 800 and frame.height == 600
    assert all(0 <= v <= 1 for v in (x0, y0, x1, y1)) and x0 < x1 and y0 < y1

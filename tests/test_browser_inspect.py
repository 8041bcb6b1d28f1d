"""``chunkweave inspect`` reports opened in headless Chromium: images, overlays, panel, pixels.

The report of a corpus PDF with a table and a running header is checked against
the chunks ``chunkweave chunk`` prints for the same file: one overlay group per
chunk with regions on the page, the panel showing the clicked chunk, and each
chunk's colour drawn on its box's edges (and not beside it) in a screenshot, on
the page as printed and on a copy turned by ``/Rotate`` 90 and 270 degrees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import docx
import pymupdf
import pytest
from click.testing import CliRunner

from chunkweave.chunking import Chunk
from chunkweave.worker.cli import main
from tests.browser_helpers import (
    browser,
    decode,
    expected_box,
    has_colour,
    hex_rgb,
    save_screenshot,
)

__all__ = ["browser"]

#: One page: a running header, two sections, a ruled table with its caption.
TABLE_PDF = "2305.03393v1-pg9.pdf"


def _chunks(path: Path) -> list[Chunk]:
    result = CliRunner().invoke(main, ["chunk", str(path), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    return [Chunk.model_validate_json(line) for line in result.stdout.splitlines() if line]


def _inspect(path: Path, out: Path, *args: str) -> Path:
    result = CliRunner().invoke(main, ["inspect", str(path), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    assert out.is_file()
    return out


def _open(browser: Any, report: Path) -> Any:
    page = browser.new_page(viewport={"width": 1500, "height": 1100}, device_scale_factor=1)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on(
        "request",
        lambda req: (
            errors.append(f"request {req.url}")
            if not req.url.startswith(("file:", "data:"))
            else None
        ),
    )
    page.goto(report.as_uri())
    page.wait_for_function(
        "() => [...document.querySelectorAll('img.page-img')].slice(0, 1)"
        ".every(i => i.complete && i.naturalWidth > 0)"
    )
    page.errors = errors
    return page


@pytest.fixture(scope="module")
def table_pdf(corpus: Path) -> Path:
    return corpus / TABLE_PDF


@pytest.fixture(scope="module")
def table_report(table_pdf: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _inspect(table_pdf, tmp_path_factory.mktemp("inspect") / "report.html")


@pytest.fixture(scope="module")
def table_chunks(table_pdf: Path) -> list[Chunk]:
    return _chunks(table_pdf)


def _on_page(chunks: list[Chunk], n: int) -> dict[str, list[Chunk]]:
    return {c.id: c for c in chunks if any(r.page == n for r in c.regions)}  # type: ignore[misc]


def test_report_draws_one_overlay_group_per_chunk_on_the_page(
    browser: Any, table_report: Path, table_chunks: list[Chunk]
) -> None:
    page = _open(browser, table_report)
    natural = page.evaluate("document.querySelector('#page-1 img.page-img').naturalWidth")
    assert natural > 300
    drawn = page.evaluate(
        "[...document.querySelectorAll('#page-1 .region')].map(r => Number(r.dataset.chunk))"
    )
    with_regions = [i for i, c in enumerate(table_chunks) if any(r.page == 1 for r in c.regions)]
    assert sorted(set(drawn)) == with_regions
    assert len(drawn) == sum(1 for c in table_chunks for r in c.regions if r.page == 1)
    # The file is a table page with a running header: the table is one chunk, the
    # header is drawn greyed as left out, and nothing was fetched from the network.
    assert any(c.type == "table" for c in table_chunks)
    assert page.locator("#page-1 .leftout[data-kind='furniture']").count() >= 1
    # The page says how it was parsed (a text page: the heuristics or the layout model).
    route = page.locator("#page-1 .route").inner_text()
    assert route.startswith(("fast (heuristics)", "layout model")), route
    assert page.errors == []
    page.close()


def test_clicking_an_overlay_shows_that_chunk_in_the_panel(
    browser: Any, table_report: Path, table_chunks: list[Chunk]
) -> None:
    page = _open(browser, table_report)
    for i, chunk in enumerate(table_chunks):
        if not chunk.regions:
            continue
        overlay = page.locator(f"#page-{chunk.regions[0].page} .region[data-chunk='{i}']").first
        # Boxes drawn in the same place (a table's row groups) stack: each click at
        # the point shows the next chunk whose box holds it, so chunk i comes up
        # within as many clicks as there are boxes there.
        box = overlay.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        stacked = page.evaluate(
            "([x, y]) => [...document.querySelectorAll('.region')].filter(r => {"
            " const b = r.getBoundingClientRect();"
            " return x >= b.left && x <= b.right && y >= b.top && y <= b.bottom; }).length",
            [x, y],
        )
        seen = []
        for _ in range(stacked):
            page.mouse.click(x, y)
            seen.append(page.locator("#detail .f-id").inner_text())
            if seen[-1] == chunk.id:
                break
        assert set(seen) <= {c.id for c in table_chunks}
        assert page.locator("#detail .f-id").inner_text() == chunk.id, (i, seen)
        assert page.locator("#detail .chunk-text").inner_text() == chunk.text
        assert page.locator("#detail .f-type").inner_text() == chunk.type
        if chunk.type == "table":
            rows = page.locator("#detail table.chunk-table tr").count()
            assert rows == (chunk.table_html or "").count("<tr>") > 1
        if chunk.embed_text != chunk.text:
            marked = "".join(page.locator("#detail .chunk-embed mark").all_inner_texts())
            plain = page.evaluate(
                "[...document.querySelector('#detail .chunk-embed').childNodes]"
                ".filter(n => n.nodeType === 3).map(n => n.textContent).join('')"
            )
            assert marked.strip()
            if chunk.text in chunk.embed_text:  # the context added in front: all marked
                assert plain == chunk.text and marked + plain == chunk.embed_text
    # The heading tree lists the chunks of a heading; clicking one selects it.
    section = next(c for c in table_chunks if c.heading_path)
    page.locator("#tree button.heading", has_text=section.heading_path[-1]).first.click()
    page.locator("#node-chunks button").first.click()
    assert page.locator("#detail .f-heading-path").inner_text() == " › ".join(section.heading_path)
    page.close()


def _pixel_check(
    browser: Any, report: Path, pdf: Path, chunks: list[Chunk], shot: str | None
) -> int:
    """Check every region's colour on its edges and not 8 px outside; return regions checked."""
    page = _open(browser, report)
    if shot:
        table = next(i for i, c in enumerate(chunks) if c.type == "table")
        box = page.locator(f".region[data-chunk='{table}']").first.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        save_screenshot(page.screenshot(), shot)
    checked = 0
    for i, chunk in enumerate(chunks):
        for region in chunk.regions:
            if region.page != 1:
                continue
            # Only this chunk's boxes shown (as drawn, unselected), so a colour beside
            # the box can only be this chunk's, drawn in the wrong place.
            page.evaluate(
                "i => { for (const r of document.querySelectorAll('.region, .leftout')) {"
                " r.classList.remove('selected');"
                " r.style.display = r.dataset.chunk === String(i) ? '' : 'none'; } }",
                i,
            )
            sheet = page.locator("#page-1 .sheet")
            size = sheet.bounding_box()
            img = decode(sheet.screenshot())
            x0, y0, x1, y1 = expected_box(pdf, 1, region.bbox, (size["width"], size["height"]))
            colour = hex_rgb(
                page.locator(f"#page-1 .region[data-chunk='{i}']").first.get_attribute(
                    "data-colour"
                )
            )
            mx, my = (x0 + x1) / 2, (y0 + y1) / 2
            for x, y in ((x0 + 1, my), (x1 - 1, my), (mx, y0 + 1), (mx, y1 - 1)):
                assert has_colour(img, x, y, colour), (i, chunk.text[:40], (x, y))
            for x, y in ((x0 - 8, my), (x1 + 8, my), (mx, y0 - 8), (mx, y1 + 8)):
                assert not has_colour(img, x, y, colour, radius=1), (i, "outside", (x, y))
            checked += 1
    page.close()
    return checked


def test_overlay_colour_is_on_each_chunk_box(
    browser: Any, table_report: Path, table_pdf: Path, table_chunks: list[Chunk]
) -> None:
    checked = _pixel_check(browser, table_report, table_pdf, table_chunks, "inspector.png")
    assert checked == sum(1 for c in table_chunks for r in c.regions if r.page == 1) >= 4


@pytest.mark.parametrize("rotation", [90, 270])
def test_overlays_follow_a_rotated_page(
    browser: Any, table_pdf: Path, tmp_path: Path, rotation: int
) -> None:
    turned = tmp_path / f"turned-{rotation}.pdf"
    with pymupdf.open(table_pdf) as doc:
        doc[0].set_rotation(rotation)
        doc.save(turned)
    chunks = _chunks(turned)
    report = _inspect(turned, tmp_path / "turned.html")
    page = _open(browser, report)
    size = page.locator("#page-1 .sheet").bounding_box()
    page.close()
    assert size["width"] > size["height"]  # drawn as shown: landscape
    checked = _pixel_check(browser, report, turned, chunks, None)
    assert checked == sum(1 for c in chunks for r in c.regions if r.page == 1) >= 3


def test_docx_report_has_the_panel_and_says_there_are_no_pages(
    browser: Any, tmp_path: Path
) -> None:
    d = docx.Document()
    d.add_heading("Harbour operations", level=1)
    d.add_paragraph("Boats float on the harbour water near the old stone pier every morning.")
    d.add_heading("Feline habits", level=1)
    d.add_paragraph("Cats purr loudly and sleep in the warm afternoon sun on the porch.")
    path = tmp_path / "sample.docx"
    d.save(str(path))
    chunks = _chunks(path)
    report = _inspect(path, tmp_path / "docx.html")
    page = browser.new_page()
    page.goto(report.as_uri())
    assert "no pages" in page.locator("#note").inner_text()
    assert page.locator("img").count() == 0
    assert page.locator(".card").count() == len(chunks)
    page.locator("#tree button.heading", has_text="Feline habits").click()
    page.locator("#node-chunks button").first.click()
    cat = next(c for c in chunks if c.heading_path == ("Feline habits",))
    assert page.locator("#detail .f-id").inner_text() == cat.id
    page.close()


def test_inspect_refuses_a_file_that_is_not_a_document(tmp_path: Path) -> None:
    bad = tmp_path / "notes.pdf"
    bad.write_bytes(b"plain text, not a PDF")
    out = tmp_path / "bad.html"
    result = CliRunner().invoke(main, ["inspect", str(bad), "-o", str(out)])
    assert result.exit_code == 1
    assert "notes.pdf" in result.output
    assert not out.exists() and not list(tmp_path.glob(".bad.html.*"))


def test_report_embeds_no_external_reference(table_report: Path) -> None:
    text = table_report.read_text("utf-8")
    assert "http://" not in text.split("<script type='application/json'")[0].replace(
        "http-equiv", ""
    )
    assert "https://" not in text and "<link" not in text and " src='http" not in text
    json.loads(text.split("id='report-data'>")[1].split("</script>")[0])


def test_a_scanned_page_says_it_was_read_by_ocr(browser: Any, corpus: Path, tmp_path: Path) -> None:
    report = _inspect(corpus / "ocr_test.pdf", tmp_path / "ocr.html")
    chunks = _chunks(corpus / "ocr_test.pdf")
    page = _open(browser, report)
    assert page.locator("#page-1 .route").inner_text().startswith("OCR + ")
    drawn = page.evaluate(
        "new Set([...document.querySelectorAll('#page-1 .region')].map(r => r.dataset.chunk)).size"
    )
    assert drawn == sum(1 for c in chunks if any(r.page == 1 for r in c.regions)) >= 1
    page.close()


def test_an_encrypted_pdf_is_drawn_with_the_parse_password(
    browser: Any, table_pdf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked.pdf"
    with pymupdf.open(table_pdf) as doc:
        doc.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="s3cret", owner_pw="o")
    from chunkweave.worker.settings import get_settings

    monkeypatch.setenv("CHUNKWEAVE_PARSE__PASSWORD", "s3cret")
    get_settings.cache_clear()
    try:
        report = _inspect(locked, tmp_path / "locked.html")
    finally:
        monkeypatch.delenv("CHUNKWEAVE_PARSE__PASSWORD")
        get_settings.cache_clear()
    assert "s3cret" not in report.read_text("utf-8")
    page = _open(browser, report)
    assert page.locator("#page-1 .region").count() >= 4
    page.close()

"""Write a :class:`~chunkweave.worker.inspect.report.Report` as one self-contained HTML file.

The file holds everything it shows: the styles and the script (``assets/``) inline,
the chunks as JSON, each PDF page as a JPEG data URI that the script loads only
when the page scrolls near (so a long report opens at once). Pages are rendered
and written one at a time: memory holds one page image, not the document's.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from chunkweave.parsers.page_images import DEFAULT_DPI, Fractions, PageFrame, PdfPages
from chunkweave.worker.inspect.report import LeftOut, Report, chunk_colour

#: What the PDF parser's route names mean, for the page heads.
_ROUTE_NAMES = {"heuristic": "fast (heuristics)", "model": "layout model"}


def script_hash(source: str) -> str:
    """Return the CSP source that allows exactly this inline script (``'sha256-…'``)."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


@cache
def report_csp() -> str:
    """Return the report's Content-Security-Policy: nothing loads, no script but its own."""
    return (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {script_hash(_asset('inspector.js'))}"
    )


def inspect_csp() -> str:
    """Return the policy of a report served by the dashboard (``/ui/inspect``)."""
    return report_csp() + "; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"


@dataclass(frozen=True)
class WriteStats:
    """What a written report holds: pages drawn, regions drawn, bytes written."""

    pages: int
    regions: int
    bytes: int


def write_report(
    report: Report, out: str | Path, *, dpi: int = DEFAULT_DPI, password: str | None = None
) -> WriteStats:
    """Write ``report`` to ``out`` (replaced only once complete) and return what it holds.

    ``password`` opens an encrypted source PDF (the one it was parsed with).
    """
    out = Path(out)
    counts = {"pages": 0, "regions": 0}
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for part in iter_html(report, dpi=dpi, counts=counts, password=password):
                fh.write(part)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return WriteStats(counts["pages"], counts["regions"], out.stat().st_size)


def render_report(report: Report, *, dpi: int = DEFAULT_DPI) -> str:
    """Return ``report`` as one HTML string (see :func:`iter_html` to stream it)."""
    return "".join(iter_html(report, dpi=dpi))


def iter_html(
    report: Report,
    *,
    dpi: int = DEFAULT_DPI,
    counts: dict[str, int] | None = None,
    password: str | None = None,
) -> Iterator[str]:
    """Yield the report's HTML in parts, page by page; ``counts`` gets pages and regions."""
    counts = counts if counts is not None else {}
    counts.setdefault("pages", 0)
    counts.setdefault("regions", 0)
    esc = html.escape
    yield (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{report_csp()}\">"
        f"<title>{esc(report.title)} · chunkweave inspect</title>"
        f"<style>{_asset('inspector.css')}</style></head><body>"
    )
    yield _header(report)
    yield "<main><div id='pages'>"
    if report.source_pdf is not None:
        yield from _pages(report, dpi, counts, password)
    else:
        yield _cards(report)
    yield "</div><aside id='panel'>"
    yield (
        "<section id='tree-box'><h2>Headings</h2><nav id='tree'></nav>"
        "<div id='node-chunks'></div></section>"
        "<section id='detail'><p class='hint'>Click a chunk on a page, or a heading.</p>"
        "</section></aside></main>"
    )
    data = json.dumps(report.panel_data(), ensure_ascii=False).replace("<", "\\u003c")
    yield f"<script type='application/json' id='report-data'>{data}</script>"
    yield f"<script>{_asset('inspector.js')}</script></body></html>\n"


def _header(report: Report) -> str:
    esc = html.escape
    facts = [
        f"<b>{len(report.chunks)}</b> chunks",
        f"format {esc(report.format)}",
    ]
    if report.page_count:
        facts.append(f"{report.page_count} pages")
    if report.chunker:
        facts.append(f"chunker <code>{esc(report.chunker)}</code>")
    if report.parser:
        facts.append(f"parser <code>{esc(report.parser)}</code>")
    if report.left_out:
        kinds = sorted({lo.kind for lo in report.left_out})
        facts.append(f"{len(report.left_out)} boxes left out ({', '.join(kinds)})")
    parts = [
        "<header>",
        f"<h1>{esc(report.title)}</h1>",
        f"<p class='source'>{esc(report.source)}</p>",
        f"<p class='facts'>{' · '.join(facts)}</p>",
    ]
    if report.note:
        parts.append(f"<p class='note' id='note'>{esc(report.note)}</p>")
    if report.warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in report.warnings)
        parts.append(f"<ul class='warnings doc-warnings'>{items}</ul>")
    parts.append(
        "<p class='legend'><span class='swatch'></span> a chunk's region (one colour per "
        "chunk) <span class='swatch grey'></span> left out of every chunk</p></header>"
    )
    return "".join(parts)


def _pages(report: Report, dpi: int, counts: dict[str, int], password: str | None) -> Iterator[str]:
    assert report.source_pdf is not None
    by_page: dict[int, list[tuple[int, Any]]] = {}
    for i, chunk in enumerate(report.chunks):
        for region in chunk.regions:
            by_page.setdefault(region.page, []).append((i, region.bbox))
    left: dict[int, list[LeftOut]] = {}
    for lo in report.left_out:
        left.setdefault(lo.page, []).append(lo)
    with PdfPages(report.source_pdf, dpi=dpi, password=password) as pdf:
        for image, frame in pdf.pages():
            n = image.number
            counts["pages"] += 1
            counts["regions"] += len(by_page.get(n, ()))
            yield _page_section(report, image, frame, by_page.get(n, []), left.get(n, []))


def _page_section(
    report: Report,
    image: Any,
    frame: PageFrame,
    regions: list[tuple[int, Any]],
    left: list[LeftOut],
) -> str:
    esc = html.escape
    n = image.number
    route = _route_label(report.routes.get(n), image.scanned)
    head = f"<span class='pno'>Page {n}</span>"
    if route:
        head += f" · <span class='route'>{esc(route)}</span>"
    if image.rotation:
        head += f" · <span class='rotation'>rotated {image.rotation}°</span>"
    chunk_count = len({i for i, _ in regions})
    head += f" · <span class='count'>{chunk_count} chunks</span>"
    warnings = report.page_warnings.get(n, [])
    warn_html = ""
    if warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
        warn_html = f"<ul class='warnings'>{items}</ul>"
    src = "data:image/jpeg;base64," + base64.b64encode(image.jpeg).decode("ascii")
    boxes = []
    for lo in left:
        boxes.append(
            f"<div class='leftout' data-kind='{esc(lo.kind)}' title='{esc(lo.label)}' "
            f"style='{_place(frame.fractions(lo.bbox))}'></div>"
        )
    for i, bbox in regions:
        colour = chunk_colour(i)
        place = frame.fractions(bbox)
        # Smaller boxes on top, so a caption inside its table's box stays clickable.
        z = 10 + round((1 - (place[2] - place[0]) * (place[3] - place[1])) * 10000)
        boxes.append(
            f"<div class='region' data-chunk='{i}' data-colour='{colour}' "
            f"style='{_place(place)};--c:{colour};z-index:{z}'></div>"
        )
    return (
        f"<section class='page' id='page-{n}' data-page='{n}' data-rotation='{image.rotation}'>"
        f"<div class='page-head'>{head}</div>{warn_html}"
        f"<div class='sheet' style='aspect-ratio:{image.width}/{image.height};"
        f"max-width:{image.width}px'>"
        f"<img class='page-img' alt='page {n}' width='{image.width}' height='{image.height}' "
        f"data-src='{src}'>{''.join(boxes)}</div></section>"
    )


def _cards(report: Report) -> str:
    esc = html.escape
    out = ["<div id='cards'>"]
    for i, c in enumerate(report.chunks):
        path = " › ".join(c.heading_path) or "(no heading)"
        snippet = " ".join(c.text.split())[:240]
        out.append(
            f"<button class='card' data-chunk='{i}' style='--c:{chunk_colour(i)}'>"
            f"<span class='card-head'>#{i} {esc(c.type)} · {c.token_count} tokens · "
            f"{esc(path)}</span><span class='card-text'>{esc(snippet)}</span></button>"
        )
    out.append("</div>")
    return "".join(out)


def _route_label(route: str | None, scanned: bool) -> str:
    parts = []
    if scanned:
        parts.append("OCR")
    if route:
        name, _, reason = route.partition(":")
        label = _ROUTE_NAMES.get(name, name)
        parts.append(f"{label} ({reason})" if reason else label)
    return " + ".join(parts)


def _place(f: Fractions) -> str:
    x0, y0, x1, y1 = f
    return (
        f"left:{x0 * 100:.3f}%;top:{y0 * 100:.3f}%;"
        f"width:{max(x1 - x0, 0) * 100:.3f}%;height:{max(y1 - y0, 0) * 100:.3f}%"
    )


def _asset(name: str) -> str:
    return resources.files("chunkweave.worker.inspect").joinpath("assets", name).read_text("utf-8")

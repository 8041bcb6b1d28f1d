"""``auto`` mode's calibration: the layout model as the arbiter of a whole document.

Before the page loop, ``auto`` parses a bounded sample of the document's pages
(:func:`calibration_pages`: the first pages, plus pages spread through the rest)
both ways: with the heuristics, and through the geometry-only layout model. It
then compares, block by block, the model's classes (title, section header, page
header/footer, list item, table, caption) with the heuristics' types
(:func:`compare_page`):

- a model box agrees when most of its lines sit in heuristic elements of its class;
- a heuristic element agrees when most of its lines sit in model boxes of its class.

Before deciding, the heuristics learn from the model what the sample shows about
heading *styles* (:func:`confirm_styles`): a font style (size, weight) whose
heading-shaped blocks the model calls section headers in most cases becomes a
heading style of the document; a learnt heading style whose blocks the model
calls text in most cases is dropped. The sample is then compared again, with the
confirmed styles, and :func:`chunkweave.parsers.pdf.route.decide_document`
decides: the model on every page, or the heuristics (with the confirmed styles)
on every page. The sample's text extraction, tables and model boxes are kept
(:class:`~chunkweave.parsers.pdf.page.PreparedPage`) for the page loop, so no
sampled page is read, searched for tables or run through the model twice.

The result travels as data: :class:`RouteExplanation` (frozen) holds the
sampled pages, the agreement per class, the route and its reason, the styles
confirmed, and after the page loop the pages per route. ``parse_pdf`` hands it to
whoever listens (:func:`recorded_routes`, used by ``chunkweave parse --explain``)
and logs it at DEBUG level on the ``chunkweave.parsers.pdf`` logger.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import pymupdf

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.blocks import PageContext
from chunkweave.parsers.pdf.geometry import centre_inside
from chunkweave.parsers.pdf.headings import Style
from chunkweave.parsers.pdf.layout_model import LayoutBox, assign_lines
from chunkweave.parsers.pdf.page import PreparedPage, parse_page, prepare_page
from chunkweave.parsers.pdf.profile import MAX_HEADING_LINES, PdfProfile
from chunkweave.parsers.pdf.route import (
    CLASSES,
    ClassAgreement,
    Decision,
    decide_document,
    decisive,
)
from chunkweave.parsers.pdf.text import Line
from chunkweave.parsers.pdf.typography import is_plain_body

#: The calibration sample: the first pages (title, abstract, first sections) ...
FIRST_PAGES = 3
#: ... plus pages spread evenly through the rest, up to this many in all.
CALIBRATION_PAGES = 8
#: A style is confirmed (or rejected) by at least this many of the model's blocks.
MIN_STYLE_VOTES = 2

#: Element types of the heuristics, in the model's class names.
_TYPE_CLASS: Mapping[str, str] = {
    "title": "title",
    "heading": "section-header",
    "page_header": "page-header",
    "page_footer": "page-footer",
    "list_item": "list-item",
    "table": "table",
    "caption": "caption",
}


@dataclass(frozen=True)
class RouteExplanation:
    """How ``parse_pdf`` routed one document, and why (``chunkweave parse --explain``).

    ``sampled``: 1-based pages of the calibration sample; ``compared``: those the
    model could be compared on (a text layer, the model ran). ``classes``: the
    agreement per class after the confirmed styles, ``before``: before them.
    ``confirmed`` / ``rejected``: heading styles the model confirmed (with their
    level) or rejected. ``pages``: pages per ``route:reason`` after the page loop.
    """

    name: str
    mode: str
    page_count: int
    route: Decision
    reason: str
    outline_trusted: bool = False
    sampled: tuple[int, ...] = ()
    compared: tuple[int, ...] = ()
    classes: tuple[ClassAgreement, ...] = ()
    before: tuple[ClassAgreement, ...] = ()
    confirmed: tuple[tuple[float, bool, int], ...] = ()
    rejected: tuple[tuple[float, bool], ...] = ()
    seconds: float = 0.0
    pages: tuple[tuple[str, int], ...] = field(default=())

    def lines(self) -> list[str]:
        """Return the explanation as printable lines."""
        out = [f"{self.name}: mode {self.mode}, {self.page_count} pages, route {self.route}"]
        out.append(f"  reason: {self.reason}")
        if self.sampled:
            out.append(f"  sampled pages: {list(self.sampled)}")
            out.append(f"  compared pages (text layer, model ran): {list(self.compared)}")
            out.append(f"  outline trusted: {'yes' if self.outline_trusted else 'no'}")
            counted = {c.label for c in decisive(self.classes, self.outline_trusted)}
            out.append(
                "  agreement per class (model blocks agreed/all, heuristic blocks agreed/all):"
            )
            before = {c.label: c for c in self.before}
            for c in self.classes:
                share = "-" if c.agreement is None else f"{c.agreement:.2f}"
                was = before.get(c.label)
                prior = ""
                if was is not None and was.agreement != c.agreement:
                    old = "-" if was.agreement is None else f"{was.agreement:.2f}"
                    prior = f" (before confirmed styles {old})"
                mark = "" if c.label in counted else " [not decisive]"
                out.append(
                    f"    {c.label:15s} {share:>5s}  model {c.model_agreed}/{c.model}, "
                    f"heuristics {c.heuristic_agreed}/{c.heuristic}{prior}{mark}"
                )
            styles = ", ".join(
                f"{s:g}pt{' bold' if b else ''} -> level {lv}" for s, b, lv in self.confirmed
            )
            out.append(f"  styles confirmed by the model: {styles or 'none'}")
            dropped = ", ".join(f"{s:g}pt{' bold' if b else ''}" for s, b in self.rejected)
            out.append(f"  styles rejected by the model: {dropped or 'none'}")
            out.append(f"  calibration time: {self.seconds:.2f} s")
        if self.pages:
            out.append("  pages per route: " + "; ".join(f"{k} {n}" for k, n in self.pages))
        return out


_RECORDER: ContextVar[list[RouteExplanation] | None] = ContextVar("pdf_routes", default=None)


@contextmanager
def recorded_routes() -> Iterator[list[RouteExplanation]]:
    """Collect the :class:`RouteExplanation` of every PDF parsed inside the block."""
    found: list[RouteExplanation] = []
    token = _RECORDER.set(found)
    try:
        yield found
    finally:
        _RECORDER.reset(token)


def record(explanation: RouteExplanation) -> None:
    """Hand ``explanation`` to the active :func:`recorded_routes` block, if any."""
    found = _RECORDER.get()
    if found is not None:
        found.append(explanation)


def calibration_pages(page_count: int) -> list[int]:
    """0-based pages of the sample: the first :data:`FIRST_PAGES`, then spread evenly."""
    if page_count <= CALIBRATION_PAGES:
        return list(range(page_count))
    head = list(range(FIRST_PAGES))
    rest = CALIBRATION_PAGES - FIRST_PAGES
    span = page_count - FIRST_PAGES
    # The centre of each of ``rest`` equal slices of the remaining pages.
    spread = [FIRST_PAGES + int((k + 0.5) * span / rest) for k in range(rest)]
    return sorted(set(head + spread))


def _line_types(lines: Sequence[Line], elements: Sequence[Element]) -> list[str]:
    """Return each line's heuristic class: that of the smallest element holding its centre."""
    boxed = sorted(
        (e for e in elements if e.bbox is not None),
        key=lambda e: (e.bbox[2] - e.bbox[0]) * (e.bbox[3] - e.bbox[1]),  # type: ignore[index]
    )
    out = []
    for ln in lines:
        owner = next((e for e in boxed if centre_inside(ln.bbox, e.bbox)), None)  # type: ignore[arg-type]
        out.append(_TYPE_CLASS.get(owner.type, "text") if owner is not None else "text")
    return out


def _majority(labels: Sequence[str]) -> str:
    return Counter(labels).most_common(1)[0][0]


def compare_page(
    lines: Sequence[Line], heuristic: Sequence[Element], model: Sequence[Element]
) -> dict[str, ClassAgreement]:
    """Count, per class, the blocks each route made and those the other route agrees with.

    ``heuristic`` and ``model`` are the page's elements from the two routes (the
    model's boxes and classes applied through the same classifiers, so a class the
    parser would not act on, e.g. a model heading a trusted outline rules out, is
    not counted). Blocks are compared through the page's lines: an element agrees
    when most of its lines sit in elements of its class on the other route.
    """
    by_route = (_line_types(lines, heuristic), _line_types(lines, model))
    counts = {label: ClassAgreement(label) for label in CLASSES}
    for side, elements in enumerate((heuristic, model)):
        other = by_route[1 - side]
        for el in elements:
            label = _TYPE_CLASS.get(el.type)
            if label is None or el.bbox is None:
                continue
            held = [other[k] for k, ln in enumerate(lines) if centre_inside(ln.bbox, el.bbox)]
            if not held:
                continue
            agreed = int(_majority(held) == label)
            if side == 0:
                counts[label] += ClassAgreement(label, heuristic=1, heuristic_agreed=agreed)
            else:
                counts[label] += ClassAgreement(label, model=1, model_agreed=agreed)
    return counts


def confirm_styles(
    samples: Sequence[tuple[Sequence[Line], Sequence[LayoutBox]]], profile: PdfProfile
) -> tuple[dict[Style, int], set[Style]]:
    """Return the heading styles the model confirms (with a level) and those it rejects.

    Every heading-shaped model block (at most ``MAX_HEADING_LINES`` lines, one
    style) votes for its style: a header vote when the model calls it a section
    header, a text vote otherwise. A style not plain body text and not yet a
    heading style is confirmed when most of its votes (and at least
    :data:`MIN_STYLE_VOTES`) are header votes; a learnt heading style is rejected
    when most of its votes (and at least as many) are text votes. With a trusted
    outline the outline decides the headings: nothing changes.
    """
    headings = profile.headings
    if headings.has_outline:
        return {}, set()
    header: Counter[Style] = Counter()
    text: Counter[Style] = Counter()
    for lines, boxes in samples:
        owner = assign_lines(lines, boxes)
        for i, box in enumerate(boxes):
            held = [ln for ln, o in zip(lines, owner, strict=True) if o == i]
            if not held or len(held) > MAX_HEADING_LINES or len({ln.style for ln in held}) != 1:
                continue
            style = held[0].style
            if box.label == "section-header":
                header[style] += 1
            elif box.label in ("text", "list-item"):
                text[style] += 1
    confirmed: dict[Style, int] = {}
    rejected: set[Style] = set()
    for style in set(header) | set(text):
        h, t = header[style], text[style]
        known = style in headings.style_levels
        if not known and h >= MIN_STYLE_VOTES and h > t:
            if not is_plain_body(style, headings.body_size) and style != headings.title_style:
                confirmed[style] = headings.nearest_level(style)
        elif known and t >= MIN_STYLE_VOTES and t > h:
            rejected.add(style)
    return confirmed, rejected


def with_styles(
    profile: PdfProfile, confirmed: Mapping[Style, int], rejected: set[Style]
) -> PdfProfile:
    """Return ``profile`` whose heading styles gain ``confirmed`` and lose ``rejected``."""
    if not confirmed and not rejected:
        return profile
    levels = {s: lv for s, lv in profile.headings.style_levels.items() if s not in rejected}
    levels.update(confirmed)
    headings = dataclasses.replace(profile.headings, style_levels=levels)
    return dataclasses.replace(profile, headings=headings)


def _page_elements(
    page: pymupdf.Page, profile: PdfProfile, prepared: PreparedPage, pno: int, route: Decision
) -> list[Element]:
    ctx = PageContext(
        page=pno + 1,
        page_height=page.rect.height,
        first_page=pno == 0,
        headings=profile.headings,
        outline=profile.outline.fresh() if profile.outline else None,
    )
    result = parse_page(
        page, profile, ctx, route=route, ocr=False, ocr_language="", light=True, prepared=prepared
    )
    return result.elements


def _total(per_page: Sequence[dict[str, ClassAgreement]]) -> tuple[ClassAgreement, ...]:
    out = {label: ClassAgreement(label) for label in CLASSES}
    for counts in per_page:
        for label, c in counts.items():
            out[label] += c
    return tuple(out[label] for label in CLASSES)


def calibrate(
    doc: pymupdf.Document,
    name: str,
    profile: PdfProfile,
    sampled_lines: dict[int, list[Line]],
    *,
    ocr: bool,
    ocr_language: str,
    parsed: range | None = None,
) -> tuple[RouteExplanation, PdfProfile, dict[int, PreparedPage]]:
    """Decide ``auto``'s route for the whole document from a sample of its pages.

    Returns the explanation (``pages`` still empty), the profile to parse with
    (the heuristics' heading styles as the model confirmed them) and the prepared
    sample pages (0-based page -> :class:`PreparedPage`, model boxes included) for
    the page loop to reuse. ``sampled_lines`` holds pages the profile already read.
    ``parsed`` (0-based, default all) are the pages the caller will parse: a scanned
    sample page outside them is not OCRed (the model never compares scans).
    """
    start = time.perf_counter()
    sample = calibration_pages(doc.page_count)
    prepared: dict[int, PreparedPage] = {}
    compared: list[int] = []
    pairs: list[tuple[int, pymupdf.Page, PreparedPage]] = []
    unavailable = False
    for pno in sample:
        try:
            page = doc.load_page(pno)
        except (RuntimeError, ValueError):
            continue
        wanted = parsed is None or pno in parsed
        prep = prepare_page(
            page, pno + 1, sampled_lines.get(pno), ocr=ocr and wanted, ocr_language=ocr_language
        )
        if wanted:
            prepared[pno] = prep
        # The model reads the text layer: a scan's OCR text is not there for it.
        if prep.scanned or not prep.lines:
            continue
        if prep.model_boxes(page, light=True) is None:
            unavailable = True
            break
        compared.append(pno)
        pairs.append((pno, page, prep))
    outline_trusted = profile.headings.has_outline
    base = RouteExplanation(
        name=name,
        mode="auto",
        page_count=doc.page_count,
        route="heuristic",
        reason="",
        outline_trusted=outline_trusted,
        sampled=tuple(p + 1 for p in sample),
        compared=tuple(p + 1 for p in compared),
    )
    if unavailable:
        seconds = time.perf_counter() - start
        return (
            dataclasses.replace(base, reason="model unavailable", seconds=seconds),
            profile,
            prepared,
        )

    def agreement(prof: PdfProfile) -> tuple[ClassAgreement, ...]:
        return _total(
            [
                compare_page(
                    prep.lines,
                    _page_elements(page, prof, prep, pno, "heuristic"),
                    _page_elements(page, prof, prep, pno, "model"),
                )
                for pno, page, prep in pairs
            ]
        )

    if not pairs:
        why = "no sampled page has a text layer for the model (scanned or empty): heuristics"
        seconds = time.perf_counter() - start
        return dataclasses.replace(base, reason=why, seconds=seconds), profile, prepared
    before = agreement(profile)
    confirmed, rejected = confirm_styles([(p.lines, p.boxes or []) for _, _, p in pairs], profile)
    tuned = with_styles(profile, confirmed, rejected)
    after = agreement(tuned) if tuned is not profile else before
    route, reason = decide_document(after, outline_trusted)
    explanation = dataclasses.replace(
        base,
        route=route,
        reason=reason,
        classes=after,
        before=before,
        confirmed=tuple(sorted((s, b, lv) for (s, b), lv in confirmed.items())),
        rejected=tuple(sorted(rejected)),
        seconds=time.perf_counter() - start,
    )
    return explanation, tuned, prepared

"""A whole PDF (PyMuPDF): file -> :class:`ParsedDocument` of typed elements; its page count.

Flow: open and check the file (encryption, damage, page limits) -> build the
document-wide profile (``chunkweave.parsers.pdf.profile``: body font, heading styles,
running furniture, outline) -> parse the requested pages one at a time
(``chunkweave.parsers.pdf.page``), each page routed to the heuristics or the layout model by
``opts.mode`` -> join paragraphs that continue across columns and pages ->
``chunkweave.parsers.structure.finalize``.

Modes: ``fast`` never runs the layout model; ``accurate`` runs the full model on every
page; ``auto`` decides once for the document (:mod:`chunkweave.parsers.pdf.calibrate`):
the geometry-only model variant and the heuristics both parse a bounded sample of
pages, and when their block classes disagree beyond a margin
(:func:`~chunkweave.parsers.pdf.route.decide_document`) the model parses every page,
otherwise the heuristics do, with the heading styles the model confirmed on the sample.
The sample is drawn from the whole document, whatever ``page_range`` asks for, so the
parts of a fanned-out parse take the same route. Where a model page has an outline,
outline entries keep the outline's level. The decision (a
:class:`~chunkweave.parsers.pdf.calibrate.RouteExplanation`) is logged at DEBUG level
on the ``chunkweave.parsers.pdf`` logger and handed to
:func:`~chunkweave.parsers.pdf.calibrate.recorded_routes` listeners.

Empty results: pages without a text layer give one warning each when OCR is off
or unavailable, and the document is returned with those warnings (possibly with
no elements) so the caller can record why; a document whose pages all carry a
text layer but no text raises ``EmptyDocumentError``.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pymupdf

from chunkweave.parsers.document import ParsedDocument, ParseOptions, file_sha1
from chunkweave.parsers.elements import Element
from chunkweave.parsers.errors import (
    CorruptDocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    ParseError,
    TooLargeError,
    UnreadableTextError,
    UnsupportedFormatError,
)
from chunkweave.parsers.pdf.blocks import PageContext
from chunkweave.parsers.pdf.calibrate import RouteExplanation, calibrate, calibration_pages, record
from chunkweave.parsers.pdf.headings import demote_running_titles
from chunkweave.parsers.pdf.join import join_continuations
from chunkweave.parsers.pdf.layout_model import model_available
from chunkweave.parsers.pdf.page import PreparedPage, outline_check, parse_page
from chunkweave.parsers.pdf.profile import PdfProfile, sample_document
from chunkweave.parsers.pdf.route import Decision
from chunkweave.parsers.pdf.text import Line
from chunkweave.parsers.structure import finalize

_BAD_TITLE = re.compile(
    r"^(untitled|microsoft word|document\d*$)|\.(docx?|pdf|indd|tex|dvi)$", re.I
)

# The package's logger (``chunkweave.parsers.pdf``), where the route log is documented.
log = logging.getLogger(__package__)


#: Where a password comes from, named in the ``encrypted`` error (the CLI's option, the
#: service's setting, the library's option).
_HOW = (
    ": give it with --password (any command that parses), CHUNKWEAVE_PARSE__PASSWORD "
    "(the service) or ParseOptions(password=...)"
)


def open_pdf(path: Path, opts: ParseOptions) -> pymupdf.Document:
    """Open and authenticate a PDF, raising typed errors that name the file.

    Owner-password-only PDFs (copy/print restrictions) open without a password.
    """
    if path.stat().st_size == 0:
        raise EmptyDocumentError(str(path), "file is empty (0 bytes)")
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise CorruptDocumentError(str(path), f"cannot open PDF: {_one_line(exc)}") from exc
    if not doc.is_pdf:
        doc.close()
        raise UnsupportedFormatError(str(path), "not a PDF file")
    if doc.needs_pass:
        if opts.password is None:
            doc.close()
            message = f"PDF is encrypted; a password is required{_HOW}"
            raise EncryptedDocumentError(str(path), message)
        if not doc.authenticate(opts.password.get_secret_value()):
            doc.close()
            message = f"PDF is encrypted; the password is wrong{_HOW}"
            raise EncryptedDocumentError(str(path), message)
    if doc.page_count == 0:
        doc.close()
        raise CorruptDocumentError(str(path), "PDF has no readable pages (damaged or truncated)")
    if doc.page_count > opts.max_pages:
        count = doc.page_count
        doc.close()
        raise TooLargeError(str(path), f"PDF has {count} pages, limit is {opts.max_pages}")
    return doc


def page_count(path: Path) -> int | None:
    """Pages of a PDF (cheap: reads the page tree only), or None if not a readable PDF.

    For planning work before parsing (the worker's fan-out); the parser itself
    reports a broken file with a typed error.
    """
    with open(path, "rb") as fh:
        if fh.read(5) != b"%PDF-":
            return None
    try:
        with pymupdf.open(path) as pdf:
            return int(pdf.page_count)
    except Exception:  # noqa: BLE001 - the parser reports a broken PDF properly
        return None


def parse_pdf(path: Path, opts: ParseOptions, *, sha1: str | None = None) -> ParsedDocument:
    """Parse a PDF into a finalized :class:`ParsedDocument`.

    Honours ``opts.mode``, ``opts.ocr``/``ocr_language``, ``opts.password``,
    ``opts.max_pages`` and ``opts.page_range`` (1-based inclusive; elements keep
    their true page numbers). ``sha1``: the file's digest when the caller has it
    (else the file is hashed here). Raises a ``ParseError`` subclass naming the file.
    """
    path = Path(path)
    doc = open_pdf(path, opts)
    try:
        first, last = _page_span(path, doc.page_count, opts.page_range)
        warnings: list[str] = []
        if doc.is_repaired:
            warnings.append("file was damaged; MuPDF repaired its structure")
        use_model = opts.mode == "accurate" and model_available()
        if opts.mode == "accurate" and not use_model:
            warnings.append("layout model unavailable; used heuristics on every page")
        sample = calibration_pages(doc.page_count) if opts.mode == "auto" else []
        profile, sampled = sample_document(doc, keep={*range(first - 1, last), *sample})
        prepared: dict[int, PreparedPage] = {}
        if opts.mode == "auto":
            explanation, profile, prepared = calibrate(
                doc,
                path.name,
                profile,
                sampled,
                ocr=opts.ocr,
                ocr_language=opts.ocr_language,
                parsed=range(first - 1, last),
            )
        else:
            route: Decision = "model" if use_model else "heuristic"
            reason = opts.mode if use_model or opts.mode == "fast" else "model unavailable"
            explanation = RouteExplanation(
                name=path.name,
                mode=opts.mode,
                page_count=doc.page_count,
                route=route,
                reason=reason,
            )
        routes: dict[str, list[int]] = {}
        unreadable: dict[int, str] = {}
        pages = _iter_pages(
            doc,
            path,
            profile,
            sampled,
            prepared,
            opts,
            first,
            last,
            warnings,
            explanation,
            routes,
            unreadable,
        )
        listed = outline_check(profile)
        elements = finalize(demote_running_titles(join_continuations(pages), listed))
        _check_readable(path, unreadable, routes, repaired=doc.is_repaired)
        explanation = dataclasses.replace(
            explanation, pages=tuple((key, len(p)) for key, p in sorted(routes.items()))
        )
        record(explanation)
        _log_routes(path, explanation, routes)
        title = _title(doc, elements)
        page_count = doc.page_count
    except pymupdf.mupdf.FzErrorLimit as exc:
        # MuPDF refuses what would exceed its bounds (a page or image too large to render).
        raise TooLargeError(str(path), f"beyond MuPDF's limits: {_one_line(exc)}") from exc
    except pymupdf.mupdf.FzErrorBase as exc:
        # A structural fault found while reading pages (a cyclic page tree, a broken object).
        raise CorruptDocumentError(str(path), f"damaged PDF: {_one_line(exc)}") from exc
    finally:
        doc.close()
    if not elements and not warnings and opts.page_range is None:
        raise EmptyDocumentError(str(path), "PDF has no extractable text on any page")
    return ParsedDocument(
        path=str(path),
        format="pdf",
        sha1=sha1 or file_sha1(path),  # hashed here only when the caller has not
        page_count=page_count,
        title=title,
        elements=elements,
        warnings=tuple(warnings),
        parser=f"pymupdf:{opts.mode}",
    )


def _iter_pages(
    doc: pymupdf.Document,
    path: Path,
    profile: PdfProfile,
    sampled: dict[int, list[Line]],
    prepared: dict[int, PreparedPage],
    opts: ParseOptions,
    first: int,
    last: int,
    warnings: list[str],
    explanation: RouteExplanation,
    routes: dict[str, list[int]],
    unreadable: dict[int, str],
) -> Iterator[Element]:
    outline = profile.outline.fresh() if profile.outline else None
    list_stack: list[float] = []
    readable = 0
    # ``auto`` runs the geometry-only model variant, ``accurate`` the full model.
    light = opts.mode == "auto"
    default_reason = "calibrated" if opts.mode == "auto" else explanation.reason
    for pno in range(first - 1, last):
        try:
            page = doc.load_page(pno)
        except (RuntimeError, ValueError) as exc:
            warnings.append(f"page {pno + 1}: unreadable ({_one_line(exc)})")
            continue
        readable += 1
        ctx = PageContext(
            page=pno + 1,
            page_height=page.rect.height,
            first_page=pno == 0,
            headings=profile.headings,
            outline=outline,
            list_stack=list_stack,
            # Popped, so each sampled page's lines are released once parsed.
            lines=sampled.pop(pno, None),
        )
        result = parse_page(
            page,
            profile,
            ctx,
            route=explanation.route,
            ocr=opts.ocr,
            ocr_language=opts.ocr_language,
            light=light,
            prepared=prepared.pop(pno, None),
        )
        warnings.extend(result.warnings)
        if result.unreadable:
            unreadable[pno + 1] = result.unreadable
        routes.setdefault(f"{result.route}:{result.reason or default_reason}", []).append(pno + 1)
        yield from result.elements
    if readable == 0:
        raise CorruptDocumentError(str(path), "no page of the PDF could be read")


def _check_readable(
    path: Path, unreadable: dict[int, str], routes: dict[str, list[int]], *, repaired: bool
) -> None:
    """Raise :class:`UnreadableTextError` when most pages with text could not be read.

    A page whose text layer is not language and that OCR could not read was dropped
    (with a warning); a document made mostly of such pages is not stored as the few
    pages left: it fails with the reason, so the caller knows to fix or OCR it.
    """
    with_text = sum(len(p) for key, p in routes.items() if not key.endswith(":no text"))
    if not unreadable or 2 * len(unreadable) < len(unreadable) + with_text:
        return
    first = min(unreadable)
    pages = sorted(unreadable)
    listed = ", ".join(map(str, pages[:10])) + (", ..." if len(pages) > 10 else "")
    raise UnreadableTextError(
        str(path),
        f"the text layer of {len(pages)} page(s) ({listed}) is not language and OCR could "
        f"not read them (page {first}: {unreadable[first]})"
        + ("; the file was damaged and MuPDF repaired its structure" if repaired else ""),
    )


def _log_routes(path: Path, explanation: RouteExplanation, routes: dict[str, list[int]]) -> None:
    """Log at DEBUG the document's route, its calibration, and the pages per route.

    One record per document, its message the lines of
    :meth:`~chunkweave.parsers.pdf.calibrate.RouteExplanation.lines`; the record's
    ``routes`` attribute holds ``"route:reason"`` -> 1-based pages and its
    ``explanation`` attribute the :class:`RouteExplanation` itself.
    """
    if not log.isEnabledFor(logging.DEBUG):
        return
    log.debug(
        "%s",
        "\n".join(explanation.lines()),
        extra={"routes": routes, "explanation": explanation},
    )


def _page_span(path: Path, count: int, page_range: tuple[int, int] | None) -> tuple[int, int]:
    if page_range is None:
        return 1, count
    first, last = page_range
    if first < 1 or last < first or first > count:
        raise ParseError(str(path), f"page range {first}-{last} is outside 1-{count}")
    return first, min(last, count)


def _title(doc: pymupdf.Document, elements: tuple[Element, ...]) -> str | None:
    meta = " ".join(str((doc.metadata or {}).get("title") or "").split())
    if len(meta) >= 4 and not _BAD_TITLE.search(meta):
        return meta
    return next((e.text for e in elements if e.type == "title"), None)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__

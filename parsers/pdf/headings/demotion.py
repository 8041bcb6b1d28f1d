"""Evidence against headings from their neighbours: label runs, figure labels, running titles.

Applied per page after every unit is typed: runs of label-like headings
(:func:`demote_label_runs`), headings inside a drawn figure
(:func:`demote_figure_labels`) and headings whose sentence runs on into the
paragraph right below them (:func:`demote_run_ins`) become paragraphs. Over the
whole document, a heading repeated on consecutive pages is a running title
(:func:`demote_running_titles`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.headings.numbering import numbering_depth
from chunkweave.parsers.pdf.headings.runon import continues_below

#: Consecutive same-level un-numbered headings from this many on are labels.
MIN_LABEL_RUN = 3
#: Text units up to this many characters between a figure caption and the body
#: above it are the figure's labels (a body paragraph is longer).
MAX_LABEL_CHARS = 90

_FIGURE_CAPTION = re.compile(r"^(?:fig(?:ure)?|chart|diagram|scheme)\b", re.IGNORECASE)


def _never_listed(element: Element) -> bool:
    return False


def _label_like(element: Element, listed: Callable[[Element], bool]) -> bool:
    """Return True for a heading that carries no numbering and is not in the outline."""
    return (
        element.type == "heading" and numbering_depth(element.text) is None and not listed(element)
    )


def demote_label_runs(
    elements: Iterable[Element], listed: Callable[[Element], bool] = _never_listed
) -> Iterator[Element]:
    """Yield one page's ``elements`` with runs of label-like headings made paragraphs.

    A run is :data:`MIN_LABEL_RUN` or more consecutive ``heading`` elements of one
    level whose text carries no section numbering and which ``listed`` (the
    outline check) does not vouch for, with no body element between them
    (furniture and figures do not break a run): cover-page bullets, author
    blocks and index letters look like that, sections never do. Titles,
    numbered or listed headings and shorter runs are kept.
    """
    items = list(elements)
    demote: set[int] = set()
    run: list[int] = []
    for i, el in enumerate(items):
        if el.is_furniture or el.type == "figure":
            continue
        label = _label_like(el, listed)
        if not label or (run and items[run[-1]].level != el.level):
            if len(run) >= MIN_LABEL_RUN:
                demote.update(run)
            run = []
        if label:
            run.append(i)
    if len(run) >= MIN_LABEL_RUN:
        demote.update(run)
    for i, el in enumerate(items):
        yield el.model_copy(update={"type": "paragraph", "level": None}) if i in demote else el


def demote_figure_labels(
    elements: Iterable[Element], listed: Callable[[Element], bool] = _never_listed
) -> Iterator[Element]:
    """Yield one page's ``elements`` with headings inside a drawn figure made paragraphs.

    Figure captions sit below the figure, so the short text units between a
    "Figure N" caption and the last long body element above it are the figure's
    own labels (boxes of a diagram, axis titles). When there are
    :data:`MIN_LABEL_RUN` or more of them, the un-numbered headings among them
    that ``listed`` does not vouch for become paragraphs: a bold label in a
    diagram is not a section.
    """
    items = list(elements)
    demote: set[int] = set()
    for i, el in enumerate(items):
        if el.type != "caption" or not _FIGURE_CAPTION.match(el.text):
            continue
        inside: list[int] = []
        for j in range(i - 1, -1, -1):
            prev = items[j]
            if prev.is_furniture or prev.type == "figure":
                continue
            short = prev.type in ("heading", "paragraph") and len(prev.text) <= MAX_LABEL_CHARS
            if not short or (prev.type == "heading" and not _label_like(prev, listed)):
                break
            inside.append(j)
        if len(inside) >= MIN_LABEL_RUN:
            demote.update(j for j in inside if items[j].type == "heading")
    for i, el in enumerate(items):
        yield el.model_copy(update={"type": "paragraph", "level": None}) if i in demote else el


def demote_run_ins(
    elements: Iterable[Element], listed: Callable[[Element], bool] = _never_listed
) -> Iterator[Element]:
    """Yield one page's ``elements`` with headings that run on into the text below made paragraphs.

    A heading followed in reading order (past furniture) by a paragraph set right
    under it, in its column, that starts in lower case, is the start of that
    paragraph's sentence (a bold run-in phrase set in a block of its own): it
    becomes a paragraph, which the document's continuation pass joins to the one
    below. Numbered headings ("6.3.4 Attaching lists" over "attach() is ...") and
    headings the outline (``listed``) vouches for are kept.
    """
    items = list(elements)
    body = [i for i, el in enumerate(items) if not el.is_furniture]
    demote = {
        i
        for i, j in zip(body, body[1:], strict=False)
        if items[i].type == "heading"
        and items[j].type == "paragraph"
        and not listed(items[i])
        and numbering_depth(items[i].text) is None
        and continues_below(items[i], items[j])
    }
    for i, el in enumerate(items):
        yield el.model_copy(update={"type": "paragraph", "level": None}) if i in demote else el


#: A heading text met on this many consecutive pages is a running title.
MIN_RUNNING_PAGES = 3


def demote_running_titles(
    elements: Iterable[Element], listed: Callable[[Element], bool] = _never_listed
) -> Iterator[Element]:
    """Yield the document's ``elements`` with running titles made paragraphs.

    A section's title is printed once; the same heading on :data:`MIN_RUNNING_PAGES`
    or more consecutive pages is a chart or table title repeated on each page of it,
    or a legend: each of those occurrences becomes a paragraph. Headings the
    outline (``listed``) vouches for, and the same title on pages apart ("Exercises"
    closing every chapter), are kept.
    """
    items = list(elements)
    pages: dict[str, set[int]] = {}
    for el in items:
        if el.type == "heading" and el.page is not None and not listed(el):
            pages.setdefault(_title_key(el.text), set()).add(el.page)
    running: dict[str, set[int]] = {}
    for key, seen in pages.items():
        hit = {p for p in seen if _in_run(p, seen)}
        if hit:
            running[key] = hit
    for el in items:
        key = _title_key(el.text) if el.type == "heading" else ""
        if key in running and el.page in running[key] and not listed(el):
            yield el.model_copy(update={"type": "paragraph", "level": None})
        else:
            yield el


def _title_key(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _in_run(page: int, pages: set[int]) -> bool:
    """Tell whether ``page`` lies in a run of ``MIN_RUNNING_PAGES`` consecutive pages."""
    n = MIN_RUNNING_PAGES
    return any(all(start + i in pages for i in range(n)) for start in range(page - n + 1, page + 1))

"""Running headers, footers and page numbers: which lines are page furniture.

A line is furniture when it sits in the top or bottom band of the page, is among
the outermost lines there, and either

- its *signature* (lower-cased, digit runs replaced by ``#``) recurs in the same
  band on several pages of the document-wide profile (running titles, "Chapter 2:
  ..." headers, "Page 3 of 9" footers), or
- it looks like a bare page number ("12", "- 12 -", "Page 3", "iv", "A-42"), or
- it is a short line ending with a page number, set apart from the text
  with nothing between it and the page edge ("Chapter 2. Roles ... 11"), or
- (top band only) it is a short line in a smaller font than the body, set apart
  above the text: the running header of a one-page excerpt, where repetition
  cannot be observed. The bottom band has no such rule, so footnotes stay body.
- (top band only) it is a short line, not larger than the body, set apart from
  the text, in a *header slot*: a vertical position where repeated running lines
  or page numbers sit on several sampled pages. This catches running titles that
  change too often to repeat (a section title per page, a chapter of one page).

"Set apart" compares a line with the text on its page side: a line whose box
touches the next one (tight leading) is part of the text, however small its font.
Furniture is the outermost text of its band: a candidate with body text between
it and the edge is body (a table's column headings repeated under each page's
table title), except a bottom-band page number (notices may follow it).

Given the page (and the outline), a *stacked* row is furniture too: one title
line set close under the header furniture, in the same place on the page before
(an exhibit's title repeated under "Exhibit 3 (Cont. 2)"), unless the outline
lists it on this page, where a new section of the same name starts.

Which lines are candidates at all, and page numbers and codes beyond the bands, are
:mod:`chunkweave.parsers.pdf.bands`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chunkweave.parsers.pdf.bands import (
    Band,
    band_candidates,
    is_page_number,
    outer_marker,
    stacked_row,
)
from chunkweave.parsers.pdf.geometry import BBox
from chunkweave.parsers.pdf.headings import OutlineIndex, keys_match, match_key
from chunkweave.parsers.pdf.text import Line
from chunkweave.parsers.pdf.typography import is_short_line, set_close

#: Header slots: vertical positions (the line's centre, in points from the top edge,
#: in steps of this many points) where running lines were seen on several pages.
SLOT_STEP = 4.0
#: A line in a header slot is furniture only up to this size relative to the body
#: (a display title set where the running header usually sits stays a title).
SLOT_MAX_SIZE = 1.05
_DIGITS = re.compile(r"\d+")
# A whole token that is a roman numeral ("iv", "XII"): page labels of front matter
# and chapter numbers, masked like digits. (A valid numeral only: "civil" is a word.)
_ROMAN_TOKEN = re.compile(
    r"(?<![\w-])(?=[mdclxvi])m{0,3}(?:c[md]|d?c{0,3})(?:x[cl]|l?x{0,3})(?:i[xv]|v?i{0,3})(?![\w-])"
)
_MONTHS = (
    "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    "|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
# A month name next to a (masked) day or year: "March #, #", "# Mar #".
_MONTH_DATE = re.compile(rf"\b(?:{_MONTHS})\.?(?=\s+#)|(?<=#\s)(?:{_MONTHS})\b\.?")
# A page number ending a short line: "Chapter 2. Roles 11". (Not a leading number:
# footnotes start with their marker.)
_EDGE_NUMBER = re.compile(r"\S\s+(?:\d{1,4}|[ivxlc]{1,6})$")


def signature(text: str) -> str:
    """Repetition key of a furniture candidate: what stays when the page changes.

    Lower case; digit runs and roman-numeral tokens become ``#`` (page and chapter
    numbers, "Page iv"), and a month name in a date becomes ``@`` ("Draft of March
    3, 2024" and "Draft of May 9, 2024" are one running line).
    """
    masked = _ROMAN_TOKEN.sub("#", _DIGITS.sub("#", text.lower()))
    return " ".join(_MONTH_DATE.sub("@", masked).split())


@dataclass(frozen=True)
class LearntBands:
    """The running header and footer bands learnt from the sampled pages (plain values).

    ``header_bottom`` is the lowest bottom edge, and ``footer_top`` the highest top
    edge, of a line whose signature repeats in its band (as a fraction of the page
    height, from the top; None when nothing repeats there). ``header`` and ``footer``
    are the repeated signatures (:func:`signature`). For callers that compare the
    heuristics with the layout model, or apply the bands to pages not sampled.
    """

    header_bottom: float | None
    footer_top: float | None
    header: frozenset[str]
    footer: frozenset[str]

    def band_of(self, text: str) -> Band | None:
        """Return the band whose repeated signatures hold ``text``'s, if any."""
        sig = signature(text)
        if sig in self.header:
            return "top"
        return "bottom" if sig in self.footer else None


class FurnitureModel:
    """Document-wide furniture knowledge: which band signatures repeat.

    Built from the profile's sampled pages with :meth:`observe`; queried per page
    with :meth:`classify`. ``min_repeat`` is the number of distinct sampled pages a
    signature must appear on.
    """

    def __init__(self) -> None:
        self._pages: dict[tuple[Band, str], set[int]] = {}
        self._top: list[tuple[int, int, str]] = []  # (page, slot, text) of top candidates
        self._stacked: dict[str, set[int]] = {}  # signature -> pages, of stacked header rows
        self._slots: set[int] | None = None
        # (band, signature) -> extreme inner edge seen, as a fraction of the page height
        self._edges: dict[tuple[Band, str], float] = {}
        self.sampled_pages = 0

    def observe(self, page_no: int, lines: Sequence[Line], page_height: float) -> None:
        """Record the band signatures of one sampled page."""
        self.sampled_pages += 1
        self._slots = None
        for i, band in band_candidates(lines, page_height):
            key = (band, signature(lines[i].text))
            self._pages.setdefault(key, set()).add(page_no)
            if page_height > 0:
                y0, y1 = lines[i].bbox[1] / page_height, lines[i].bbox[3] / page_height
                old = self._edges.get(key)
                if band == "top":
                    self._edges[key] = y1 if old is None else max(old, y1)
                else:
                    self._edges[key] = y0 if old is None else min(old, y0)
            if band == "top":
                self._top.append((page_no, _slot(lines[i]), lines[i].text))
        for i in stacked_row(lines, page_height):
            self._stacked.setdefault(signature(lines[i].text), set()).add(page_no)

    def header_slots(self) -> set[int]:
        """Slots of the top band holding running lines (repeated text or page numbers).

        A slot counts when such lines sit in it (or a neighbouring slot) on
        ``min_repeat`` distinct sampled pages: then a line there whose text does not
        repeat (a chapter title that changes every page or two) is the same furniture.
        """
        if self._slots is None:
            pages: dict[int, set[int]] = {}
            for page, slot, text in self._top:
                if self.repeated("top", text) or is_page_number(text):
                    pages.setdefault(slot, set()).add(page)
            self._slots = {
                slot
                for slot in pages
                if len(set().union(*(pages.get(slot + d, set()) for d in (-1, 0, 1))))
                >= self.min_repeat
            }
        return self._slots

    def bands(self) -> LearntBands:
        """Return the header and footer bands learnt so far (see :class:`LearntBands`)."""
        repeated = {
            key for key, pages in self._pages.items() if key[1] and len(pages) >= self.min_repeat
        }
        head = [self._edges[k] for k in repeated if k[0] == "top" and k in self._edges]
        foot = [self._edges[k] for k in repeated if k[0] == "bottom" and k in self._edges]
        return LearntBands(
            header_bottom=max(head, default=None),
            footer_top=min(foot, default=None),
            header=frozenset(sig for band, sig in repeated if band == "top"),
            footer=frozenset(sig for band, sig in repeated if band == "bottom"),
        )

    @property
    def min_repeat(self) -> int:
        """Distinct pages a signature needs to count as running furniture."""
        return 2 if self.sampled_pages <= 8 else 3

    def repeated(self, band: Band, text: str) -> bool:
        """Return True when ``text``'s signature recurs in ``band`` across sampled pages."""
        return len(self._pages.get((band, signature(text)), ())) >= self.min_repeat

    def classify(
        self,
        lines: Sequence[Line],
        page_height: float,
        body_size: float,
        page: int | None = None,
        outline: OutlineIndex | None = None,
    ) -> dict[int, Band]:
        """Return ``{line index: band}`` for the furniture lines of one page.

        With ``page`` (0-based, as given to :meth:`observe`) the continued rows of a
        stacked header are found too (see :meth:`_continued`); ``outline`` keeps
        the titles it lists on this page out of them, and out of furniture at all
        (see :func:`_listed_titles`).
        """
        out: dict[int, Band] = {}
        body_top = min((ln.bbox[1] for ln in lines), default=0.0)
        for i, band in band_candidates(lines, page_height):
            line = lines[i]
            if (
                self.repeated(band, line.text)
                or is_page_number(line.text)
                or band == "top"
                and _lone_small_header(line, lines, body_size, body_top)
                or _EDGE_NUMBER.search(line.text)
                and _set_apart(line, lines, band)
                or band == "top"
                and self._in_header_slot(line, lines, body_size)
            ):
                out[i] = band
        out = _from_the_edge(lines, out)
        if page is not None and outline is not None and out:
            for i in _listed_titles(lines, out, outline.by_page.get(page + 1, [])):
                del out[i]
        if page is not None:
            for i in self._continued(lines, page_height, body_size, page, outline, out):
                out[i] = "top"
        outer = outer_marker(lines, page_height)
        if outer is not None and outer[0] not in out:
            out[outer[0]] = outer[1]
        return out

    def _continued(
        self,
        lines: Sequence[Line],
        page_height: float,
        body_size: float,
        page: int,
        outline: OutlineIndex | None,
        found: dict[int, Band],
    ) -> list[int]:
        """Return the line of a stacked header row that repeats the previous page's.

        A title repeated under the running header of each continuation page (an
        exhibit, a long table, an appendix) is furniture there, but a heading on the
        page where it starts. So the row must sit close under header furniture, and
        each line must be a short, at most body-size line whose signature was in the
        same place on the page before (a sampled page: in long documents, where
        neighbours are rarely both sampled, the rule seldom applies), and not an
        outline title of this page (a new section with the same name).
        """
        row = stacked_row(lines, page_height)
        # A title: one line alone on its row, of words (cells of a repeated table
        # header share a row; a lone word or a rule of dashes is not a title).
        if len(row) != 1 or not _title_like(lines[row[0]].text):
            return []
        top = min(lines[i].bbox[1] for i in row)
        if not any(band == "top" and lines[j].bbox[3] <= top + 0.5 for j, band in found.items()):
            return []  # the rows above it are not header furniture
        line = lines[row[0]]
        if not is_short_line(line.text) or line.size > SLOT_MAX_SIZE * body_size:
            return []
        if page - 1 not in self._stacked.get(signature(line.text), ()):
            return []
        keys = outline.by_page.get(page + 1, []) if outline else []
        if any(keys_match(match_key(line.text), key) for _, key in keys):
            return []
        return row

    def _in_header_slot(self, line: Line, lines: Sequence[Line], body_size: float) -> bool:
        """Return True for a short body-size line, set apart, in a running-header slot."""
        if not is_short_line(line.text) or line.size > SLOT_MAX_SIZE * body_size:
            return False
        slots = self.header_slots()
        slot = _slot(line)
        return any(slot + d in slots for d in (-1, 0, 1)) and _set_apart(line, lines, "top")


def model_furniture(lines: Sequence[Line], boxes: Iterable[tuple[BBox, str]]) -> dict[int, Band]:
    """Return ``{line index: band}`` for the lines the layout model classes as furniture.

    ``boxes`` are the model's ``(bbox, label)`` regions; a line whose centre lies in
    a ``page-header`` box is ``top``, in a ``page-footer`` box ``bottom``. The same
    mapping as :meth:`FurnitureModel.classify` returns, so the two can be compared
    line by line (how far the heuristics and the model agree on a page).
    """
    marked: list[tuple[BBox, Band]] = []
    for bbox, label in boxes:
        if label == "page-header":
            marked.append((bbox, "top"))
        elif label == "page-footer":
            marked.append((bbox, "bottom"))
    out: dict[int, Band] = {}
    for i, ln in enumerate(lines):
        cx, cy = (ln.bbox[0] + ln.bbox[2]) / 2, (ln.bbox[1] + ln.bbox[3]) / 2
        for (x0, y0, x1, y1), band in marked:
            if x0 <= cx <= x1 and y0 <= cy <= y1:
                out[i] = band
                break
    return out


def _from_the_edge(lines: Sequence[Line], found: dict[int, Band]) -> dict[int, Band]:
    """Keep the furniture lines with nothing but furniture between them and their edge.

    Running lines are the outermost text of a page: a candidate under a line of
    body text (the cells of a table header repeated under each page's table title,
    on a page with a tall top band) is that text's continuation, not furniture.
    A page number in the bottom band is kept whatever lies below it: footers put
    notices under the number that no rule here recognises on a single page.
    """
    body = [ln for j, ln in enumerate(lines) if j not in found]
    kept: dict[int, Band] = {}
    for i, band in found.items():
        mid = (lines[i].bbox[1] + lines[i].bbox[3]) / 2
        if band == "top":
            beyond = any(ln.bbox[3] <= mid for ln in body)
        elif is_page_number(lines[i].text):
            beyond = False  # a footer's legal notice may sit under its page number
        else:
            beyond = any(ln.bbox[1] >= mid for ln in body)
        if not beyond:
            kept[i] = band
    return kept


def _title_like(text: str) -> bool:
    """Return True for two or more words, mostly letters."""
    letters = sum(c.isalpha() for c in text)
    return len(text.split()) >= 2 and letters >= 0.5 * len(text.replace(" ", ""))


def _slot(line: Line) -> int:
    """Vertical slot of a line: its centre from the top edge in ``SLOT_STEP`` steps."""
    return round((line.bbox[1] + line.bbox[3]) / 2 / SLOT_STEP)


def _set_apart(line: Line, lines: Sequence[Line], band: Band) -> bool:
    """Return True for a short line at the page edge, clearly apart from the text."""
    if len(line.text) > 120:
        return False
    inner, outer = _gaps(line, lines, band)
    return not outer and _clear_of(inner, line)


def _gaps(line: Line, lines: Sequence[Line], band: Band) -> tuple[list[float], list[Line]]:
    """Return the gaps to the lines on the page side of ``line``, and the lines beyond it.

    A line counts as below (above) ``line`` when it starts below (ends above) its
    middle: tightly set text, whose boxes touch or overlap by a point, is not
    skipped over to a later, farther line.
    """
    mid = (line.bbox[1] + line.bbox[3]) / 2
    below = [ln for ln in lines if ln.bbox[1] >= mid and ln is not line]
    above = [ln for ln in lines if ln.bbox[3] <= mid and ln is not line]
    if band == "top":
        return [ln.bbox[1] - line.bbox[3] for ln in below], above
    return [line.bbox[1] - ln.bbox[3] for ln in above], below


def _lone_small_header(line: Line, lines: Sequence[Line], body_size: float, top: float) -> bool:
    if not is_short_line(line.text) or line.size >= 0.95 * body_size:
        return False
    # Must be the first thing on the page and clearly separated from what follows.
    if line.bbox[1] > top + line.height:
        return False
    inner, _ = _gaps(line, lines, "top")
    return _clear_of(inner, line)


def _clear_of(gaps: list[float], line: Line) -> bool:
    """Return True when no gap to the text on the page side sets ``line`` close to it."""
    return not gaps or not set_close(min(gaps), line.height)


def _listed_titles(
    lines: Sequence[Line], found: dict[int, Band], keys: Sequence[tuple[int, str]]
) -> list[int]:
    """Return the furniture lines that are this page's outline titles, exactly.

    A title the outline points at on this page is the section's heading even where
    it sits like a running header (same place on every page, only a number
    changing: "Figure 2", "Figure 3"). A running header that merely repeats the
    title printed below it stays furniture: only a title with no other line of the
    page matching it is given back.
    """
    if not keys:
        return []
    listed = {key for _, key in keys}
    by_key: dict[str, list[int]] = {}
    for i, ln in enumerate(lines):
        key = match_key(ln.text)
        if key in listed:
            by_key.setdefault(key, []).append(i)
    return [ix[0] for ix in by_key.values() if len(ix) == 1 and ix[0] in found]

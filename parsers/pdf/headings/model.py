"""Heading levels for PDFs: outline (bookmarks), numbering patterns, font styles.

Levels come from a document-wide :class:`HeadingModel` (built by
``chunkweave.parsers.pdf.profile``) so that a page range parsed on its own gets the same
levels as the whole document. Evidence, strongest first:

1. The PDF outline: a short text unit whose normalised text matches an outline
   entry of its page (or the page before, as bookmarks often point just above a
   page break) takes that entry's level. Each entry matches once per parse.
   A body-styled (plain) unit must repeat the title exactly and not read like a
   table-of-contents line (leaders, page number); printed numbering that differs
   from the outline's ("CHAPTER ONE:" / "Chapter 1:", "B." / "II-B") is ignored.
2. Numbering: "2.3.1 Title" is level 3, "A.1 Title" level 2, "Chapter 4" level 1.
   Other schemes ("(1)", "1)", "a)", "I.", "一、", "（一）", "第二节", "①", "가.")
   take their level from the order in which the document nests them
   (:func:`scheme_levels`), like a word processor's multi-level list, so
   siblings share a level whatever their font.
3. Font style: heading styles (size, bold) ranked from largest to smallest; a
   style whose numbered headings mostly have depth d gets level d, so un-numbered
   headings ("Abstract", "References") line up with their numbered siblings; a
   regular style seen once beside a bold one of the same size shares its level
   (:func:`rank_styles`).
   With an outline, styles learnt from matched entries give levels to headings
   the outline leaves out, but only to units in a display size (larger than the
   body) or with numbering: a body-size bold line the outline does not list is
   a label, table header or message code. Other styles are not trusted.

Evidence against, applied after the outline check: the text of a unit
(``chunkweave.parsers.pdf.headings.filters``: table-of-contents entries, dates, author
lines, labels ending in a colon) and, per page, its neighbours
(:func:`demote_label_runs`, :func:`demote_figure_labels`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.headings.filters import is_toc_entry, plausible_heading_text
from chunkweave.parsers.pdf.typography import is_body_size, is_display_size, is_plain_body

Style = tuple[float, bool]
HeadingKind = Literal["title", "heading"]

MAX_LEVEL = 9
#: A numbering scheme must number this many headings to be a level of its own.
MIN_SCHEME_UNITS = 2
#: Share of a style's heading units that must be numbered for the numbering to set its level.
MIN_NUMBERED_SHARE = 0.25
#: Consecutive same-level un-numbered headings from this many on are labels.
MIN_LABEL_RUN = 3
#: Text units up to this many characters between a figure caption and the body
#: above it are the figure's labels (a body paragraph is longer).
MAX_LABEL_CHARS = 90

_FIGURE_CAPTION = re.compile(r"^(?:fig(?:ure)?|chart|diagram|scheme)\b", re.IGNORECASE)

_DOTTED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,6})\.?\s+\S")
_LETTERED = re.compile(r"^([A-Z](?:\.\d{1,3}){1,5})\.?\s+\S")
_NAMED = re.compile(r"^(chapter|part|appendix)\s+([0-9]{1,3}|[ivxlc]{1,6}|[a-z])\b", re.IGNORECASE)
_SECTION = re.compile(r"^section\s+(\d{1,3}(?:\.\d{1,3}){0,5})\b", re.IGNORECASE)
# A lone letter counts as a number only after a keyword ("Appendix C"), before a
# dotted number ("A.1") or before a capitalised word ("C The editor"): "R and
# statistics" and "A specific example" keep their first word.
_SPELLED = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty"
)
# Roman numbers: "IV", optionally with a lettered part ("III-A") or a dot ("II.").
_ROMAN = r"(?=[IVXLC])M{0,3}(?:C[MD]|D?C{0,3})(?:X[CL]|L?X{0,3})(?:I[XV]|V?I{0,3})"
_STRIP_NUMBER = re.compile(
    r"^(?:(?i:chapter|appendix|part|section)\s+(?:\d{1,3}|[A-Za-z]|(?i:"
    + _SPELLED
    + r")\b)(?:[.\-]\d{1,3})*"
    r"|\d{1,3}(?:[.\-]\d{1,3})*|[A-Z](?:[.\-]\d{1,3})+|[A-Z](?=\s+[A-Z])"
    r"|" + _ROMAN + r"(?:-[A-Z])?(?=[.:]?\s+\W*[A-Z\d])|[A-Z]-[A-Z](?=\s)|[A-Z](?=\.\s))[.:]?\s+"
)
_NON_ALNUM = re.compile(r"[\W_]+")


_BARE_LABEL = re.compile(
    r"^(?:(?:chapter|part|appendix|kapitel|chapitre|teil)\s+(?:[0-9]{1,3}|[ivxlc]{1,6}|[a-z])"
    r"|第[一二三四五六七八九十百\d]{1,4}[章部篇编編])[.:]?$",
    re.IGNORECASE,
)


def is_bare_label(text: str) -> bool:
    """Return True for a numbering label with no title ("Chapter 2", "Part IV", "第三章").

    Books often print the label on a line of its own above the chapter title; the
    title then belongs to the label's level.
    """
    return bool(_BARE_LABEL.match(text.strip()))


def numbering_depth(text: str) -> int | None:
    """Depth implied by a heading's numbering, or None when it is not numbered.

    "2" and "Chapter 4" -> 1, "2.3" and "A.1" -> 2, "2.3.1" -> 3. A number must be
    followed by text ("2.3 Results"), so bare numbers and dates are not headings.
    """
    text = text.strip()
    if m := _NAMED.match(text):
        return 1
    if m := _SECTION.match(text):
        return m.group(1).count(".") + 1
    if m := _DOTTED.match(text):
        return m.group(1).count(".") + 1
    if m := _LETTERED.match(text):
        return m.group(1).count(".") + 1
    return None


# Numbering schemes besides dotted decimals (see numbering_scheme). Each pattern must
# be followed by text; the parenthesis may be ASCII or full-width.
_CJK_DIGITS = "一二三四五六七八九十百"
_HANGUL_ORDER = "가나다라마바사아자차카타파하"
_SCHEMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cjk-part", re.compile(rf"^第[{_CJK_DIGITS}\d]{{1,4}}([章节節条條部篇编編款])\s*\S")),
    ("cjk-paren", re.compile(rf"^[(（][{_CJK_DIGITS}]{{1,3}}[)）]\s*\S")),
    ("cjk", re.compile(rf"^[{_CJK_DIGITS}]{{1,3}}[、.．]\s*\S")),
    ("circled", re.compile(r"^[\u2460-\u2473\u3251-\u325f]\s*\S")),
    ("hangul-paren", re.compile(rf"^[(（]?[{_HANGUL_ORDER}][)）]\s*\S")),
    ("hangul", re.compile(rf"^[{_HANGUL_ORDER}][.．]\s+\S")),
    ("paren-digit", re.compile(r"^[(（]\d{1,3}[)）]\s*\S")),
    ("digit-paren", re.compile(r"^\d{1,3}[)）]\s+\S")),
    ("paren-roman", re.compile(r"^\((?:i{1,3}|iv|vi{0,3}|ix|xi{0,3})\)\s+\S")),
    ("roman-paren", re.compile(r"^(?:i{1,3}|iv|vi{0,3}|ix|xi{0,3})\)\s+\S")),
    ("paren-lower", re.compile(r"^\([a-z]\)\s+\S")),
    ("lower-paren", re.compile(r"^[a-z]\)\s+\S")),
    ("roman", re.compile(r"^(?:I{1,3}|IV|VI{0,3}|IX|XI{0,3})\.\s+\S")),
)


def numbering_scheme(text: str) -> str | None:
    """Name of the numbering scheme a heading starts with, or None when it is not numbered.

    Dotted decimals carry their depth ("2.3 Results" -> "dec2"), so the scheme
    says how deep they nest on their own; the other schemes ("(1)", "1)", "a)",
    "(a)", "(i)", "I.", "一、", "(一)", "第二章", "①", "가.", "A.1", "Chapter 4")
    have no depth of their own: :func:`scheme_levels` places them by the order in
    which the document nests them.
    """
    text = text.strip()
    for name, pattern in _SCHEMES:
        if m := pattern.match(text):
            return f"{name}{m.group(1)}" if m.groups() else name
    depth = numbering_depth(text)
    if depth is None:
        return None
    if _NAMED.match(text):
        return "named"
    return f"dec{depth}" if _DOTTED.match(text) or _SECTION.match(text) else f"alpha{depth}"


def _dotted_depth(scheme: str) -> int | None:
    return int(scheme[3:]) if scheme.startswith("dec") else None


def scheme_levels(schemes: Iterable[str]) -> dict[str, int]:
    """Level of each numbering scheme, from the order the document nests them.

    ``schemes`` are the schemes of the numbered headings in document order. As
    with a word processor's multi-level list, a scheme already open continues at
    its level (closing the deeper ones); a new scheme opens one level below the
    current one; a dotted decimal closes every scheme opened under the shallower
    decimal above it (or, without one, takes the place of the first deeper decimal).
    Each scheme takes the level it holds most often, so a stray
    ordering does not split siblings over two levels; a scheme used fewer than
    :data:`MIN_SCHEME_UNITS` times is no level at all (a lone "(1)" on a cover).
    """
    seq = list(schemes)
    counts = Counter(seq)
    stack: list[str] = []
    votes: dict[str, Counter[int]] = {}
    for scheme in seq:
        if counts[scheme] < MIN_SCHEME_UNITS:
            continue
        if scheme in stack:
            del stack[stack.index(scheme) + 1 :]
        else:
            depth = _dotted_depth(scheme)
            if depth is not None:
                # "2.1" after "1.1.3": back up to the open decimal shallower than it.
                dotted = [(i, _dotted_depth(s)) for i, s in enumerate(stack)]
                shallower = [i for i, d in dotted if d is not None and d < depth]
                deeper = [i for i, d in dotted if d is not None and d > depth]
                if shallower:
                    del stack[shallower[-1] + 1 :]
                elif deeper:
                    del stack[deeper[0] :]
            stack.append(scheme)
        votes.setdefault(scheme, Counter())[len(stack)] += 1
    return {s: min(max(v, key=lambda d: (v[d], -d)), MAX_LEVEL) for s, v in votes.items()}


def uses_nested_schemes(levels: Mapping[str, int]) -> bool:
    """Return True when schemes other than dotted decimals take part in the nesting.

    Documents numbered with dotted decimals only keep the depth of their numbers.
    """
    return any(not s.startswith(("dec", "alpha", "named")) for s in levels)


def match_key(text: str) -> str:
    """Normalised form for matching outline titles: no numbering, alphanumerics only.

    A text repeated twice in a row ("Table of Contents Table of Contents") keys
    as one copy.
    """
    text = unicodedata.normalize("NFKC", text).strip()
    text = _STRIP_NUMBER.sub("", text, count=1)
    key = _NON_ALNUM.sub("", text.lower())
    half = len(key) // 2
    # Text drawn twice (a common fake-bold trick) extracts as "TitleTitle".
    if half >= 8 and len(key) % 2 == 0 and key[:half] == key[half:]:
        return key[:half]
    return key


def keys_match(a: str, b: str) -> bool:
    """Return True when two match keys name the same heading (equal, or one a long prefix)."""
    if not a or not b:
        return False
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 12 and long_.startswith(short) and len(short) >= 0.6 * len(long_)


@dataclass
class OutlineIndex:
    """Outline entries by 1-based page, consumed as they are matched."""

    by_page: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    _used: set[tuple[int, int]] = field(default_factory=set)

    @classmethod
    def from_toc(cls, toc: Iterable[list]) -> OutlineIndex:
        """Build from ``doc.get_toc()`` rows ``[level, title, page, ...]``."""
        index = cls()
        for row in toc:
            level, title, page = int(row[0]), str(row[1]), int(row[2])
            key = match_key(title)
            if key and page >= 1:
                index.by_page.setdefault(page, []).append((max(1, level), key))
        return index

    def __bool__(self) -> bool:
        return bool(self.by_page)

    def match(self, text: str, page: int, consume: bool = True, exact: bool = False) -> int | None:
        """Level of the outline entry matching ``text`` on ``page`` (or the page before).

        With ``exact`` the keys must be equal (no prefix match).
        """
        key = match_key(text)
        if not key:
            return None
        for p in (page, page - 1):
            for i, (level, entry) in enumerate(self.by_page.get(p, ())):
                if (p, i) in self._used:
                    continue
                if not (key == entry if exact else keys_match(key, entry)):
                    continue
                if consume:
                    self._used.add((p, i))
                return level
        return None

    def fresh(self) -> OutlineIndex:
        """Return a copy with no entries consumed (one per parse)."""
        return OutlineIndex(by_page=self.by_page)


@dataclass(frozen=True)
class HeadingModel:
    """Document-wide heading knowledge; see the module docstring for the rules.

    - ``body_size``: the dominant body font size.
    - ``style_levels``: level of each heading-capable style (rank or numbering).
    - ``outline_levels``: levels learnt for styles from matched outline entries.
    - ``title_style``: style of the document title (first page only), if any.
    - ``scheme_levels``: level of each numbering scheme (:func:`scheme_levels`), set
      when schemes other than dotted decimals nest in the document.
    """

    def numbered_level(self, text: str) -> int | None:
        """Level implied by the numbering of ``text`` (None when it is not numbered)."""
        scheme = numbering_scheme(text)
        if scheme is None:
            return None
        if scheme in self.scheme_levels:
            return self.scheme_levels[scheme]
        return numbering_depth(text)

    body_size: float
    style_levels: Mapping[Style, int]
    outline_levels: Mapping[Style, int]
    title_style: Style | None
    has_outline: bool
    scheme_levels: Mapping[str, int] = field(default_factory=dict)

    def may_be_unlisted(self, text: str, style: Style) -> bool:
        """Return True when a heading may be missing from the outline (always without one).

        The outline lists the sections; a unit it leaves out needs a display size
        or numbering, since body-size bold also marks labels, table headers and
        message codes.
        """
        if not self.has_outline:
            return True
        return is_display_size(style[0], self.body_size) or numbering_depth(text) is not None

    def nearest_level(self, style: Style) -> int:
        """Level of the known heading style closest in size (1 when none is known)."""
        known = {**self.style_levels, **self.outline_levels}
        if not known:
            return 1
        best = min(known, key=lambda s: (abs(s[0] - style[0]), s[1] != style[1]))
        return known[best]

    def resolve(
        self, text: str, style: Style, page: int, first_page: bool, outline: OutlineIndex | None
    ) -> tuple[HeadingKind, int] | None:
        """Decide whether a short text unit is a title/heading, and its level.

        ``page`` is 1-based; ``first_page`` is true on the document's first page.
        Returns None for ordinary text.
        """
        plain = is_plain_body(style, self.body_size)
        # Body-styled lines that repeat outline titles are mostly tables of contents
        # (whose lines carry page numbers or leaders), so a plain unit must repeat
        # the title exactly, on the entry's own page.
        if outline and not (plain and is_toc_entry(text)):
            level = outline.match(text, page, exact=plain)
            if level is not None:
                return "heading", min(level, MAX_LEVEL)
        if first_page and style == self.title_style:
            return "title", 1
        if not plausible_heading_text(text, first_page):
            return None
        if self.has_outline:
            learnt = self.outline_levels.get(style)
            if learnt is None or not self.may_be_unlisted(text, style):
                return None
            return "heading", learnt
        if style not in self.style_levels:
            return None
        depth = self.numbered_level(text)
        level = depth if depth is not None else self.style_levels[style]
        return "heading", min(level, MAX_LEVEL)


def rank_styles(
    candidates: Mapping[Style, int],
    numbered_depths: Mapping[Style, Mapping[int, int]],
    body_size: float | None = None,
) -> dict[Style, int]:
    """Assign a level to each heading style.

    ``candidates`` counts the heading-shaped units of each style. Styles are
    ranked largest first (bold before regular at equal size). A style whose
    numbered headings mostly share a depth takes that depth, when at least
    :data:`MIN_NUMBERED_SHARE` of its units are numbered (a few numbered steps in a
    style of un-numbered section titles say nothing about its level). A regular style used
    by a single unit at the size of a bold heading style takes that style's level:
    one unit (a subtitle, a tagline) is not a level of the hierarchy, and ranking
    it as one would push every smaller heading a level too deep. Any other style
    sits one level below the deepest larger style. So does a body-size style
    (given ``body_size``) below larger heading styles whatever its numbering: a
    bold "1. Step" in body text is a run-in label or a list step, not a chapter.
    """
    ranked = sorted(candidates, key=lambda s: (-s[0], not s[1]))
    levels: dict[Style, int] = {}
    deepest = 0
    for style in ranked:
        votes = numbered_depths.get(style)
        bold_twin = (style[0], True)
        body_sized = body_size is not None and is_body_size(style[0], body_size)
        numbered = sum(votes.values()) if votes else 0
        trusted = numbered >= MIN_NUMBERED_SHARE * candidates[style]
        if votes and trusted and not (body_sized and levels):
            level = max(votes, key=lambda d: (votes[d], -d))
        elif not style[1] and candidates[style] == 1 and bold_twin in levels:
            level = levels[bold_twin]
        else:
            # Without numbering: one below the deepest larger style (dense ranking).
            level = deepest + 1
        deepest = max(deepest, level)
        levels[style] = min(level, MAX_LEVEL)
    return levels


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

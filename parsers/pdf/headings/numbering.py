"""Heading numbering: the depth a number implies, the scheme it belongs to, scheme levels.

"2.3.1 Title" is depth 3, "A.1 Title" depth 2, "Chapter 4" depth 1
(:func:`numbering_depth`). Other schemes ("(1)", "1)", "a)", "I.", "一、", "（一）",
"第二节", "①", "가.") have no depth of their own: they take their level from the
order in which the document nests them (:func:`scheme_levels`), like a word
processor's multi-level list, so siblings share a level whatever their font.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

MAX_LEVEL = 9
#: A numbering scheme must number this many headings to be a level of its own.
MIN_SCHEME_UNITS = 2

_DOTTED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,6})\.?\s+\S")
_LETTERED = re.compile(r"^([A-Z](?:\.\d{1,3}){1,5})\.?\s+\S")
_NAMED = re.compile(r"^(chapter|part|appendix)\s+([0-9]{1,3}|[ivxlc]{1,6}|[a-z])\b", re.IGNORECASE)
_SECTION = re.compile(r"^section\s+(\d{1,3}(?:\.\d{1,3}){0,5})\b", re.IGNORECASE)

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

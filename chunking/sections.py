"""Section numbers: the number a heading carries in its text, in one normalised form.

A chunk's ``section_number`` is the number of the nearest numbered heading on its
heading path (:func:`nearest_section_number`), so a question that cites "section
7.3.1" can be filtered exactly; its ``section_numbers`` are every number it holds
(:func:`held_section_numbers`): a chunk of short sections merged together (1 Scope,
1.1 Purpose) is found by each of theirs. :func:`section_number` normalises a heading *or a
citation* the same way, so an app normalises its query with it too:

- dotted decimals and their named forms: "7.3.1.1 Scope", "Section 7.3.1", "§ 7.3.1",
  "§7.3.1." -> ``7.3.1.1`` / ``7.3.1``;
- lettered ones: "A.2 Tables", "a.2" -> ``A.2``;
- labelled ones keep their (lower-cased) label: "Article 5", "Art. 5" -> ``article 5``;
  "Chapter 4" -> ``chapter 4``; "Part iv" -> ``part IV``; "Appendix b" -> ``appendix B``;
- roman top-level headings: "II. Background" -> ``II``;
- CJK parts with their counter: "第二十三条", "第23条" -> ``第23条``; "第三章" -> ``第3章``.

The list schemes the parser also nests by ("(1)", "a)", "一、", "①", "가.") number
items inside a section, not the section: they are never a section number, and the
heading above them supplies it. Which headings are numbered at all is the parser's
call (:func:`chunkweave.parsers.numbering_scheme`); this module adds the
legal labels ("§", "Article") that do not set a heading level there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from chunkweave.parsers.api import numbering_scheme

_NUMBER = r"\d{1,3}(?:\.\d{1,3}){0,6}"
# Legal labels the parser does not level by: the section sign and articles.
_SECTION_SIGN = re.compile(rf"^§§?\s*({_NUMBER})(?![\d.]*\d)")
_ARTICLE = re.compile(r"^(?:article|art\.)\s*(\d{1,4}[a-z]?|[ivxlc]{1,6})\b", re.IGNORECASE)
_DOTTED = re.compile(rf"^(?:(?:section|sect?\.)\s*)?({_NUMBER})\.?(?:\s|$)", re.IGNORECASE)
_LETTERED = re.compile(r"^([A-Z](?:\.\d{1,3}){1,5})\.?(?:\s|$)", re.IGNORECASE)
_NAMED = re.compile(r"^(chapter|part|appendix)\s+([0-9]{1,3}|[ivxlc]{1,6}|[a-z])\b", re.IGNORECASE)
_ROMAN = re.compile(r"^([IVXLC]{1,6})\.(?:\s|$)")
_CJK_PART = re.compile(r"^第([一二三四五六七八九十百零〇\d]{1,6})([章节節条條部篇编編款])")
_CJK_VALUES = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0}

#: Longest normalised number kept (a heading is bounded, a stored property too).
MAX_LENGTH = 32


def section_number(text: str) -> str | None:
    """Return the normalised section number ``text`` starts with, or None.

    ``text`` is a heading ("7.3 Results") or a citation ("Section 7.3", "§ 12",
    "Article 5"); both give the same form (see the module docstring).
    """
    text = text.strip()
    if not text:
        return None
    # A citation is a heading without its title: "7.3" numbers as "7.3 x" does.
    # Typed citations may start lower-case ("a.2").
    cited = f"{text[0].upper()}{text[1:]} x"
    found = _legal(text) or _numbered(text) or _numbered(cited)
    return found if found is not None and len(found) <= MAX_LENGTH else None


def nearest_section_number(heading_path: Sequence[str]) -> str | None:
    """Return the number of the deepest numbered heading of ``heading_path``, or None.

    The path is a chunk's (:attr:`chunkweave.chunking.models.Chunk.heading_path`: the
    document title is not on it). A chunk of merged sections has their common path,
    so this is the number of the section holding them all (their own numbers:
    :func:`held_section_numbers`).
    """
    for heading in reversed(heading_path):
        number = section_number(heading)
        if number is not None:
            return number
    return None


def held_section_numbers(primary: str | None, numbers: Iterable[str | None]) -> tuple[str, ...]:
    """Return every section number a chunk holds: ``primary`` first, then ``numbers``.

    ``primary`` is the chunk's own (:func:`nearest_section_number` of its common
    path); ``numbers`` are those of the paths its pieces sit under, in reading order.
    A chunk of merged sections (1 Scope, 1.1 Purpose) so holds each of theirs
    (``("1", "1.1")``), each once; None (an unnumbered heading) is skipped.
    """
    found = dict.fromkeys(n for n in (primary, *numbers) if n is not None)
    return tuple(found)


def all_section_prefixes(numbers: Iterable[str]) -> tuple[str, ...]:
    """Return the :func:`section_prefixes` of every number of ``numbers``, each once."""
    return tuple(dict.fromkeys(p for n in numbers for p in section_prefixes(n)))


def section_prefixes(number: str | None) -> tuple[str, ...]:
    """Return the numbers of the sections holding section ``number``, itself last.

    ``7.3.1`` -> ``("7", "7.3", "7.3.1")``, ``A.2`` -> ``("A", "A.2")``; a number of
    one part (``article 5``, ``chapter 4``, ``第3章``) holds only itself; None: none.
    A search for every chunk of section 7.3 tests for ``7.3`` among them, so 7.30 and
    7.31 (which a prefix of the string would also match) stay out.
    """
    if number is None:
        return ()
    parts = number.split(".") if _PARTED.match(number) else [number]
    return tuple(".".join(parts[: i + 1]) for i in range(len(parts)))


_PARTED = re.compile(r"^(?:\d{1,3}|[A-Z])(?:\.\d{1,3})+$")


def _legal(text: str) -> str | None:
    if m := _SECTION_SIGN.match(text):
        return m.group(1)
    if m := _ARTICLE.match(text):
        value = m.group(1)
        return f"article {value.lower() if value[0].isdigit() else value.upper()}"
    return None


def _numbered(text: str) -> str | None:
    scheme = numbering_scheme(text)
    if scheme is None:
        return None
    if scheme.startswith("dec"):
        m = _DOTTED.match(text)
        return m.group(1) if m else None
    if scheme.startswith("alpha"):
        m = _LETTERED.match(text)
        return m.group(1).upper() if m else None
    if scheme == "named":
        m = _NAMED.match(text)
        if m is None:
            return None
        label, value = m.group(1).lower(), m.group(2)
        return f"{label} {value if value.isdigit() else value.upper()}"
    if scheme == "roman":
        m = _ROMAN.match(text)
        return m.group(1) if m else None
    if scheme.startswith("cjk-part"):
        m = _CJK_PART.match(text)
        if m is None:
            return None
        value = _cjk_int(m.group(1))
        return None if value is None else f"第{value}{m.group(2)}"
    return None  # list schemes: "(1)", "a)", "一、", "①", "가."


def _cjk_int(digits: str) -> int | None:
    """Value of a CJK (or Arabic) numeral up to 999: "二十三" -> 23, "百五" -> 105."""
    if digits.isdigit():
        return int(digits)
    total, current = 0, 0
    for char in digits:
        if char in _CJK_VALUES:
            current = current * 10 + _CJK_VALUES[char] if current else _CJK_VALUES[char]
        elif char == "十":
            total += (current or 1) * 10
            current = 0
        elif char == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current

"""Comparable forms of texts and headings, the same for every system and the ground truth."""

from __future__ import annotations

import re
import unicodedata

_SPELLED = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_NUMBERING = re.compile(
    r"^(?:(?:chapter|section|appendix|part)\s+)?"
    r"(?:[0-9]+(?:[.-][0-9]+)*\.?|[A-Z](?:\.[0-9]+)+\.?|[ivxlc]+\.|(?-i:[IVX]{1,5})"
    rf"|(?<=chapter )(?:{_SPELLED})\b|(?<=part )(?:{_SPELLED})\b)[:.]?\s+",
    re.IGNORECASE,
)
_MD_NOISE = re.compile(r"<!--.*?-->|[*_`~]+|\\(?=[^\w\s])", re.DOTALL)
_TOKEN = re.compile(r"\w+", re.UNICODE)


def normalize_text(text: str) -> str:
    """Return the comparable form of a text.

    NFKC, Markdown emphasis/escapes/comments dropped, lower case, one space between
    word tokens (punctuation dropped).
    """
    text = unicodedata.normalize("NFKC", text)
    text = _MD_NOISE.sub(" ", text)
    return " ".join(_TOKEN.findall(text.lower()))


def normalize_heading(text: str) -> str:
    """Return the comparable form of a heading.

    Leading section numbering ("2.3.1", "A.1", "Chapter 4", "Chapter One:", roman
    "II." or upper-case "II", exhibit numbers such as "2.3.59-12") is removed, since
    DOCX numbering lives outside the text and some PDFs print it in a block of its
    own, then :func:`normalize_text` applies.
    """
    text = _MD_NOISE.sub(" ", unicodedata.normalize("NFKC", text)).strip().lstrip("#").strip()
    return normalize_text(_NUMBERING.sub("", text))


def tokens(text: str) -> list[str]:
    """Normalised word tokens of ``text``."""
    return normalize_text(text).split()


_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def cell_tokens(text: str) -> list[str]:
    """Normalised word tokens of a table cell, right-to-left words in a canonical order.

    Extractors write Hebrew and Arabic either in logical order or in visual order
    (each word's letters reversed, as some ground truths store them); a token
    holding right-to-left letters is compared as the lesser of itself and its
    reversal, so both orders give the same token.
    """
    return [min(t, t[::-1]) if _RTL.search(t) else t for t in tokens(text)]


def has_rtl(text: str) -> bool:
    """Tell whether ``text`` holds right-to-left (Hebrew, Arabic) letters."""
    return bool(_RTL.search(text))


def markdown_body_text(md: str) -> str:
    """Return the plain text of a Markdown document, words in order.

    Heading marks, list marks, table pipes and separator rows are removed.
    """
    out: list[str] = []
    for line in md.splitlines():
        s = line.strip()
        if re.fullmatch(r"\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?", s) and "-" in s:
            continue  # table separator row
        s = re.sub(r"^#{1,6}\s+", "", s)
        s = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", s)
        s = s.replace("|", " ")
        out.append(s)
    return "\n".join(out)

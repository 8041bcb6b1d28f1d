"""Does a page's text layer read as language? Character-class statistics, no dictionary.

A PDF font without a usable Unicode map (its ``/ToUnicode`` CMap lost, or a subset
font whose codes are glyph numbers) makes MuPDF extract the codes themselves: a
subset's glyphs are numbered 1, 2, 3... in the order they first appear, so the text
becomes runs of ASCII punctuation and digits (``"#$!%&'%$()!&*!``); other maps
give private-use code points (U+E000-U+F8FF), U+FFFD or control characters.
Such a text layer must not be stored as text (:mod:`chunkweave.parsers.pdf.page`
OCRs the page instead, or drops it with a warning).

The test reads only Unicode character classes, so it holds in every script
(Korean, Japanese, Arabic, Ethiopic, Myanmar, Latin...): language in any script is
mostly letters and marks (categories ``L*``, ``M*``) or digits; number tables are
digits with some ``.,%()``; even code and formula pages keep ASCII punctuation
under a third of their characters. Repeats of one punctuation character
(``.....``, ``. . . .``, ``-----``: leaders and rules) count once.

Thresholds (:data:`MAX_SYMBOL_SHARE`, :data:`MAX_BAD_SHARE`): on every page of both
shared corpora, ASCII punctuation is at most 31% of a page's characters (an index
of R operators); the ToUnicode-stripped test file's pages are 75-81%.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import pymupdf

#: Pages with fewer non-space characters are not judged (a page number, a label).
MIN_CHARS = 20
#: A page whose characters are this share or more of ASCII punctuation and symbols,
#: and at least twice its share of letters, is glyph soup.
MAX_SYMBOL_SHARE = 0.5
#: A page whose characters are this share or more of code points that are not text
#: (private use, U+FFFD, controls, unassigned, surrogates) is unreadable.
MAX_BAD_SHARE = 0.3
#: Runs of one punctuation or symbol character, spaced or not (leaders, rules).
_REPEATS = re.compile(r"([^\w\s\ufffd\ue000-\uf8ff])(?: ?\1)+")
_ASCII_SYMBOLS = frozenset(chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum())
_NOT_TEXT = frozenset({"Co", "Cn", "Cs", "Cc"})


@dataclass(frozen=True)
class Legibility:
    """Character-class counts of one page's text (non-space characters, repeats once).

    ``letters``: categories ``L*`` and ``M*``; ``symbols``: ASCII punctuation and
    symbols; ``bad``: private-use, U+FFFD, control, unassigned or surrogate code points.
    """

    chars: int
    letters: int
    symbols: int
    bad: int

    def share(self, count: int) -> float:
        """Return ``count`` as a share of the characters (0 when there are none)."""
        return count / self.chars if self.chars else 0.0

    @property
    def garbled(self) -> bool:
        """Whether the text is not language (see the module docstring)."""
        if self.chars < MIN_CHARS:
            return False
        if self.share(self.bad) >= MAX_BAD_SHARE:
            return True
        symbols = self.share(self.symbols)
        return symbols >= MAX_SYMBOL_SHARE and symbols >= 2 * self.share(self.letters)

    @property
    def reason(self) -> str:
        """One phrase saying what the text is made of, for warnings and errors."""
        if self.share(self.bad) >= MAX_BAD_SHARE:
            return (
                f"{self.share(self.bad):.0%} private-use, replacement or control "
                "characters: glyph codes, not text"
            )
        return (
            f"{self.share(self.symbols):.0%} ASCII punctuation, "
            f"{self.share(self.letters):.0%} letters: glyph codes, not text"
        )


def legibility(texts: Iterable[str]) -> Legibility:
    """Count the character classes of ``texts`` (a page's lines)."""
    chars = letters = symbols = bad = 0
    for text in texts:
        for ch in _REPEATS.sub(r"\1", text):
            if ch.isspace():
                continue
            chars += 1
            cat = unicodedata.category(ch)
            if cat[0] in "LM":
                letters += 1
            elif ch in _ASCII_SYMBOLS:
                symbols += 1
            elif cat in _NOT_TEXT or ch == "\ufffd":
                bad += 1
    return Legibility(chars, letters, symbols, bad)


def unmapped_fonts(page: pymupdf.Page) -> list[str]:
    """Return the names of the page's fonts that carry no ``/ToUnicode`` map (for reasons).

    Fonts with a standard encoding (the base 14, WinAnsi) need none; the names only
    help a reader of a warning find the fonts to blame. Empty when unknown.
    """
    doc = page.parent
    names: list[str] = []
    try:
        for xref, _ext, kind, name, *_ in page.get_fonts():
            mappable = kind in ("Type0", "TrueType", "Type3")
            if mappable and doc.xref_get_key(xref, "ToUnicode")[0] == "null":
                names.append(name.split("+", 1)[-1])
    except (RuntimeError, ValueError):
        return names
    return sorted(set(names))

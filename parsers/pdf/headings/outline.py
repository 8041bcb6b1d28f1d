"""Matching text to the PDF outline (bookmarks): normalised keys, entries by page.

A short text unit whose normalised text (:func:`match_key`: no numbering,
alphanumerics only) matches an outline entry of its page, or of the page before
(bookmarks often point just above a page break), is that entry's heading; each
entry matches once per parse (:class:`OutlineIndex`). Printed numbering that
differs from the outline's ("CHAPTER ONE:" / "Chapter 1:", "B." / "II-B") is
ignored.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

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

    def continued_by(self, first: str, joined: str, page: int) -> bool:
        """Tell whether the outline reads ``joined`` as one title that ``first`` only starts.

        True when ``joined`` is an entry of ``page`` (or the page before), or a long
        start of one, and ``first`` alone is not that entry.
        """
        head, key = match_key(first), match_key(joined)
        if len(key) <= len(head):
            return False
        for p in (page, page - 1):
            for _, entry in self.by_page.get(p, ()):
                if entry != head and (entry == key or (len(key) >= 12 and entry.startswith(key))):
                    return True
        return False

    def fresh(self) -> OutlineIndex:
        """Return a copy with no entries consumed (one per parse)."""
        return OutlineIndex(by_page=self.by_page)

"""Text-level evidence against heading candidates.

A unit in a heading style is still not a heading when its text says otherwise.
These predicates look only at the text, so they apply the same way to every
document:

- table-of-contents entries: dot leaders followed by a page number;
- fewer than two letters ("A" in an index, "3" on a slide);
- a bare date ("December 12, 2022", "2023-01-17");
- a label that ends with a colon ("For more information:");
- a list of person names on the first page ("A. Smith, B. Jones and C. Lee").

Runs of label-like headings are handled by
:func:`chunkweave.parsers.pdf.headings.demotion.demote_label_runs`.
"""

from __future__ import annotations

import re

# Two or more dots (spaced or not) or an ellipsis, then an arabic or roman page number.
_LEADER = re.compile(r"(?:(?:\.\s?){2,}|…)\s*(?:\d+|[ivxlc]+)\s*$", re.IGNORECASE)
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE = re.compile(
    rf"^(?:{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}\s+{_MONTH},?\s+\d{{4}}|{_MONTH}\s+\d{{4}}"
    r"|\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4})$",
    re.IGNORECASE,
)
_NAME_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*")
_NAME_MARKS = re.compile(r"[*†‡§¶∗\d]+")
_NAME_PARTICLES = frozenset({"de", "da", "del", "van", "von", "der", "den", "la", "le", "the"})


def is_toc_entry(text: str) -> bool:
    """Return True for a table-of-contents line: dot leaders (or an ellipsis) then a page number."""
    return bool(_LEADER.search(text))


def is_date(text: str) -> bool:
    """Return True when the whole text is a date ("January 3, 2024", "01-17-2023")."""
    return bool(_DATE.match(text.strip()))


def is_name_list(text: str) -> bool:
    """Return True for two or more person names joined by commas or "and".

    Each name is one to five words, every word capitalised, an initial ("W.")
    or a particle ("van", "the"); footnote marks (digits, daggers) are ignored.
    A heading rarely lists several capitalised phrases this way, an author line
    on a title page always does.
    """
    parts = [p for p in _NAME_SPLIT.split(_NAME_MARKS.sub("", text)) if p.strip()]
    if len(parts) < 2:
        return False
    for part in parts:
        words = part.split()
        if not 1 <= len(words) <= 5:
            return False
        for word in words:
            if word.lower() in _NAME_PARTICLES:
                continue
            if not word[:1].isupper() or any(c.isdigit() for c in word):
                return False
    return True


def plausible_heading_text(text: str, first_page: bool) -> bool:
    """Return False when the text of a heading-styled unit shows it is something else.

    See the module docstring for the rules; ``first_page`` enables the author-line
    rule (names in a heading style are front matter only on the first page).
    """
    text = text.strip()
    if sum(c.isalpha() for c in text) < 2:
        return False
    if text.endswith(":") or is_toc_entry(text) or is_date(text):
        return False
    return not (first_page and is_name_list(text))

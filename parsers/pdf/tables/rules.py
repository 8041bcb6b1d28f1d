"""Rule evidence on a PDF page: vector strokes that could form a table (a cheap test).

Run on every page before the expensive ``find_tables`` (:mod:`.ruled`), which only
runs where this finds evidence.
"""

from __future__ import annotations

from collections.abc import Callable

import pymupdf


def has_table_rules(page: pymupdf.Page) -> bool:
    """Return True when the page's vector strokes could form a table (cheap).

    Evidence: three or more horizontal rules of about the same extent (booktabs
    style), or a grid: rules that meet other rules, at least three one way and two
    the other. A frame around a code block or a note (two and two) is not enough,
    nor is a frame plus an unrelated rule such as a footnote separator.
    """
    horizontal: list[tuple[float, float, float]] = []  # x0, x1, y
    vertical: list[tuple[float, float, float]] = []  # y0, y1, x
    banded: list[tuple[float, float, float]] = []  # horizontal rules in the bands
    top, bottom = 0.1 * page.rect.height, 0.9 * page.rect.height

    def across(x0: float, x1: float, y: float) -> None:
        # Rules in the header/footer bands separate furniture from the body.
        (horizontal if top <= y <= bottom else banded).append((x0, x1, y))

    seen = _visible(page)
    for path in page.get_cdrawings():
        for item in path.get("items", ()):
            if not seen(item):
                continue
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ay - by) < 1 and abs(ax - bx) > 10:
                    across(min(ax, bx), max(ax, bx), ay)
                elif abs(ax - bx) < 1 and abs(ay - by) > 5 and _reaches(ay, by, top, bottom):
                    vertical.append((min(ay, by), max(ay, by), ax))
            elif item[0] == "re":
                r = pymupdf.Rect(item[1])
                if r.height < 3 and r.width > 10:
                    across(r.x0, r.x1, (r.y0 + r.y1) / 2)
                elif r.width < 3 and r.height > 5 and _reaches(r.y0, r.y1, top, bottom):
                    vertical.append((r.y0, r.y1, (r.x0 + r.x1) / 2))
                elif r.width > 10 and r.height > 5:
                    across(r.x0, r.x1, r.y0)
                    across(r.x0, r.x1, r.y1)
                    if _reaches(r.y0, r.y1, top, bottom):
                        vertical += [(r.y0, r.y1, r.x0), (r.y0, r.y1, r.x1)]
    # A table set at the very top (or bottom) of the body has its outer rule in the
    # band: that rule counts when the body's column rules reach it.
    horizontal += [h for h in banded if _met(h, vertical)]
    if _is_grid(horizontal, vertical):
        return True
    spans: dict[tuple[int, int], int] = {}
    for x0, x1, _ in horizontal:
        key = (round(x0 / 4), round(x1 / 4))
        spans[key] = spans.get(key, 0) + 1
    return any(n >= 3 for n in spans.values())


#: Rules this close (points) count as meeting: strokes rarely join exactly.
_TOUCH = 3.0


def _visible(page: pymupdf.Page) -> Callable[[tuple], bool]:
    """Return a test telling whether a drawing item lies (partly) on the visible page.

    Print-ready PDFs draw crop and registration marks in the bleed, outside the crop
    box; a registration mark drawn twice is a small grid of rules, and taken for
    table evidence it would send every page to ``find_tables``. Drawings come in
    unrotated page coordinates, where the visible page is the crop box's size.
    """
    x1, y1 = page.cropbox.width + 1, page.cropbox.height + 1

    def seen(item: tuple) -> bool:
        if item[0] == "l":
            (ax, ay), (bx, by) = item[1], item[2]
            xs, ys = (min(ax, bx), max(ax, bx)), (min(ay, by), max(ay, by))
        elif item[0] == "re":
            r = pymupdf.Rect(item[1])
            xs, ys = (r.x0, r.x1), (r.y0, r.y1)
        else:
            return True
        return xs[1] >= -1 and xs[0] <= x1 and ys[1] >= -1 and ys[0] <= y1

    return seen


def _reaches(ay: float, by: float, top: float, bottom: float) -> bool:
    """Tell whether a vertical stroke from ``ay`` to ``by`` reaches the body band."""
    return max(ay, by) >= top and min(ay, by) <= bottom


def _met(rule: tuple[float, float, float], vertical: list[tuple[float, float, float]]) -> bool:
    """Tell whether two or more vertical rules meet horizontal ``rule``."""
    x0, x1, y = rule
    hits = sum(
        1
        for y0, y1, x in vertical
        if x0 - _TOUCH <= x <= x1 + _TOUCH and y0 - _TOUCH <= y <= y1 + _TOUCH
    )
    return hits >= 2


#: Pages with more strokes than this (plots, drawings) get the plain count test;
#: pairing every rule with every other would cost more than it saves.
_MAX_PAIRING = 400


def _is_grid(
    horizontal: list[tuple[float, float, float]], vertical: list[tuple[float, float, float]]
) -> bool:
    """Return True when at least 3x2 (or 2x3) rules meet each other: a table's grid."""
    if len(horizontal) < 2 or len(vertical) < 2:
        return False
    if len(horizontal) + len(vertical) > _MAX_PAIRING:
        return len(horizontal) >= 3
    h_hits = [0] * len(horizontal)
    v_hits = [0] * len(vertical)
    for i, (x0, x1, y) in enumerate(horizontal):
        for j, (y0, y1, x) in enumerate(vertical):
            if x0 - _TOUCH <= x <= x1 + _TOUCH and y0 - _TOUCH <= y <= y1 + _TOUCH:
                h_hits[i] += 1
                v_hits[j] += 1
    rows = sum(n >= 2 for n in h_hits)
    cols = sum(n >= 2 for n in v_hits)
    return (rows >= 3 and cols >= 2) or (rows >= 2 and cols >= 3)


#: Collinear rule segments this close (points) are one rule.
_JOIN = 1.5


def horizontal_rules(page: pymupdf.Page) -> list[tuple[float, float, float]]:
    """Return the page's horizontal rules as ``(x0, x1, y)``, touching segments joined.

    Report generators draw a rule under a spanning header as one segment per column
    it covers; joined, the rule spans exactly the columns the header covers, and a
    gap between two rules separates two headers.
    """
    segments: list[tuple[float, float, float]] = []
    for path in page.get_cdrawings():
        for item in path.get("items", ()):
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ay - by) < 1 and abs(ax - bx) > 2:
                    segments.append((min(ax, bx), max(ax, bx), (ay + by) / 2))
            elif item[0] == "re":
                r = pymupdf.Rect(item[1])
                if r.height < 2 and r.width > 2:
                    segments.append((r.x0, r.x1, (r.y0 + r.y1) / 2))
    segments.sort(key=lambda s: (round(s[2]), s[0]))
    out: list[tuple[float, float, float]] = []
    for x0, x1, y in segments:
        if out and abs(out[-1][2] - y) < 1 and x0 <= out[-1][1] + _JOIN:
            out[-1] = (out[-1][0], max(out[-1][1], x1), out[-1][2])
        else:
            out.append((x0, x1, y))
    return out

"""Scores of a system's normalised views against the ground truth.

Headings (matched one-to-one, level rank agreement), tables (cell-text overlap, shape),
text (n-gram F1), furniture leaks (with and without annotation) and chunks (the GT
heading each sits under, tables kept whole). Pure functions of
:mod:`bench.views` and :mod:`bench.groundtruth` records.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from dataclasses import dataclass

from bench.groundtruth import GtHeading, GtTable
from bench.normalize import cell_tokens, normalize_heading, normalize_text, tokens
from bench.views import ChunkView, Item


def prf(tp: int, n_pred: int, n_gt: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts; an empty side scores 0 (never NaN)."""
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gt if n_gt else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def _similar(a: str, b: str) -> bool:
    if a == b:
        return True
    if not a or not b or min(len(a), len(b)) / max(len(a), len(b)) < 0.8:
        return False
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.9


@dataclass(frozen=True)
class HeadingScore:
    """Heading detection on one document: counts plus matched (gt, predicted) levels."""

    tp: int
    n_pred: int
    n_gt: int
    level_pairs: tuple[tuple[int, int], ...]


def match_headings(pred: list[Item], gt: list[GtHeading]) -> HeadingScore:
    """Match predicted headings to GT headings one-to-one, in document order.

    Texts are compared after :func:`normalize_heading`; exact matches first, then near
    matches (similarity >= 0.9). Each predicted heading matches at most one GT heading
    and vice versa. Returns counts and the (gt level, predicted level) of each match.
    """
    heads = [
        (normalize_heading(i.text), i.level if i.level is not None else 1)
        for i in pred
        if i.kind == "heading"
    ]
    heads = [(t, lv) for t, lv in heads if t]
    gts = [(normalize_heading(h.text), h.level) for h in gt]
    used: set[int] = set()
    pairs: list[tuple[int, int]] = []
    by_text: dict[str, list[int]] = {}
    for j, (t, _) in enumerate(gts):
        by_text.setdefault(t, []).append(j)
    pending: list[tuple[str, int]] = []
    for t, lv in heads:
        hit = next((j for j in by_text.get(t, []) if j not in used), None)
        if hit is None:
            pending.append((t, lv))
            continue
        used.add(hit)
        pairs.append((gts[hit][1], lv))
    for t, lv in pending:
        hit = next((j for j, (g, _) in enumerate(gts) if j not in used and _similar(t, g)), None)
        if hit is not None:
            used.add(hit)
            pairs.append((gts[hit][1], lv))
    return HeadingScore(len(pairs), len(heads), len([g for g in gts if g[0]]), tuple(pairs))


def level_accuracy(pairs: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> float | None:
    """Share of matched headings whose level rank agrees with the GT's.

    Levels are compared by rank among the distinct levels used on each side (so a
    system numbering its top level 2, or a title 0 versus 1, is not penalised for
    the offset, only for flattening or misordering). GT titles (level 0) are left
    out: whether a document title is a level of its own is a labelling convention.
    None when there are no pairs.
    """
    pairs = [(g, p) for g, p in pairs if g != 0]
    if not pairs:
        return None
    g_rank = {lv: i for i, lv in enumerate(sorted({g for g, _ in pairs}))}
    p_rank = {lv: i for i, lv in enumerate(sorted({p for _, p in pairs}))}
    ok = sum(1 for g, p in pairs if g_rank[g] == p_rank[p])
    return ok / len(pairs)


@dataclass(frozen=True)
class TableScore:
    """Table detection on one document: matches and how many have the GT shape."""

    tp: int
    n_pred: int
    n_gt: int
    shape_ok: int


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def match_tables(pred: list[Item], gt: list[GtTable], *, min_overlap: float = 0.3) -> TableScore:
    """Match predicted tables to GT tables by cell-text overlap, one-to-one.

    Pairs with token Jaccard >= ``min_overlap`` are taken best first (tokens as
    :func:`~bench.normalize.cell_tokens` reads them: right-to-left words in either
    order). ``shape_ok``
    counts matches whose rows x cols equal the GT's (ragged predicted rows count by
    their widest row).
    """
    tabs = [i for i in pred if i.kind == "table"]
    p_tok = [set(cell_tokens(i.text)) for i in tabs]
    g_tok = [set(cell_tokens(" ".join(t.cells))) for t in gt]
    cand = sorted(
        ((_jaccard(p, g), pi, gi) for pi, p in enumerate(p_tok) for gi, g in enumerate(g_tok)),
        reverse=True,
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    tp = shape_ok = 0
    for score, pi, gi in cand:
        if score < min_overlap or pi in used_p or gi in used_g:
            continue
        used_p.add(pi)
        used_g.add(gi)
        tp += 1
        rows = tabs[pi].rows or ()
        shape = (len(rows), max((len(r) for r in rows), default=0))
        shape_ok += shape == (gt[gi].n_rows, gt[gi].n_cols)
    return TableScore(tp, len(tabs), len(gt), shape_ok)


def token_f1(pred_text: str, gt_text: str, n: int = 1) -> float:
    """Return the F1 of the multisets of normalised word n-grams.

    n=1 measures content; n=2 also local reading order, since a mis-ordered column
    breaks the bigrams across the seam.
    """

    def grams(text: str) -> Counter[tuple[str, ...]]:
        t = tokens(text)
        return Counter(tuple(t[i : i + n]) for i in range(len(t) - n + 1))

    p, g = grams(pred_text), grams(gt_text)
    overlap = sum((p & g).values())
    return prf(overlap, sum(p.values()), sum(g.values()))[2]


def furniture_leaks(
    body: list[str], furniture: list[str], reference: list[str] | tuple[str, ...] = ()
) -> tuple[int, int]:
    """How many GT furniture occurrences show up in the body, and how many there are.

    An occurrence is found if a body element equals its text, or, for furniture of
    three or more words, if its text occurs inside the body text. ``reference`` is the
    GT's own body (its texts, headings and table cells): a furniture text that the GT
    body also holds (a running footer repeating the document title, a running header
    repeating a chapter heading, a page number "1" next to a chapter number "1")
    leaks only in so far as the system's body holds it more often than the GT body
    does, since those occurrences cannot be told apart by text. Leaks per distinct
    text are capped at its GT count. Returns ``(leaked, total)``.
    """
    pred = _Occurrences(body)
    gt_body = _Occurrences(reference)
    leaked = total = 0
    for text, count in Counter(normalize_text(f) for f in furniture if normalize_text(f)).items():
        total += count
        leaked += min(count, max(0, pred.count(text) - gt_body.count(text)))
    return leaked, total


class _Occurrences:
    """Counts of a (normalised) furniture text in a list of body texts."""

    def __init__(self, texts: list[str] | tuple[str, ...]) -> None:
        self._texts = [normalize_text(t) for t in texts]
        self._joined = " \n ".join(self._texts)

    def count(self, text: str) -> int:
        """Elements equal to ``text``, or (three words or more) occurrences inside the text."""
        exact = sum(1 for t in self._texts if t == text)
        inside = self._joined.count(text) if len(text.split()) >= 3 else 0
        return max(exact, inside)


_PAGE_MARK = re.compile(r"^(?:page\s+)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s+(?:of|/)\s+\d{1,4})?$")
#: A running line: this many distinct pages at least, and this share of the pages.
RUNNING_MIN_PAGES = 3
RUNNING_MIN_SHARE = 0.2
#: Items this close to a page's start or end (body items, in reading order) are edge items.
EDGE_ITEMS = 2


def running_line_leaks(
    items: list[Item], headings: list[GtHeading] | None = None
) -> tuple[int, int]:
    """Furniture seen in the body without ground truth: ``(leaked items, pages)``.

    A proxy for documents with no header/footer annotation, applied the same way to
    every system. Per page, the first and last :data:`EDGE_ITEMS` body items (text or
    heading, in the system's order) are edge items; an edge item leaks when it is a
    bare page number ("12", "iv", "Page 3 of 9"), or when its text, digits masked,
    is at most 12 words and sits at the same edge on at least
    :data:`RUNNING_MIN_PAGES` pages and :data:`RUNNING_MIN_SHARE` of all pages (a
    running title or "Chapter 2 | 17" footer). Furniture a system labels as such
    and table cells are not body. An edge item that is one of the ground truth's
    ``headings`` on its page (a figure label such as "Drawing 4" that the document's
    own outline lists on every drawing page) is a heading, not a running line.
    """
    listed = {(h.page, normalize_heading(h.text)) for h in headings or () if h.page is not None}
    pages: dict[int, list[str]] = {}
    for it in items:
        if it.kind in ("text", "heading") and it.page is not None:
            pages.setdefault(it.page, []).append(normalize_text(it.text))
    n_pages = len(pages)
    edges: list[tuple[str, str]] = []  # (edge, text)
    for page, texts in pages.items():
        k = min(EDGE_ITEMS, len(texts))
        edge_items = [("top", t) for t in texts[:k]]
        # An item near both edges (a short page) counts once, at the top.
        edge_items += [("bottom", t) for t in texts[max(k, len(texts) - k) :]]
        edges += [(e, t) for e, t in edge_items if (page, normalize_heading(t)) not in listed]
    seen: Counter[tuple[str, str]] = Counter()
    for edge, t in edges:
        if t and len(t.split()) <= 12:
            seen[(edge, re.sub(r"\d+", "#", t))] += 1
    need = max(RUNNING_MIN_PAGES, RUNNING_MIN_SHARE * n_pages)
    leaked = 0
    for edge, t in edges:
        if not t:
            continue
        if _PAGE_MARK.match(t) or (
            len(t.split()) <= 12 and seen[(edge, re.sub(r"\d+", "#", t))] >= need
        ):
            leaked += 1
    return leaked, n_pages


def chunk_gt_headings(
    gt_stream: list[tuple[bool, str]], chunks: list[ChunkView]
) -> list[str | None]:
    """For each chunk, the normalised GT heading it sits under, or None if not located.

    The GT body is flattened into a token stream that remembers, for each position,
    the nearest heading at or before it. A chunk is located by its first 6 body tokens
    (fewer for short chunks), searched forward from the previous chunk's position; an
    empty string means "before any heading".
    """
    stream: list[str] = []
    under: list[str] = []
    current = ""
    for is_heading, text in gt_stream:
        if is_heading:
            current = normalize_heading(text)
        for tok in tokens(text):
            stream.append(tok)
            under.append(current)
    index: dict[tuple[str, ...], list[int]] = {}
    k = 6
    for i in range(len(stream) - k + 1):
        index.setdefault(tuple(stream[i : i + k]), []).append(i)
    out: list[str | None] = []
    last = 0
    for ch in chunks:
        toks = tokens(ch.text)
        pos = _locate(toks, stream, index, k, last)
        if pos is None:
            out.append(None)
            continue
        last = pos
        out.append(under[pos])
    return out


def _locate(
    toks: list[str],
    stream: list[str],
    index: dict[tuple[str, ...], list[int]],
    k: int,
    start: int,
) -> int | None:
    if len(toks) >= k:
        # try a few anchors: the first body tokens may be a heading the GT spells differently
        for off in (0, k, 2 * k):
            hits = index.get(tuple(toks[off : off + k]), [])
            after = [h for h in hits if h >= start] or hits
            if after:
                return max(0, after[0] - off)
        return None
    if not toks:
        return None
    n = len(toks)
    for i in range(start, len(stream) - n + 1):
        if stream[i : i + n] == toks:
            return i
    return None


def heading_path_correct(
    path: tuple[str, ...], expected: str | None, *, partial_gt: bool = False
) -> bool:
    """Tell whether a chunk's heading path agrees with the GT.

    It agrees if it ends in the expected GT heading (normalised), or is empty where the
    GT has no heading before the chunk. With ``partial_gt`` (a PDF outline, which lists
    only some of the headings) the expected heading may sit anywhere in the path: the
    nearest outline entry is then an ancestor of the nearest real heading.
    """
    if expected is None:
        return False
    if not path:
        return expected == ""
    if partial_gt:
        return any(_similar(normalize_heading(h), expected) for h in path)
    return _similar(normalize_heading(path[-1]), expected)


def percentile(values: list[int], q: float) -> int:
    """Nearest-rank percentile (q in 0..100) of ``values``; 0 for an empty list."""
    if not values:
        return 0
    s = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(s)))
    return s[rank - 1]


def table_kept_whole(cells: tuple[str, ...], chunk_texts: list[str], need: float = 0.9) -> bool:
    """Tell whether one chunk holds (nearly) all of a GT table's cell words.

    True if some chunk contains at least ``need`` of the table's distinct normalised
    cell tokens (a small tolerance for cells a parser spells differently). A table
    spread over several chunks, or lost, is not kept whole.
    """
    want = set(tokens(" ".join(cells)))
    if not want:
        return False
    return any(len(want & set(tokens(t))) >= need * len(want) for t in chunk_texts)

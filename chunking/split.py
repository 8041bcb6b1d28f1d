"""Splitting one text into spans that fit a token budget: sentences, then words.

All functions work on ``(start, end)`` character offsets into the original text, so
every piece is a verbatim substring and nothing is invented or lost: the spans of
:func:`split_span` cover every non-whitespace character of the input exactly once,
in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from chunkweave.chunking.tokens import Meter
from chunkweave.chunking.units import Piece

Span = tuple[int, int]

# A sentence ends at terminal punctuation (plus closing quotes/brackets) followed by
# whitespace and something that can start a sentence, or at a blank line. CJK full
# stops need no following space.
_SENTENCE_END = re.compile(
    r"""(?:[.!?…]+["'”’)\]]*\s+(?=["'“‘(\[]?[A-Z0-9\u00C0-\u024F])"""
    r"""|[。！？]+\s*|\n\s*\n\s*)"""
)
# Words before a period that rarely end a sentence ("e.g. The", "Fig. 3").
_ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "etc",
        "vs",
        "fig",
        "figs",
        "eq",
        "eqs",
        "no",
        "nos",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "sec",
        "ch",
        "vol",
        "cf",
        "al",
        "approx",
        "ref",
    }
)
_LINE = re.compile(r"[^\n]*\S[^\n]*")


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Sentences of ``text[start:end]`` as absolute, whitespace-trimmed spans."""
    stop = len(text) if end is None else end
    spans: list[Span] = []
    pos = start
    for match in _SENTENCE_END.finditer(text, start, stop):
        if _is_abbreviation(text, match.start()):
            continue
        _append_trimmed(spans, text, pos, match.end())
        pos = match.end()
    _append_trimmed(spans, text, pos, stop)
    return spans


def line_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Non-blank lines of ``text[start:end]`` as absolute spans (used for code)."""
    stop = len(text) if end is None else end
    return [(m.start(), m.end()) for m in _LINE.finditer(text, start, stop)]


def split_span(
    text: str, start: int, end: int, budget: int, meter: Meter, *, by_lines: bool = False
) -> list[Span]:
    """Split ``text[start:end]`` into consecutive spans each costing at most ``budget``.

    Sentences (or lines, for code) are packed greedily; a sentence over the budget is
    split between words; a single word over the budget is cut between characters
    (the only place a split falls inside a word). ``budget`` must be >= 1.
    """
    if budget < 1:
        raise ValueError(f"token budget must be >= 1, got {budget}")
    units = line_spans(text, start, end) if by_lines else sentence_spans(text, start, end)
    if meter.additive and meter.batched:
        meter.prefill_words(text, start, end)
    else:
        meter.prefill(text[a:b] for a, b in units)
    pieces: list[Span] = []
    for unit_start, unit_end in units:
        cost = meter.cost(text[unit_start:unit_end])
        if cost <= budget:
            pieces.append((unit_start, unit_end))
        else:
            pieces.extend(_split_words(text, unit_start, unit_end, budget, meter))
    return list(pack(pieces, text, budget, meter))


def pack(spans: list[Span], text: str, budget: int, meter: Meter) -> Iterator[Span]:
    """Merge consecutive spans greedily while the merged cost stays within ``budget``."""
    current: Span | None = None
    current_cost = 0
    for span in spans:
        cost = meter.cost(text[span[0] : span[1]])
        if current is not None and current_cost + cost <= budget:
            current = (current[0], span[1])
            current_cost += cost
            continue
        if current is not None:
            yield current
        current, current_cost = span, cost
    if current is not None:
        yield current


def _split_words(text: str, start: int, end: int, budget: int, meter: Meter) -> list[Span]:
    spans: list[Span] = []
    for word_start, word_end, cost in meter.words(text, start, end):
        if cost <= budget:
            spans.append((word_start, word_end))
        else:
            spans.extend(_split_chars(text, word_start, word_end, budget, meter))
    return list(pack(spans, text, budget, meter))


def _split_chars(text: str, start: int, end: int, budget: int, meter: Meter) -> list[Span]:
    # A "word" with more tokens than the budget (a URL, a hash, a run of CJK
    # characters without spaces): cut it into the longest prefixes that fit.
    spans: list[Span] = []
    pos = start
    while pos < end:
        length = end - pos
        while length > 1 and meter.word_cost(text[pos : pos + length]) > budget:
            length = max(1, length * 3 // 4)
        spans.append((pos, pos + length))
        pos += length
    return spans


def _is_abbreviation(text: str, punct: int) -> bool:
    # A single period after a known abbreviation or an initial ("J. Smith") does not
    # end the sentence.
    if text[punct] != "." or text[punct + 1 : punct + 2] == ".":
        return False
    word_start = punct
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:punct].lstrip("([\"'")
    return word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _append_trimmed(spans: list[Span], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))


def split_piece(piece: Piece, budget: int, meter: Meter) -> list[Piece]:
    """``piece`` as one or more fragments each costing at most ``budget`` tokens.

    Code is split between lines first, everything else between sentences.
    """
    if meter.cost(piece.text) <= budget:
        return [piece]
    spans = split_span(
        piece.source, piece.start, piece.end, budget, meter, by_lines=piece.kind == "code"
    )
    return [piece.span(start, end) for start, end in spans]

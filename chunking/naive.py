"""The structure-blind baseline: fixed token windows over the document's Markdown.

What a retrieval system without structure does, and what ``chunkweave eval`` compares
the strategies against (``--strategy naive``): the parse rendered as Markdown
(:func:`chunkweave.parsers.markdown.to_markdown`), cut into windows of ``window``
tokens of the embedder's tokenizer, consecutive windows sharing ``overlap`` tokens.
Headings, tables and sections are cut wherever a window ends, and nothing is added in
front of the text: the embedded text is the window itself. Windows end between words
(each word's token cost is counted once, specials excluded), so a window may be a few
tokens short of ``window``.

It is a yardstick, not an ingestion strategy: ``ChunkOptions.strategy`` cannot name it
and the pipeline never writes it.
"""

from __future__ import annotations

import re

from chunkweave.chunking.ids import assign_ids, sha1_hex
from chunkweave.chunking.models import Chunk, TokenCounter
from chunkweave.parsers.document import ParsedDocument
from chunkweave.parsers.markdown import to_markdown

_WORD = re.compile(r"\S+")


def naive_chunks(
    doc: ParsedDocument,
    counter: TokenCounter,
    *,
    doc_id: str,
    window: int,
    overlap: int,
) -> list[Chunk]:
    """Return ``doc``'s Markdown as windows of ``window`` tokens, ``overlap`` shared."""
    if window <= overlap:
        raise ValueError(f"window {window} must exceed overlap {overlap}")
    text = to_markdown(doc)
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    costs = _word_costs([text[a:b] for a, b in words], counter)
    # The embedder adds its special tokens to every window.
    room = window - counter.count("")
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        j, used = i, 0
        while j < len(words) and (j == i or used + costs[j] <= room):
            used += costs[j]
            j += 1
        spans.append((words[i][0], words[j - 1][1]))
        if j >= len(words):
            break
        back, k = 0, j
        while k - 1 > i and back + costs[k - 1] <= overlap:
            back += costs[k - 1]
            k -= 1
        i = k
    texts = [text[a:b] for a, b in spans]
    chunker = f"naive/{window}/{overlap}/{counter.name}"
    ids = assign_ids(doc_id, chunker, texts)
    return [
        Chunk(
            id=cid,
            doc_id=doc_id,
            source=doc.path,
            text=body,
            embed_text=body,
            type="text",
            chunk_index=n,
            token_count=counter.count(body),
            content_sha1=sha1_hex(body),
            doc_sha1=doc.sha1,
            chunker=chunker,
        )
        for n, (cid, body) in enumerate(zip(ids, texts, strict=True))
    ]


def _word_costs(words: list[str], counter: TokenCounter) -> list[int]:
    """Tokens each word costs inside a text (its count without the specials)."""
    distinct = sorted(set(words))
    many = getattr(counter, "count_many", None)
    counts = many(distinct) if callable(many) else [counter.count(w) for w in distinct]
    specials = counter.count("")
    cost = {w: max(int(c) - specials, 1) for w, c in zip(distinct, counts, strict=True)}
    return [cost[w] for w in words]

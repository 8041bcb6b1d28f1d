"""The structure-blind yardstick of ``chunkweave eval``: token windows over the parse's Markdown."""

from __future__ import annotations

import pytest

from chunkweave.chunking import ApproxTokenCounter
from chunkweave.chunking.naive import naive_chunks
from chunkweave.parsers.elements import Element, table_element
from chunkweave.parsers.markdown import to_markdown
from tests.chunk_helpers import make_doc


def _doc():
    words = " ".join(f"word{i}" for i in range(400))
    rows = (("Name", "Cost"), *((f"item {i}", f"{i}.00") for i in range(40)))
    return make_doc(
        [
            Element(type="heading", text="Costs", level=1, page=1, order=0),
            Element(type="paragraph", text=words, page=1, order=1),
            table_element(rows, header_rows=1, page=2),
            Element(type="paragraph", text="The end of the report.", page=3, order=3),
        ]
    )


def test_windows_fit_the_budget_share_the_overlap_and_cover_the_text_in_order():
    counter = ApproxTokenCounter()
    doc = _doc()
    chunks = naive_chunks(doc, counter, doc_id="d", window=64, overlap=16)
    assert len(chunks) > 5
    for c in chunks:
        assert counter.count(c.text) <= 64
        assert c.embed_text == c.text and c.type == "text" and c.heading_path == ()
    # Read without the overlaps, the windows are the Markdown, word for word; each
    # window after the first starts with some of the last one's words, at most the
    # overlap's worth.
    words = to_markdown(doc).split()
    seen: list[str] = []
    for n, c in enumerate(chunks):
        piece = c.text.split()
        k = max(i for i in range(len(piece)) if seen[len(seen) - i :] == piece[:i])
        if n:
            assert k > 0 and counter.count(" ".join(piece[:k])) - counter.count("") <= 16
        seen += piece[k:]
    assert seen == words
    # Structure-blind: the table is cut where a window ends, its header not repeated.
    with_rows = [c for c in chunks if "item " in c.text]
    assert len(with_rows) >= 2 and sum("| Name | Cost |" in c.text for c in with_rows) == 1
    assert len({c.id for c in chunks}) == len(chunks)


def test_the_window_must_exceed_the_overlap():
    with pytest.raises(ValueError, match="must exceed"):
        naive_chunks(_doc(), ApproxTokenCounter(), doc_id="d", window=16, overlap=16)

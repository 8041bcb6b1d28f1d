"""Helpers shared by the chunking tests: tiny documents, Hypothesis strategies, checks."""

from __future__ import annotations

import re

from hypothesis import strategies as st

from chunkweave.chunking.models import Chunk
from chunkweave.chunking.navigation import navigation_orders
from chunkweave.chunking.units import table_captions
from chunkweave.parsers.document import ParsedDocument
from chunkweave.parsers.elements import Element
from chunkweave.parsers.structure import finalize

_WS = re.compile(r"\s+")


def norm(text: str) -> str:
    """Text without any whitespace (chunk joins and splits only move whitespace)."""
    return _WS.sub("", text)


def el(type: str, text: str = "", **kw) -> Element:
    return Element(type=type, text=text, order=0, **kw)


def make_doc(elements: list[Element], title: str | None = "Test Doc") -> ParsedDocument:
    return ParsedDocument(
        path="/tmp/test.pdf",
        format="pdf",
        sha1="0" * 40,
        page_count=max((e.page or 1 for e in elements), default=1),
        title=title,
        elements=finalize(elements),
    )


def words(n: int, seed: str = "w") -> str:
    return " ".join(f"{seed}{i}" for i in range(n))


_word = st.one_of(
    st.sampled_from(
        [
            "the",
            "of",
            "table",
            "revenue",
            "Q3",
            "2024",
            "model",
            "section",
            "data",
            "value",
            "e.g.",
            "Fig.",
            "3.5",
            "growth",
            "ĉu",
            "東京",
            "résumé",
            "(see)",
            "end.",
        ]
    ),
    st.integers(0, 10**6).map(lambda i: f"w{i}"),
    st.integers(20, 150).map(lambda n: ("ab9/" * n)[:n]),  # URL-like blobs
)
_sentence = st.lists(_word, min_size=1, max_size=14).map(lambda ws: " ".join(ws) + ".")
_paragraph = st.lists(_sentence, min_size=1, max_size=12).map(" ".join)
_cell = st.lists(_word, min_size=0, max_size=4).map(" ".join)


@st.composite
def _table(draw: st.DrawFn, page: int) -> Element:
    cols = draw(st.integers(1, 5))
    nrows = draw(st.integers(1, 25))
    rows = tuple(tuple(draw(_cell) for _ in range(cols)) for _ in range(nrows))
    header = draw(st.integers(0, min(2, nrows)))
    text = "\n".join("\t".join(r) for r in rows)
    return el("table", text, rows=rows, header_rows=header, page=page)


@st.composite
def documents(draw: st.DrawFn) -> ParsedDocument:
    """Random documents: headings of levels 1-4, prose, lists, code, tables, captions."""
    out: list[Element] = []
    if draw(st.booleans()):
        out.append(el("title", "Doc Title", page=1))
    page = 1
    for _ in range(draw(st.integers(1, 14))):
        page += draw(st.sampled_from([0, 0, 0, 1]))
        kind = draw(
            st.sampled_from(
                ["heading", "paragraph", "paragraph", "list", "table", "code", "furniture"]
            )
        )
        if kind == "heading":
            level = draw(st.integers(1, 4))
            out.append(el("heading", draw(_sentence)[:60], level=level, page=page))
        elif kind == "paragraph":
            out.append(el("paragraph", draw(_paragraph), page=page))
        elif kind == "list":
            for _ in range(draw(st.integers(1, 6))):
                out.append(el("list_item", draw(_sentence), level=1, page=page))
        elif kind == "table":
            if draw(st.booleans()):
                out.append(el("caption", "Table: " + draw(_sentence), page=page))
            out.append(draw(_table(page)))
        elif kind == "code":
            lines = draw(st.lists(_sentence, min_size=1, max_size=12))
            out.append(el("code", "\n".join(lines), page=page))
        else:
            out.append(el("page_footer", f"Page footer {page}", page=page))
    return make_doc(out)


def attached_captions(doc: ParsedDocument) -> set[int]:
    kept = [e for e in doc.elements if not e.is_furniture]
    return {c.order for c in table_captions(kept).values()}


def prose_elements(doc: ParsedDocument, include_furniture: bool = False) -> list[Element]:
    skip = attached_captions(doc)
    if not include_furniture:
        skip |= navigation_orders(doc.elements)
    return [
        e
        for e in doc.elements
        if e.type != "table"
        and e.order not in skip
        and e.text.strip()
        and (include_furniture or not e.is_furniture)
    ]


def children(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.type != "section"]

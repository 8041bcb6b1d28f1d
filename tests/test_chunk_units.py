"""One behaviour per test: strategies, tables, context, options, IDs, parents."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document, resolve_options
from chunkweave.chunking.boundaries import auto_heading_level
from chunkweave.chunking.context import build_embed_text
from chunkweave.chunking.fingerprint import chunker_fingerprint
from chunkweave.chunking.ids import assign_ids, chunk_id, content_key
from chunkweave.chunking.split import sentence_spans
from tests.chunk_helpers import el, make_doc, norm, words

COUNTER = ApproxTokenCounter()


def chunk(doc, **kw):
    return chunk_document(doc, ChunkOptions(**kw), COUNTER, doc_id="d")


def test_section_boundary_is_never_crossed():
    doc = make_doc(
        [
            el("heading", "1 Alpha", level=1),
            el("paragraph", "Alpha text."),
            el("heading", "2 Beta", level=1),
            el("paragraph", "Beta text."),
        ]
    )
    # min_tokens 0: no tiny-section merging, so each section is its own chunk.
    chunks = chunk(doc, min_tokens=0)
    assert [c.text for c in chunks] == ["1 Alpha\n\nAlpha text.", "2 Beta\n\nBeta text."]
    assert [c.heading_path for c in chunks] == [("1 Alpha",), ("2 Beta",)]
    assert chunks[0].embed_text.startswith("Test Doc > 1 Alpha\n")


def test_tiny_sections_merge_only_under_the_same_parent():
    doc = make_doc(
        [
            el("heading", "1 Alpha", level=1),
            el("heading", "1.1 One", level=2),
            el("paragraph", "Short one."),
            el("heading", "1.2 Two", level=2),
            el("paragraph", "Short two."),
            el("heading", "2 Beta", level=1),
            el("paragraph", "Short three."),
        ]
    )
    chunks = chunk(doc)  # default min_tokens 48: all three sections are tiny
    assert [c.heading_path for c in chunks] == [("1 Alpha",), ("2 Beta",)]
    assert "Short two." in chunks[0].text and "Short three." not in chunks[0].text


def test_heading_path_and_context_line():
    doc = make_doc(
        [
            el("heading", "2 Scope", level=1),
            el("heading", "2.1 Limits", level=2),
            el("paragraph", words(20)),
        ],
        title="Manual",
    )
    [c] = chunk(doc)
    assert c.heading_path == ("2 Scope", "2.1 Limits")
    assert c.embed_text.splitlines()[0] == "Manual > 2 Scope > 2.1 Limits"
    assert c.embed_text.endswith(c.text)
    assert "Manual" not in c.text


def test_contextualize_off_embeds_the_text_alone():
    doc = make_doc([el("heading", "H", level=1), el("paragraph", "Body text.")])
    [c] = chunk(doc, contextualize=False)
    assert c.embed_text == c.text


def test_furniture_left_out_by_default_and_kept_on_request():
    doc = make_doc([el("page_header", "RUNNING HEAD", page=1), el("paragraph", "Body.", page=1)])
    assert all("RUNNING HEAD" not in c.text for c in chunk(doc))
    assert any("RUNNING HEAD" in c.text for c in chunk(doc, include_furniture=True))


def test_list_stays_together_when_it_fits():
    items = [el("list_item", f"item {i} " + words(6, f"x{i}"), level=1) for i in range(5)]
    doc = make_doc([el("paragraph", words(175, "p")), *items])
    chunks = chunk(doc, max_tokens=200)
    holding = [c for c in chunks if "item 0" in c.text]
    assert len(holding) == 1 and all(f"item {i}" in holding[0].text for i in range(5))
    assert holding[0].type == "list"


def test_oversized_paragraph_splits_at_sentences():
    sentences = [f"Sentence number {i} says {words(8, f's{i}')}." for i in range(40)]
    doc = make_doc([el("paragraph", " ".join(sentences))])
    chunks = chunk(doc, max_tokens=100)
    assert len(chunks) > 1
    for c in chunks:
        assert c.text.startswith("Sentence number") and c.text.endswith(".")
        assert c.token_count <= 100


def test_table_kept_whole_when_it_fits():
    rows = (("Name", "Value"), ("alpha", "1"), ("beta", "2"))
    doc = make_doc(
        [
            el("paragraph", "Before."),
            el("caption", "Table 1. Values"),
            el("table", "x", rows=rows, header_rows=1),
            el("paragraph", "After."),
        ]
    )
    chunks = chunk(doc, min_tokens=0)
    [table] = [c for c in chunks if c.type == "table"]
    assert (table.table_row_start, table.table_row_end) == (0, 2)
    assert table.text == "Table 1. Values\n| Name | Value |\n|---|---|\n| alpha | 1 |\n| beta | 2 |"
    assert table.table_html is not None and "<th>Name</th>" in table.table_html
    assert table.caption == "Table 1. Values"
    assert "Before." not in table.text and "After." not in table.text


def test_split_table_repeats_header_and_caption():
    rows = (("Year", "Revenue"),) + tuple((str(2000 + i), f"{i * 7} million") for i in range(80))
    doc = make_doc(
        [el("caption", "Table 2. Revenue by year"), el("table", "x", rows=rows, header_rows=1)]
    )
    chunks = chunk(doc, max_tokens=80)
    assert len(chunks) > 2
    assert chunks[0].text.startswith("Table 2. Revenue by year\n")
    for c in chunks:
        assert c.text.count("| Year | Revenue |") == 1
        assert "Table 2. Revenue by year" in c.embed_text
        assert c.token_count <= 80
    assert [c.table_row_start for c in chunks][0] == 0 and chunks[-1].table_row_end == 80
    assert len({c.table_id for c in chunks}) == 1


def test_table_html_format():
    rows = (("a", "b"), ("1", "2"))
    doc = make_doc([el("table", "x", rows=rows, header_rows=1)])
    [c] = chunk(doc, table_format="html")
    assert c.text.startswith("<table>") and c.table_markdown and c.table_markdown.startswith("|")


def test_headings_strategy_auto_level_and_merge():
    doc = make_doc(
        [
            el("heading", "1 A", level=1),
            el("heading", "1.1 B", level=2),
            el("paragraph", words(60, "b")),
            el("heading", "1.2 C", level=2),
            el("paragraph", words(60, "c")),
        ]
    )
    assert auto_heading_level(list(doc.elements)) == 2
    chunks = chunk(doc, strategy="headings", min_tokens=48)  # "1 A" alone is tiny
    assert [c.heading_path[-1] for c in chunks] == ["1.1 B", "1.2 C"]
    assert chunks[0].text.startswith("1 A\n\n1.1 B\n\n")


@pytest.mark.parametrize("strategy", ["fixed", "sliding", "sentences", "recursive", "pages"])
def test_baselines_respect_target(strategy):
    doc = make_doc(
        [
            el("paragraph", f"Sentence {i} " + words(12, f"q{i}") + ".", page=1 + i // 10)
            for i in range(60)
        ]
    )
    chunks = chunk(doc, strategy=strategy, max_tokens=120, target_tokens=60, overlap_tokens=10)
    assert len(chunks) > 3
    assert all(c.token_count <= 120 for c in chunks)


def test_sliding_windows_overlap_by_stride():
    doc = make_doc([el("paragraph", words(300))])
    chunks = chunk(doc, strategy="sliding", max_tokens=100, target_tokens=80, stride_tokens=40)
    first, second = chunks[0].text.split(), chunks[1].text.split()
    assert second[0] in first and first[-1] in second


def test_pages_strategy_one_chunk_per_page():
    doc = make_doc([el("paragraph", f"Page {p} text.", page=p) for p in (1, 1, 2, 3)])
    chunks = chunk(doc, strategy="pages")
    assert [c.pages for c in chunks] == [(1,), (2,), (3,)]


def test_semantic_splits_where_topics_change():
    topic = {"cat": [1.0, 0.0], "car": [0.0, 1.0]}

    def embed(texts):
        return [topic["cat" if "cat" in t else "car"] for t in texts]

    text = "The cat sleeps. A cat purrs. The car drives. A car honks."
    doc = make_doc([el("paragraph", text)])
    chunks = chunk_document(
        doc, ChunkOptions(strategy="semantic"), COUNTER, doc_id="d", embed=embed
    )
    assert [c.text for c in chunks] == [
        "The cat sleeps. A cat purrs.",
        "The car drives. A car honks.",
    ]
    with pytest.raises(ValueError, match="semantic"):
        chunk(doc, strategy="semantic")


def test_parent_chunks_link_children():
    doc = make_doc(
        [el("heading", "1 A", level=1), *[el("paragraph", words(80, f"a{i}")) for i in range(4)]]
    )
    chunks = chunk(doc, parent_chunks=True, max_tokens=100)
    [parent] = [c for c in chunks if c.type == "section"]
    kids = [c for c in chunks if c.type != "section"]
    assert len(kids) >= 4 and all(c.parent_id == parent.id for c in kids)
    assert norm(parent.text) == norm("".join(c.text for c in kids))
    assert parent.token_count <= 100 and chunks[0] is not None and chunks[0].type == "section"


def test_resolve_options_follows_the_embedder():
    assert resolve_options(ChunkOptions(), 256).max_tokens == 256
    assert resolve_options(ChunkOptions(), 256).target_tokens == 256
    assert resolve_options(ChunkOptions(max_tokens=1000), 256).max_tokens == 256
    assert resolve_options(ChunkOptions(), 8192).max_tokens == 1800
    assert resolve_options(ChunkOptions(), 8192).target_tokens == 512
    assert (
        resolve_options(ChunkOptions(max_tokens=100, target_tokens=300), 512).target_tokens == 100
    )


def test_unknown_option_is_an_error():
    with pytest.raises(ValidationError):
        ChunkOptions(combine_under_n_chars=10)  # type: ignore[call-arg]


def test_fingerprint_changes_with_options_and_counter():
    a = chunker_fingerprint(resolve_options(ChunkOptions(), 256), "c1")
    assert a == chunker_fingerprint(resolve_options(ChunkOptions(), 256), "c1")
    assert a != chunker_fingerprint(resolve_options(ChunkOptions(min_tokens=10), 256), "c1")
    assert a != chunker_fingerprint(resolve_options(ChunkOptions(), 256), "c2")
    assert a.startswith("elements/v")


def test_chunk_id_is_a_pure_function_of_its_inputs():
    key = content_key(text="t", embed_text="e", type="text", heading_path=("h",), pages=(1,))
    base = chunk_id("doc", "fp", key, 0)
    assert len(base) == 40 and base == chunk_id("doc", "fp", key, 0)
    assert (
        len(
            {
                base,
                chunk_id("doc2", "fp", key, 0),
                chunk_id("doc", "fp2", key, 0),
                chunk_id("doc", "fp", key, 1),
            }
        )
        == 4
    )
    other = content_key(text="t", embed_text="e2", type="text", heading_path=("h",), pages=(1,))
    assert chunk_id("doc", "fp", other, 0) != base


def test_repeated_content_gets_distinct_ids():
    ids = assign_ids("doc", "fp", ["k1", "k2", "k1", "k1"])
    assert len(set(ids)) == 4 and ids[0] == chunk_id("doc", "fp", "k1", 0)
    doc = make_doc(
        [el("paragraph", "Same."), el("heading", "X", level=1), el("paragraph", "Same.")] * 2
    )
    chunks = chunk(doc, min_tokens=0)
    assert len({c.id for c in chunks}) == len(chunks)


def test_embed_text_builder_does_not_repeat_the_caption():
    text = "Cap\n| a |\n|---|"
    assert build_embed_text(text, title="T", heading_path=("H",), caption="Cap") == "T > H\n" + text
    assert build_embed_text("| a |", title="T", heading_path=(), caption="Cap") == "T\nCap\n| a |"


def test_sentence_spans_keep_abbreviations():
    text = "See e.g. Fig. 3 for details. Next one! Last"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "See e.g. Fig. 3 for details.",
        "Next one!",
        "Last",
    ]


def test_empty_doc_id_is_rejected():
    with pytest.raises(ValueError, match="doc_id"):
        chunk_document(make_doc([el("paragraph", "x")]), ChunkOptions(), COUNTER, doc_id="")


def test_top_level_sections_under_a_title_do_not_merge():
    doc = make_doc(
        [
            el("title", "Guide"),
            el("heading", "1 Alpha", level=1),
            el("paragraph", "Short one."),
            el("heading", "2 Beta", level=1),
            el("paragraph", "Short two."),
        ],
        title="Guide",
    )
    chunks = chunk(doc)
    # The title-only section merges into its first child; siblings under the title stay apart.
    assert [c.heading_path for c in chunks] == [("Guide", "1 Alpha"), ("Guide", "2 Beta")]
    assert chunks[0].text.startswith("Guide\n\n1 Alpha")
    assert chunks[0].embed_text.splitlines()[0] == "Guide > 1 Alpha"


def test_packing_is_balanced_instead_of_leaving_a_tiny_tail():
    paragraphs = [el("paragraph", words(58, f"p{i}x")) for i in range(5)]
    doc = make_doc([el("heading", "1 A", level=1), *paragraphs])
    chunks = chunk(doc, max_tokens=300, target_tokens=250, min_tokens=0)
    sizes = [c.token_count for c in chunks]
    # Greedy packing to ~240 text tokens would give 4 paragraphs + a 1-paragraph tail.
    assert len(chunks) == 2
    assert max(sizes) - min(sizes) < COUNTER.count(paragraphs[0].text)
    assert norm(" ".join(c.text for c in chunks)) == norm(
        " ".join(["1 A", *(p.text for p in paragraphs)])
    )


def test_heading_only_section_joins_its_first_child_up_to_the_hard_limit():
    doc = make_doc(
        [
            el("heading", "1 Chapter", level=1),
            el("heading", "1.1 Part", level=2),
            el("paragraph", words(140, "q")),
        ]
    )
    # The child alone nearly fills the 150-token target; with the chapter heading
    # it is over the target but within max_tokens, so the heading is not left alone.
    chunks = chunk(doc, max_tokens=300, target_tokens=150)
    assert len(chunks) == 1
    assert chunks[0].text.startswith("1 Chapter\n\n1.1 Part\n\n")
    assert chunks[0].heading_path == ("1 Chapter", "1.1 Part")


def test_a_lead_in_ending_with_a_colon_stays_with_what_it_introduces():
    body = [el("paragraph", words(30, f"p{i}") + ".") for i in range(4)]
    doc = make_doc(
        [
            el("heading", "1 Alpha", level=1),
            *body,
            el("paragraph", "We could proceed as follows:"),
            el("code", "> x <- matrix(0, n, b)"),
            el("paragraph", words(30, "z") + "."),
        ]
    )
    # Room for about one paragraph per chunk: plain packing ends a chunk on the
    # lead-in and opens the next with the code it introduces.
    chunks = chunk(doc, max_tokens=60)
    [lead] = [c for c in chunks if "as follows:" in c.text]
    assert "> x <- matrix(0, n, b)" in lead.text


def test_short_sibling_sections_share_a_chunk_but_not_across_parents():
    doc = make_doc(
        [
            el("heading", "1 Alpha", level=1),
            el("paragraph", words(40, "intro")),
            el("heading", "1.1 One", level=2),
            el("paragraph", words(30, "one")),
            el("heading", "1.2 Two", level=2),
            el("paragraph", words(30, "two")),
            el("heading", "2 Beta", level=1),
            el("heading", "2.1 Three", level=2),
            el("paragraph", words(30, "three")),
        ]
    )
    chunks = chunk(doc, max_tokens=300, target_tokens=250, min_tokens=0)
    # 1.1 and 1.2 (each under half the target) pack together under "1 Alpha";
    # "2.1 Three" stays out of chapter 1.
    [both] = [c for c in chunks if "one0" in c.text]
    assert "two0" in both.text and "three0" not in both.text
    assert both.heading_path == ("1 Alpha",)
    assert both.text.index("1.1 One") < both.text.index("one0") < both.text.index("1.2 Two")
    assert all(c.heading_path[0] == "2 Beta" for c in chunks if "three0" in c.text)


def test_an_empty_section_joins_a_neighbour_even_at_the_top_level():
    doc = make_doc(
        [
            el("title", "Guide"),
            el("paragraph", words(20, "cover")),
            el("heading", "Table of Contents", level=1),
            el("heading", "1 Alpha", level=1),
            el("paragraph", words(20, "alpha")),
        ],
        title="Guide",
    )
    chunks = chunk(doc, min_tokens=0)
    assert not any(c.text == "Table of Contents" for c in chunks)
    [holder] = [c for c in chunks if "Table of Contents" in c.text]
    assert "cover0" in holder.text and "alpha0" not in holder.text


def test_a_chapter_heading_is_packed_with_its_first_subsection():
    doc = make_doc(
        [
            el("heading", "1 Chapter", level=1),
            el("heading", "1.1 Part", level=2),
            *[el("paragraph", words(60, f"p{i}x")) for i in range(4)],
        ]
    )
    # The subsection alone needs two chunks at this size: the chapter heading opens
    # the first of them instead of standing alone.
    chunks = chunk(doc, max_tokens=200, target_tokens=200, min_tokens=0)
    assert len(chunks) == 2
    assert chunks[0].text.startswith("1 Chapter\n\n1.1 Part\n\n")
    assert chunks[0].heading_path == ("1 Chapter", "1.1 Part")


def test_a_heading_never_ends_a_chunk():
    body = [el("paragraph", words(45, f"p{i}x")) for i in range(6)]
    doc = make_doc(
        [
            el("heading", "1 A", level=1),
            *body[:3],
            el("heading", "1.0.1 Deep", level=4),  # below section_level: packed in the section
            *body[3:],
        ]
    )
    chunks = chunk(doc, max_tokens=120, min_tokens=0)
    assert len(chunks) > 2
    for c in chunks:
        assert not c.text.endswith("1.0.1 Deep")


def test_parent_chunk_holds_a_folded_chapter_heading():
    doc = make_doc(
        [
            el("heading", "1 Chapter", level=1),
            el("heading", "1.1 Part", level=2),
            *[el("paragraph", words(60, f"p{i}x")) for i in range(4)],
        ]
    )
    chunks = chunk(doc, max_tokens=200, target_tokens=200, min_tokens=0, parent_chunks=True)
    parents = {c.id: c for c in chunks if c.type == "section"}
    children = [c for c in chunks if c.type != "section"]
    assert children[0].text.startswith("1 Chapter")
    for child in children:
        assert child.parent_id in parents
        assert norm(child.text) in norm(parents[child.parent_id].text)

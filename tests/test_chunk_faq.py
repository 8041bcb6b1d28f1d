"""Addressable sections: the ``faq`` strategy, merged sections that keep their headings,
and ``headings`` merging tiny sections into their predecessor."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.chunking.models import Chunk
from chunkweave.parsers import ParsedDocument, parse_document

COUNTER = ApproxTokenCounter()
QUESTIONS = (
    ("How do I reset my password?", "Use the link on the sign-in page."),
    ("Can I change my username?", "No, usernames are permanent."),
    ("Where do I find my invoices?", "Under Billing, in your account menu."),
    ("How do I close my account?", "Write to support from your account email."),
)


@pytest.fixture(scope="module")
def faq_doc(tmp_path_factory: pytest.TempPathFactory) -> ParsedDocument:
    d = docx.Document()
    d.add_heading("Help center FAQ", level=1)
    for question, answer in QUESTIONS:
        d.add_heading(question, level=3)
        d.add_paragraph(answer)
    path = Path(tmp_path_factory.mktemp("faq")) / "faq.docx"
    d.save(str(path))
    return parse_document(path)


def _chunk(doc: ParsedDocument, **kw: object) -> list[Chunk]:
    opts = ChunkOptions.model_validate({"max_tokens": 256, **kw})
    return chunk_document(doc, opts, COUNTER, doc_id="faq")


def test_faq_gives_one_chunk_per_question_with_it_in_path_and_context(
    faq_doc: ParsedDocument,
) -> None:
    chunks = _chunk(faq_doc, strategy="faq")
    assert len(chunks) == 4
    for chunk, (question, answer) in zip(chunks, QUESTIONS, strict=True):
        assert chunk.heading_path == ("Help center FAQ", question)
        assert chunk.embed_text.split("\n")[0] == f"Help center FAQ > {question}"
        assert question in chunk.text and answer in chunk.text
        assert chunk.section_headings == ()
    # The group heading opens the first question's chunk rather than standing alone.
    assert chunks[0].text.startswith("Help center FAQ")


def test_faq_never_merges_whatever_the_minimum_size(faq_doc: ParsedDocument) -> None:
    assert len(_chunk(faq_doc, strategy="faq", min_tokens=10_000)) == 4


@pytest.mark.parametrize("strategy", ["elements", "headings"])
def test_merged_sections_keep_their_headings_in_context_and_metadata(
    faq_doc: ParsedDocument, strategy: str
) -> None:
    chunks = _chunk(faq_doc, strategy=strategy, merge_sections="listed")
    merged = [c for c in chunks if len(c.section_headings) > 1]
    assert merged, "the tiny question sections merge under these strategies"
    listed = [q for c in chunks for q in c.section_headings]
    assert listed == [q for q, _ in QUESTIONS]
    for chunk in merged:
        assert chunk.heading_path == ("Help center FAQ",)
        context = chunk.embed_text.split("\n")[0]
        assert context == "Help center FAQ > " + "; ".join(chunk.section_headings)


def test_parent_labelling_is_the_old_common_path(faq_doc: ParsedDocument) -> None:
    chunks = _chunk(faq_doc, strategy="elements", merge_sections="parent")
    assert len(chunks) == 1
    assert chunks[0].embed_text.split("\n")[0] == "Help center FAQ"
    assert chunks[0].section_headings == ()


def test_never_keeps_each_question_apart_under_elements(faq_doc: ParsedDocument) -> None:
    chunks = _chunk(faq_doc, strategy="elements", merge_sections="never")
    assert [c.heading_path[-1] for c in chunks] == [q for q, _ in QUESTIONS]


def _sections_doc(tmp_path: Path, bodies: list[str]) -> ParsedDocument:
    d = docx.Document()
    for i, body in enumerate(bodies):
        d.add_heading(f"Part {i}", level=2)
        d.add_paragraph(body)
    path = tmp_path / "parts.docx"
    d.save(str(path))
    return parse_document(path)


def test_headings_merges_a_tiny_section_into_its_predecessor(tmp_path: Path) -> None:
    long = " ".join(["The committee reviewed every budget line in detail."] * 12)
    doc = _sections_doc(tmp_path, [long, "Short note.", long])
    chunks = _chunk(doc, strategy="headings", min_tokens=30, max_tokens=512)
    assert [c.section_headings for c in chunks] == [("Part 0", "Part 1"), ()]
    assert chunks[0].text.endswith("Short note.")


def test_headings_leaves_a_tiny_first_section_alone(tmp_path: Path) -> None:
    long = " ".join(["The committee reviewed every budget line in detail."] * 12)
    doc = _sections_doc(tmp_path, ["Short note.", long])
    chunks = _chunk(doc, strategy="headings", min_tokens=30, max_tokens=512)
    assert [c.heading_path for c in chunks] == [("Part 0",), ("Part 1",)]

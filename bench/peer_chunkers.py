"""Peer chunkers as ``(path, budget) -> list[PeerChunk]``, shared by the chunk benchmarks.

Each adapter runs one peer library with its documented chunking entry point, a token
budget counted with the default embedder's own WordPiece tokenizer
(``storage/models/all-MiniLM-L6-v2-int8/tokenizer.json``) where the peer accepts a
counter, and returns per chunk the text it stores, the text it would embed (its own
contextualised text where it offers one, else the stored text), the heading path it
reports and the pages.

- ``langchain_recursive``: RecursiveCharacterTextSplitter with its Markdown separators
  on pymupdf4llm (+layout) Markdown, ``chunk_size=budget`` tokens, no overlap (PDF only);
- ``unstructured_by_title``: ``chunk_by_title`` on unstructured's elements (fast PDF
  strategy), ``max_characters=4 * budget`` (it counts characters only);
- ``docling_hybrid``: docling-core's HybridChunker, ``max_tokens=budget``; the embed text
  is ``contextualize(chunk)`` (headings in front), as docling documents (DOCX only:
  docling's PDF path needs hub models).

Peer libraries are imported inside the adapters: they exist only in ``bench/.venv-peers``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.parse_quality import ROOT

TOKENIZER = ROOT / "storage" / "models" / "all-MiniLM-L6-v2-int8" / "tokenizer.json"


@dataclass(frozen=True)
class PeerChunk:
    """One peer chunk: stored text, embedded text, heading path, pages, ``table``/``text``."""

    text: str
    embed_text: str
    heading_path: tuple[str, ...] = ()
    pages: tuple[int, ...] = ()
    kind: str = "text"


class WordPieceCounter:
    """The default embedder's tokenizer as a chunkweave ``TokenCounter`` (no truncation)."""

    name = "minilm-wordpiece"

    def __init__(self) -> None:
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(TOKENIZER))
        self._tok.no_truncation()

    def count(self, text: str) -> int:
        """Return the token count of ``text``, special tokens included."""
        return len(self._tok.encode(text).ids)


def leading_heading(text: str) -> tuple[str, ...]:
    """Return the Markdown heading a chunk starts with as a one-element path (else ``()``)."""
    m = re.match(r"\s*#{1,6}\s+(.+)", text)
    return (m.group(1).strip(),) if m else ()


def langchain_recursive(path: Path, budget: int) -> list[PeerChunk]:
    """LangChain's Markdown-aware recursive splitter on pymupdf4llm Markdown."""
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    from bench.peers import pymupdf4llm_markdown

    counter = WordPieceCounter()
    splitter = RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN, chunk_size=budget, chunk_overlap=0, length_function=counter.count
    )
    texts = splitter.split_text(pymupdf4llm_markdown(path))
    return [PeerChunk(t, t, leading_heading(t)) for t in texts]


def unstructured_by_title(path: Path, budget: int) -> list[PeerChunk]:
    """Run unstructured's ``chunk_by_title``; the heading path is the first Title."""
    from unstructured.chunking.title import chunk_by_title

    from bench.peers import unstructured_elements

    out = []
    for chunk in chunk_by_title(unstructured_elements(path), max_characters=4 * budget):
        orig = getattr(chunk.metadata, "orig_elements", None) or []
        first = orig[0] if orig else None
        heading = (first.text,) if first is not None and first.category == "Title" else ()
        page = getattr(chunk.metadata, "page_number", None)
        kind = "table" if chunk.category in ("Table", "TableChunk") else "text"
        out.append(PeerChunk(chunk.text, chunk.text, heading, (page,) if page else (), kind))
    return out


def docling_hybrid(path: Path, budget: int) -> list[PeerChunk]:
    """docling-core's HybridChunker; embed text is its ``contextualize`` output."""
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
    from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer
    from transformers import PreTrainedTokenizerFast

    from bench.peers import docling_document

    tok = PreTrainedTokenizerFast(tokenizer_file=str(TOKENIZER))
    chunker = HybridChunker(tokenizer=HuggingFaceTokenizer(tokenizer=tok, max_tokens=budget))
    out = []
    for chunk in chunker.chunk(docling_document(path)):
        headings = tuple(chunk.meta.headings or ())
        is_table = any(getattr(i, "label", "") == "table" for i in chunk.meta.doc_items)
        kind = "table" if is_table else "text"
        out.append(PeerChunk(chunk.text, chunker.contextualize(chunk), headings, (), kind))
    return out


PeerFn = Callable[[Path, int], list[PeerChunk]]

#: Peer name -> (file formats it handles, adapter).
PEERS: dict[str, tuple[frozenset[str], PeerFn]] = {
    "langchain:recursive": (frozenset({"pdf"}), langchain_recursive),
    "unstructured:by_title": (frozenset({"pdf", "docx"}), unstructured_by_title),
    "docling:hybrid": (frozenset({"docx"}), docling_hybrid),
}

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
  docling's PDF path needs hub models);
- ``llamaindex_sentence``: LlamaIndex's default ingestion path, ``SimpleDirectoryReader``
  (pypdf text per page for PDF, docx2txt for DOCX) then ``SentenceSplitter`` with
  ``chunk_size=budget`` tokens, no overlap; the embed text is the node's
  ``MetadataMode.EMBED`` content (its page label and file path in front), as LlamaIndex
  embeds it. This is fixed-size sentence packing with no notion of headings or tables;
- ``llamaindex_sentence_cw``: the same ``SentenceSplitter`` on chunkweave's own parse
  rendered as Markdown (``chunkweave parse --format md``: headings as ``#`` lines, tables
  as pipe tables, furniture left out), embed text = chunk text. Same text as chunkweave's
  strategies, so the difference to them is the chunking alone.

Peer libraries are imported inside the adapters: they exist only in ``bench/.venv-peers``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.options import ROOT

TOKENIZER = ROOT / "storage" / "models" / "all-MiniLM-L6-v2-int8" / "tokenizer.json"


@dataclass(frozen=True)
class PeerChunk:
    """One peer chunk: stored text, embedded text, heading path, pages, ``table``/``text``."""

    text: str
    embed_text: str
    heading_path: tuple[str, ...] = ()
    pages: tuple[int, ...] = ()
    kind: str = "text"


def wordpiece_tokenizer() -> Any:
    """Return the default embedder's WordPiece tokenizer (``tokenizers.Tokenizer``), untruncated."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.no_truncation()
    return tok


class WordPieceCounter:
    """The default embedder's tokenizer as a chunkweave ``TokenCounter`` (no truncation)."""

    name = "minilm-wordpiece"

    def __init__(self) -> None:
        self._tok = wordpiece_tokenizer()

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


def llamaindex_sentence(path: Path, budget: int) -> list[PeerChunk]:
    """LlamaIndex's ``SimpleDirectoryReader`` + ``SentenceSplitter`` with its embed text."""
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.schema import MetadataMode

    docs = SimpleDirectoryReader(input_files=[str(path)]).load_data()
    out = []
    for node in _sentence_splitter(budget).get_nodes_from_documents(docs):
        label = str(node.metadata.get("page_label", ""))
        pages = (int(label),) if label.isdigit() else ()
        embed = node.get_content(metadata_mode=MetadataMode.EMBED)
        out.append(PeerChunk(node.get_content(), embed, (), pages))
    return out


def llamaindex_sentence_cw(path: Path, budget: int) -> list[PeerChunk]:
    """LlamaIndex's ``SentenceSplitter`` on chunkweave's parse rendered as Markdown."""
    from llama_index.core import Document

    from chunkweave.parsers import parse_document
    from chunkweave.parsers.markdown import to_markdown

    doc = Document(text=to_markdown(parse_document(path)))
    nodes = _sentence_splitter(budget).get_nodes_from_documents([doc])
    return [
        PeerChunk(n.get_content(), n.get_content(), leading_heading(n.get_content())) for n in nodes
    ]


def _sentence_splitter(budget: int) -> Any:  # a llama_index SentenceSplitter (peer venv only)
    from llama_index.core.node_parser import SentenceSplitter

    tok = wordpiece_tokenizer()
    # The splitter measures text without special tokens; the embedder adds two.
    return SentenceSplitter(
        chunk_size=budget - 2,
        chunk_overlap=0,
        tokenizer=lambda text: tok.encode(text, add_special_tokens=False).ids,
    )


PeerFn = Callable[[Path, int], list[PeerChunk]]

#: Peer name -> (file formats it handles, adapter).
PEERS: dict[str, tuple[frozenset[str], PeerFn]] = {
    "langchain:recursive": (frozenset({"pdf"}), langchain_recursive),
    "unstructured:by_title": (frozenset({"pdf", "docx"}), unstructured_by_title),
    "docling:hybrid": (frozenset({"docx"}), docling_hybrid),
    "llamaindex:sentence": (frozenset({"pdf", "docx"}), llamaindex_sentence),
    "llamaindex:sentence/cw-md": (frozenset({"pdf", "docx"}), llamaindex_sentence_cw),
}

"""Parse options and the parsed-document container handed to chunking."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from chunkweave.parsers.elements import Element

ParserName = Literal["auto", "pymupdf", "docx", "unstructured", "docling"]
PdfMode = Literal["fast", "accurate", "auto"]
DocFormat = Literal["pdf", "docx"]

#: File suffixes (lower case, with the dot) of the formats the parsers read, one per
#: ``DocFormat``: what to pick up when walking folders. The parsers themselves judge a
#: file by its bytes, never by its name.
SUPPORTED_SUFFIXES: frozenset[str] = frozenset(f".{fmt}" for fmt in get_args(DocFormat))


class ParseOptions(BaseModel):
    """How to parse. Built once at the edge (CLI, settings); unknown keys are errors.

    - ``parser``: backend; ``auto`` picks by the detected format (PyMuPDF for PDF,
      the built-in OOXML reader for DOCX).
    - ``mode``: PDF layout analysis: ``fast`` (heuristics only), ``accurate`` (the
      pymupdf-layout ONNX model on every page), ``auto`` (heuristics, and the model's
      geometry-only variant on the pages where they cannot be trusted: complex pages,
      i.e. table rules no table explains, three or more columns, text over images; and,
      in documents without a usable outline, pages holding short bold or large lines
      set apart like titles that no learnt heading style explains). See
      :mod:`chunkweave.parsers.pdf`.
    - ``ocr``: run Tesseract on pages without a text layer; when off or unavailable
      such pages produce a warning in ``ParsedDocument.warnings``.
    - ``ocr_language``: Tesseract language codes joined by ``+`` (``eng+kor``,
      ``chi_sim``, ``ara``); each needs its ``.traineddata`` (Debian:
      ``apt-get install tesseract-ocr-kor``); codes without data are skipped and
      named (:mod:`chunkweave.parsers.pdf.ocr`).
    - ``password``: for encrypted PDFs.
    - ``max_bytes`` / ``max_pages``: refuse larger inputs with ``TooLargeError``.
    - ``page_range``: 1-based inclusive ``(first, last)``, to parse part of a PDF
      (used by the worker's fan-out); ``None`` parses everything.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    parser: ParserName = "auto"
    mode: PdfMode = "auto"
    ocr: bool = True
    ocr_language: str = "eng"
    password: SecretStr | None = None
    max_bytes: int = Field(default=200 * 1024 * 1024, gt=0)
    max_pages: int = Field(default=5000, gt=0)
    page_range: tuple[int, int] | None = None


class ParsedDocument(BaseModel):
    """A whole parsed document: its elements in reading order plus facts about it.

    ``warnings`` carries everything the parser could not do (e.g. "page 3 has no text
    layer and OCR is off"): a document is never silently empty.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    format: DocFormat
    sha1: str
    page_count: int | None
    title: str | None = None
    elements: tuple[Element, ...]
    warnings: tuple[str, ...] = ()
    parser: str = ""


def file_sha1(path: str | Path) -> str:
    """SHA1 hex digest of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha1()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

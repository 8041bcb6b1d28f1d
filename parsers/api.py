"""Dispatch: check the file, detect the format from the bytes, call that format's parser."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from chunkweave.parsers.detect import detect_format
from chunkweave.parsers.document import DocFormat, ParsedDocument, ParseOptions
from chunkweave.parsers.errors import (
    EmptyDocumentError,
    ParseError,
    TooLargeError,
    UnsupportedFormatError,
)

Backend = Callable[[Path, ParseOptions], ParsedDocument]

#: Which detected formats each explicitly requested parser accepts.
_ACCEPTS: dict[str, frozenset[DocFormat]] = {
    "pymupdf": frozenset({"pdf"}),
    "docx": frozenset({"docx"}),
    "unstructured": frozenset({"pdf", "docx"}),
    "docling": frozenset({"pdf", "docx"}),
}


def parse_document(path: str | Path, opts: ParseOptions | None = None) -> ParsedDocument:
    """Parse one file into a :class:`ParsedDocument`.

    Checks, in order: the file exists and is a readable regular file; it is not
    larger than ``opts.max_bytes`` (TooLargeError) nor empty (EmptyDocumentError);
    its bytes are a PDF or DOCX (UnsupportedFormatError, EncryptedDocumentError,
    CorruptDocumentError); an explicit ``opts.parser`` accepts that format
    (UnsupportedFormatError otherwise). Then the backend runs; ``auto`` means
    PyMuPDF for PDF and the built-in OOXML reader for DOCX.

    Raises a :class:`chunkweave.parsers.errors.ParseError` subclass, naming the file and the
    reason, for anything that cannot be parsed.
    """
    opts = opts or ParseOptions()
    path = Path(path)
    _check_file(path, opts)
    fmt = detect_format(path)
    parser = opts.parser
    if parser != "auto" and fmt not in _ACCEPTS[parser]:
        raise UnsupportedFormatError(
            str(path), f"the bytes are {fmt.upper()} but parser {parser!r} was requested"
        )
    return _backend(parser, fmt)(path, opts)


def _check_file(path: Path, opts: ParseOptions) -> None:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ParseError(str(path), "no such file") from None
    except OSError as err:
        raise ParseError(str(path), f"cannot access the file ({err.strerror})") from err
    if not path.is_file():
        raise ParseError(str(path), "not a regular file")
    if not os.access(path, os.R_OK):
        raise ParseError(str(path), "permission denied (file is not readable)")
    if st.st_size > opts.max_bytes:
        raise TooLargeError(str(path), f"{st.st_size} bytes (limit {opts.max_bytes})")
    if st.st_size == 0:
        raise EmptyDocumentError(str(path), "the file is empty (0 bytes)")


def _backend(parser: str, fmt: DocFormat) -> Backend:
    # Imports are lazy: a backend's dependencies load only when it is used.
    if parser == "unstructured":
        from chunkweave.parsers.backends.unstructured import parse_with_unstructured

        return parse_with_unstructured
    if parser == "docling":
        from chunkweave.parsers.backends.docling import parse_with_docling

        return parse_with_docling
    if fmt == "pdf":
        from chunkweave.parsers.pdf import parse_pdf

        return parse_pdf
    from chunkweave.parsers.docx import parse_docx

    return parse_docx

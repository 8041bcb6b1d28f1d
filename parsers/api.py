"""Dispatch: check the file, detect the format from the bytes, call that format's parser."""

from __future__ import annotations

import os
import pkgutil
from collections.abc import Callable
from pathlib import Path

from chunkweave.parsers.detect import detect_format
from chunkweave.parsers.document import DocFormat, ParsedDocument, ParseOptions, ParserName
from chunkweave.parsers.errors import (
    EmptyDocumentError,
    ParseError,
    TooLargeError,
    UnsupportedFormatError,
)

Backend = Callable[[Path, ParseOptions], ParsedDocument]

_PYMUPDF = "chunkweave.parsers.pdf:parse_pdf"
_DOCX = "chunkweave.parsers.docx:parse_docx"
_UNSTRUCTURED = "chunkweave.parsers.backends.unstructured:parse_with_unstructured"
_DOCLING = "chunkweave.parsers.backends.docling:parse_with_docling"

#: Parser name -> the formats it accepts and, for each, the function that parses it
#: (``module:function``). Modules are imported only when their parser runs, so an
#: optional backend's dependencies load only when it is used.
_PARSERS: dict[ParserName, dict[DocFormat, str]] = {
    "auto": {"pdf": _PYMUPDF, "docx": _DOCX},
    "pymupdf": {"pdf": _PYMUPDF},
    "docx": {"docx": _DOCX},
    "unstructured": {"pdf": _UNSTRUCTURED, "docx": _UNSTRUCTURED},
    "docling": {"pdf": _DOCLING, "docx": _DOCLING},
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
    backend = _PARSERS[parser].get(fmt)
    if backend is None:
        raise UnsupportedFormatError(
            str(path), f"the bytes are {fmt.upper()} but parser {parser!r} was requested"
        )
    parse: Backend = pkgutil.resolve_name(backend)
    return parse(path, opts)


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

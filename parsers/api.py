"""Dispatch: check the file, detect the format from the bytes, call that format's parser.

Besides :func:`parse_document`, what the layers above may ask of a file before or
beside parsing it, without reaching into a backend: :func:`page_count` (planning a
fan-out), :func:`calibration_report` (``parse --explain``), :func:`numbering_scheme`
(section numbers), :func:`warm_up` (load the default backends before a fork). Page
images are :mod:`chunkweave.parsers.page_images`'s.
"""

from __future__ import annotations

import os
import pkgutil
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from chunkweave.parsers.detect import detect_format
from chunkweave.parsers.document import DocFormat, ParsedDocument, ParseOptions, ParserName
from chunkweave.parsers.errors import (
    EmptyDocumentError,
    ParseError,
    TooLargeError,
    UnsupportedFormatError,
)

if TYPE_CHECKING:
    from chunkweave.parsers.pdf.calibrate import RouteExplanation


class Backend(Protocol):
    """One format's parser: ``sha1`` is the file's digest when the caller knows it.

    A backend hashes the file itself only when it is not given, so a document checked
    against the ledger first is not read a second time to be hashed.
    """

    def __call__(
        self, path: Path, opts: ParseOptions, *, sha1: str | None = None
    ) -> ParsedDocument:
        """Parse ``path`` (already checked and detected) or raise a ``ParseError``."""
        ...


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


def parse_document(
    path: str | Path, opts: ParseOptions | None = None, *, sha1: str | None = None
) -> ParsedDocument:
    """Parse one file into a :class:`ParsedDocument`.

    Checks, in order: the file exists and is a readable regular file; it is not
    larger than ``opts.max_bytes`` (TooLargeError) nor empty (EmptyDocumentError);
    its bytes are a PDF or DOCX (UnsupportedFormatError, EncryptedDocumentError,
    CorruptDocumentError); an explicit ``opts.parser`` accepts that format
    (UnsupportedFormatError otherwise). Then the backend runs; ``auto`` means
    PyMuPDF for PDF and the built-in OOXML reader for DOCX.

    ``sha1``: the digest of the file's bytes when the caller has it (the pipeline's
    check stage hashed the file); the document carries it and the file is not read
    again to hash it. Without it, the backend hashes the file once.

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
    return parse(path, opts, sha1=sha1)


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


def page_count(path: str | Path) -> int | None:
    """Pages of a PDF (cheap: reads the page tree only), or None if not a readable PDF.

    For planning work before parsing (the worker's fan-out); :func:`parse_document`
    reports a broken file with a typed error.
    """
    from chunkweave.parsers.pdf import page_count as pdf_page_count

    return pdf_page_count(Path(path))


def calibration_report() -> AbstractContextManager[list[RouteExplanation]]:
    """Collect, inside the block, why each page of every PDF parsed took its route.

    The list it yields fills with one ``RouteExplanation`` per PDF parsed in the
    block (``explanation.lines()`` renders it); DOCX files add none.
    """
    from chunkweave.parsers.pdf.calibrate import recorded_routes

    return recorded_routes()


def numbering_scheme(text: str) -> str | None:
    """Name the numbering scheme of a heading's leading number (``dec2``, ``alpha``...), or None.

    The PDF heading rules' own classification: section numbers in chunks agree with
    the headings the parser found.
    """
    from chunkweave.parsers.pdf.headings.numbering import numbering_scheme as scheme

    return scheme(text)


def warm_up() -> None:
    """Import the default backends now (PyMuPDF's first import takes seconds).

    A worker calls it in its parent process before forking, so no task pays that
    import against its time limit.
    """
    pkgutil.resolve_name(_PYMUPDF)
    pkgutil.resolve_name(_DOCX)

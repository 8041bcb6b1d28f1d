"""A document's file is read in full once on its way through check and parse.

The check stage hashes the file (:func:`~chunkweave.storage.pipeline.check.file_version`);
the parse stage gets that digest and must not read the file again to hash it. Every open
of the file is counted here (Python's ``open``/``io.open``, bytes read through it, and
PyMuPDF's ``open``): pure logic, no servers.
"""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docx
import pymupdf
import pytest

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.detect import PDF_SEARCH_WINDOW
from chunkweave.storage.pipeline.check import file_version
from chunkweave.storage.pipeline.conductor import Pipeline
from tests.store_helpers import CountingEmbedder, MemoryStore

FAST = ParseOptions(mode="fast", ocr=False)


class _Counted:
    """A file object that adds the bytes read through it to its counter."""

    def __init__(self, fh: Any, reads: Reads) -> None:
        self._fh, self._reads = fh, reads

    def read(self, *args: Any) -> bytes:
        data = self._fh.read(*args)
        self._reads.bytes += len(data)
        return data

    def read1(self, *args: Any) -> bytes:
        data = self._fh.read1(*args)
        self._reads.bytes += len(data)
        return data

    def readinto(self, buf: Any) -> int:
        n = self._fh.readinto(buf)
        self._reads.bytes += n or 0
        return n

    def __enter__(self) -> _Counted:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


class Reads:
    """Opens of one file and the bytes Python read from it; PyMuPDF's opens of it."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()
        self.opens = self.bytes = self.pymupdf_opens = 0

    def _ours(self, file: object) -> bool:
        return isinstance(file, str | os.PathLike) and Path(file).resolve() == self.path

    def wrap_open(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            fh = real(file, *args, **kwargs)
            if not self._ours(file):
                return fh
            self.opens += 1
            return _Counted(fh, self)

        return counting_open

    def wrap_pymupdf(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def counting_open(*args: Any, **kwargs: Any) -> Any:
            if args and self._ours(args[0]):
                self.pymupdf_opens += 1
            return real(*args, **kwargs)

        return counting_open


@pytest.fixture
def count_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], Reads]]:
    def start(path: Path) -> Reads:
        reads = Reads(path)
        monkeypatch.setattr(builtins, "open", reads.wrap_open(builtins.open))
        monkeypatch.setattr(io, "open", reads.wrap_open(io.open))
        monkeypatch.setattr(pymupdf, "open", reads.wrap_pymupdf(pymupdf.open))
        return reads

    yield start


def _pdf(path: Path) -> Path:
    with pymupdf.open() as doc:
        for n in range(3):
            page = doc.new_page()
            page.insert_text((72, 72), f"Section {n + 1}", fontsize=16)
            body = " ".join(f"Sentence {n}.{k} of the body on page {n + 1}." for k in range(12))
            page.insert_textbox(pymupdf.Rect(72, 100, 520, 400), body, fontsize=11)
        doc.save(path)
    return path


def _docx(path: Path) -> Path:
    document = docx.Document()
    document.add_heading("Scope", level=1)
    for n in range(20):
        document.add_paragraph(f"Paragraph {n} of the body, long enough to be a paragraph.")
    document.save(str(path))
    return path


def test_a_pdf_is_hashed_once_and_opened_once_by_the_parser(tmp_path, count_reads):
    path = _pdf(tmp_path / "three.pdf")
    size = path.stat().st_size
    reads = count_reads(path)
    sha1 = file_version(path)  # the check stage
    doc = parse_document(path, FAST, sha1=sha1)  # the parse stage
    assert doc.sha1 == sha1 and doc.elements
    # One full read (the hash) plus the format sniff of the first bytes; PyMuPDF reads the
    # file itself once. A second hash would add ``size`` bytes and a third open.
    assert reads.bytes == size + min(size, PDF_SEARCH_WINDOW)
    assert (reads.opens, reads.pymupdf_opens) == (2, 1)


def test_without_a_digest_the_parser_hashes_the_file_itself(tmp_path, count_reads):
    path = _pdf(tmp_path / "three.pdf")
    size = path.stat().st_size
    reads = count_reads(path)
    doc = parse_document(path, FAST)
    assert doc.sha1 == file_version(path)
    assert reads.bytes == 2 * size + min(size, PDF_SEARCH_WINDOW)  # the sniff, two hashes


def test_a_docx_parse_given_the_digest_reads_no_hash_again(tmp_path, count_reads):
    path = _docx(tmp_path / "scope.docx")
    size = path.stat().st_size
    reads = count_reads(path)
    given = parse_document(path, sha1=file_version(path))
    with_digest = reads.bytes - size  # the parse's own reads, the check's hash left out
    reads.bytes = 0
    hashed = parse_document(path)
    assert given == hashed  # the same document, digest included
    # The zip reader reads the package's parts; only the parse without a digest hashes too.
    assert reads.bytes - with_digest == size


def test_the_pipeline_ingest_of_a_pdf_reads_it_once(tmp_path, count_reads):
    # The conductor's check hashes the file and hands the digest to its parse stage.
    path = _pdf(tmp_path / "three.pdf")
    size = path.stat().st_size
    pipe = Pipeline(store=MemoryStore(), embedder=CountingEmbedder(), parse_opts=FAST)
    reads = count_reads(path)
    outcome = pipe.ingest(path)
    assert outcome.status == "added", outcome
    assert pipe.ledger.get(outcome.doc_id).doc_sha1 == file_version(path)
    assert reads.bytes - size == size + min(size, PDF_SEARCH_WINDOW)  # minus the check above
    assert reads.pymupdf_opens == 1

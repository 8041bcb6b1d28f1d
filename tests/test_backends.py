"""Alternative backends (unstructured, docling) behind the same Element model.

Each runs only where its extra is installed (``pytest.importorskip``); the
"not installed" path is tested wherever the extra is missing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import docx
import pytest

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.errors import ParserUnavailableError


@pytest.fixture()
def sample(tmp_path: Path) -> Path:
    d = docx.Document()
    d.add_heading("Intro", level=1)
    d.add_paragraph("Hello world. This is a sentence of body text.")
    d.add_paragraph("point", style="List Bullet")
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text, t.cell(0, 1).text, t.cell(1, 0).text, t.cell(1, 1).text = "a", "b", "1", "2"
    path = tmp_path / "sample.docx"
    d.save(str(path))
    return path


@pytest.mark.parametrize(
    ("parser", "module"), [("docling", "docling"), ("unstructured", "unstructured")]
)
def test_missing_backend_names_the_install_command(sample: Path, parser: str, module: str) -> None:
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    with pytest.raises(ParserUnavailableError, match=rf"pip install 'chunkweave\[{parser}\]'"):
        parse_document(sample, ParseOptions.model_validate({"parser": parser}))


def test_docling_backend_maps_docx(sample: Path) -> None:
    pytest.importorskip("docling")
    doc = parse_document(sample, ParseOptions(parser="docling"))
    assert doc.parser == "docling"
    kinds = [(e.type, e.level) for e in doc.elements]
    assert ("heading", 1) in kinds and ("list_item", 1) in kinds
    (table,) = [e for e in doc.elements if e.type == "table"]
    assert table.rows == (("a", "b"), ("1", "2"))
    para = next(e for e in doc.elements if e.type == "paragraph")
    assert para.heading_path == ("Intro",)


def test_docling_backend_on_corpus_headings(corpus: Path) -> None:
    pytest.importorskip("docling")
    doc = parse_document(corpus / "unit_test_headers.docx", ParseOptions(parser="docling"))
    assert [e.level for e in doc.elements if e.type == "heading"] == [1, 2, 2, 3, 1, 3, 2]


def test_docling_refuses_pdf_offline(tmp_path: Path) -> None:
    pytest.importorskip("docling")
    import pymupdf

    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 72), "hello")
    path = tmp_path / "a.pdf"
    pdf.save(str(path))
    with pytest.raises(ParserUnavailableError, match="offline"):
        parse_document(path, ParseOptions(parser="docling"))


def test_unstructured_backend_maps_docx(sample: Path) -> None:
    pytest.importorskip("unstructured")
    doc = parse_document(sample, ParseOptions(parser="unstructured"))
    assert doc.parser == "unstructured"
    types = [e.type for e in doc.elements]
    assert "heading" in types and "list_item" in types and "table" in types
    (table,) = [e for e in doc.elements if e.type == "table"]
    assert table.rows == (("a", "b"), ("1", "2"))
    assert any("Hello world" in e.text for e in doc.elements if e.type == "paragraph")

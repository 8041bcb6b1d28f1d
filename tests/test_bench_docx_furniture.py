"""bench/docx_furniture: header and footer text read from the package, and the leak figure."""

from __future__ import annotations

from pathlib import Path

import docx

from bench.docx_furniture import package_texts, part_paragraphs, score_document

_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def test_part_paragraphs_reads_runs_and_skips_deleted_text() -> None:
    xml = (
        f"<w:hdr {_W}><w:p><w:r><w:t>Running </w:t></w:r><w:r><w:t>head</w:t></w:r>"
        "<w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>"
        "<w:p></w:p><w:p><w:r><w:t>Page</w:t><w:tab/><w:t>7</w:t></w:r></w:p></w:hdr>"
    ).encode()
    assert part_paragraphs(xml) == ["Running head", "Page 7"]


def _write(path: Path, header: str, footer: str, body: list[str]) -> Path:
    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = header
    d.sections[0].footer.paragraphs[0].text = footer
    for text in body:
        d.add_paragraph(text)
    d.save(str(path))
    return path


def test_headers_and_footers_are_kept_out_of_the_body(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "report.docx",
        "Quarterly report of the working group",
        "Confidential draft for review",
        ["The first paragraph of the body.", "The second paragraph of the body."],
    )
    furniture, body = package_texts(path)
    assert "Quarterly report of the working group" in furniture
    assert "The first paragraph of the body." in body
    row = score_document(path)
    assert row == {"leaked": 0, "total": 2, "kept": 2, "paragraphs": 2}


def test_body_repeating_the_header_is_no_leak(tmp_path: Path) -> None:
    # The body itself holds the header's text once: one occurrence in the parse is
    # the body's own, not furniture that leaked.
    path = _write(
        tmp_path / "title.docx",
        "Annual review of the programme",
        "",
        ["Annual review of the programme", "Body text follows here."],
    )
    row = score_document(path)
    assert row["total"] == 1 and row["leaked"] == 0 and row["kept"] == 1


def test_corpus_docx_furniture_does_not_leak(corpus: Path) -> None:
    row = score_document(corpus / "docx-hdrftr.docx")
    assert row["total"] >= 10
    assert row["leaked"] == 0
    assert row["kept"] >= row["total"] - 2

"""Edge DOCX: Strict Open XML read like transitional, deep nesting degraded not refused."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import docx
import pytest
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls

from chunkweave.parsers import parse_document
from chunkweave.parsers.docx.blocks import MAX_NESTING
from chunkweave.parsers.docx.strict import transitional_uri
from chunkweave.parsers.errors import UnsafeDocumentError
from tests.docx_builders import add_footnotes_part

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
EXTRA = Path(__file__).resolve().parents[2] / "shared" / "corpus-extra"

# Transitional -> Strict: every namespace and relationship type of the three OOXML
# vocabularies the reader uses; OPC packaging (content types, package relationships,
# core properties) is the same in both flavours and stays.
_TO_STRICT = re.compile(
    rb"http://schemas\.openxmlformats\.org/(wordprocessingml|officeDocument|drawingml)/2006/"
)


def _strict_twin(src: Path, dst: Path) -> Path:
    """Write ``dst``: ``src`` with every part rewritten to the Strict namespaces."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name.endswith((".xml", ".rels")):
                data = _TO_STRICT.sub(rb"http://purl.oclc.org/ooxml/\1/", data)
                # Strict spells on/off values as true/false.
                data = data.replace(b'w:val="1"/>', b'w:val="true"/>')
            zout.writestr(name, data)
    return dst


def _feature_document(tmp_path: Path) -> Path:
    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = "Running head"
    d.sections[0].footer.paragraphs[0].text = "Running foot"
    d.add_heading("Annual report", level=0)
    d.add_heading("Results", level=1)
    p = d.add_paragraph("Revenue grew")
    p._p.append(parse_xml(f'<w:r {nsdecls("w")}><w:footnoteReference w:id="1"/></w:r>'))
    for text in ("alpha", "beta"):
        d.add_paragraph(text, style="List Number")
    d.add_paragraph("point", style="List Bullet")
    d.add_heading("Tables", level=2)
    t = d.add_table(rows=3, cols=2)
    t.style = d.styles["Table Grid"]
    for r in range(3):
        for c in range(2):
            t.cell(r, c).text = f"r{r}c{c}"
    t.cell(1, 0).merge(t.cell(1, 1)).text = "wide"
    d.add_paragraph("Table 1: Figures", style="Caption")
    d.add_page_break()
    q = d.add_paragraph("Area: ")
    q._p.append(
        parse_xml(
            f"<m:oMath {nsdecls('m')}><m:r><m:t>A=π</m:t></m:r><m:sSup><m:e><m:r><m:t>r</m:t>"
            "</m:r></m:e><m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup></m:oMath>"
        )
    )
    path = tmp_path / "transitional.docx"
    d.save(str(path))
    add_footnotes_part(path, "Audited figures.")
    return path


def _view(path: Path) -> list[tuple[str, int | None, str, int | None, object]]:
    doc = parse_document(path)
    return [(e.type, e.level, e.text, e.page, e.rows) for e in doc.elements]


def test_strict_twin_gives_the_same_elements(tmp_path: Path) -> None:
    transitional = _feature_document(tmp_path)
    strict = _strict_twin(transitional, tmp_path / "strict.docx")
    assert b"purl.oclc.org/ooxml/wordprocessingml/main" in zipfile.ZipFile(strict).read(
        "word/document.xml"
    )
    expected = _view(transitional)
    assert _view(strict) == expected
    kinds = {kind for kind, *_ in expected}
    # The twin exercises styles, numbering, tables, furniture, notes and math.
    assert {"title", "heading", "list_item", "table", "caption", "footnote"} <= kinds
    assert {"page_header", "page_footer"} <= kinds
    assert ("list_item", 1, "2. beta", 1, None) in expected


def test_strict_uri_mapping() -> None:
    assert transitional_uri("http://purl.oclc.org/ooxml/wordprocessingml/main") == W
    assert transitional_uri("http://purl.oclc.org/ooxml/officeDocument/relationships/styles") == (
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
    )
    assert transitional_uri("urn:schemas-microsoft-com:vml") == "urn:schemas-microsoft-com:vml"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("strict-format.docx", ["Test"]),
        ("Strict01.docx", ["Second Heading 1", "Here is a text box.", "This is a footnote."]),
        (
            "fldSimple-FormulasAndExpressions-Bookmark-GeneralFormat.docx",
            ["is a bookmark name", "1.00000000"],
        ),
    ],
)
def test_strict_corpus_files_parse_with_their_text(name: str, expected: list[str]) -> None:
    path = EXTRA / name
    if not path.is_file():
        pytest.skip(f"{path} not available")
    text = "\n".join(e.text for e in parse_document(path).elements)
    for snippet in expected:
        assert snippet in text


def _nested_tables_docx(tmp_path: Path, depth: int) -> Path:
    xml = (
        f'<w:document xmlns:w="{W}"><w:body>'
        + "".join(
            f"<w:tbl><w:tr><w:tc><w:p><w:r><w:t>level {i}</w:t></w:r></w:p>" for i in range(depth)
        )
        + "<w:p><w:r><w:t>innermost words</w:t></w:r></w:p>"
        + "</w:tc><w:tc><w:p><w:r><w:t>side</w:t></w:r></w:p></w:tc></w:tr></w:tbl>" * depth
        + "</w:body></w:document>"
    ).encode()
    d = docx.Document()
    d.add_paragraph("placeholder")
    base_path = tmp_path / "base.docx"
    d.save(str(base_path))
    out = tmp_path / f"nested{depth}.docx"
    with zipfile.ZipFile(base_path) as base, zipfile.ZipFile(out, "w") as z:
        for item in base.namelist():
            z.writestr(item, xml if item == "word/document.xml" else base.read(item))
    return out


def test_tables_nested_60_deep_keep_their_innermost_text(tmp_path: Path) -> None:
    doc = parse_document(_nested_tables_docx(tmp_path, 60))
    (table,) = doc.elements
    assert table.type == "table"
    assert "innermost words" in table.text
    assert "level 0" in table.text and "level 59" in table.text
    assert any(f"more than {MAX_NESTING} deep were flattened" in w for w in doc.warnings)


def test_tables_within_the_limit_get_no_warning(tmp_path: Path) -> None:
    doc = parse_document(_nested_tables_docx(tmp_path, MAX_NESTING))
    assert "innermost words" in doc.elements[0].text
    assert not any("flattened" in w for w in doc.warnings)


def test_absurdly_deep_tables_are_still_refused(tmp_path: Path) -> None:
    # 100 tables are 300+ XML levels: past the XML parser's depth bound.
    with pytest.raises(UnsafeDocumentError, match="deep"):
        parse_document(_nested_tables_docx(tmp_path, 100))


_EXTRA_DOCX = sorted(EXTRA.glob("*.docx")) if EXTRA.is_dir() else []


@pytest.mark.parametrize("path", _EXTRA_DOCX, ids=lambda p: p.name)
def test_every_corpus_extra_docx_parses_with_text(path: Path) -> None:
    doc = parse_document(path)
    assert sum(len(e.text) for e in doc.elements) > 0


def _native_paragraphs(path: Path) -> list[str]:
    # pandoc's native AST: each Para's Str tokens, joined by single spaces.
    return [
        " ".join(re.findall(r'Str "((?:[^"\\]|\\.)*)"', line))
        for line in path.read_text().splitlines()
        if "Para [" in line
    ]


def test_tracked_moves_read_as_the_accepted_text() -> None:
    path = EXTRA / "track_changes_move.docx"
    accepted = EXTRA / "track_changes_move.groundtruth.pandoc-accept.native"
    if not (path.is_file() and accepted.is_file()):
        pytest.skip("corpus-extra not available")
    texts = [e.text for e in parse_document(path).elements]
    assert texts == _native_paragraphs(accepted)

"""One DOCX feature per test, on tiny documents built here with python-docx."""

from __future__ import annotations

from pathlib import Path

import docx
import pymupdf
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls
from docx.shared import Pt

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.parsers.elements import Element
from tests.docx_builders import add_footnotes_part

_MC_WPS = (
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)


def _parse(document: docx.document.Document, tmp_path: Path) -> tuple[Element, ...]:
    path = tmp_path / "doc.docx"
    document.save(str(path))
    return parse_document(path, ParseOptions()).elements


def _body(els: tuple[Element, ...]) -> list[Element]:
    return [e for e in els if not e.is_furniture]


def test_title_and_heading_levels(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_heading("The Title", level=0)
    d.add_heading("Chapter", level=1)
    d.add_paragraph("intro")
    d.add_heading("Section", level=2)
    d.add_heading("Subsection", level=3)
    d.add_paragraph("body")
    els = _parse(d, tmp_path)
    assert [(e.type, e.level, e.text) for e in els if e.is_heading] == [
        ("title", None, "The Title"),
        ("heading", 1, "Chapter"),
        ("heading", 2, "Section"),
        ("heading", 3, "Subsection"),
    ]
    assert els[-1].heading_path == ("The Title", "Chapter", "Section", "Subsection")


def test_outline_level_in_custom_style_chain_makes_heading(tmp_path: Path) -> None:
    d = docx.Document()
    base = d.styles.add_style("MyOutline", WD_STYLE_TYPE.PARAGRAPH)
    base.element.get_or_add_pPr().append(parse_xml(f'<w:outlineLvl {nsdecls("w")} w:val="1"/>'))
    child = d.styles.add_style("MyOutlineChild", WD_STYLE_TYPE.PARAGRAPH)
    child.base_style = base
    d.add_paragraph("Localised heading", style="MyOutlineChild")
    d.add_paragraph("text")
    els = _parse(d, tmp_path)
    assert (els[0].type, els[0].level) == ("heading", 2)


def test_outline_level_9_on_paragraph_overrides_heading_style(tmp_path: Path) -> None:
    d = docx.Document()
    p = d.add_paragraph("Demoted", style="Heading 1")
    p._p.get_or_add_pPr().append(parse_xml(f'<w:outlineLvl {nsdecls("w")} w:val="9"/>'))
    els = _parse(d, tmp_path)
    assert els[0].type == "paragraph"


def test_list_items_with_nesting_depth(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("top", style="List Bullet")
    d.add_paragraph("nested", style="List Bullet 2")
    d.add_paragraph("deeper", style="List Bullet 3")
    els = _parse(d, tmp_path)
    assert [(e.type, e.level) for e in els] == [
        ("list_item", 1),
        ("list_item", 2),
        ("list_item", 3),
    ]


def test_numbered_list_renders_numbers_from_numbering_xml(tmp_path: Path) -> None:
    d = docx.Document()
    for text in ("alpha", "beta", "gamma"):
        d.add_paragraph(text, style="List Number")
    els = _parse(d, tmp_path)
    assert [e.text for e in els] == ["1. alpha", "2. beta", "3. gamma"]


def test_table_with_horizontal_and_vertical_merges_repeats_values(tmp_path: Path) -> None:
    d = docx.Document()
    t = d.add_table(rows=3, cols=3)
    for r in range(3):
        for c in range(3):
            t.cell(r, c).text = f"{r}{c}"
    t.cell(1, 0).merge(t.cell(1, 1)).text = "wide"
    t.cell(1, 2).merge(t.cell(2, 2)).text = "tall"
    (table,) = [e for e in _parse(d, tmp_path) if e.type == "table"]
    assert table.rows == (("00", "01", "02"), ("wide", "wide", "tall"), ("20", "21", "tall"))


def test_nested_table_is_flattened_into_its_cell(tmp_path: Path) -> None:
    d = docx.Document()
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text, t.cell(0, 1).text, t.cell(1, 0).text = "h1", "h2", "x"
    inner = t.cell(1, 1).add_table(rows=2, cols=2)
    for r in range(2):
        for c in range(2):
            inner.cell(r, c).text = f"i{r}{c}"
    tables = [e for e in _parse(d, tmp_path) if e.type == "table"]
    assert len(tables) == 1, "the nested table must not become a second element"
    assert tables[0].rows is not None
    assert tables[0].rows[1][1] == "i00 | i01 ; i10 | i11"


def test_repeat_header_rows_are_counted(tmp_path: Path) -> None:
    d = docx.Document()
    t = d.add_table(rows=4, cols=2)
    for r in range(4):
        for c in range(2):
            t.cell(r, c).text = f"{r}{c}"
    for row in t.rows[:2]:
        row._tr.get_or_add_trPr().append(parse_xml(f"<w:tblHeader {nsdecls('w')}/>"))
    (table,) = [e for e in _parse(d, tmp_path) if e.type == "table"]
    assert table.header_rows == 2
    assert table.text.split("\n")[0] == "00\t01"


def test_caption_style_and_caption_text_are_linked_to_table(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("Table 1: Results", style="Caption")
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text = "a"
    d.add_paragraph("Figure 2. Plain-text caption")
    d.add_paragraph("Table 3 shows prose, not a caption.")
    els = _parse(d, tmp_path)
    caption = els[0]
    assert caption.type == "caption" and caption.ref == els[1].order
    assert els[2].type == "caption"
    assert els[3].type == "paragraph"


def test_headers_and_footers_are_furniture_emitted_once(tmp_path: Path) -> None:
    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = "Running head"
    d.sections[0].footer.paragraphs[0].text = "Running foot"
    d.add_paragraph("one")
    d.add_page_break()
    d.add_paragraph("two")
    els = _parse(d, tmp_path)
    assert (els[0].type, els[0].text) == ("page_header", "Running head")
    assert (els[-1].type, els[-1].text) == ("page_footer", "Running foot")
    assert sum(e.is_furniture for e in els) == 2


def test_monospace_block_with_code_characters_becomes_one_code_element(tmp_path: Path) -> None:
    d = docx.Document()
    for line in ("def f(x):", "    return x * 2"):
        d.add_paragraph().add_run(line).font.name = "Courier New"
    d.add_paragraph("after")
    els = _parse(d, tmp_path)
    assert (els[0].type, els[0].text) == ("code", "def f(x):\n    return x * 2")
    assert els[1].type == "paragraph"


def test_typewriter_prose_without_code_characters_stays_paragraph(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph().add_run("A memo set in a typewriter face").font.name = "Courier New"
    assert _parse(d, tmp_path)[0].type == "paragraph"


def test_explicit_page_breaks_number_pages(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("p1")
    d.add_page_break()
    d.add_paragraph("p2")
    d.add_page_break()
    d.add_paragraph("p3")
    doc = parse_document(_save(d, tmp_path))
    assert [(e.text, e.page) for e in doc.elements] == [("p1", 1), ("p2", 2), ("p3", 3)]
    assert doc.page_count == 3


def test_no_page_markers_means_no_page_numbers(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_paragraph("only")
    doc = parse_document(_save(d, tmp_path))
    assert doc.elements[0].page is None and doc.page_count is None
    assert any("page" in w for w in doc.warnings)


def test_image_becomes_figure_with_alt_text(tmp_path: Path) -> None:
    png = tmp_path / "dot.png"
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 4, 4), False)
    png.write_bytes(pix.tobytes("png"))
    d = docx.Document()
    d.add_picture(str(png))
    d.inline_shapes[0]._inline.docPr.set("descr", "A small dot")
    els = _parse(d, tmp_path)
    assert [(e.type, e.text) for e in els] == [("figure", "A small dot")]


def test_inline_equation_is_linear_text_in_paragraph(tmp_path: Path) -> None:
    d = docx.Document()
    p = d.add_paragraph("Area: ")
    p._p.append(
        parse_xml(
            f"<m:oMath {nsdecls('m')}><m:r><m:t>A=π</m:t></m:r><m:sSup><m:e><m:r><m:t>r</m:t>"
            "</m:r></m:e><m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup></m:oMath>"
        )
    )
    els = _parse(d, tmp_path)
    assert (els[0].type, els[0].text) == ("paragraph", "Area: A=πr^2")


def test_display_equation_becomes_formula(tmp_path: Path) -> None:
    d = docx.Document()
    p = d.add_paragraph()
    p._p.append(
        parse_xml(
            f"<m:oMathPara {nsdecls('m')}><m:oMath><m:f><m:num><m:r><m:t>a+b</m:t></m:r></m:num>"
            "<m:den><m:r><m:t>2</m:t></m:r></m:den></m:f></m:oMath></m:oMathPara>"
        )
    )
    assert [(e.type, e.text) for e in _parse(d, tmp_path)] == [("formula", "(a+b)/2")]


def test_text_box_in_alternate_content_is_read_once(tmp_path: Path) -> None:
    d = docx.Document()
    p = d.add_paragraph("anchor")
    box = "<w:txbxContent><w:p><w:r><w:t>boxed words</w:t></w:r></w:p></w:txbxContent>"
    p._p.append(
        parse_xml(
            f"<w:r {nsdecls('w', 'wp', 'a')} {_MC_WPS}><mc:AlternateContent>"
            '<mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData>'
            f"<wps:wsp><wps:txbx>{box}</wps:txbx></wps:wsp></a:graphicData></a:graphic>"
            "</wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>"
            f"{box}</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
        )
    )
    els = _parse(d, tmp_path)
    assert [e.text for e in els] == ["anchor", "boxed words"]


def test_tracked_deletions_are_not_text(tmp_path: Path) -> None:
    d = docx.Document()
    p = d.add_paragraph("kept ")
    p._p.append(
        parse_xml(
            f'<w:del {nsdecls("w")} w:id="1" w:author="a">'
            "<w:r><w:delText>gone</w:delText></w:r></w:del>"
        )
    )
    assert _parse(d, tmp_path)[0].text == "kept"


def test_footnote_follows_referencing_paragraph(tmp_path: Path) -> None:
    d = docx.Document()
    p = d.add_paragraph("Claim")
    p._p.append(parse_xml(f'<w:r {nsdecls("w")}><w:footnoteReference w:id="1"/></w:r>'))
    d.add_paragraph("Next")
    path = _save(d, tmp_path)
    add_footnotes_part(path, "The source.")
    els = parse_document(path).elements
    assert [(e.type, e.text) for e in els] == [
        ("paragraph", "Claim"),
        ("footnote", "[1] The source."),
        ("paragraph", "Next"),
    ]


def _save(d: docx.document.Document, tmp_path: Path) -> Path:
    path = tmp_path / "doc.docx"
    d.save(str(path))
    return path


@pytest.mark.parametrize("font", ["Consolas", "Courier New"])
def test_one_monospace_word_in_prose_stays_paragraph(tmp_path: Path, font: str) -> None:
    d = docx.Document()
    p = d.add_paragraph("Call the ")
    p.add_run("printf()").font.name = font
    p.add_run(" function.")
    assert _parse(d, tmp_path)[0].type == "paragraph"


def _sized(d: docx.document.Document, text: str, size: int, bold: bool = False) -> None:
    run = d.add_paragraph().add_run(text)
    run.font.size = Pt(size)
    run.bold = bold


def test_hand_formatted_large_lines_become_headings_without_heading_styles(
    tmp_path: Path,
) -> None:
    d = docx.Document()
    _sized(d, "CHAPTER ONE", 24, bold=True)
    for i in range(3):
        _sized(d, f"Body sentence number {i} of the chapter.", 11)
    _sized(d, "A smaller section", 16)
    _sized(d, "More body text follows here.", 11)
    _sized(d, "Bold at body size is emphasis", 11, bold=True)
    els = _parse(d, tmp_path)
    assert [(e.text, e.level) for e in els if e.type == "heading"] == [
        ("CHAPTER ONE", 1),
        ("A smaller section", 2),
    ]


def test_large_lines_stay_paragraphs_when_heading_styles_exist(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_heading("Styled", level=1)
    _sized(d, "Big but not a heading", 24)
    _sized(d, "Body text.", 11)
    els = _parse(d, tmp_path)
    assert [e.text for e in els if e.type == "heading"] == ["Styled"]

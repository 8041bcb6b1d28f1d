"""Text layers that are not language: the character-class test, and the damaged test PDF.

``tests/data/damaged/unmapped-fonts.pdf`` is two pages of the corpus's ``multi_page.pdf``
with every font's Unicode map removed and its xref broken (recipe:
``tests/data/damaged/make_unmapped_fonts.py``): MuPDF repairs it and extracts glyph
numbers (``"#$!%&'%$()!&*!``).
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from chunkweave.parsers.document import ParseOptions
from chunkweave.parsers.errors import ErrorCode, UnreadableTextError
from chunkweave.parsers.pdf import parse_pdf
from chunkweave.parsers.pdf.legibility import legibility
from chunkweave.parsers.pdf.text import extract_lines

DAMAGED = Path(__file__).parent / "data" / "damaged" / "unmapped-fonts.pdf"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.mark.parametrize(
    "text",
    [
        "\"#$!%&'%$()!&*!)#$!+&,-!(,&%$..&,!(,$-/)$.!0&-$,'!%&0(1)$,.!/'-!#/.!$2&32$-!)#,&14#!",
        "!\"#$%&'&()*+,\")+-./(0+$+,)\"*1+23(0+4#5(6\"17 !\"#$%&'()*+',$'-$*\"#$.'/0$1/'2#33'/!",
        "\ue000\ue001\ue002\ue003 \ue004\ue005\ue006 \ue007\ue008\ue009\ue00a\ue00b \ue00c" * 3,
        "\ufffd\ufffd\ufffd \ufffd\ufffd\ufffd\ufffd \ufffd\ufffd\ufffd\ufffd\ufffd" * 3,
    ],
)
def test_glyph_codes_are_not_language(text: str) -> None:
    legible = legibility([text])
    assert legible.garbled, legible
    assert "glyph codes" in legible.reason


@pytest.mark.parametrize(
    "text",
    [
        "The concept of the word processor predates modern computers by a century.",
        "국회 환경노동위원회 검토보고서: 탄소중립기본법 일부개정법률안 (이수진 의원 대표발의)",
        "Debian 新メンテナーガイド、debian ディレクトリーにあるその他のファイル。",
        "يتم عرض النص العربي من اليمين إلى اليسار مع تشكيل الحروف",
        "ሰላም ለዓለም። የአማርኛ ፊደላት በግዕዝ ስርዓተ ጽሕፈት ይጻፋሉ፤",
        "မြန်မာဘာသာစကားသည် မြန်မာနိုင်ငံ၏ ရုံးသုံးဘာသာစကား ဖြစ်သည်။",
        "Größenangaben für Straßen; Élève à l'école, déjà évalué.",
        "Table 324. 11,062.6 (3.4) 12,910 247,526,916 45.2% 1.07 -0.3 [12] 2009",
        "x[i] <- c(1, 2); if (a != b) { y <- x %*% t(x) } # R code",
        "README.Debian . . . . . . . . . . . . . . . . . . . . . . . . . . . . . 33",
        "!= . . . . . . . . . . . . . . . . . . . . . . . . . 10 %*% . . . . . . . . . 24",
        "❚❘❙❚❘❙❚❘❙❚❙❚❘❙❚❘❙❚❘❙❚❘❙❚❘❘❙❚❘❙❚❘❙❚❘❙ PIRACY",
        "#$%",  # too short to judge
    ],
)
def test_language_in_any_script_is_not_flagged(text: str) -> None:
    assert not legibility([text]).garbled, legibility([text])


def test_the_damaged_pdf_extracts_glyph_soup() -> None:
    """The test file is what it claims: repaired on opening, glyph codes on every page."""
    with pymupdf.open(DAMAGED) as doc:
        assert doc.is_repaired
        for page in doc:
            assert legibility(ln.text for ln in extract_lines(page)).garbled


def test_without_ocr_the_damaged_pdf_fails_with_its_own_code() -> None:
    with pytest.raises(UnreadableTextError) as err:
        parse_pdf(DAMAGED, ParseOptions(ocr=False, mode="fast"))
    assert err.value.code == ErrorCode.UNREADABLE_TEXT == "unreadable_text"
    assert "not language" in err.value.reason and "glyph codes" in err.value.reason
    assert "repaired" in err.value.reason


@pytest.mark.slow
def test_with_ocr_the_damaged_pdf_is_read_from_its_images() -> None:
    doc = parse_pdf(DAMAGED, ParseOptions(mode="fast"))
    assert any("repaired" in w for w in doc.warnings)
    assert sum("not language" in w and "read by OCR" in w for w in doc.warnings) == 2
    text = " ".join(e.text for e in doc.elements)
    assert "word processor" in text.lower()
    assert not legibility([text]).garbled
    for el in doc.elements:
        assert not legibility([el.text]).garbled, el.text


@pytest.mark.slow
def test_no_page_of_the_shared_corpora_is_flagged() -> None:
    """False positives: every page of every PDF of both shared sets reads as language."""
    pdfs = sorted(SHARED.glob("corpus*/*.pdf"))
    if not pdfs:
        pytest.skip("shared corpora not found")
    flagged = []
    for path in pdfs:
        with pymupdf.open(path) as doc:
            for page in doc:
                legible = legibility(ln.text for ln in extract_lines(page))
                if legible.garbled:
                    flagged.append((path.name, page.number + 1, legible.reason))
    assert flagged == []

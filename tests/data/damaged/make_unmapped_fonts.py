"""Recipe for ``unmapped-fonts.pdf``: a corpus PDF whose fonts lost their Unicode maps.

Takes the first two pages of ``../shared/corpus/multi_page.pdf`` (a word-processor
export: subset TrueType fonts, ``/Identity-H``), removes every font's
``/ToUnicode`` CMap and ``/Encoding`` with PyMuPDF's xref API, so MuPDF extracts
glyph numbers as characters (``"#$!%&'%$()!&*!``), and breaks the cross-reference
offset so MuPDF has to repair the file on opening (it warns: the parser's
"file was damaged" warning). Run from the repository root:

    .venv/bin/python tests/data/damaged/make_unmapped_fonts.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pymupdf

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT.parent / "shared" / "corpus" / "multi_page.pdf"
TARGET = Path(__file__).with_name("unmapped-fonts.pdf")


def strip_unicode_maps(doc: pymupdf.Document) -> int:
    """Remove ``/ToUnicode`` and ``/Encoding`` from every font object; return how many fonts."""
    count = 0
    for xref in range(1, doc.xref_length()):
        if doc.xref_get_key(xref, "Type") != ("name", "/Font"):
            continue
        count += 1
        for key in ("ToUnicode", "Encoding"):
            if doc.xref_get_key(xref, key)[0] != "null":
                doc.xref_set_key(xref, key, "null")
    return count


def main(source: Path = SOURCE, target: Path = TARGET) -> int:
    """Write the damaged copy of ``source``'s first two pages to ``target``."""
    doc = pymupdf.open(source)
    doc.select([0, 1])
    fonts = strip_unicode_maps(doc)
    data = doc.tobytes(garbage=4, deflate=True)
    # A wrong startxref offset: the file still opens, after MuPDF rebuilds the xref.
    data = re.sub(rb"startxref\s+\d+", b"startxref\n123", data)
    target.write_bytes(data)
    print(f"{target}: {len(data)} bytes, {fonts} fonts without Unicode maps", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

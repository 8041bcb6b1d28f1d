"""PDF parser (PyMuPDF): file -> :class:`~chunkweave.parsers.document.ParsedDocument`.

The entry points are :func:`parse_pdf` (whole flow in :mod:`.parse`) and
:func:`page_count`. The package's modules:

- :mod:`.text` (visual lines), :mod:`.typography` (shared type rules),
  :mod:`.geometry` (pure box functions);
- :mod:`.profile` (the document-wide profile), :mod:`.headings` (heading levels),
  :mod:`.furniture` (running headers and footers);
- :mod:`.page` (one page to elements), :mod:`.calibrate` and :mod:`.route` (``auto``
  mode's per-document choice of the layout model), :mod:`.tables` (the table
  detectors), :mod:`.blocks` (regions to typed elements), :mod:`.order` and
  :mod:`.layout_model` (reading order), :mod:`.ocr`, :mod:`.join` (paragraphs continued
  across breaks).

PyMuPDF set-up. This ``__init__`` configures PyMuPDF's process-wide switches (the
add-ons it skips at import, MuPDF's messages, tight glyph boxes) before anything
else of the package runs. Python imports a package before any of its submodules,
so every module here (``chunkweave.parsers.pdf.tables.grid`` imported on its own
too) sees PyMuPDF set up this way: modules of the package import ``pymupdf``
directly, and code outside the package uses PyMuPDF only through it.
"""

from __future__ import annotations

import sys

# PyMuPDF 2.x imports two optional add-ons as it loads: its layout analyser
# (``pymupdf.layout``, whose import builds the ONNX layout sessions) and
# pymupdf4llm (numpy, tabulate). Together about 1.5 s of CPU in every process,
# paid even by ``fast`` parses that use neither. A ``None`` entry in
# ``sys.modules`` makes PyMuPDF's own guarded imports skip them; the entries are
# removed right after, so ``chunkweave.parsers.pdf.layout_model`` imports (and activates) the
# analyser the first time a page needs it, and ``import pymupdf4llm`` still
# works. (PyMuPDF's ``to_markdown`` shortcut then reports pymupdf4llm as absent:
# call ``pymupdf4llm`` directly.) No effect when PyMuPDF is already loaded.
if "pymupdf" not in sys.modules:
    _DEFERRED: tuple[str, ...] = ("pymupdf.layout", "pymupdf4llm")
    for _name in _DEFERRED:
        sys.modules.setdefault(_name, None)  # type: ignore[arg-type]
else:
    _DEFERRED = ()
import pymupdf

if _DEFERRED:
    for _name in _DEFERRED:
        if sys.modules.get(_name, pymupdf) is None:
            del sys.modules[_name]

pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)
# Character boxes without MuPDF's ascender/descender corrections (tight boxes):
# pymupdf4llm switches this on when it is imported, so every measurement and test
# of these heuristics ran with it; say so here rather than depend on that import.
pymupdf.TOOLS.unset_quad_corrections(True)

# After the set-up: importing the parser imports every module that uses PyMuPDF.
from chunkweave.parsers.pdf.parse import open_pdf, page_count, parse_pdf  # noqa: E402

__all__ = ["open_pdf", "page_count", "parse_pdf"]

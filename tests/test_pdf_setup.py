"""PyMuPDF is set up by ``chunkweave.parsers.pdf`` whichever of its modules is imported first.

The package ``__init__`` defers PyMuPDF's add-ons (the layout analyser, pymupdf4llm)
and sets MuPDF's switches (no error output, tight glyph boxes). Python runs a
package before any of its submodules, so a submodule imported alone in a fresh
interpreter, or the worker module that counts pages, sees the same set-up.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import sys
import {module}
import pymupdf
assert pymupdf.TOOLS.unset_quad_corrections(), "glyph boxes with quad corrections"
assert not pymupdf.TOOLS.mupdf_display_errors(), "MuPDF errors displayed"
assert not pymupdf.TOOLS.mupdf_display_warnings(), "MuPDF warnings displayed"
assert "pymupdf.layout" not in sys.modules, "layout analyser imported"
assert "pymupdf4llm" not in sys.modules, "pymupdf4llm imported"
print("ok")
"""


@pytest.mark.parametrize(
    "module",
    [
        "chunkweave.parsers.pdf.tables.grid",
        "chunkweave.parsers.pdf.text",
        "chunkweave.worker.tasks.fanout",
    ],
)
def test_any_first_import_sets_pymupdf_up(module: str) -> None:
    run = subprocess.run(
        [sys.executable, "-c", CHECK.format(module=module)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "ok"

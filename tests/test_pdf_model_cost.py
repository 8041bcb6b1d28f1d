"""What the layout model route pays for: only the model variant it runs, on one thread."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest


def _run_fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter at the repo root; return its stdout."""
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def test_the_light_model_does_not_build_the_full_one(corpus: Path) -> None:
    """``auto``'s geometry-only variant runs; the full model is built only when called."""
    code = (
        "import chunkweave.parsers.pdf\n"  # first, as the parser's users import it
        "import pymupdf\n"
        "from chunkweave.parsers.pdf.layout_model import layout_boxes, model_available\n"
        f"page = pymupdf.open({str(corpus / 'multi_page.pdf')!r})[0]\n"
        "light = layout_boxes(page, light=True)\n"
        "assert light, 'no boxes'\n"
        "assert pymupdf._get_layout.__name__ == 'build_then_predict', 'full model built'\n"
        "assert model_available()\n"
        "full = layout_boxes(page, light=False)\n"
        "assert full and pymupdf._get_layout.__name__ == 'predict', 'full model not built'\n"
        "print('ok')\n"
    )
    assert _run_fresh(code) == "ok"


def test_the_light_model_runs_on_one_thread_with_the_analysers_output(corpus: Path) -> None:
    importlib = pytest.importorskip("importlib")
    from chunkweave.parsers.pdf.layout_model import _light_predictor, _skip_table_grids

    predict = _light_predictor()
    if predict is None:
        pytest.skip("layout model not installed")
    session = predict.__self__._model.session
    assert session.get_session_options().intra_op_num_threads == 1
    analyzer = importlib.import_module("pymupdf.layout.DocumentLayoutAnalyzer")
    reference = analyzer.get_model(feature_set_name="rf")  # the analyser's own defaults
    _skip_table_grids(reference)
    with pymupdf.open(corpus / "2305.03393v1-pg9.pdf") as doc:
        for page in doc:
            assert predict(page) == reference.predict(page)

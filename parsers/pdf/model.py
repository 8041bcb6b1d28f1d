"""The pymupdf-layout ONNX model: page regions with classes, in reading order.

PyMuPDF 2.x ships the layout analyser (formerly the ``pymupdf-layout`` package)
as ``pymupdf.layout``; importing PyMuPDF activates it and stores the predictor as
``pymupdf._get_layout``. It runs offline on CPU (about 0.3-2 s per page on two
cores) and returns ``[x0, y0, x1, y1, class]`` boxes already sorted in reading
order. Classes: text, title, section-header, list-item, table, picture, caption,
footnote, formula, page-header, page-footer. A lighter geometry-only variant of
the same model (no image features) is available for ``auto`` mode.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pymupdf

from chunkweave.parsers.pdf.geometry import BBox, overlap_share
from chunkweave.parsers.pdf.text import Line


@dataclass(frozen=True)
class LayoutBox:
    """One region found by the layout model."""

    bbox: BBox
    label: str


def _predictor() -> Callable[..., list] | None:
    fn = getattr(pymupdf, "_get_layout", None)
    if fn is None:
        try:
            importlib.import_module("pymupdf.layout")  # activates the model on import
        except ImportError:
            return None
        fn = getattr(pymupdf, "_get_layout", None)
    return fn if callable(fn) else None


@functools.cache
def _light_predictor() -> Callable[..., list] | None:
    """Return the geometry-only variant (``rf`` features, no image features), built once.

    It skips rendering the page for image features, which is most of the full
    model's cost (about 6x faster here), at some loss on pictures and tables.
    """
    try:
        analyzer = importlib.import_module("pymupdf.layout.DocumentLayoutAnalyzer")
        model = analyzer.get_model(feature_set_name="rf")
    except (ImportError, OSError, RuntimeError, ValueError, KeyError):
        return None
    return model.predict


def model_available() -> bool:
    """Return True when the layout model can run in this environment."""
    return _predictor() is not None


def layout_boxes(page: pymupdf.Page, light: bool = False) -> list[LayoutBox] | None:
    """Run the layout model on ``page``; None when unavailable or it fails.

    ``light`` selects the geometry-only variant (used by ``auto`` mode); the full
    model (image + geometry features) is PyMuPDF's default.
    """
    predict = (_light_predictor() if light else None) or _predictor()
    if predict is None:
        return None
    try:
        raw = predict(page)
    except (RuntimeError, ValueError, IndexError, KeyError, MemoryError):
        return None
    out = []
    for item in raw or ():
        x0, y0, x1, y1, label = item[:5]
        out.append(LayoutBox((float(x0), float(y0), float(x1), float(y1)), str(label)))
    return out


def assign_lines(lines: Sequence[Line], boxes: Sequence[LayoutBox]) -> list[int | None]:
    """Index of the box holding most of each line (None when no box holds half of it)."""
    out: list[int | None] = []
    for ln in lines:
        best, best_share = None, 0.5
        for i, box in enumerate(boxes):
            share = overlap_share(ln.bbox, box.bbox)
            if share > best_share:
                best, best_share = i, share
        out.append(best)
    return out

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

from chunkweave.parsers.pdf.blocks import Placed, TextRegion, block_regions
from chunkweave.parsers.pdf.geometry import BBox, overlap_share
from chunkweave.parsers.pdf.order import reading_order
from chunkweave.parsers.pdf.text import Line


@dataclass(frozen=True)
class LayoutBox:
    """One region found by the layout model."""

    bbox: BBox
    label: str


def _predictor() -> Callable[..., list] | None:
    fn = getattr(pymupdf, "_get_layout", None)
    if fn is None:
        _defer_full_model()
        try:
            importlib.import_module("pymupdf.layout")  # stores the (deferred) predictor
        except ImportError:
            pymupdf._get_layout = None
            return None
        fn = getattr(pymupdf, "_get_layout", None)
    return fn if callable(fn) else None


def _defer_full_model() -> None:
    """Have ``pymupdf.layout``'s import store a predictor that builds the full model on first use.

    The package's import builds the full model (image and geometry features, its
    ONNX sessions) unless ``pymupdf._get_layout`` is already callable. ``auto`` mode
    runs only the geometry-only variant, whose module import goes through that
    package: without this, every ``auto`` parse paid for a model it never ran
    (about a second of CPU per process, measured here). ``accurate`` mode and
    other callers of ``pymupdf._get_layout`` get the same model on first use.
    """
    if getattr(pymupdf, "_get_layout", None) is not None:
        return

    def build_then_predict(*args: object, **kwargs: object) -> list:
        analyzer = importlib.import_module("pymupdf.layout.DocumentLayoutAnalyzer")
        model = analyzer.get_model()  # the package's own default
        pymupdf._get_layout = model.predict
        return model.predict(*args, **kwargs)

    pymupdf._get_layout = build_then_predict


@functools.cache
def _light_predictor() -> Callable[..., list] | None:
    """Return the geometry-only variant (``rf`` features, no image features), built once.

    It skips rendering the page for image features, which is most of the full
    model's cost (about 6x faster here), at some loss on pictures and tables. It is
    built without the image-feature network (``rf`` never runs it) and with the
    smallest table-grid network, which is then switched off (:func:`_skip_table_grids`):
    both are only loaded by the analyser, never used on this route.
    """
    _defer_full_model()
    try:
        analyzer = importlib.import_module("pymupdf.layout.DocumentLayoutAnalyzer")
        model = analyzer.get_model(
            feature_set_name="rf", imf_model_path=_NO_FILE, table_grid_model_ver="V1"
        )
    except ImportError:
        pymupdf._get_layout = None  # no analyser: nothing deferred either
        return None
    except (OSError, RuntimeError, ValueError, KeyError):
        return None
    _skip_table_grids(model)
    _one_thread(model)
    return model.predict


def _one_thread(model: object) -> None:
    """Run the analyser's layout network on one thread, without spin-waiting.

    ONNX Runtime's default session runs each call on a pool of one thread per core
    whose idle threads spin. The layout network is a small graph network (tens of
    nodes per page), too small to gain from the pool: one thread did the same work
    with about half the CPU and less wall time on the shared two-core machine here
    (30 pages of a statistics report: 0.85 s CPU instead of 1.5 s, identical
    output), and a worker running several processes gets no threads fighting for
    its cores. Same model file, providers and arena setting as the analyser's own
    session; where the attributes are absent (another version), nothing changes.
    """
    inner = getattr(model, "_model", model)
    path, providers = getattr(inner, "model_path", None), getattr(inner, "_providers", None)
    if not path or getattr(inner, "session", None) is None:
        return
    try:
        ort = importlib.import_module("onnxruntime")
        options = ort.SessionOptions()
        options.enable_cpu_mem_arena = False
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(path, sess_options=options, providers=providers)
    except (ImportError, OSError, RuntimeError, ValueError):
        return
    setattr(inner, "session", session)  # noqa: B010 - another library's object


#: A path that names no file: the analyser then builds no image-feature network.
_NO_FILE = "/nonexistent/chunkweave-no-image-features.onnx"


def _skip_table_grids(model: object) -> None:
    """Switch off the analyser's table-grid network, whose output the parser never reads.

    For every box it classes as a table the analyser runs a second ONNX network that
    predicts the table's cell grid (half the light variant's time on pages with
    tables, measured here). The parser takes only the boxes and their classes, which
    that network does not change, and rebuilds tables itself
    (:func:`~chunkweave.parsers.pdf.tables.model_tables`). The switch is the
    analyser's own "no extractor" state; where the attribute is absent (another
    version), nothing changes.
    """
    inner = getattr(model, "_model", model)
    if getattr(inner, "table_grid_extractor", None) is not None:
        setattr(inner, "table_grid_extractor", None)  # noqa: B010 - another library's object


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


def model_order(
    body: list[Line], boxes: list[LayoutBox], placed: list[Placed]
) -> list[TextRegion | Placed]:
    """Return the page's regions in the model's reading order.

    ``body`` lines go to the box holding most of each (:func:`assign_lines`);
    ``placed`` tables and figures take the slot of the box they overlap by half,
    or else the slot their top edge gives them; lines outside every box follow in
    heuristic order.
    """
    owner = assign_lines(body, boxes)
    per_box: dict[int, list[Line]] = {}
    loose: list[Line] = []
    for ln, i in zip(body, owner, strict=True):
        if i is None:
            loose.append(ln)
        else:
            per_box.setdefault(i, []).append(ln)
    out: list[TextRegion | Placed] = []
    pending = list(placed)
    for i, box in enumerate(boxes):
        for p in [p for p in pending if overlap_share(p.bbox, box.bbox) > 0.5]:
            out.append(p)
            pending.remove(p)
        if i in per_box and box.label not in ("table", "picture"):
            out.extend(_box_regions(per_box[i], box.label))
        elif i in per_box and box.label == "table":
            # The model saw a table we could not rebuild: keep its text.
            out.append(TextRegion(per_box[i], "text"))
    for p in pending:
        # Not matched to a model box: slot it in by its top edge.
        at = next((k for k, item in enumerate(out) if item.bbox[1] > p.bbox[1]), len(out))
        out.insert(at, p)
    # Lines outside every box are appended in heuristic order, never dropped.
    out.extend(reading_order(block_regions(loose)))
    return out


def _box_regions(lines: list[Line], label: str) -> list[TextRegion]:
    """Return the region(s) of one layout box's lines, in reading order.

    Normally one region, top to bottom. When the box holds MuPDF blocks side by
    side (the light model draws one box over two adjacent lists), reading it top
    to bottom would interleave the columns: its blocks are read column by column.
    """
    blocks = block_regions(sorted(lines, key=lambda ln: (ln.block, ln.bbox[1])))
    spans = sorted((r.bbox[0], r.bbox[2]) for r in blocks)
    columns: list[float] = []  # right edge of each column of overlapping x-spans
    for x0, x1 in spans:
        if columns and x0 < columns[-1]:
            columns[-1] = max(columns[-1], x1)
        else:
            columns.append(x1)
    if len(columns) < 2 or not any(_side_by_side(a, b) for a in blocks for b in blocks):
        return [TextRegion(sorted(lines, key=lambda ln: ln.bbox[1]), label)]

    def column(r: TextRegion) -> int:
        return sum(1 for edge in columns if r.bbox[0] > edge)

    for r in blocks:
        r.hint = label
    return sorted(blocks, key=lambda r: (column(r), r.bbox[1]))


def _side_by_side(a: TextRegion, b: TextRegion) -> bool:
    ax0, ay0, ax1, ay1 = a.bbox
    bx0, by0, bx1, by1 = b.bbox
    return ax1 < bx0 and min(ay1, by1) - max(ay0, by0) > 0

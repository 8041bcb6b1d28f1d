"""PDF page images at a bounded resolution, and boxes placed in the image's frame.

The public way to draw a parsed PDF's pages (``chunkweave inspect``'s report).

Chunk regions and element boxes are in the frame the parser read the page's text
in: PyMuPDF's unrotated page, origin top-left (:class:`~chunkweave.chunking.models.Region`).
A page image is rendered as the page is shown, rotation applied; so each box is
mapped through ``page.rotation_matrix`` and then given as fractions of the shown
page (``page.rect``), which the report scales to the image whatever its size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from chunkweave.parsers.elements import BBox
from chunkweave.parsers.pdf.ocr import looks_scanned

#: Default and bounds of the render resolution (dots per inch).
DEFAULT_DPI = 96
MIN_DPI, MAX_DPI = 36, 200
#: No page image is larger than this many pixels on its long side, whatever the DPI
#: (a poster-sized page would otherwise become a huge image).
MAX_SIDE_PX = 1800
#: JPEG quality of the page images.
JPEG_QUALITY = 70

Fractions = tuple[float, float, float, float]


@dataclass(frozen=True)
class PageImage:
    """One rendered page: 1-based ``number``, JPEG bytes, pixel size, and whether OCR read it."""

    number: int
    jpeg: bytes
    width: int
    height: int
    rotation: int
    scanned: bool


class PdfPages:
    """An open PDF, read one page at a time (only the current page's image is in memory)."""

    def __init__(
        self, path: str | Path, *, dpi: int = DEFAULT_DPI, password: str | None = None
    ) -> None:
        if not MIN_DPI <= dpi <= MAX_DPI:
            raise ValueError(f"dpi {dpi} is outside {MIN_DPI}-{MAX_DPI}")
        self.dpi = dpi
        self._doc = pymupdf.open(path)
        # The parser opened it with the same password; a wrong one failed there first.
        if self._doc.needs_pass and not self._doc.authenticate(password or ""):
            self._doc.close()
            raise ValueError(f"{path}: the PDF is encrypted and the password does not open it")

    @property
    def count(self) -> int:
        """Number of pages."""
        return int(self._doc.page_count)

    def close(self) -> None:
        """Close the PDF."""
        self._doc.close()

    def __enter__(self) -> PdfPages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pages(self) -> Iterator[tuple[PageImage, PageFrame]]:
        """Yield each page's image and frame, in page order."""
        for pno in range(self.count):
            page = self._doc.load_page(pno)
            frame = PageFrame.of(page)
            scale = min(self.dpi / 72, MAX_SIDE_PX / max(frame.width, frame.height, 1.0))
            pix = page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
            chars = len(page.get_text("text").strip())
            yield (
                PageImage(
                    number=pno + 1,
                    jpeg=pix.tobytes("jpeg", jpg_quality=JPEG_QUALITY),
                    width=pix.width,
                    height=pix.height,
                    rotation=int(page.rotation),
                    scanned=looks_scanned(page, chars),
                ),
                frame,
            )


@dataclass(frozen=True)
class PageFrame:
    """How to place boxes of the parser's frame on the shown page."""

    width: float
    height: float
    matrix: tuple[float, float, float, float, float, float]

    @classmethod
    def of(cls, page: pymupdf.Page) -> PageFrame:
        """Return the frame of ``page``: its shown size and its rotation matrix."""
        m = page.rotation_matrix
        return cls(
            width=float(page.rect.width),
            height=float(page.rect.height),
            matrix=(m.a, m.b, m.c, m.d, m.e, m.f),
        )

    def fractions(self, bbox: BBox) -> Fractions:
        """``bbox`` (parser's frame) as ``(left, top, right, bottom)`` fractions of the shown page.

        Clamped to ``[0, 1]``: a box reaching past the page edge is drawn at the edge.
        """
        rect = pymupdf.Rect(bbox) * pymupdf.Matrix(*self.matrix)
        w, h = self.width or 1.0, self.height or 1.0
        return (
            _clamp(rect.x0 / w),
            _clamp(rect.y0 / h),
            _clamp(rect.x1 / w),
            _clamp(rect.y1 / h),
        )


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))

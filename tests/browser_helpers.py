"""Headless Chromium for the browser tests (Debian's ``chromium``, driven by Playwright).

Playwright's own browser downloads are never used: the system executable is
launched. ``CHUNKWEAVE_REGEN_SCREENSHOTS=1`` makes the tests that show something
worth seeing save it under ``docs/`` (the README's screenshots).
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

DOCS = Path(__file__).resolve().parents[1] / "docs"
REGEN = os.environ.get("CHUNKWEAVE_REGEN_SCREENSHOTS") == "1"


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium not found: scripts/bootstrap.sh installs Debian's chromium package")
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def save_screenshot(png: bytes, name: str) -> None:
    """Write ``png`` to ``docs/name`` when screenshots are being regenerated."""
    if REGEN:
        DOCS.mkdir(exist_ok=True)
        (DOCS / name).write_bytes(png)


def expected_box(
    pdf: Path, page_no: int, bbox: tuple[float, float, float, float], size: tuple[float, float]
) -> tuple[float, float, float, float]:
    """Where a box of the parser's frame must appear on a page image ``size`` (w, h) pixels.

    PyMuPDF's documented frame: text boxes are in the unrotated page, and
    ``page.rotation_matrix`` maps them onto the page as shown (``page.rect``).
    """
    with pymupdf.open(pdf) as doc:
        page = doc[page_no - 1]
        shown = pymupdf.Rect(bbox) * page.rotation_matrix
        sx, sy = size[0] / page.rect.width, size[1] / page.rect.height
    return (shown.x0 * sx, shown.y0 * sy, shown.x1 * sx, shown.y1 * sy)


def decode(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def hex_rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


def has_colour(
    img: Image.Image,
    x: float,
    y: float,
    rgb: tuple[int, int, int],
    *,
    radius: int = 3,
    tol: int = 40,
) -> bool:
    """True when some pixel within ``radius`` of (x, y) is within ``tol`` of ``rgb`` per channel."""
    for dx in range(-radius, radius + 1):
        for dy in range(-radius, radius + 1):
            px, py = round(x) + dx, round(y) + dy
            if 0 <= px < img.width and 0 <= py < img.height:
                got = img.getpixel((px, py))
                assert isinstance(got, tuple)
                if all(abs(int(g) - w) <= tol for g, w in zip(got, rgb, strict=False)):
                    return True
    return False

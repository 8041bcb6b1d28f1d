"""Paragraph and character styles of a DOCX, resolved through their ``basedOn`` chains.

Word stores most structure in styles: a heading is a paragraph whose style (or an
ancestor style) is a built-in "heading N" or carries an outline level; a code block
is a paragraph in a code-like style or a monospace font; captions have the
"caption" style. :class:`StyleSheet` answers those questions per style id, cached,
so a long document costs one lookup per paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from lxml import etree

from chunkweave.parsers.docx.package import NS

W = f"{{{NS['w']}}}"
T = TypeVar("T")

#: Font families treated as monospace (lower-case prefixes).
MONOSPACE_FONTS = (
    "courier",
    "consolas",
    "menlo",
    "monaco",
    "lucida console",
    "lucida sans typewriter",
    "dejavu sans mono",
    "liberation mono",
    "source code",
    "fira code",
    "fira mono",
    "inconsolata",
    "roboto mono",
    "noto mono",
    "noto sans mono",
    "ubuntu mono",
    "sf mono",
    "cascadia",
    "jetbrains mono",
    "andale mono",
    "ocr a",
    "pt mono",
    "hack",
)

_HEADING_NAME = re.compile(r"^heading\s*(\d)$")
_LIST_NAME = re.compile(r"^list(?: (?:bullet|number|continue))?(?: (\d))?$")
# Code-like style names; deliberately not "source reference" or "listing number".
_CODE_NAME = re.compile(
    r"(^|\b)(source code|code|code block|html code|html preformatted|preformatted( text)?"
    r"|plain text|macro text|verbatim( code)?)$"
)


@dataclass(frozen=True)
class StyleInfo:
    """What a paragraph style (with its ancestors) says about its paragraphs.

    ``outline_level`` is 1-based (Word's ``w:outlineLvl`` 0..8 plus one), ``None``
    for body text. ``num`` is the inherited ``(numId, ilvl)`` numbering, if any.
    """

    name: str
    outline_level: int | None
    heading_level: int | None
    is_title: bool
    is_caption: bool
    is_code: bool
    list_level: int | None
    num: tuple[str, int] | None
    monospace: bool
    bold: bool = False
    size: int | None = None


class StyleSheet:
    """Resolved paragraph and character styles of one document (``word/styles.xml``)."""

    def __init__(self, root: etree._Element | None) -> None:
        self._styles: dict[str, etree._Element] = {}
        self._default_para: str | None = None
        self._info_cache: dict[str, StyleInfo] = {}
        self._char_cache: dict[str, bool | None] = {}
        self.default_monospace = False
        self.default_size: int | None = None
        if root is None:
            return
        for style in root.iter(f"{W}style"):
            sid = style.get(f"{W}styleId")
            if sid is None:
                continue
            self._styles[sid] = style
            if style.get(f"{W}type") == "paragraph" and style.get(f"{W}default") in ("1", "true"):
                self._default_para = sid
        fonts = root.find(f"{W}docDefaults/{W}rPrDefault/{W}rPr/{W}rFonts")
        self.default_monospace = is_monospace_fonts(fonts)
        size = root.find(f"{W}docDefaults/{W}rPrDefault/{W}rPr/{W}sz")
        self.default_size = _int_val(size)

    def numbering_style_nums(self) -> dict[str, str]:
        """Return ``{styleId: numId}`` of numbering styles (targets of ``w:numStyleLink``)."""
        out: dict[str, str] = {}
        for sid, style in self._styles.items():
            num = _num_pr(style)
            if style.get(f"{W}type") == "numbering" and num is not None:
                out[sid] = num[0]
        return out

    def info(self, style_id: str | None) -> StyleInfo:
        """Return what paragraph style ``style_id`` implies (``None``: the default style)."""
        key = style_id or ""
        hit = self._info_cache.get(key)
        if hit is None:
            hit = self._info_cache[key] = self._info(style_id)
        return hit

    def char_monospace(self, style_id: str) -> bool | None:
        """Tell whether character style ``style_id`` sets a monospace font (``None``: unset)."""
        if style_id not in self._char_cache:
            self._char_cache[style_id] = self._char_monospace(style_id)
        return self._char_cache[style_id]

    def _chain(self, style_id: str | None, fallback: bool = True) -> list[etree._Element]:
        # Ancestors first-to-last; unknown ids fall back to the default paragraph style.
        chain: list[etree._Element] = []
        sid = style_id if style_id in self._styles or not fallback else self._default_para
        while sid is not None and sid in self._styles and len(chain) < 32:
            style = self._styles[sid]
            if style in chain:  # a basedOn cycle
                break
            chain.append(style)
            based = style.find(f"{W}basedOn")
            sid = based.get(f"{W}val") if based is not None else None
        return chain

    def _info(self, style_id: str | None) -> StyleInfo:
        chain = self._chain(style_id)
        names = [_style_name(s) for s in chain]
        name = names[0] if names else ""
        outline = _first(chain, _outline_level)
        num = _first(chain, _num_pr)
        heading = None
        for n in names:
            m = _HEADING_NAME.match(n)
            if m:
                heading = int(m.group(1))
                break
        is_title = any(n in ("title",) for n in names[:2])
        list_level = None
        m = _LIST_NAME.match(name)
        if m and name != "list paragraph":
            list_level = int(m.group(1) or 1)
        fonts = _first(chain, lambda s: s.find(f"{W}rPr/{W}rFonts"))
        monospace = is_monospace_fonts(fonts) if fonts is not None else self.default_monospace
        return StyleInfo(
            name=name,
            outline_level=outline,
            heading_level=heading,
            is_title=is_title,
            is_caption=any(n == "caption" for n in names),
            is_code=any(_CODE_NAME.search(n) for n in names),
            list_level=list_level,
            num=num,
            monospace=monospace,
            bold=_first(chain, lambda s: _on_off(s.find(f"{W}rPr/{W}b"))) or False,
            size=_first(chain, lambda s: _int_val(s.find(f"{W}rPr/{W}sz"))) or self.default_size,
        )

    def _char_monospace(self, style_id: str) -> bool | None:
        for style in self._chain(style_id, fallback=False):
            fonts = style.find(f"{W}rPr/{W}rFonts")
            if fonts is not None and _font_names(fonts):
                return is_monospace_fonts(fonts)
            if _CODE_NAME.search(_style_name(style)):
                return True
        return None


def _on_off(el: etree._Element | None) -> bool | None:
    if el is None:
        return None
    return el.get(f"{W}val", "true") not in ("0", "false", "off")


def _int_val(el: etree._Element | None) -> int | None:
    if el is None:
        return None
    try:
        return int(el.get(f"{W}val", ""))
    except ValueError:
        return None


def _style_name(style: etree._Element) -> str:
    name = style.find(f"{W}name")
    raw = name.get(f"{W}val") if name is not None else style.get(f"{W}styleId")
    return " ".join((raw or "").lower().split())


def _first(chain: list[etree._Element], get: Callable[[etree._Element], T | None]) -> T | None:
    for style in chain:
        value = get(style)
        if value is not None:
            return value
    return None


def _outline_level(style: etree._Element) -> int | None:
    el = style.find(f"{W}pPr/{W}outlineLvl")
    return outline_value(el)


def outline_value(el: etree._Element | None) -> int | None:
    """Return the 1-based level of a ``w:outlineLvl`` element; ``None`` for body text (9)."""
    if el is None:
        return None
    try:
        val = int(el.get(f"{W}val", "9"))
    except ValueError:
        return None
    return val + 1 if 0 <= val <= 8 else None


def _num_pr(style: etree._Element) -> tuple[str, int] | None:
    return num_pr_value(style.find(f"{W}pPr/{W}numPr"))


def num_pr_value(num_pr: etree._Element | None) -> tuple[str, int] | None:
    """Return ``(numId, ilvl)`` of a ``w:numPr`` element; ``None`` if absent."""
    if num_pr is None:
        return None
    num_id_el = num_pr.find(f"{W}numId")
    ilvl_el = num_pr.find(f"{W}ilvl")
    num_id = num_id_el.get(f"{W}val") if num_id_el is not None else None
    try:
        ilvl = int(ilvl_el.get(f"{W}val", "0")) if ilvl_el is not None else 0
    except ValueError:
        ilvl = 0
    if num_id is None:
        return None
    return (num_id, max(0, min(ilvl, 8)))


def _font_names(fonts: etree._Element) -> list[str]:
    return [
        v.lower()
        for v in (fonts.get(f"{W}ascii"), fonts.get(f"{W}hAnsi"), fonts.get(f"{W}cs"))
        if v
    ]


def is_monospace_fonts(fonts: etree._Element | None) -> bool:
    """Tell whether a ``w:rFonts`` element names a monospace font for Latin text."""
    if fonts is None:
        return False
    names = _font_names(fonts)
    return bool(names) and names[0].startswith(MONOSPACE_FONTS)

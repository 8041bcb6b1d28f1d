"""Reading one DOCX paragraph (``w:p``): its text, inline math, and what hangs off it.

:func:`read_paragraph` walks a paragraph's runs in document order and returns a
:class:`ParaContent`: the visible text (tracked deletions left out, line breaks as
newlines, inline equations as linear text), display equations, the text boxes and
images anchored in it, the footnotes it references, and facts used to classify it
(share of monospace text, a ``SEQ`` caption field). Page-break markers are reported
to a :class:`PageCounter` as they are met.

Text boxes (``w:txbxContent``) are returned, not read: the caller reads them as
blocks right after the paragraph. A shape is stored twice in
``mc:AlternateContent`` (DrawingML ``mc:Choice`` and a VML ``mc:Fallback`` copy);
only the Choice is read, so nothing is duplicated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from chunkweave.parsers.docx.math import omml_to_text
from chunkweave.parsers.docx.package import NS
from chunkweave.parsers.docx.styles import StyleSheet, is_monospace_fonts

W = f"{{{NS['w']}}}"
M = f"{{{NS['m']}}}"
MC = f"{{{NS['mc']}}}"
_WP_DOCPR = f"{{{NS['wp']}}}docPr"
_A_BLIP = f"{{{NS['a']}}}blip"
_V_IMAGEDATA = f"{{{NS['v']}}}imagedata"

# Containers whose children are read as if they were inline in the paragraph.
_TRANSPARENT = frozenset(
    W + t
    for t in (
        "hyperlink",
        "smartTag",
        "sdt",
        "sdtContent",
        "ins",
        "customXml",
        "moveTo",
        "dir",
        "bdo",
    )
) | {f"{M}oMathParaPr"}
# Tracked deletions and metadata: never visible text.
_SKIP = frozenset(
    W + t
    for t in ("del", "moveFrom", "pPr", "rPr", "sdtPr", "sdtEndPr", "proofErr", "commentRangeStart")
)


class PageCounter:
    """Page numbers from explicit and rendered page breaks, never invented.

    When ``enabled`` is false (the document has no page-break markers at all)
    :attr:`current` is ``None``. A marker advances the page only if some content
    was seen since the previous marker: Word writes a rendered break right after
    a hard break, and both mean the same new page (so a deliberately blank page
    is not counted).
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._page = 1
        self._content = False

    @property
    def current(self) -> int | None:
        """Return the page the next content lands on, or ``None`` without markers."""
        return self._page if self.enabled else None

    @property
    def count(self) -> int | None:
        """Return the number of pages seen so far, or ``None`` without markers."""
        return self._page if self.enabled else None

    def mark(self) -> None:
        """Record a page-break marker."""
        if self._content:
            self._page += 1
            self._content = False

    def content(self) -> None:
        """Record that visible content was placed on the current page."""
        self._content = True


@dataclass(frozen=True)
class RunStyle:
    """The formatting of a run that classification needs: font family, weight, size.

    ``size`` is in half-points (Word's ``w:sz``), ``None`` when nothing sets it.
    """

    mono: bool = False
    bold: bool = False
    size: int | None = None


@dataclass
class ParaContent:
    """What one paragraph holds; see the module docstring."""

    parts: list[str] = field(default_factory=list)
    display_math: list[str] = field(default_factory=list)
    textboxes: list[etree._Element] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    footnotes: list[tuple[str, str]] = field(default_factory=list)  # (kind, id)
    page: int | None = None
    mono_chars: int = 0
    bold_chars: int = 0
    size_chars: dict[int, int] = field(default_factory=dict)
    text_chars: int = 0
    inline_math: int = 0
    math_chars: int = 0
    seq_field: bool = False
    field_instr: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Return the visible text with inline math, trimmed."""
        return "".join(self.parts).strip()

    @property
    def text_raw(self) -> str:
        """Return the text keeping leading indentation (for code), without trailing space."""
        return "".join(self.parts).strip("\n").rstrip()

    @property
    def monospace(self) -> bool:
        """Tell whether all of the paragraph's visible text is set in a monospace font."""
        return self.text_chars > 0 and self.mono_chars == self.text_chars

    @property
    def bold(self) -> bool:
        """Tell whether all of the paragraph's visible text is bold."""
        return self.text_chars > 0 and self.bold_chars == self.text_chars

    @property
    def size(self) -> int | None:
        """Return the font size (half-points) of most of the visible text, if known."""
        return max(self.size_chars, key=self.size_chars.__getitem__, default=None)

    @property
    def only_math(self) -> bool:
        """Tell whether the paragraph's visible text is nothing but inline equations."""
        return self.inline_math > 0 and self.math_chars == self.text_chars


class ParagraphReader:
    """Reads paragraphs of one document part against its styles and page counter."""

    def __init__(self, styles: StyleSheet, pages: PageCounter) -> None:
        self.styles = styles
        self.pages = pages

    def read(self, p: etree._Element, para: RunStyle, count_pages: bool = True) -> ParaContent:
        """Return the content of paragraph ``p``.

        ``para`` is the run formatting the paragraph's style gives (runs inherit it);
        ``count_pages`` is false inside text boxes, headers and footers, whose break
        markers do not belong to the body's page flow.
        """
        out = ParaContent()
        self._walk(p, out, para, count_pages)
        if out.page is None:
            out.page = self.pages.current
        return out

    def _walk(self, node: etree._Element, out: ParaContent, mono: RunStyle, pages: bool) -> None:
        for child in node:
            tag = child.tag
            if not isinstance(tag, str) or tag in _SKIP:
                continue
            if tag == f"{W}r":
                self._run(child, out, mono, pages)
            elif tag in _TRANSPARENT:
                self._walk(child, out, mono, pages)
            elif tag == f"{W}fldSimple":
                instr = child.get(f"{W}instr", "")
                self._field(instr, out)
                self._walk(child, out, mono, pages)
            elif tag == f"{MC}AlternateContent":
                self._alternate(child, out, mono, pages)
            elif tag == f"{M}oMath":
                self._append(out, omml_to_text(child), _MATH, pages=pages, math=True)
                out.inline_math += 1
            elif tag == f"{M}oMathPara":
                text = omml_to_text(child)
                if text:
                    out.display_math.append(text)
                    if pages:
                        self.pages.content()

    def _alternate(
        self, node: etree._Element, out: ParaContent, mono: RunStyle, pages: bool
    ) -> None:
        choice = node.find(f"{MC}Choice")
        chosen = choice if choice is not None else node.find(f"{MC}Fallback")
        if chosen is not None:
            self._walk_inline_objects(chosen, out, mono, pages)

    def _walk_inline_objects(
        self, node: etree._Element, out: ParaContent, mono: RunStyle, pages: bool
    ) -> None:
        # AlternateContent may wrap runs (paragraph level) or drawings (run level).
        for child in node:
            if child.tag in (f"{W}drawing", f"{W}pict", f"{W}object"):
                self._shape(child, out)
            elif child.tag == f"{W}r":
                self._run(child, out, mono, pages)
            elif isinstance(child.tag, str):
                self._walk(child, out, mono, pages)

    def _run(self, r: etree._Element, out: ParaContent, para: RunStyle, pages: bool) -> None:
        mono = self._run_style(r, para)
        for child in r:
            tag = child.tag
            if tag == f"{W}t":
                self._append(out, child.text or "", mono, pages)
            elif tag == f"{W}tab" or tag == f"{W}ptab":
                out.parts.append("\t")
            elif tag == f"{W}br":
                if child.get(f"{W}type") == "page":
                    if pages:
                        self.pages.mark()
                    out.parts.append("\n")
                elif child.get(f"{W}type") != "column":
                    out.parts.append("\n")
            elif tag == f"{W}cr":
                out.parts.append("\n")
            elif tag == f"{W}lastRenderedPageBreak":
                if pages:
                    self.pages.mark()
            elif tag == f"{W}noBreakHyphen":
                self._append(out, "-", mono, pages)
            elif tag == f"{W}sym":
                code = child.get(f"{W}char", "")
                if code and not code.upper().startswith("F0"):  # F0xx: symbol-font glyphs
                    self._append(out, _safe_chr(code), mono, pages)
            elif tag in (f"{W}drawing", f"{W}pict", f"{W}object"):
                self._shape(child, out)
            elif tag == f"{MC}AlternateContent":
                self._alternate(child, out, mono, pages)
            elif tag == f"{W}footnoteReference":
                out.footnotes.append(("footnote", child.get(f"{W}id", "")))
            elif tag == f"{W}endnoteReference":
                out.footnotes.append(("endnote", child.get(f"{W}id", "")))
            elif tag == f"{W}instrText":
                self._field(child.text or "", out)
            elif tag == f"{M}oMath":
                self._append(out, omml_to_text(child), _MATH, pages=pages, math=True)
                out.inline_math += 1

    def _shape(self, node: etree._Element, out: ParaContent) -> None:
        # Text boxes: the outermost w:txbxContent elements of this shape. Images:
        # DrawingML blips or VML image data, described by their alt text.
        out.textboxes.extend(_outer_textboxes(node))
        has_image = any(True for _ in node.iter(_A_BLIP, _V_IMAGEDATA))
        if has_image and not out.textboxes:
            doc_pr = next(node.iter(_WP_DOCPR), None)
            alt = ""
            if doc_pr is not None:
                alt = " ".join((doc_pr.get("descr") or doc_pr.get("title") or "").split())
            out.images.append(alt)

    def _field(self, instr: str, out: ParaContent) -> None:
        words = instr.split()
        if words:
            out.field_instr.append(words[0].upper())
            if words[0].upper() == "SEQ":
                out.seq_field = True

    def _append(
        self, out: ParaContent, text: str, style: RunStyle, pages: bool, math: bool = False
    ) -> None:
        if not text:
            return
        out.parts.append(text)
        visible = len(text) - text.count(" ")
        if visible:
            out.text_chars += visible
            if math:
                out.math_chars += visible
            if style.mono:
                out.mono_chars += visible
            if style.bold:
                out.bold_chars += visible
            if style.size is not None:
                out.size_chars[style.size] = out.size_chars.get(style.size, 0) + visible
            if pages:
                if out.page is None:
                    out.page = self.pages.current
                self.pages.content()

    def _run_style(self, r: etree._Element, para: RunStyle) -> RunStyle:
        rpr = r.find(f"{W}rPr")
        if rpr is None:
            return para
        return RunStyle(
            mono=self._run_monospace(rpr, para.mono),
            bold=_toggle(rpr.find(f"{W}b"), para.bold),
            size=_half_points(rpr.find(f"{W}sz"), para.size),
        )

    def _run_monospace(self, rpr: etree._Element, para_mono: bool) -> bool:
        fonts = rpr.find(f"{W}rFonts")
        if fonts is not None and (fonts.get(f"{W}ascii") or fonts.get(f"{W}hAnsi")):
            return is_monospace_fonts(fonts)
        rstyle = rpr.find(f"{W}rStyle")
        if rstyle is not None:
            mono = self.styles.char_monospace(rstyle.get(f"{W}val", ""))
            if mono is not None:
                return mono
        return para_mono


_MATH = RunStyle()


def _toggle(el: etree._Element | None, default: bool) -> bool:
    # w:b and friends: present means on unless w:val says 0/false/off.
    if el is None:
        return default
    return el.get(f"{W}val", "true") not in ("0", "false", "off")


def _half_points(el: etree._Element | None, default: int | None) -> int | None:
    if el is None:
        return default
    try:
        return int(el.get(f"{W}val", ""))
    except ValueError:
        return default


def _outer_textboxes(node: etree._Element) -> list[etree._Element]:
    found: list[etree._Element] = []
    stack = list(node)
    while stack:
        el = stack.pop(0)
        if el.tag == f"{W}txbxContent":
            found.append(el)  # nested boxes are read when this one is
            continue
        if el.tag == f"{MC}AlternateContent":
            choice = el.find(f"{MC}Choice")
            stack[0:0] = list(choice if choice is not None else el)
            continue
        stack[0:0] = list(el)
    return found


def _safe_chr(code: str) -> str:
    try:
        return chr(int(code, 16))
    except ValueError:
        return ""

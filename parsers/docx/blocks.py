"""The DOCX body walk: block-level XML (paragraphs, tables, content controls) -> blocks.

:class:`BlockReader` turns the children of a container (``w:body``, a table cell,
a text box, a header part, a footnote) into :class:`Block` values in reading order.
A block is an element-to-be: its type is decided here from styles, outline levels,
numbering and content (see :meth:`BlockReader._classify`), except that runs of
monospace paragraphs are only candidates for ``code`` until
:func:`chunkweave.parsers.docx.merge_code` has seen the whole run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

from lxml import etree

from chunkweave.parsers.docx.numbering import Numbering
from chunkweave.parsers.docx.package import NS
from chunkweave.parsers.docx.styles import StyleInfo, StyleSheet, num_pr_value, outline_value
from chunkweave.parsers.docx.tables import flatten_rows, read_table
from chunkweave.parsers.docx.text import PageCounter, ParaContent, ParagraphReader, RunStyle
from chunkweave.parsers.elements import ElementType, table_text

W = f"{{{NS['w']}}}"
MC = f"{{{NS['mc']}}}"

#: Tables and text boxes nested deeper than this are not read as structure: their
#: content is flattened into the text of the enclosing cell (with a warning). What
#: bounds hostile depth is the XML parser's own depth limit (see ``package``).
MAX_NESTING = 32

# "Table 3: ...", "Figure 2.", "Fig. 4 -": a number followed by punctuation, so prose
# such as "Table 1 shows ..." stays a paragraph.
_CAPTION_TEXT = re.compile(
    r"^(table|tab\.|figure|fig\.|listing|chart|exhibit)\s*[0-9ivxlcIVXLC]+(?:[.\-][0-9]+)*"
    r"\s*[:.\u2013\u2014-](?:\s|$)",
    re.IGNORECASE,
)

CodeHint = Literal["style", "mono"] | None


@dataclass(frozen=True)
class Block:
    """An element before document-wide numbering; see :class:`.elements.Element`."""

    type: ElementType
    text: str
    level: int | None = None
    page: int | None = None
    rows: tuple[tuple[str, ...], ...] | None = None
    header_rows: int = 0
    code: CodeHint = None
    emphasis: Emphasis | None = None


class Emphasis(NamedTuple):
    """How a paragraph stands out, for documents that format headings by hand.

    ``size`` is the dominant font size in half-points (Word's default 20 when
    nothing sets it); ``heading_like`` is one short line without closing punctuation.
    """

    size: int
    bold: bool
    caps: bool
    heading_like: bool


class BlockReader:
    """Reads the block-level content of one document's parts."""

    def __init__(
        self,
        path: str,
        styles: StyleSheet,
        numbering: Numbering,
        pages: PageCounter,
        notes: dict[str, dict[str, etree._Element]],
    ) -> None:
        self.path = path
        self.styles = styles
        self.numbering = numbering
        self.pages = pages
        self.notes = notes
        self.paragraphs = ParagraphReader(styles, pages)
        self._note_numbers: dict[tuple[str, str], int] = {}
        #: How many containers deeper than MAX_NESTING were flattened to text.
        self.flattened = 0

    def blocks(
        self, container: etree._Element, count_pages: bool, depth: int = 0
    ) -> Iterator[Block]:
        """Yield the blocks of ``container``'s children in reading order.

        ``count_pages`` is false for parts outside the body's page flow (headers,
        footers, notes, text boxes). ``depth`` counts nested tables and text boxes;
        beyond :data:`MAX_NESTING` the container's whole content is yielded as one
        paragraph of plain text (:meth:`flat_text`) and :attr:`flattened` counts it.
        """
        if depth > MAX_NESTING:
            text = self.flat_text(container)
            self.flattened += 1
            if text:
                yield Block(type="paragraph", text=text, page=None)
            return
        for child in container:
            tag = child.tag
            if tag == f"{W}p":
                yield from self._paragraph(child, count_pages, depth)
            elif tag == f"{W}tbl":
                yield from self._table(child, count_pages, depth)
            elif tag in (f"{W}sdt", f"{W}customXml", f"{W}ins", f"{W}moveTo"):
                inner = child.find(f"{W}sdtContent") if tag == f"{W}sdt" else child
                if inner is not None:
                    yield from self.blocks(inner, count_pages, depth)
            elif tag == f"{MC}AlternateContent":
                choice = child.find(f"{MC}Choice")
                if choice is not None:
                    yield from self.blocks(choice, count_pages, depth)

    def flat_text(self, container: etree._Element) -> str:
        """Return the visible text of every paragraph under ``container``, space-joined.

        Iterative, so any depth the XML parser accepted is read without recursion
        through tables; VML fallback copies of shapes are skipped (their DrawingML
        twin is read).
        """
        texts: list[str] = []
        for p in container.iter(f"{W}p"):
            if any(a.tag == f"{MC}Fallback" for a in p.iterancestors()):
                continue
            text = self.paragraphs.read(p, RunStyle(), count_pages=False).text
            if text:
                texts.append(" ".join(text.split()))
        return " ".join(texts)

    def _table(self, tbl: etree._Element, count_pages: bool, depth: int) -> Iterator[Block]:
        cells = tbl.findall(f"{W}tr/{W}tc")
        if len(cells) == 1 and len(tbl.findall(f"{W}tr")) == 1:
            # A one-cell table is a layout frame (a boxed note, a border around a
            # nested table): its content is read as ordinary blocks.
            yield from self.blocks(cells[0], count_pages, depth + 1)
            return
        page = self.pages.current if count_pages else None

        def cell_text(tc: etree._Element) -> str:
            parts = []
            for block in self.blocks(tc, count_pages, depth + 1):
                text = flatten_rows(block.rows) if block.rows is not None else block.text
                if text:
                    parts.append(" ".join(text.split()))
            return " ".join(parts)

        rows, header_rows = read_table(tbl, cell_text)
        if any(cell for row in rows for cell in row):
            yield Block(
                type="table", text=table_text(rows), page=page, rows=rows, header_rows=header_rows
            )

    def _paragraph(self, p: etree._Element, count_pages: bool, depth: int) -> Iterator[Block]:
        ppr = p.find(f"{W}pPr")
        style_el = ppr.find(f"{W}pStyle") if ppr is not None else None
        info = self.styles.info(style_el.get(f"{W}val") if style_el is not None else None)
        if count_pages and ppr is not None and _on(ppr.find(f"{W}pageBreakBefore")):
            self.pages.mark()
        para_style = RunStyle(mono=info.monospace, bold=info.bold, size=info.size)
        content = self.paragraphs.read(p, para_style, count_pages)
        block = self._classify(ppr, info, content)
        if block is not None:
            yield block
        for formula in content.display_math:
            yield Block(type="formula", text=formula, page=content.page)
        for alt in content.images:
            yield Block(type="figure", text=alt, page=content.page)
        for box in content.textboxes:
            yield from self.blocks(box, False, depth + 1)
        for kind, note_id in content.footnotes:
            note = self._note(kind, note_id, depth)
            if note is not None:
                yield note
        if count_pages and ppr is not None:
            sect = ppr.find(f"{W}sectPr")
            if sect is not None and _section_type(sect) != "continuous":
                self.pages.mark()

    def _classify(
        self, ppr: etree._Element | None, info: StyleInfo, content: ParaContent
    ) -> Block | None:
        num = info.num
        outline: int | None = None
        explicit_outline = False
        if ppr is not None:
            num_el = ppr.find(f"{W}numPr")
            if num_el is not None:
                num = num_pr_value(num_el)
            outline_el = ppr.find(f"{W}outlineLvl")
            if outline_el is not None:
                explicit_outline = True
                outline = outline_value(outline_el)
        # Counters advance even for paragraphs we do not show as numbered.
        marker = self.numbering.next_marker(*num) if num is not None and num[0] != "0" else None
        text = content.text
        if not text:
            return None
        page = content.page
        if info.is_title:
            return Block(type="title", text=_one_line(text), page=page)
        level = outline if explicit_outline else (info.heading_level or info.outline_level)
        if level is not None:
            if marker is not None and marker.text and not marker.bullet:
                text = f"{marker.text} {text}"
            return Block(type="heading", text=_one_line(text), level=min(level, 9), page=page)
        if info.is_caption or content.seq_field or (len(text) < 300 and _CAPTION_TEXT.match(text)):
            return Block(type="caption", text=text, page=page)
        if content.only_math:
            return Block(type="formula", text=text, page=page)
        if info.is_code:
            return Block(type="code", text=content.text_raw, page=page, code="style")
        if marker is not None and num is not None:
            if marker.text and not marker.bullet:
                text = f"{marker.text} {text}"
            # "List Bullet 2"-style styles often number at ilvl 0 and nest by indent only.
            level = max(num[1] + 1, info.list_level or 1)
            return Block(type="list_item", text=text, level=level, page=page)
        if info.list_level is not None:
            return Block(type="list_item", text=text, level=info.list_level, page=page)
        if content.monospace:
            return Block(type="code", text=content.text_raw, page=page, code="mono")
        return Block(type="paragraph", text=text, page=page, emphasis=_emphasis(text, content))

    def _note(self, kind: str, note_id: str, depth: int) -> Block | None:
        note = self.notes.get(kind, {}).get(note_id)
        if note is None:
            return None
        key = (kind, note_id)
        number = self._note_numbers.setdefault(key, len(self._note_numbers) + 1)
        texts = [b.text for b in self.blocks(note, False, depth + 1) if b.text]
        text = " ".join(" ".join(texts).split())
        if not text:
            return None
        return Block(type="footnote", text=f"[{number}] {text}", page=self.pages.current)


def _emphasis(text: str, content: ParaContent) -> Emphasis:
    heading_like = len(text) <= 120 and "\n" not in text and text[-1] not in ".,;:!?"
    letters = [c for c in text if c.isalpha()]
    caps = len(letters) >= 4 and all(c.isupper() for c in letters) and len(text.split()) <= 12
    size = content.size if content.size is not None else 20
    return Emphasis(size, content.bold, caps, heading_like)


def _on(el: etree._Element | None) -> bool:
    return el is not None and el.get(f"{W}val", "true") not in ("0", "false", "off")


def _section_type(sect: etree._Element) -> str:
    el = sect.find(f"{W}type")
    # A section break without a type starts a new page (ECMA-376 default nextPage).
    return el.get(f"{W}val", "nextPage") if el is not None else "nextPage"


def _one_line(text: str) -> str:
    return " ".join(text.split())

"""DOCX -> typed elements, read directly from the OOXML parts.

python-docx is not used for reading: it has no notion of outline levels, rendered
numbering, text boxes, footnotes, equations or page markers, and it parses every
part without size bounds. Instead :class:`chunkweave.parsers.docx.package.DocxPackage` reads
the parts safely and the modules of this package interpret them:

- ``styles``: style chains (headings, title, captions, code styles, fonts);
- ``numbering``: numbering.xml counters, rendered as Word shows them;
- ``text``: one paragraph's text, inline math, text boxes, page markers;
- ``tables``: merged and nested cells;
- ``blocks``: the body walk that classifies paragraphs.

Output order: the distinct page headers first, then the body in reading order
(text boxes right after the paragraph that anchors them, footnotes right after
the paragraph that references them, endnotes at the end), then the distinct page
footers. Headers and footers have ``page=None``: one part repeats on many pages.
Body pages come from explicit and rendered page breaks; without any such marker
every page is ``None`` and a warning says so. Documents without any heading style
get their hand-formatted headings (larger type) promoted, see
:func:`promote_emphasised_headings`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from lxml import etree

from chunkweave.parsers.document import ParsedDocument, ParseOptions, file_sha1
from chunkweave.parsers.docx.blocks import MAX_NESTING, Block, BlockReader
from chunkweave.parsers.docx.numbering import Numbering
from chunkweave.parsers.docx.package import NS, DocxPackage
from chunkweave.parsers.docx.styles import StyleSheet
from chunkweave.parsers.docx.text import PageCounter
from chunkweave.parsers.elements import Element, ElementType
from chunkweave.parsers.errors import (
    CorruptDocumentError,
    EmptyDocumentError,
    TooLargeError,
    UnsafeDocumentError,
)
from chunkweave.parsers.structure import finalize

W = f"{{{NS['w']}}}"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
_R_ID = f"{{{NS['r']}}}id"

# Code-like characters or indentation: a run of monospace paragraphs without any
# of these is typewriter-styled prose, not code.
_CODE_HINT = re.compile(r"[{}()\[\];=<>#*/\\|&$@`^~]|^\s{2,}\S|::|->|=>", re.MULTILINE)

_PAGE_MARKERS = etree.XPath(
    "boolean(.//w:lastRenderedPageBreak | .//w:br[@w:type='page'] | .//w:pPr/w:sectPr"
    " | .//w:pPr/w:pageBreakBefore[not(@w:val='0' or @w:val='false')])",
    namespaces={"w": NS["w"]},
)


def parse_docx(path: str | Path, opts: ParseOptions, *, sha1: str | None = None) -> ParsedDocument:
    """Parse a DOCX file into a :class:`ParsedDocument` (format ``docx``).

    The caller has already checked existence, size and that the bytes are a DOCX.
    ``opts.max_pages`` applies when page breaks make the page count known;
    ``opts.page_range``, ``mode``, ``ocr`` and ``password`` do not apply to DOCX.

    Raises UnsafeDocumentError (zip bomb, DTD/entities, absurd nesting),
    CorruptDocumentError (damaged ZIP or XML), TooLargeError and EmptyDocumentError.
    """
    path = Path(path)
    try:
        with DocxPackage(path) as pkg:
            reader = _DocxReader(pkg)
            elements = finalize(_to_elements(reader.blocks()))
            page_count = reader.pages.count
            title = next((e.text for e in elements if e.type == "title"), None)
            title = title or reader.core_title()
    except RecursionError as err:
        raise UnsafeDocumentError(str(path), "structure nested too deeply to read") from err
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as err:
        # Malformed-but-parseable OOXML (wrong element types, missing attributes)
        # is reported as damage, with the cause chained for --debug.
        raise CorruptDocumentError(
            str(path), f"unreadable DOCX structure ({type(err).__name__}: {err})"
        ) from err
    if page_count is not None and page_count > opts.max_pages:
        raise TooLargeError(str(path), f"{page_count} pages (limit {opts.max_pages})")
    if not elements:
        raise EmptyDocumentError(str(path), "the document contains no text, tables or figures")
    warnings = []
    if reader.reader.flattened:
        warnings.append(
            f"{reader.reader.flattened} table cell(s) or text box(es) nested more than "
            f"{MAX_NESTING} deep were flattened into the text of their enclosing cell"
        )
    if page_count is None:
        warnings.append("no page-break markers in the DOCX: page numbers are unknown (null)")
    return ParsedDocument(
        path=str(path),
        format="docx",
        sha1=sha1 or file_sha1(path),  # hashed here only when the caller has not
        page_count=page_count,
        title=title,
        elements=elements,
        warnings=tuple(warnings),
        parser="docx",
    )


class _DocxReader:
    """One pass over one package: parts located, styles and numbering loaded."""

    def __init__(self, pkg: DocxPackage) -> None:
        self.pkg = pkg
        main = pkg.main_part
        root = pkg.xml(main)
        body = root.find(f"{W}body") if root is not None else None
        if body is None:
            raise CorruptDocumentError(pkg.path, f"{main} has no w:body")
        self.body = body
        self.rels = pkg.rels(main)
        styles = StyleSheet(self._part("styles", "word/styles.xml"))
        numbering = Numbering(
            self._part("numbering", "word/numbering.xml"), styles.numbering_style_nums()
        )
        self.pages = PageCounter(enabled=bool(_PAGE_MARKERS(body)))
        notes = {
            "footnote": self._notes("footnotes", "footnote"),
            "endnote": self._notes("endnotes", "endnote"),
        }
        self.reader = BlockReader(pkg.path, styles, numbering, self.pages, notes)

    def blocks(self) -> Iterator[Block]:
        """Yield headers, body blocks and footers in output order (module docstring)."""
        headers, footers = self._furniture()
        yield from headers
        yield from self.reader.blocks(self.body, count_pages=True)
        yield from footers

    def core_title(self) -> str | None:
        """Return the title in the package's core properties, if set."""
        core = self.pkg.xml("docProps/core.xml")
        if core is None:
            return None
        el = core.find(f"{{{NS['dc']}}}title")
        text = (el.text or "").strip() if el is not None else ""
        return text or None

    def _part(self, rel_suffix: str, fallback: str) -> etree._Element | None:
        for rel_type, target in self.rels.values():
            if rel_type == _REL + rel_suffix:
                return self.pkg.xml(target)
        return self.pkg.xml(fallback)

    def _notes(self, rel_suffix: str, tag: str) -> dict[str, etree._Element]:
        root = self._part(rel_suffix, f"word/{rel_suffix}.xml")
        if root is None:
            return {}
        return {
            n.get(f"{W}id", ""): n
            for n in root.iter(f"{W}{tag}")
            # Separator "notes" hold the rule line Word draws above the notes.
            if n.get(f"{W}type") in (None, "normal")
        }

    def _furniture(self) -> tuple[list[Block], list[Block]]:
        parts: dict[str, list[str]] = {"header": [], "footer": []}
        for sect in self.body.iter(f"{W}sectPr"):
            for kind in ("header", "footer"):
                for ref in sect.findall(f"{W}{kind}Reference"):
                    rel = self.rels.get(ref.get(_R_ID, ""))
                    if rel is not None and rel[1] not in parts[kind]:
                        parts[kind].append(rel[1])
        out: dict[str, list[Block]] = {"header": [], "footer": []}
        for kind, names in parts.items():
            seen: set[str] = set()
            for name in names:
                root = self.pkg.xml(name)
                if root is None:
                    continue
                texts = [b.text for b in self.reader.blocks(root, count_pages=False) if b.text]
                text = "\n".join(texts).strip()
                # Parts that differ only in page/chapter numbers repeat one footer.
                key = re.sub(r"\d+", "#", " ".join(text.split()))
                if text and key not in seen:
                    seen.add(key)
                    etype: ElementType = "page_header" if kind == "header" else "page_footer"
                    out[kind].append(Block(type=etype, text=text))
        return out["header"], out["footer"]


def merge_code(blocks: Iterable[Block]) -> Iterator[Block]:
    """Join runs of code-candidate blocks into single ``code`` blocks.

    A run of consecutive candidates becomes one ``code`` block (lines joined by
    newlines) when any of them has a code style or the run's text shows code-like
    characters; otherwise each candidate becomes a ``paragraph`` again.
    """
    run: list[Block] = []

    def flush() -> Iterator[Block]:
        if not run:
            return
        text = "\n".join(b.text for b in run)
        if any(b.code == "style" for b in run) or _CODE_HINT.search(text):
            yield Block(type="code", text=text, page=run[0].page)
        else:
            for b in run:
                yield Block(type="paragraph", text=" ".join(b.text.split()), page=b.page)
        run.clear()

    for block in blocks:
        if block.code is not None:
            run.append(block)
            continue
        yield from flush()
        yield block
    yield from flush()


def promote_emphasised_headings(blocks: list[Block]) -> list[Block]:
    """Turn hand-formatted heading lines into headings, in documents with no heading styles.

    Applies only when no block is a styled heading. A candidate is a heading-like
    paragraph (one short line, no closing punctuation) set in a font larger than
    the body size (the size of most paragraph text); bold or capitals alone do not
    qualify, as forms and notices use them for emphasis. If candidates make up half
    of the paragraphs or more, large type is the document's normal style and
    nothing is promoted. Levels rank the candidates' (size, bold, caps), most
    emphatic first.
    """
    if any(b.type == "heading" for b in blocks):
        return blocks
    weights: dict[int, int] = {}
    paragraphs = [b for b in blocks if b.type == "paragraph" and b.emphasis is not None]
    for b in paragraphs:
        size = b.emphasis.size if b.emphasis is not None else 0
        weights[size] = weights.get(size, 0) + len(b.text)
    if not weights:
        return blocks
    body = max(weights, key=weights.__getitem__)

    def key(b: Block) -> tuple[int, bool, bool] | None:
        e = b.emphasis
        if b.type != "paragraph" or e is None or not e.heading_like or e.size <= body + 1:
            return None
        return (e.size, e.bold, e.caps)

    keys = {id(b): k for b in paragraphs if (k := key(b)) is not None}
    if not keys or len(keys) * 2 >= len(paragraphs):
        return blocks
    rank = {k: i + 1 for i, k in enumerate(sorted(set(keys.values()), reverse=True))}
    return [
        replace(b, type="heading", level=min(rank[keys[id(b)]], 6), emphasis=None)
        if id(b) in keys
        else b
        for b in blocks
    ]


def _to_elements(blocks: Iterable[Block]) -> Iterator[Element]:
    for b in promote_emphasised_headings(list(merge_code(blocks))):
        yield Element(
            type=b.type,
            text=b.text,
            level=b.level,
            page=b.page,
            rows=b.rows,
            header_rows=b.header_rows,
            order=0,
        )

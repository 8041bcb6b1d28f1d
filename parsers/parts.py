"""Page-range parts of one parsed document, joined back into one document (any format)."""

from __future__ import annotations

from collections.abc import Iterator

from chunkweave.parsers.document import ParsedDocument
from chunkweave.parsers.elements import Element
from chunkweave.parsers.pdf.join import join_continuations
from chunkweave.parsers.structure import finalize


def join_parts(docs: list[ParsedDocument], *, source: str) -> ParsedDocument:
    """One document from its page-range parts (in page order), structure recomputed.

    The parts are parses of one file (``ParseOptions.page_range``); the result takes
    the first part's facts, ``source`` as its path, every part's warnings once. A
    PDF's text and tables cut by a part boundary are joined as in a whole parse.
    """
    first = docs[0]
    # Caption links (``ref``) point at part-local orders: clear them so finalize
    # relinks every caption (and every heading that captions a table) against the
    # document-wide numbering.
    stream: Iterator[Element] = (
        el.model_copy(update={"ref": None}) if el.ref is not None else el
        for doc in docs
        for el in doc.elements
    )
    if first.format == "pdf":
        # A paragraph or table that a part boundary cut is joined as a whole parse
        # joins it (within a part the joins are made already: they stay as they are).
        stream = join_continuations(stream)
    elements = finalize(stream)
    warnings = tuple(dict.fromkeys(w for doc in docs for w in doc.warnings))
    return ParsedDocument(
        path=source,
        format=first.format,
        sha1=first.sha1,
        page_count=first.page_count,
        title=first.title,
        elements=elements,
        warnings=warnings,
        parser=first.parser,
    )

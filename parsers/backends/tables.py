"""The table element every backend builds from a third-party reader's cell grid."""

from __future__ import annotations

from chunkweave.parsers.elements import Element, table_text


def table_element(rows: tuple[tuple[str, ...], ...], header_rows: int, page: int | None) -> Element:
    """Build the ``table`` element of ``rows``, its text laid out by :func:`table_text`.

    ``rows`` is rectangular and not empty; ``order`` is left for ``finalize`` to number.
    """
    return Element(
        type="table",
        text=table_text(rows),
        rows=rows,
        header_rows=header_rows,
        page=page,
        order=0,
    )

"""The parser table of ``parsers/api.py``: a row per parser name, each naming real functions."""

from __future__ import annotations

import pkgutil
from typing import get_args

from chunkweave.parsers.api import _PARSERS
from chunkweave.parsers.document import DocFormat, ParserName


def test_every_parser_name_has_a_row() -> None:
    assert set(_PARSERS) == set(get_args(ParserName))


def test_every_row_names_a_parse_function_for_known_formats() -> None:
    for name, formats in _PARSERS.items():
        assert formats and set(formats) <= set(get_args(DocFormat)), name
        for target in formats.values():
            assert callable(pkgutil.resolve_name(target)), (name, target)


def test_auto_is_pymupdf_for_pdf_and_the_ooxml_reader_for_docx() -> None:
    assert _PARSERS["auto"] == {**_PARSERS["pymupdf"], **_PARSERS["docx"]}

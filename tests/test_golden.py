"""Golden snapshots: the elements and chunks of a handful of corpus files, pinned.

The corpus benches score the parser and chunker; a score moves only when a change is
big enough. These snapshots pin the exact output instead, so any change in parsing or
chunking shows here, with the file and the first element or chunk that differs.

Each file has two snapshots under ``tests/data/golden/``:

- ``<file>.elements.json``: the parsed document's facts (format, pages, title,
  warnings, parser, SHA1; not its machine-dependent path) and every element;
- ``<file>.chunks.json``: the resolved default chunk options and every chunk, chunked
  with the default embedder's own tokenizer (as ``tests/test_chunk_corpus.py`` does).

Only public entry points are used (``parse_document``, ``chunk_document``,
``resolve_options``, ``make_embedder``), so the snapshots survive moving modules.

``CHUNKWEAVE_REGEN_GOLDEN=1`` rewrites the snapshots from the current code; each test
that rewrote one then fails anyway, and ``test_regen_flag_is_off`` fails whenever the
flag is set, so a flag left on in CI never passes silently (docling-core's way).
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from chunkweave.chunking import ChunkOptions, TokenCounter, chunk_document, resolve_options
from chunkweave.parsers import ParsedDocument, parse_document

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
FLAG = "CHUNKWEAVE_REGEN_GOLDEN"
REGEN = os.environ.get(FLAG, "") not in ("", "0")
DIFF_LINES = 40

_OCR = pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract not installed")

# (corpus folder, file): chosen so that together they cover the features.
FILES = [
    # Tables (one split into row groups), captions, a contents page, running headers
    # and footers, numbered headings; pymupdf-layout's model on some pages (auto mode).
    ("corpus", "redp5110_sampled.pdf"),
    # Two-column paper: reading order, paragraphs continued across columns, footnotes.
    ("corpus", "multi-column-2p.pdf"),
    # CJK text, tables split into row groups, lists.
    ("corpus", "korean-text-with-tables.pdf"),
    # A scanned page: Tesseract OCR (deterministic: one thread, fixed languages).
    pytest.param("corpus", "ocr_test.pdf", marks=_OCR),
    # DOCX: title, headings, lists, a figure with its caption, a table, a footer.
    ("corpus", "word_sample.docx"),
    # DOCX tables: merged cells, a nested table; no page-break markers (a warning).
    ("corpus", "docx-tables.docx"),
    # DOCX nested bulleted and numbered lists under headings; merged small sections.
    ("corpus", "docx_lists.docx"),
    # 17 pages with a PDF outline: outline headings, running furniture, merged sections.
    ("corpus-extra", "125619.pdf"),
]


@pytest.fixture(scope="module")
def counter() -> tuple[TokenCounter, int]:
    """The default embedder's own tokenizer and its token limit."""
    from chunkweave.storage.config import EmbedderConfig
    from chunkweave.storage.embedders import make_embedder

    embedder = make_embedder(EmbedderConfig())
    return embedder, embedder.max_tokens


def _plain(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def element_snapshot(doc: ParsedDocument) -> dict[str, Any]:
    """The document's facts (all but its path) and its elements, JSON-ready."""
    facts = doc.model_dump(mode="json", exclude={"path", "elements"})
    elements = [e.model_dump(mode="json") for e in doc.elements]
    return _plain({"document": facts, "elements": elements})


def chunk_snapshot(
    doc: ParsedDocument, counter: tuple[TokenCounter, int], folder: str, name: str
) -> dict[str, Any]:
    """The resolved default options and the chunks, JSON-ready.

    ``doc_id`` is the file name (as ``bench/chunk_ids.py`` uses) and ``source`` the
    corpus-relative path, so nothing depends on where the corpus lives.
    """
    opts = resolve_options(ChunkOptions(), counter[1])
    chunks = chunk_document(doc, opts, counter[0], doc_id=name, source=f"{folder}/{name}")
    return _plain(
        {
            "options": opts.model_dump(mode="json"),
            "chunks": [c.model_dump(mode="json") for c in chunks],
        }
    )


def first_difference(path: str, expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """Describe where ``actual`` first departs from the snapshot ``expected``, or None.

    Top-level keys holding lists (``elements``, ``chunks``) are compared item by item:
    the message names the snapshot, the list and the first differing index, with a
    short unified diff of that item; other keys are diffed whole.
    """
    for key in sorted(expected.keys() | actual.keys()):
        want, got = expected.get(key), actual.get(key)
        if want == got:
            continue
        if isinstance(want, list) and isinstance(got, list):
            index = next(
                (i for i, (w, g) in enumerate(zip(want, got, strict=False)) if w != g),
                min(len(want), len(got)),
            )
            want_item = want[index] if index < len(want) else "<missing>"
            got_item = got[index] if index < len(got) else "<missing>"
            head = f"{path}: {key}[{index}] differs ({len(want)} in the snapshot, {len(got)} now)"
            return f"{head}\n{_diff(want_item, got_item)}"
        return f"{path}: {key!r} differs\n{_diff(want, got)}"
    return None


def _diff(want: Any, got: Any) -> str:
    lines = list(
        difflib.unified_diff(
            _dumps(want).splitlines(), _dumps(got).splitlines(), "snapshot", "now", lineterm=""
        )
    )
    more = f"\n... ({len(lines) - DIFF_LINES} more diff lines)" if len(lines) > DIFF_LINES else ""
    return "\n".join(lines[:DIFF_LINES]) + more


def _check(path: Path, actual: dict[str, Any]) -> str | None:
    """Compare with (or, with the flag, rewrite) one snapshot; return a failure or None."""
    shown = str(path.relative_to(GOLDEN.parents[2]))
    if REGEN:
        path.write_text(_dumps(actual), encoding="utf-8")
        return None
    if not path.is_file():
        return f"{shown}: no snapshot; generate it with {FLAG}=1"
    return first_difference(shown, json.loads(path.read_text(encoding="utf-8")), actual)


@pytest.mark.parametrize(("folder", "name"), FILES)
def test_golden_snapshot(
    folder: str, name: str, corpus: Path, counter: tuple[TokenCounter, int]
) -> None:
    doc = parse_document(corpus.parent / folder / name)
    failures = [
        _check(GOLDEN / f"{name}.elements.json", element_snapshot(doc)),
        _check(GOLDEN / f"{name}.chunks.json", chunk_snapshot(doc, counter, folder, name)),
    ]
    if REGEN:
        pytest.fail(f"{FLAG} is set: rewrote the snapshots of {folder}/{name}; unset it")
    problems = [f for f in failures if f]
    if problems:
        pytest.fail(
            "output differs from the golden snapshot (if the change is intended, "
            f"regenerate with {FLAG}=1 and review the diff):\n" + "\n\n".join(problems),
            pytrace=False,
        )


def test_regen_flag_is_off() -> None:
    assert not REGEN, f"{FLAG} is set: the golden tests rewrite their snapshots instead of checking"


def test_every_snapshot_belongs_to_a_file() -> None:
    # A file dropped from FILES must take its snapshots with it.
    names = {p.values[1] if hasattr(p, "values") else p[1] for p in FILES}
    expected = {f"{n}.{kind}.json" for n in names for kind in ("elements", "chunks")}
    assert {p.name for p in GOLDEN.glob("*.json")} == expected


def test_first_difference_names_the_item_and_shows_a_diff() -> None:
    want = {"document": {"pages": 2}, "elements": [{"text": "a"}, {"text": "b"}]}
    got = {"document": {"pages": 2}, "elements": [{"text": "a"}, {"text": "B"}, {"text": "c"}]}
    message = first_difference("x.elements.json", want, got)
    assert message is not None
    assert message.startswith("x.elements.json: elements[1] differs (2 in the snapshot, 3 now)")
    assert '- "text": "b"' in message and '+ "text": "B"' in message
    shorter = first_difference("x", want, {**want, "elements": want["elements"][:1]})
    assert shorter is not None and "elements[1]" in shorter and "<missing>" in shorter
    assert first_difference("x", {"document": {"pages": 2}}, {"document": {"pages": 3}})
    assert first_difference("x", want, _plain(want)) is None

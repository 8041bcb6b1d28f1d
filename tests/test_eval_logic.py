"""Retrieval evaluation logic, with a deterministic bag-of-words embedder."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document
from chunkweave.storage.evaluate import (
    QAItem,
    StrategyReport,
    details_table,
    evaluate_chunks,
    hit_ranks,
    load_qa,
    missing_in_parse,
    normalize,
    score,
    write_qa,
)
from tests.chunk_helpers import el, make_doc, words


class BagOfWords:
    """Hashes lower-cased words into 64 buckets: similar wording, similar vectors."""

    name = "bow-64"
    dimension = 64
    max_tokens = 256

    def __init__(self) -> None:
        self.calls = 0

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(self.dimension)
        for w in re.findall(r"\w+", text.lower()):
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dimension] += 1.0
        return v.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)

    def count(self, text: str) -> int:
        return ApproxTokenCounter().count(text)


def test_score_recall_and_mrr():
    s = score([1, 3, None, 7])
    assert (s.recall_at_1, s.recall_at_5, s.recall_at_10) == (0.25, 0.5, 0.75)
    assert s.mrr == pytest.approx((1 + 1 / 3 + 1 / 7) / 4)


def test_hit_needs_evidence_and_matching_doc():
    doc = make_doc([el("paragraph", "Zebras   eat\ngrass daily.")])
    chunks = chunk_document(doc, ChunkOptions(), ApproxTokenCounter(), doc_id="a")
    vectors = np.ones((1, 2))
    questions = [
        QAItem(question="q", evidence="eat grass"),
        QAItem(question="q", evidence="eat grass", doc="other.pdf"),
        QAItem(question="q", evidence="lions"),
    ]
    assert hit_ranks(questions, chunks, ["a.pdf"], vectors, np.ones((3, 2)), 10) == [1, None, None]


def test_evaluate_ranks_the_right_chunk_and_counts_tokens():
    doc = make_doc(
        [
            el("heading", "Cats", level=1),
            el("paragraph", "Cats purr and sleep in the sun all afternoon. " + words(40, "c")),
            el("heading", "Boats", level=1),
            el("paragraph", "Boats float on the harbour water near the pier. " + words(40, "b")),
        ]
    )
    embedder = BagOfWords()
    chunks = {"d.pdf": chunk_document(doc, ChunkOptions(), embedder, doc_id="d")}
    questions = [
        QAItem(question="where do boats float", evidence="float on the harbour", kind="x"),
        QAItem(question="what do cats do", evidence="Cats purr", doc="d.pdf"),
    ]
    cache: dict[str, list[float]] = {}
    report = evaluate_chunks("elements", questions, chunks, embedder, cache=cache)
    assert report.overall.recall_at_1 == 1.0 and report.overall.mrr == 1.0
    assert report.chunks == 2 and report.evidence_in_chunks == 2
    assert report.embedded_tokens == sum(c.token_count for c in chunks["d.pdf"])
    assert set(report.by_kind) == {"x"} and report.by_kind["x"].n == 1
    assert report.ranks == (1, 1)
    # A second strategy with identical embed texts reuses the cached vectors.
    evaluate_chunks("again", questions, chunks, embedder, cache=cache)
    assert embedder.calls == 1


def test_details_table_shows_each_questions_rank_per_strategy():
    questions = [
        QAItem(question="first?", evidence="a", kind="table"),
        QAItem(question="second?", evidence="b"),
    ]
    scores = score([])
    reports = [
        StrategyReport(
            strategy=name,
            chunker="c",
            chunks=1,
            embedded_tokens=1,
            evidence_in_chunks=1,
            overall=scores,
            by_kind={},
            ranks=ranks,
        )
        for name, ranks in (("elements", (1, None)), ("fixed", (3, 2)))
    ]
    lines = details_table(questions, reports).splitlines()
    assert lines[0].split()[2:4] == ["elements", "fixed"]
    assert lines[1].split() == ["0", "table", "1", "3", "first?"]
    assert lines[2].split() == ["1", "-", "2", "second?"]


def test_load_qa_reports_file_and_line(tmp_path: Path):
    good = tmp_path / "qa.jsonl"
    good.write_text(json.dumps({"question": "q", "evidence": "e", "kind": "table"}) + "\n\n")
    assert load_qa(good) == [QAItem(question="q", evidence="e", kind="table")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "q"}) + "\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl:1"):
        load_qa(bad)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"question": "q", "evidence": "e", "answer": "x"}) + "\n")
    with pytest.raises(ValueError, match=r"extra\.jsonl:1"):
        load_qa(extra)


def test_normalize_collapses_whitespace():
    assert normalize("  a\n\tb  c ") == "a b c"


def test_write_qa_round_trips_through_load_qa(tmp_path: Path):
    items = [
        QAItem(question="Which year?", evidence="in 1998", doc="a.pdf", kind="table"),
        QAItem(question="Ünïcode?", evidence="naïve  text"),
    ]
    path = tmp_path / "qa.jsonl"
    assert write_qa(path, items) == 2
    assert load_qa(path) == items
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    assert first == {"question": "Ünïcode?", "evidence": "naïve  text"}  # no null keys


def test_missing_in_parse_checks_elements_and_cells(corpus: Path):
    cell = QAItem(question="?", evidence="Cell 2.3", doc="word_tables.docx")
    absent = QAItem(question="?", evidence="a sentence no table holds", doc="word_tables.docx")
    undocumented = QAItem(question="?", evidence="anything")  # no doc: not checked
    assert missing_in_parse([cell, absent, undocumented], corpus) == [absent]

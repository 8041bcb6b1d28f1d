"""``chunkweave eval`` served: scratch collections in a real Weaviate, asked as search asks.

Plus the pure scoring logic the served and numpy modes share (nDCG@10, latency
percentiles, tokens a hit returns) on hand-made rankings.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import docx
import pytest

from chunkweave.chunking import ApproxTokenCounter
from chunkweave.chunking.models import Chunk
from chunkweave.storage.config import WeaviateConfig, server_env
from chunkweave.storage.evaluate import QAItem, Ranked, ndcg_at_k, report_rankings
from chunkweave.storage.weaviate.client import connect

ROOT = Path(__file__).resolve().parents[1]
CHUNKWEAVE = str(Path(sys.executable).parent / "chunkweave")


def _words(text: str) -> int:
    return len(text.split())


def _chunk(i: int, text: str, doc: str) -> Chunk:
    return Chunk.model_validate(
        {
            "id": f"{doc}:{i}",
            "doc_id": doc,
            "source": doc,
            "chunk_index": i,
            "text": text,
            "embed_text": text,
            "token_count": ApproxTokenCounter().count(text),
            "type": "text",
            "chunker": "hand",
            "content_sha1": "0" * 40,
            "doc_sha1": "0" * 40,
        }
    )


def test_ndcg_at_10_on_hand_made_rankings() -> None:
    assert ndcg_at_k([1], 1) == 1.0
    assert ndcg_at_k([2], 1) == pytest.approx(1 / math.log2(3))
    # Two relevant chunks, found at 1 and 3: DCG 1 + 1/2, ideal 1 + 1/log2(3).
    assert ndcg_at_k([1, 3], 2) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    # Only one of two relevant chunks found, at 1: below a perfect score.
    assert ndcg_at_k([1], 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert ndcg_at_k([11], 1) == 0.0  # beyond the top 10
    assert ndcg_at_k([], 0) == 0.0


def test_report_scores_rankings_with_ceiling_latency_and_hit_tokens() -> None:
    chunks = [
        _chunk(0, "boats float on the harbour", "a.docx"),
        _chunk(1, "cats purr in the sun", "a.docx"),
        _chunk(2, "cats purr loudly at night", "b.docx"),
    ]
    docs = ["a.docx", "a.docx", "b.docx"]
    questions = [
        QAItem(question="boats?", evidence="harbour", kind="prose"),
        QAItem(question="cats?", evidence="cats purr", kind="prose"),
        QAItem(question="lions?", evidence="lions roar", kind="table"),
    ]
    boats, cats_a, cats_b = (Ranked(c.text, d) for c, d in zip(chunks, docs, strict=True))
    rankings = [[cats_a, boats], [cats_b, boats, cats_a], [boats]]
    report = report_rankings(
        "hand", questions, chunks, docs, rankings, _words, latencies_ms=[10.0, 20.0, 30.0]
    )
    assert report.ranks == (2, 1, None)
    assert report.evidence_in_chunks == 2 and report.by_kind["table"].found == 0
    expected = [1 / math.log2(3), (1 + 1 / 2) / (1 + 1 / math.log2(3)), 0.0]
    assert report.overall.ndcg_at_10 == pytest.approx(sum(expected) / 3)
    assert report.overall.latency_p50_ms == pytest.approx(20.0)
    assert report.overall.latency_p95_ms == pytest.approx(29.0)
    # Mean words of the returned hits: (5+5) + (5+5+5) + 5 over 6 hits.
    assert report.overall.hit_tokens == pytest.approx(5.0)
    assert report.by_kind["prose"].recall_at_1 == 0.5


def _write_docs(folder: Path) -> None:
    harbour = docx.Document()
    harbour.add_heading("Harbour rules", level=1)
    harbour.add_paragraph("Every boat must be moored at pier seven before sunset.")
    harbour.add_heading("Fees", level=1)
    table = harbour.add_table(rows=3, cols=2)
    for row, cells in zip(
        table.rows, [("Vessel", "Fee"), ("Dinghy", "12 EUR"), ("Yacht", "85 EUR")], strict=True
    ):
        row.cells[0].text, row.cells[1].text = cells
    harbour.save(str(folder / "harbour.docx"))
    cats = docx.Document()
    cats.add_heading("Cat care", level=1)
    cats.add_paragraph("Cats need fresh water twice a day and a quiet place to sleep.")
    cats.add_heading("Vaccination", level=1)
    cats.add_paragraph("Kittens are vaccinated against feline flu at nine weeks.")
    cats.save(str(folder / "cats.docx"))


QA = [
    {
        "question": "Where must boats be moored?",
        "evidence": "moored at pier seven",
        "doc": "harbour.docx",
        "kind": "prose",
    },
    {
        "question": "What is the fee for a yacht?",
        "evidence": "85 EUR",
        "doc": "harbour.docx",
        "kind": "table",
    },
    {
        "question": "How often do cats need water?",
        "evidence": "fresh water twice a day",
        "doc": "cats.docx",
        "kind": "prose",
    },
    {
        "question": "When are kittens vaccinated against flu?",
        "evidence": "at nine weeks",
        "doc": "cats.docx",
        "kind": "heading",
    },
]


def _eval(cfg: WeaviateConfig, folder: Path, *extra: str) -> dict[str, Any]:
    qa = folder / "qa.jsonl"
    qa.write_text("".join(json.dumps(q) + "\n" for q in QA))
    env = {**os.environ, **server_env(cfg)}
    cmd = [CHUNKWEAVE, "eval", "--qa", str(qa), "--docs", str(folder), "--strategy", "elements"]
    run = subprocess.run(
        [*cmd, "--json", "--settle-s", "0", *extra],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _exists(cfg: WeaviateConfig, name: str) -> bool:
    client = connect(cfg)
    try:
        return bool(client.collections.exists(name))
    finally:
        client.close()


@pytest.mark.integration
def test_served_eval_finds_the_evidence_and_drops_its_collections(
    weaviate_server: WeaviateConfig, tmp_path: Path
) -> None:
    _write_docs(tmp_path)
    out = _eval(weaviate_server, tmp_path)
    assert out["mode"] == "hybrid"
    (report,) = out["reports"]
    assert report["mode"] == "hybrid" and report["evidence_in_chunks"] == len(QA)
    overall = report["overall"]
    assert overall["recall_at_5"] == 1.0 and overall["found"] == len(QA)
    assert 0.5 < overall["ndcg_at_10"] <= 1.0
    assert 0.0 < overall["latency_p50_ms"] <= overall["latency_p95_ms"] < 5000.0
    assert overall["hit_tokens"] > 0
    assert set(report["by_kind"]) == {"prose", "table", "heading"}
    assert report["collection"].startswith("ChunkweaveEval_")
    assert not _exists(weaviate_server, report["collection"])
    ledger = report["collection"].replace("ChunkweaveEval_", "ChunkweaveEvalLedger_", 1)
    assert not _exists(weaviate_server, ledger)


@pytest.mark.integration
def test_served_eval_keeps_its_collection_with_keep(
    weaviate_server: WeaviateConfig, tmp_path: Path
) -> None:
    _write_docs(tmp_path)
    out = _eval(weaviate_server, tmp_path, "--mode", "keyword", "--keep")
    (report,) = out["reports"]
    name = report["collection"]
    try:
        assert report["mode"] == "keyword" and _exists(weaviate_server, name)
        client = connect(weaviate_server)
        try:
            stored = client.collections.use(name).aggregate.over_all(total_count=True)
        finally:
            client.close()
        assert stored.total_count == report["chunks"] > 0
        # BM25 alone still finds the verbatim fee cell.
        assert report["by_kind"]["table"]["recall_at_5"] == 1.0
    finally:
        client = connect(weaviate_server)
        client.collections.delete(name)
        client.close()

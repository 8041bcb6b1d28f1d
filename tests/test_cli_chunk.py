"""``chunkweave chunk`` and ``chunkweave eval`` end to end, on DOCX files built here."""

from __future__ import annotations

import json
from pathlib import Path

import docx
import pytest
from click.testing import CliRunner

from chunkweave.chunking import Chunk
from chunkweave.worker.cli import main


def _docx(path: Path) -> Path:
    d = docx.Document()
    d.add_heading("Harbour operations", level=1)
    d.add_paragraph("Boats float on the harbour water near the old stone pier every morning.")
    d.add_heading("Feline habits", level=1)
    d.add_paragraph("Cats purr loudly and sleep in the warm afternoon sun on the porch.")
    table = d.add_table(rows=3, cols=2)
    for r, (a, b) in enumerate([("Animal", "Legs"), ("Spider", "eight"), ("Bird", "two")]):
        table.cell(r, 0).text, table.cell(r, 1).text = a, b
    d.save(str(path))
    return path


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _docx(tmp_path_factory.mktemp("docs") / "sample.docx")


def test_chunk_jsonl_prints_one_chunk_per_line(sample: Path) -> None:
    result = CliRunner().invoke(main, ["chunk", str(sample), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    chunks = [Chunk.model_validate_json(line) for line in lines]
    assert len({c.id for c in chunks}) == len(chunks) >= 2
    assert any("stone pier" in c.text for c in chunks)
    [table] = [c for c in chunks if c.type == "table"]
    assert "| Spider | eight |" in table.text and "Feline habits" in table.embed_text
    again = CliRunner().invoke(main, ["chunk", str(sample)])
    assert again.stdout == result.stdout  # byte-identical re-chunking


def test_chunk_md_shows_boundaries_and_paths(sample: Path) -> None:
    result = CliRunner().invoke(main, ["chunk", str(sample), "--format", "md", "--parents"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## [0] ")
    assert "path: Feline habits" in result.stdout and "· parent " in result.stdout


def test_chunk_reports_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pdf"
    result = CliRunner().invoke(main, ["chunk", str(missing)])
    assert result.exit_code == 1
    assert "nope.pdf" in result.stderr


def test_chunk_rejects_a_bad_strategy(sample: Path) -> None:
    result = CliRunner().invoke(main, ["chunk", str(sample), "--strategy", "magic"])
    assert result.exit_code == 2 and "magic" in result.stderr


def test_eval_scores_strategies_with_the_default_embedder(sample: Path, tmp_path: Path) -> None:
    qa = tmp_path / "qa.jsonl"
    items = [
        {"question": "Where do boats float?", "evidence": "near the old stone pier"},
        {"question": "How many legs does a spider have?", "evidence": "eight", "kind": "table"},
    ]
    qa.write_text("".join(json.dumps(i) + "\n" for i in items))
    args = ["eval", "--qa", str(qa), "--docs", str(sample.parent), "--json", "--mode", "numpy"]
    result = CliRunner().invoke(main, [*args, "--strategy", "elements", "--strategy", "fixed"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [r["strategy"] for r in out["reports"]] == ["elements", "fixed"]
    elements = out["reports"][0]
    assert elements["evidence_in_chunks"] == 2
    assert elements["overall"]["recall_at_10"] == 1.0
    assert set(elements["by_kind"]) == {"table"}
    assert elements["embedded_tokens"] > 0
    # The fast mode: nDCG and hit tokens as served, no search latency.
    assert out["mode"] == elements["mode"] == "numpy" and elements["collection"] is None
    assert 0 < elements["overall"]["ndcg_at_10"] <= 1 and elements["overall"]["hit_tokens"] > 0
    assert elements["overall"]["latency_p50_ms"] is None

    detailed = CliRunner().invoke(
        main,
        ["eval", "--qa", str(qa), "--docs", str(sample.parent)]
        + ["--strategy", "elements", "--details", "--mode", "numpy"],
    )
    assert detailed.exit_code == 0, detailed.output
    rows = [line for line in detailed.stdout.splitlines() if "How many legs" in line]
    assert len(rows) == 1 and rows[0].split()[1] == "table"


def test_eval_names_the_bad_qa_line(sample: Path, tmp_path: Path) -> None:
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"question": "q", "evidence": "e"}\nnot json\n')
    result = CliRunner().invoke(main, ["eval", "--qa", str(qa), "--docs", str(sample.parent)])
    assert result.exit_code == 1
    assert "qa.jsonl:2" in result.stderr


def test_eval_compares_table_serialisations(sample: Path, tmp_path: Path) -> None:
    qa = tmp_path / "qa.jsonl"
    item = {"question": "How many legs does a spider have?", "evidence": "eight", "kind": "table"}
    qa.write_text(json.dumps(item) + "\n")
    args = ["eval", "--qa", str(qa), "--docs", str(sample.parent), "--json", "--mode", "numpy"]
    embeds = ["--table-embed", "text", "--table-embed", "rows"]
    result = CliRunner().invoke(main, [*args, "--strategy", "elements", *embeds])
    assert result.exit_code == 0, result.output
    reports = json.loads(result.stdout)["reports"]
    assert [r["strategy"] for r in reports] == ["elements/text", "elements/rows"]
    assert all(r["evidence_in_chunks"] == 1 for r in reports)
    bad = CliRunner().invoke(main, [*args, "--table-embed", "csv"])
    assert bad.exit_code == 2 and "csv" in bad.stderr


def test_eval_runs_the_naive_yardstick_once_beside_the_strategies(
    sample: Path, tmp_path: Path
) -> None:
    qa = tmp_path / "qa.jsonl"
    item = {"question": "How many legs does a spider have?", "evidence": "eight", "kind": "table"}
    qa.write_text(json.dumps(item) + "\n")
    args = ["eval", "--qa", str(qa), "--docs", str(sample.parent), "--json", "--mode", "numpy"]
    embeds = ["--table-embed", "text", "--table-embed", "rows"]
    result = CliRunner().invoke(
        main,
        [*args, "--strategy", "elements", "--strategy", "naive", *embeds, "--max-tokens", "64"],
    )
    assert result.exit_code == 0, result.output
    reports = json.loads(result.stdout)["reports"]
    # naive has no table serialisation: one run, named by its window and overlap.
    assert [r["strategy"] for r in reports] == ["elements/text", "elements/rows", "naive-64/50"]
    naive = reports[-1]
    assert naive["chunker"].startswith("naive/64/50/") and naive["evidence_in_chunks"] == 1

"""``chunkweave parse``: output formats, warnings on stderr, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import docx
import pymupdf
import pytest
from click.testing import CliRunner

from chunkweave.worker.cli import main


@pytest.fixture()
def sample(tmp_path: Path) -> Path:
    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = "Running head"
    d.add_heading("Intro", level=1)
    d.add_paragraph("Hello world.")
    d.add_paragraph("point", style="List Bullet")
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text, t.cell(0, 1).text, t.cell(1, 0).text, t.cell(1, 1).text = "a", "b", "1", "2"
    path = tmp_path / "sample.docx"
    d.save(str(path))
    return path


# The installed console script's entry point, run as a separate process.
_CLI = [sys.executable, "-c", "from chunkweave.worker.cli import main; main()"]


def test_jsonl_prints_one_element_per_line(sample: Path) -> None:
    res = CliRunner().invoke(main, ["parse", str(sample)])
    assert res.exit_code == 0, res.output
    records = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["type"] for r in records] == [
        "page_header",
        "heading",
        "paragraph",
        "list_item",
        "table",
    ]
    assert records[2]["heading_path"] == ["Intro"]
    assert records[4]["rows"] == [["a", "b"], ["1", "2"]]
    assert {"type", "text", "level", "page", "heading_path", "rows", "order"} <= set(records[0])


def test_json_prints_the_whole_document(sample: Path) -> None:
    res = CliRunner().invoke(main, ["parse", str(sample), "--format", "json"])
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["format"] == "docx" and len(doc["elements"]) == 5


def test_md_renders_structure_without_furniture(sample: Path) -> None:
    res = CliRunner().invoke(main, ["parse", str(sample), "--format", "md"])
    assert res.exit_code == 0
    assert "## Intro" in res.stdout
    assert "- point" in res.stdout
    assert "| a | b |" in res.stdout
    assert "Running head" not in res.stdout


def test_warnings_go_to_stderr(sample: Path) -> None:
    res = CliRunner().invoke(main, ["parse", str(sample)])
    assert "warning:" in res.stderr and "page" in res.stderr
    assert "warning:" not in res.stdout


def test_error_is_one_line_with_nonzero_exit(tmp_path: Path) -> None:
    bad = tmp_path / "notes.docx"
    bad.write_text("plain text, not a document")
    res = CliRunner().invoke(main, ["parse", str(bad)])
    assert res.exit_code == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "unsupported_format" in lines[0]


def test_debug_shows_the_exception(tmp_path: Path) -> None:
    bad = tmp_path / "notes.docx"
    bad.write_text("plain text")
    res = CliRunner().invoke(main, ["--debug", "parse", str(bad)])
    assert res.exit_code != 0
    assert res.exception is not None and type(res.exception).__name__ == "UnsupportedFormatError"


def test_real_subprocess(sample: Path, tmp_path: Path) -> None:
    ok = subprocess.run(
        [*_CLI, "parse", str(sample), "--format", "md"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert "## Intro" in ok.stdout
    missing = subprocess.run(
        [*_CLI, "parse", str(tmp_path / "nope.docx")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 1
    assert missing.stderr.strip().count("\n") == 0 and "no such file" in missing.stderr
    assert "Traceback" not in missing.stderr


def _two_page_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    for n in range(2):
        page = doc.new_page()
        page.insert_text((72, 72), f"Section {n + 1}", fontsize=16, fontname="hebo")
        for k in range(6):
            page.insert_text((72, 110 + 14 * k), f"Body line {k} of page {n + 1} goes on.")
    doc.save(path)
    return path


def test_explain_prints_the_route_of_a_pdf(tmp_path: Path) -> None:
    pdf = _two_page_pdf(tmp_path / "two.pdf")
    res = CliRunner().invoke(main, ["parse", str(pdf), "--explain", "--no-ocr"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert out.startswith("two.pdf: mode auto, 2 pages, route ")
    assert "sampled pages: [1, 2]" in out
    assert "section-header" in out and "pages per route:" in out
    # The explanation replaces the elements: no JSON lines.
    assert not any(line.startswith("{") for line in out.splitlines())
    fast = CliRunner().invoke(main, ["parse", str(pdf), "--explain", "--mode", "fast"])
    assert "route heuristic" in fast.stdout and "pages per route: heuristic:fast 2" in fast.stdout
    assert "sampled pages" not in fast.stdout


def test_explain_on_docx_says_there_is_no_route(sample: Path) -> None:
    res = CliRunner().invoke(main, ["parse", str(sample), "--explain"])
    assert res.exit_code == 0, res.output
    assert "no PDF route to explain" in res.stdout

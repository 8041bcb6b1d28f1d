"""``chunkweave ingest/search/docs/delete`` as a user runs them, against a real Weaviate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chunkweave.storage.config import server_env

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
CHUNKWEAVE = str(Path(sys.executable).parent / "chunkweave")


@pytest.mark.slow
def test_cli_ingest_json_summary_and_exit_code(weaviate_cfg, corpus, tmp_path):
    env = {
        **os.environ,
        **server_env(weaviate_cfg),
        "CHUNKWEAVE_WEAVIATE__COLLECTION": weaviate_cfg.collection,
        "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": weaviate_cfg.ledger_collection,
    }
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7 not really")
    good = corpus / "word_tables.docx"
    cmd = [CHUNKWEAVE, "ingest", str(good), str(bad), "--workers", "1", "--json"]
    run = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    summary = json.loads(run.stdout)
    assert set(summary) == {
        "documents",
        "pages",
        "chunks_added",
        "chunks_unchanged",
        "chunks_deleted",
        "skipped",
        "failed",
        "seconds",
    }
    assert summary["documents"] == 2 and summary["chunks_added"] > 0
    assert [f["source"] for f in summary["failed"]] == [str(bad)]
    assert str(bad) in summary["failed"][0]["error"]

    rerun = [CHUNKWEAVE, "ingest", str(good), "--json"]
    again = subprocess.run(rerun, env=env, cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["skipped"] == 1

    search = [CHUNKWEAVE, "search", "table", "-k", "1", "--json"]
    found = subprocess.run(search, env=env, cwd=ROOT, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["source"] == str(good)
    # A DOCX has no pages, so nothing matches; the server refuses a string for an int.
    on_page = [*search, "--filter", "pages=1", "--filter", f"source={good}"]
    filtered = subprocess.run(on_page, env=env, cwd=ROOT, capture_output=True, text=True)
    assert filtered.returncode == 0, filtered.stderr
    assert json.loads(filtered.stdout) == []

    docs = subprocess.run([CHUNKWEAVE, "docs", "--json"], env=env, capture_output=True, text=True)
    listed = {e["source"]: e["status"] for e in json.loads(docs.stdout)}
    assert listed == {str(good): "ok", str(bad): "failed"}

    gone = subprocess.run(
        [CHUNKWEAVE, "delete", str(good)], env=env, capture_output=True, text=True
    )
    assert gone.returncode == 0, gone.stderr
    empty = subprocess.run(search, env=env, cwd=ROOT, capture_output=True, text=True)
    assert json.loads(empty.stdout) == []


def test_expand_paths_takes_files_folders_and_globs(tmp_path):
    from chunkweave.worker.cli.store import expand_paths

    (tmp_path / "sub").mkdir()
    for name in ("a.pdf", "sub/b.DOCX", "sub/c.txt"):
        (tmp_path / name).write_bytes(b"x")
    files, unmatched = expand_paths([str(tmp_path), str(tmp_path / "*.pdf"), "/no/such/*.pdf"])
    assert files == [(tmp_path / "a.pdf").resolve(), (tmp_path / "sub/b.DOCX").resolve()]
    assert unmatched == ["/no/such/*.pdf"]


@pytest.mark.slow
def test_without_a_url_the_cli_starts_a_persistent_local_weaviate(tmp_path, corpus):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env["CHUNKWEAVE_DATA_DIR"] = str(tmp_path)
    doc = str(corpus / "word_tables.docx")
    cmd = [CHUNKWEAVE, "ingest", doc, "--workers", "1", "--json"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "(CHUNKWEAVE_WEAVIATE__URL): started on http://127.0.0.1:" in run.stderr
    assert f"with data in {tmp_path / 'weaviate'}" in run.stderr
    assert json.loads(run.stdout)["chunks_added"] > 0
    listed = subprocess.run([CHUNKWEAVE, "docs", "--json"], env=env, capture_output=True, text=True)
    assert [e["source"] for e in json.loads(listed.stdout)] == [doc]  # data persisted

    # While another process runs the server for this data dir, the CLI attaches to it
    # instead of starting a second server on the same files, and leaves it running.
    from chunkweave.storage.weaviate.server.local import LocalWeaviate

    with LocalWeaviate(tmp_path / "weaviate") as owner:
        assert not owner.attached
        listed = subprocess.run(
            [CHUNKWEAVE, "docs", "--json"], env=env, capture_output=True, text=True, timeout=120
        )
        assert listed.returncode == 0, listed.stderr
        assert f"already running on {owner.url}" in listed.stderr
        assert [e["source"] for e in json.loads(listed.stdout)] == [doc]
        assert owner.pid is not None  # the attached CLI did not stop the owner's server


def test_search_filters_are_typed_as_the_properties_are_stored():
    from chunkweave.storage.filters import Condition
    from chunkweave.worker.cli.store import _parse_filters

    assert _parse_filters(["pages=3", "doc_id=file:///a=b", "page_start=2"]) == (
        Condition("pages", "equal", 3),
        Condition("doc_id", "equal", "file:///a=b"),
        Condition("page_start", "equal", 2),
    )


def test_search_filter_on_an_unindexed_property_is_refused_before_connecting():
    from click.testing import CliRunner

    from chunkweave.worker.cli import main

    result = CliRunner().invoke(main, ["search", "anything", "--filter", "chunker=x"])
    assert result.exit_code == 2
    assert "'chunker' is not a filterable chunk property" in result.output
    assert "doc_id" in result.output


def test_keyword_index_off_from_the_environment_gives_vector_only_search(
    weaviate_cfg, corpus, tmp_path
):
    collection = weaviate_cfg.collection + "NoBm25"
    env = {
        **os.environ,
        **server_env(weaviate_cfg),
        "CHUNKWEAVE_WEAVIATE__COLLECTION": collection,
        "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": weaviate_cfg.ledger_collection + "NoBm25",
        "CHUNKWEAVE_WEAVIATE__KEYWORD_INDEX": "false",
    }
    doc = corpus / "word_tables.docx"
    try:
        ingest = [CHUNKWEAVE, "ingest", str(doc), "--workers", "1", "--json"]
        run = subprocess.run(ingest, env=env, cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        search = [CHUNKWEAVE, "search", "table", "-k", "1", "--json"]
        found = subprocess.run(search, env=env, cwd=ROOT, capture_output=True, text=True)
        assert found.returncode == 0, found.stderr
        assert f"collection {collection} has no keyword index" in found.stderr
        assert json.loads(found.stdout)[0]["source"] == str(doc)
    finally:
        from chunkweave.storage.weaviate.client import connect

        with connect(weaviate_cfg) as client:
            client.collections.delete([collection, weaviate_cfg.ledger_collection + "NoBm25"])


@pytest.mark.slow
def test_cli_metadata_sidecars_principals_filters_and_tenants(weaviate_cfg, tmp_path):
    from docx import Document

    env = {
        **os.environ,
        **server_env(weaviate_cfg),
        "PYTHONPATH": str(ROOT),
        "CHUNKWEAVE_WEAVIATE__COLLECTION": weaviate_cfg.collection,
        "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": weaviate_cfg.ledger_collection,
        "CHUNKWEAVE_WEAVIATE__MULTI_TENANCY": "true",
        "CHUNKWEAVE_WEAVIATE__METADATA__FIELDS": '{"version": "string", "year": "number"}',
        "CHUNKWEAVE_EMBEDDER__KIND": "none",
    }
    paths = []
    for name in ("a", "b", "c"):
        doc = Document()
        doc.add_paragraph(f"Lighthouse keeper {name} reports on the zebras.")
        doc.save(str(tmp_path / f"{name}.docx"))
        paths.append(str(tmp_path / f"{name}.docx"))
    Path(paths[0] + ".meta.json").write_text('{"acl": ["team-x"], "version": "2"}')
    Path(paths[1] + ".meta.json").write_text('{"year": "soon"}')  # refused: not a number

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CHUNKWEAVE, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
        )

    run = cli("ingest", *paths, "--tenant", "t1", "--meta", "year=2024", "--json")
    summary = json.loads(run.stdout)
    assert run.returncode == 1 and summary["documents"] == 3
    (failed,) = summary["failed"]
    assert failed["error_code"] == "bad_metadata" and "b.docx.meta.json" in failed["error"]
    assert "'year': expected a number" in failed["error"]
    refused = cli("ingest", paths[2], "--tenant", "t1", "--meta", "colour=red")
    assert refused.returncode == 1 and "'colour': not declared" in refused.stderr

    def found(*args: str) -> set[str]:
        got = cli("search", "lighthouse zebras", "-k", "9", "--json", "--tenant", "t1", *args)
        assert got.returncode == 0, got.stderr
        return {Path(h["source"]).name for h in json.loads(got.stdout)}

    assert found() == {"a.docx", "c.docx"}
    assert found("--principal", "team-x") == {"a.docx"}
    assert found("--principal", "team-y") == found("--as-nobody") == set()
    assert found("--filter", "version=2") == {"a.docx"}
    assert found("--filter", "year=2024") == {"a.docx", "c.docx"}
    no_tenant = cli("search", "lighthouse")
    assert no_tenant.returncode == 1 and "name a tenant" in no_tenant.stderr
    docs = cli("docs", "--json", "--tenant", "t1", "--filter", "version=2")
    assert [Path(e["source"]).name for e in json.loads(docs.stdout)] == ["a.docx"]
    assert json.loads(docs.stdout)[0]["metadata"] == {
        "acl": ["team-x"],
        "version": "2",
        "year": 2024,
    }
    gone = cli("delete", "--tenant", "t1")
    assert gone.returncode == 0, gone.stderr
    assert cli("delete", "--tenant", "t1").returncode == 1  # nothing left to delete

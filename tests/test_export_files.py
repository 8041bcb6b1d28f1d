"""Chunks as files (``storage.files``, ``chunkweave export``): round trip, incremental, safe."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import docx
import pytest
from click.testing import CliRunner

from chunkweave.chunking import ApproxTokenCounter, Chunk, ChunkOptions, chunk_document
from chunkweave.storage import chunk_files as files
from chunkweave.storage.chunk_files import read_export
from chunkweave.storage.errors import StoreError
from chunkweave.storage.files import FileSink
from chunkweave.worker.cli import main
from tests.chunk_helpers import el, make_doc, words

OPTS = ChunkOptions(max_tokens=120, min_tokens=0, merge_sections="never")


def _chunks(doc_id: str = "doc://a", source: str = "/data/report.pdf", **texts: str) -> list[Chunk]:
    elements = []
    for heading, text in texts.items():
        elements += [el("heading", heading.replace("_", " "), level=1), el("paragraph", text)]
    doc = make_doc(elements)
    return chunk_document(doc, OPTS, ApproxTokenCounter(), doc_id=doc_id, source=source)


def _mtimes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def _all_under(root: Path) -> bool:
    base = root.resolve()
    return all(p.resolve().is_relative_to(base) for p in root.rglob("*"))


def test_files_read_back_as_the_same_chunks(tmp_path: Path) -> None:
    tricky = "line one\n---\n\n---\nlast line ends with spaces   "
    chunks = _chunks(Intro=words(30, "a"), Tricky=tricky, 第三章_总则=words(20, "c"))
    FileSink(tmp_path).write_document("doc://a", chunks)
    back = read_export(tmp_path)
    assert [b.id for b in back] == [c.id for c in chunks]
    assert [b.text for b in back] == [c.text for c in chunks]
    first = back[0].meta
    assert first["heading_path"] == list(chunks[0].heading_path)
    assert first["chunk_index"] == 0 and first["doc_id"] == "doc://a"
    assert first["token_count"] == chunks[0].token_count
    for b, c in zip(back, chunks, strict=True):  # what to embed, as chunkweave does
        assert b.embed_text == c.embed_text
    lines = (tmp_path / files.MANIFEST).read_text().splitlines()
    assert [json.loads(line)["chunk_id"] for line in lines] == [c.id for c in chunks]


def test_caller_metadata_is_written_when_given(tmp_path: Path) -> None:
    chunks = _chunks(Intro=words(30))
    FileSink(tmp_path).write_document("doc://a", chunks, metadata={"tenant": "a", "acl": ["x"]})
    assert read_export(tmp_path)[0].meta["metadata"] == {"tenant": "a", "acl": ["x"]}
    FileSink(tmp_path / "plain").write_document("doc://a", chunks)
    assert "metadata" not in read_export(tmp_path / "plain")[0].meta


def test_a_metadata_change_rewrites_the_front_matter_and_keeps_the_text(tmp_path: Path) -> None:
    chunks = _chunks(Intro=words(30, "a"), Usage=words(30, "b"))
    sink = FileSink(tmp_path)
    sink.write_document("doc://a", chunks, metadata={"acl": ["team-x"]})
    result = sink.retag_document("doc://a", {"acl": ["team-y"], "version": "4"})
    assert result.written == len(chunks)
    back = read_export(tmp_path)
    assert [b.meta["metadata"] for b in back] == [{"acl": ["team-y"], "version": "4"}] * 2
    assert [b.text for b in back] == [c.text for c in chunks]
    assert [b.id for b in back] == [c.id for c in chunks]
    manifest = [json.loads(line) for line in (tmp_path / files.MANIFEST).read_text().splitlines()]
    for line in manifest:  # the manifest's digests follow the rewritten files
        assert line["sha1"] == hashlib.sha1((tmp_path / line["path"]).read_bytes()).hexdigest()
    before = _mtimes(tmp_path)
    assert sink.retag_document("doc://a", {"acl": ["team-y"], "version": "4"}).written == 0
    assert _mtimes(tmp_path) == before
    sink.retag_document("doc://a", {})
    assert all("metadata" not in b.meta for b in read_export(tmp_path))


def test_what_to_embed_reads_back_without_a_context_line_too(tmp_path: Path) -> None:
    doc = make_doc([el("paragraph", words(30))], title=None)
    opts = OPTS.model_copy(update={"contextualize": False})
    chunks = chunk_document(doc, opts, ApproxTokenCounter(), doc_id="d", source="x.pdf")
    FileSink(tmp_path).write_document("d", chunks)
    assert [b.embed_text for b in read_export(tmp_path)] == [c.embed_text for c in chunks]


def test_a_second_write_touches_nothing(tmp_path: Path) -> None:
    chunks = _chunks(Intro=words(30, "a"), Body=words(30, "b"))
    sink = FileSink(tmp_path)
    sink.write_document("doc://a", chunks)
    before = _mtimes(tmp_path)
    result = sink.write_document("doc://a", chunks)
    assert (result.written, result.removed, result.unchanged) == (0, 0, len(chunks))
    assert _mtimes(tmp_path) == before


def test_an_edit_rewrites_only_the_changed_file_and_removes_stale_ones(tmp_path: Path) -> None:
    sink = FileSink(tmp_path)
    sink.write_document("doc://a", _chunks(A=words(30, "a"), B=words(30, "b"), C=words(30, "c")))
    before = _mtimes(tmp_path)
    result = sink.write_document(
        "doc://a", _chunks(A=words(30, "a"), B=words(30, "x"), C=words(30, "c"))
    )
    after = _mtimes(tmp_path)
    changed = sorted(k for k in after if before.get(k) != after[k])
    assert result.written == 1
    assert [k for k in changed if k.endswith(".md")] == [k for k in after if k.endswith("001-b.md")]
    assert files.MANIFEST in changed
    # A shorter version: the third file goes, its folder stays with the others.
    result = sink.write_document("doc://a", _chunks(A=words(30, "a"), B=words(30, "x")))
    assert result.removed == 1
    assert len(read_export(tmp_path)) == 2 == len(list(tmp_path.rglob("*.md")))


@pytest.mark.parametrize(
    "source",
    ["/data/../../../etc/passwd", "..", "/", "a/../../b", "C:\\..\\..\\x.pdf", "\x00/..", "~/.ssh"],
)
def test_hostile_file_names_and_titles_stay_inside_the_export(tmp_path: Path, source: str) -> None:
    root = tmp_path / "out"
    chunks = _chunks(
        doc_id=f"doc://{source}",
        source=source,
        **{"../../../escape": words(10), "..": words(10, "b"), "/etc/x": words(10, "c")},
    )
    FileSink(root).write_document(chunks[0].doc_id, chunks)
    assert _all_under(root)
    assert not (tmp_path / "escape").exists()
    names = [p.name for p in root.rglob("*.md")]
    assert len(names) == len(chunks) and all(not n.startswith(".") for n in names)
    assert all(len(p.relative_to(root).parts) == 2 for p in root.rglob("*.md"))


def test_slugs_are_bounded_and_never_empty() -> None:
    assert len(files.slug("x" * 5000)) == files.MAX_SLUG
    assert files.slug("../..") == "chunk" and files.slug("") == "chunk"
    assert files.slug("Ünïcode Title 第三章") == "ünïcode-title-第三章"
    assert files.doc_dir_name("doc://a", "a.pdf") != files.doc_dir_name("doc://b", "a.pdf")


def test_a_manifest_naming_a_path_outside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("---\nchunk_id: x\n---\n\nsecret\n")
    root = tmp_path / "out"
    root.mkdir()
    line = {"doc_id": "d", "path": "../secret.md", "chunk_index": 0}
    (root / files.MANIFEST).write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match="not a path inside"):
        read_export(root)


def test_a_folder_symlinked_out_of_the_export_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    root.mkdir()
    chunks = _chunks(Intro=words(20))
    (root / files.doc_dir_name("doc://a", chunks[0].source)).symlink_to(outside)
    with pytest.raises(ValueError, match="outside the export"):
        FileSink(root).write_document("doc://a", chunks)
    assert list(outside.iterdir()) == []


def test_a_crash_mid_write_leaves_whole_files_and_the_old_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sink = FileSink(tmp_path)
    old = _chunks(A=words(30, "a"), B=words(30, "b"), C=words(30, "c"))
    sink.write_document("doc://a", old)
    manifest = (tmp_path / files.MANIFEST).read_bytes()
    new = _chunks(A=words(30, "x"), B=words(30, "y"), C=words(30, "z"))
    calls = {"n": 0}
    real_replace = os.replace

    def crash_on_second(src: str, dst: str) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_second)
    with pytest.raises(StoreError, match="001-b.md: cannot write: No space left"):
        sink.write_document("doc://a", new)
    monkeypatch.undo()
    assert (tmp_path / files.MANIFEST).read_bytes() == manifest
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    texts = [b.text for b in read_export(tmp_path)]  # every file parses: none half-written
    assert words(30, "x") in texts[0] and words(30, "b") in texts[1]  # new A, old B
    sink.write_document("doc://a", new)
    assert [b.text for b in read_export(tmp_path)] == [c.text for c in new]


def _docx(path: Path, middle: str) -> Path:
    d = docx.Document()
    for number, body in (("1", words(60, "a")), ("2", middle), ("3", words(60, "c"))):
        d.add_heading(f"{number} Part {number}", level=1)
        d.add_paragraph(body)
    d.save(str(path))
    return path


def test_export_command_is_incremental(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    _docx(src / "one.docx", words(60, "b"))
    _docx(src / "two.docx", words(60, "q"))
    (src / "broken.docx").write_bytes(b"not a zip")
    run = CliRunner().invoke(main, ["export", str(src), "--to", str(out), "--json"])
    assert run.exit_code == 1  # the broken file fails, the others are exported
    summary = json.loads(run.stdout)
    assert summary["written"] == 2 and len(summary["failed"]) == 1
    assert "broken.docx" in summary["failed"][0]
    exported = read_export(out)
    assert {b.meta["section_number"] for b in exported} == {"1", "2", "3"}
    before = _mtimes(out)
    again = json.loads(
        CliRunner().invoke(main, ["export", str(src), "--to", str(out), "--json"]).stdout
    )
    assert again["skipped"] == 2 and again["files_written"] == 0
    assert _mtimes(out) == before
    _docx(src / "one.docx", words(60, "e"))
    third = json.loads(
        CliRunner().invoke(main, ["export", str(src), "--to", str(out), "--json"]).stdout
    )
    assert third["files_written"] == 1 and third["skipped"] == 1
    after = _mtimes(out)
    changed = [k for k in after if before.get(k) != after[k]]
    assert sorted(changed) == sorted([files.MANIFEST, *[k for k in changed if "one-docx" in k]])
    assert len(changed) == 2

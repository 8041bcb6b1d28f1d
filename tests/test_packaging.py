"""Packaging: the symlinked parts fail clearly when missing, and sdist -> wheel holds it all.

- ``import chunkweave`` raises a clear ImportError when a ``chunkweave/<part>`` is not
  a folder (what a checkout without symlink support leaves: a small text file).
- ``python -m build`` (an sdist, then the wheel built from that sdist, as pip does
  with a source release) gives the same files as ``pip wheel`` on the tree: every
  module and package-data file of the tree, as real files with their full content,
  no links; the sdist holds real files too, and no partial test suite.
"""

from __future__ import annotations

import glob
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("parsers", "chunking", "storage", "worker")


def _skeleton(tmp_path: Path, text_file_part: str | None) -> Path:
    """A copy of ``chunkweave/__init__.py`` with empty parts; one part a text file."""
    package = tmp_path / "chunkweave"
    package.mkdir()
    shutil.copy(ROOT / "chunkweave" / "__init__.py", package / "__init__.py")
    for part in PARTS:
        if part == text_file_part:
            # What git writes for a symlink when core.symlinks is false: the target.
            (package / part).write_text(f"../{part}")
        else:
            (package / part).mkdir()
            (package / part / "__init__.py").write_text("")
    return tmp_path


def _import_in(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", "import chunkweave, sys; print(chunkweave.__file__)"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("part", PARTS)
def test_import_fails_clearly_when_a_part_is_a_text_file(tmp_path: Path, part: str) -> None:
    proc = _import_in(_skeleton(tmp_path, part))
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ")
    assert f"chunkweave/{part} in {tmp_path / 'chunkweave'} should be a folder" in last
    assert "git config core.symlinks true" in last and "python -m build" in last
    others = [p for p in PARTS if p != part]
    assert not any(f"chunkweave/{p} " in last for p in others)


def test_import_works_when_every_part_is_a_folder(tmp_path: Path) -> None:
    proc = _import_in(_skeleton(tmp_path, None))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "chunkweave" / "__init__.py")


def _tree_files() -> dict[str, int]:
    """What the wheel must hold under ``chunkweave/``: path -> size.

    Every ``.py`` of the package (through the part links) and every file the
    ``[tool.setuptools.package-data]`` patterns of pyproject.toml match.
    """
    package = ROOT / "chunkweave"
    found: dict[str, int] = {}
    for folder, dirs, files in os.walk(package, followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = Path(folder) / name
                found[path.relative_to(ROOT).as_posix()] = path.stat().st_size
    with open(ROOT / "pyproject.toml", "rb") as fh:
        data = tomllib.load(fh)["tool"]["setuptools"]["package-data"]
    for dotted, patterns in data.items():
        base = ROOT.joinpath(*dotted.split("."))
        for pattern in patterns:
            for hit in glob.glob(str(base / pattern), recursive=True):
                path = Path(hit)
                if path.is_file() and "__pycache__" not in path.parts:
                    found[path.relative_to(ROOT).as_posix()] = path.stat().st_size
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``python -m build`` of the tree: the sdist, and the wheel built from it."""
    out = tmp_path_factory.mktemp("build")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    (sdist,) = out.glob("chunkweave-*.tar.gz")
    (wheel,) = out.glob("chunkweave-*.whl")
    return sdist, wheel


@pytest.mark.slow
def test_wheel_from_the_sdist_has_the_files_of_the_tree_wheel(
    built: tuple[Path, Path], tree_wheel: Path
) -> None:
    with zipfile.ZipFile(built[1]) as from_sdist, zipfile.ZipFile(tree_wheel) as from_tree:
        assert sorted(from_sdist.namelist()) == sorted(from_tree.namelist())


@pytest.mark.slow
def test_wheel_holds_every_module_and_data_file_as_real_files(built: tuple[Path, Path]) -> None:
    with zipfile.ZipFile(built[1]) as zf:
        infos = {i.filename: i for i in zf.infolist() if i.filename.startswith("chunkweave/")}
    expected = _tree_files()
    assert sorted(infos) == sorted(expected)
    assert "chunkweave/storage/models/all-MiniLM-L6-v2-int8/model.onnx" in infos
    links = [n for n, i in infos.items() if stat.S_ISLNK(i.external_attr >> 16)]
    assert links == []
    # Full content, not a link's text: every file as large as in the tree.
    assert {n: i.file_size for n, i in infos.items()} == expected


@pytest.mark.slow
def test_sdist_holds_real_files_and_no_partial_test_suite(built: tuple[Path, Path]) -> None:
    with tarfile.open(built[0]) as tar:
        members = tar.getmembers()
    top = members[0].name.split("/")[0]
    links = [m.name for m in members if m.issym() or m.islnk()]
    assert links == []
    files = {m.name.removeprefix(f"{top}/"): m.size for m in members if m.isfile()}
    assert {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO"} <= files.keys()
    package = {n: s for n, s in files.items() if n.startswith("chunkweave/")}
    assert package == _tree_files()
    assert not any(n.startswith("tests/") for n in files)

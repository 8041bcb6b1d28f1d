"""``--password`` on every command that parses, and an ``encrypted`` error that says how.

A PDF encrypted in the test; each command runs as a subprocess (the option sets the
process's parse settings), with and without the password.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from chunkweave.storage.config import WeaviateConfig, server_env
from tests.fixtures_services import ROOT

CLI = str(Path(sys.executable).parent / "chunkweave")
PASSWORD = "s3cret"


def _locked(path: Path) -> Path:
    doc = pymupdf.open()
    for i in range(2):
        page = doc.new_page()
        page.insert_text((72, 100), f"Section {i + 1}", fontsize=18)
        page.insert_text((72, 140), f"Locked body text on page {i + 1}.", fontsize=11)
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw=PASSWORD, owner_pw="owner")
    doc.close()
    return path


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    return {**env, "PYTHONPATH": str(ROOT), "CHUNKWEAVE_DATA_DIR": str(tmp_path / "d"), **extra}


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def _says_how(out: subprocess.CompletedProcess[str]) -> None:
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "encrypted" in text and "--password" in text, text
    assert "CHUNKWEAVE_PARSE__PASSWORD" in text, text


def test_commands_that_parse_take_a_password(tmp_path: Path):
    pdf = _locked(tmp_path / "locked.pdf")
    env = _env(tmp_path)
    commands = {
        "chunk": ["chunk", str(pdf)],
        "export": ["export", str(pdf), "--to", str(tmp_path / "out")],
        "inspect": ["inspect", str(pdf), "-o", str(tmp_path / "r.html")],
    }
    for name, args in commands.items():
        _says_how(_run(args, env))
        opened = _run([*args, "--password", PASSWORD], env)
        assert opened.returncode == 0, (name, opened.stderr)
    assert (
        "Locked body text on page 2"
        in _run([*commands["chunk"], "--password", PASSWORD], env).stdout
    )
    # The setting works the same way.
    assert _run(commands["chunk"], {**env, "CHUNKWEAVE_PARSE__PASSWORD": PASSWORD}).returncode == 0
    for name in ("eval", "parse"):
        assert "--password" in _run([name, "--help"], env).stdout


@pytest.mark.integration
def test_ingest_takes_a_password(tmp_path: Path, weaviate_cfg: WeaviateConfig):
    pdf = _locked(tmp_path / "locked.pdf")
    env = _env(tmp_path, **server_env(weaviate_cfg))
    env["CHUNKWEAVE_WEAVIATE__COLLECTION"] = weaviate_cfg.collection
    env["CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION"] = weaviate_cfg.ledger_collection
    env["CHUNKWEAVE_EMBEDDER__KIND"] = "none"
    _says_how(_run(["ingest", str(pdf)], env))
    done = _run(["ingest", str(pdf), "--password", PASSWORD, "--json"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"failed": []' in done.stdout

"""A watched folder that is not there is refused before anything starts.

`serve --watch inbox` with no ./inbox used to start Redis, Weaviate, the workers and
the API, then stop them all on a NotADirectoryError. Now the option itself says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from chunkweave.worker.cli import main

# Nothing listens on these: were the refusal missing, the command would try them.
ENV = {
    "CHUNKWEAVE_REDIS_URL": "redis://127.0.0.1:9/0",
    "CHUNKWEAVE_WEAVIATE__URL": "http://127.0.0.1:9",
}


@pytest.mark.parametrize("command", [["serve", "--api-port", "0", "--watch"], ["watch"]])
def test_a_missing_watched_folder_is_refused_with_the_fix(command: list[str], tmp_path: Path):
    missing = tmp_path / "inbox"
    out = CliRunner().invoke(main, [*command, str(missing)], env=ENV)
    assert out.exit_code == 2, out.output
    assert f"{missing}: no such folder (create it first: mkdir -p {missing})" in out.output


def test_a_file_is_no_watched_folder(tmp_path: Path):
    file = tmp_path / "inbox"
    file.write_text("not a folder")
    out = CliRunner().invoke(main, ["watch", str(file)], env=ENV)
    assert out.exit_code == 2 and f"{file}: not a folder" in out.output

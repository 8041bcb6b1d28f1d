"""A watched source of a multi-tenant store names its tenant, and no file stops serve.

Issue 37, item 11: `serve --watch` on a multi-tenant store with no tenant started, and
the first file dropped in stopped the whole service. Now it is refused before anything
starts, and a watcher that raises is restarted (one line) instead of ending serve.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from pathlib import Path

import pytest
from click.testing import CliRunner

from chunkweave.worker import serve as serve_module
from chunkweave.worker.cli import main
from chunkweave.worker.serve import Service
from chunkweave.worker.settings import Settings, get_settings


@pytest.fixture
def multi_tenant(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CHUNKWEAVE_WEAVIATE__MULTI_TENANCY", "true")
    monkeypatch.delenv("CHUNKWEAVE_WEAVIATE__TENANT", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_serve_refuses_to_watch_a_multi_tenant_store_without_a_tenant(multi_tenant, tmp_path):
    env = {
        "CHUNKWEAVE_DATA_DIR": str(tmp_path / "data"),
        # Nothing listens on these: were the refusal missing, serve would fail fast
        # (its worker cannot connect) instead of starting embedded servers.
        "CHUNKWEAVE_REDIS_URL": "redis://127.0.0.1:9/0",
        "CHUNKWEAVE_WEAVIATE__URL": "http://127.0.0.1:9",
    }
    out = CliRunner().invoke(main, ["serve", "--watch", str(tmp_path), "--api-port", "0"], env=env)
    assert out.exit_code == 1, out.output
    assert f"cannot watch {tmp_path}" in out.output and "name a tenant" in out.output
    assert "CHUNKWEAVE_WEAVIATE__TENANT" in out.output
    # Refused before anything started: no embedded server, no data written.
    assert "started embedded" not in out.output and not (tmp_path / "data").exists()


def test_watch_without_a_tenant_on_a_multi_tenant_store_is_a_usage_error(multi_tenant, tmp_path):
    out = CliRunner().invoke(main, ["watch", str(tmp_path)])
    assert out.exit_code == 2 and "name a tenant" in out.output and "--tenant" in out.output
    assert "watching" not in out.output


class _Flaky:
    """A watcher whose first run raises (as a bad file did), the next runs until stopped."""

    def __init__(self) -> None:
        self.runs = 0
        self.running = threading.Event()

    def run(self, stop: threading.Event) -> None:
        self.runs += 1
        if self.runs == 1:
            raise ValueError("multi-tenancy is on: name a tenant")
        self.running.set()
        stop.wait()


def test_a_watcher_that_raises_is_restarted_not_the_end_of_serve(
    service_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    flaky = _Flaky()
    monkeypatch.setattr(serve_module.sources, "watcher", lambda *a, **k: flaky)
    monkeypatch.setattr(serve_module, "_WATCH_BACKOFF_S", (0.05, 0.1))
    said: list[str] = []
    settings = Settings(redis_url=service_env["CHUNKWEAVE_REDIS_URL"], data_dir=tmp_path / "data")
    service = Service(settings, watch=str(tmp_path), workers=1, api_port=None, say=said.append)
    with ExitStack() as stack:
        thread = service._start_watcher(settings, stack)
        assert flaky.running.wait(10), said
        assert thread.is_alive() and flaky.runs == 2
        service.stop.set()
    assert not thread.is_alive()
    assert any(line.startswith("watcher stopped: ValueError") for line in said), said
    assert any("restarting it in" in line for line in said), said

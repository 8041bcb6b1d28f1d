"""The embedded Weaviate: binary cache, build errors, ports, clean stop, no orphans."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from chunkweave.storage import server_process as process
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.server import build as weaviate_build
from chunkweave.storage.weaviate.server.build import LocalWeaviateError, binary_path, build
from chunkweave.storage.weaviate.server.local import LocalWeaviate, Ports
from chunkweave.storage.weaviate.store import WeaviateStore
from tests.store_helpers import det_vector, make_chunk

ROOT = Path(__file__).resolve().parents[1]


def test_binary_lives_in_the_user_cache_by_version(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CHUNKWEAVE_WEAVIATE_PGO", "off")
    path = binary_path("9.9.9")
    assert path == tmp_path / "chunkweave" / "weaviate" / "v9.9.9" / "weaviate-server"


def test_profile_guided_binary_is_cached_per_profile(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    profile = tmp_path / "weaviate.pgo"
    profile.write_bytes(b"first profile")
    monkeypatch.setattr(weaviate_build, "PGO_PROFILE", profile)
    first = binary_path("9.9.9")
    assert first.parent.name.startswith("v9.9.9-pgo-")
    assert first.name == "weaviate-server"
    profile.write_bytes(b"second profile")
    assert binary_path("9.9.9") != first  # a new profile never reuses a stale build
    plain = tmp_path / "chunkweave" / "weaviate" / "v9.9.9" / "weaviate-server"
    assert binary_path("9.9.9", guided=False) == plain


def test_shipped_profile_is_a_go_cpu_profile():
    # pprof files are gzipped protobuf; go install -pgo refuses anything else.
    assert weaviate_build.PGO_PROFILE.read_bytes()[:2] == b"\x1f\x8b"


@pytest.mark.parametrize("pgo", ["on", "off"])
def test_build_passes_the_profile_to_go_install(monkeypatch, tmp_path, pgo):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CHUNKWEAVE_WEAVIATE_PGO", pgo)
    profile = tmp_path / "weaviate.pgo"
    profile.write_bytes(b"profile")
    monkeypatch.setattr(weaviate_build, "PGO_PROFILE", profile)
    monkeypatch.setattr(weaviate_build.shutil, "which", lambda name: "/usr/bin/go")
    seen: list[list[str]] = []

    def fake_popen(cmd, **kwargs):
        seen.append(cmd)
        raise OSError("not really building")

    monkeypatch.setattr(weaviate_build.subprocess, "Popen", fake_popen)
    with pytest.raises(OSError, match="not really building"):
        build("9.9.9", echo=lambda line: None)
    (cmd,) = seen
    assert cmd[-1] == f"{weaviate_build.GO_PACKAGE}@v9.9.9"
    assert (f"-pgo={profile}" in cmd) == (pgo == "on")


def test_build_without_go_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(weaviate_build.shutil, "which", lambda name: None)
    with pytest.raises(LocalWeaviateError, match="Go toolchain .* not on PATH"):
        build("9.9.9", echo=lambda line: None)


def test_a_given_binary_that_is_missing_is_a_clear_error(tmp_path):
    missing = tmp_path / "no-such-weaviate-server"
    server = LocalWeaviate(tmp_path / "data", binary=missing)
    with pytest.raises(LocalWeaviateError, match="binary not found: .*no-such-weaviate-server"):
        server.start()


def test_picked_ports_are_distinct_including_companions():
    ports = Ports.pick()
    used = [ports.http, ports.grpc, ports.gossip, ports.gossip + 1, ports.raft, ports.raft + 1]
    used.append(ports.profiling)
    assert len(set(used)) == len(used)
    assert ports.all_free()


def test_free_port_pairs_avoid_and_are_bindable():
    first = process.free_port(pair=True)
    assert process.port_free(first) and process.port_free(first + 1)
    other = process.free_port(avoid=frozenset({first, first + 1}))
    assert other not in (first, first + 1)


class _Sleeper(process.ServerProcess):
    """A stand-in server: ``sh`` that ignores SIGTERM, or exits at once."""

    stop_timeout_s = 0.5

    def __init__(self, log: Path, script: str, ready=lambda: False) -> None:
        self.log, self.script, self.ready = log, script, ready

    def start(self):
        self._start(
            ["sh", "-c", self.script], self.ready, name="sleeper", log=self.log, timeout_s=1
        )
        return self


def test_a_server_that_exits_while_starting_raises_with_its_log(tmp_path):
    with pytest.raises(process.LocalServiceError, match=r"sleeper exited with code 3(.|\n)*boom"):
        _Sleeper(tmp_path / "s.log", "echo boom; exit 3").start()


def test_a_server_never_ready_is_stopped_even_if_it_ignores_sigterm(tmp_path):
    server = _Sleeper(tmp_path / "s.log", "trap '' TERM; echo up; sleep 60")
    started = time.monotonic()
    with pytest.raises(process.LocalServiceError, match="sleeper not ready after 1s"):
        server.start()
    assert server.pid is None
    assert time.monotonic() - started < 10  # 1 s readiness bound + 0.5 s before SIGKILL


def test_a_ready_server_runs_in_its_own_session_until_stopped(tmp_path):
    with _Sleeper(tmp_path / "s.log", "sleep 60", ready=lambda: True) as server:
        pid = server.pid
        assert pid is not None and os.getsid(pid) == pid != os.getsid(0)
    assert server.pid is None and not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


@pytest.mark.integration
def test_start_cli_serves_until_killed_and_leaves_no_orphan(tmp_path):
    if not binary_path().is_file():
        pytest.skip(
            "Weaviate binary not built (python -m chunkweave.storage.weaviate.server build)"
        )
    cmd = [
        sys.executable,
        "-m",
        "chunkweave.storage.weaviate.server",
        "start",
        "--data-dir",
        str(tmp_path),
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        with urllib.request.urlopen(f"{info['url']}/v1/.well-known/ready", timeout=5) as resp:
            assert resp.status == 200
        # SIGKILL the starter: it cannot clean up, the kernel must stop the server.
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 30
        while _alive(info["pid"]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(info["pid"]), "weaviate-server outlived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.integration
def test_stop_is_clean_and_restart_keeps_data(own_weaviate):
    identity = EmbedderIdentity("t", 16)
    store = WeaviateStore.open(own_weaviate.config(), identity)
    chunk = make_chunk("doc", 0)
    store.upsert([chunk], [det_vector(chunk.embed_text, 16)])
    store.close()
    pid = own_weaviate.pid
    assert pid is not None
    own_weaviate.stop()
    assert own_weaviate.pid is None and not _alive(pid)
    own_weaviate.start()
    store = WeaviateStore.open(own_weaviate.config(), identity)
    assert store.doc_uuids("doc") == {chunk_uuid(chunk.id)}
    store.close()

"""What a running ``chunkweave serve`` exposes on the network.

Starts the whole service on embedded servers (real Redis, real Weaviate, workers,
API), lists every listening socket of its process tree, and checks each one is
loopback-only or refuses a caller without this run's secret.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import psutil
import pytest
import redis
from weaviate.proto.v1 import batch_delete_pb2, search_get_pb2, weaviate_pb2_grpc

from chunkweave.storage.server_process import free_port
from tests.fixtures_services import ROOT, wait_for

pytestmark = pytest.mark.integration


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[tuple[psutil.Process, Path]]:
    """A fully embedded ``chunkweave serve`` (no Redis or Weaviate configured).

    Yields its process and its data directory.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env["CHUNKWEAVE_DATA_DIR"] = str(tmp_path / "data")
    port = free_port()
    cli = str(Path(sys.executable).parent / "chunkweave")
    log = tmp_path / "serve.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [cli, "serve", "--workers", "1", "--api-port", str(port)],
            cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_for(
            lambda: _healthy(f"http://127.0.0.1:{port}/healthz"),
            timeout_s=180,
            what="serve healthy",
            interval_s=0.5,
        )
        yield psutil.Process(proc.pid), tmp_path / "data"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()


def _listening(root: psutil.Process) -> list[tuple[str, str, int]]:
    """(process name, address, port) of every listening TCP socket in the tree."""
    found = []
    for proc in [root, *root.children(recursive=True)]:
        try:
            conns = proc.net_connections(kind="inet")
            name = proc.name()
        except psutil.NoSuchProcess:
            continue
        found += [(name, c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN]
    return found


def _loopback(address: str) -> bool:
    return ipaddress.ip_address(address.split("%")[0]).is_loopback


def test_every_listening_socket_is_loopback_or_needs_the_run_secret(serving):
    root, data = serving
    sockets = _listening(root)
    names = {name for name, _, _ in sockets}
    assert {"redis-server", "weaviate-server"} <= names, sockets
    record = json.loads((data / "weaviate" / "server.json").read_text())
    grpc_port, cluster_port = record["grpc"], record["gossip"] + 1
    wide = {(n, p) for n, a, p in sockets if not _loopback(a)}
    # Only Weaviate's gRPC API and cluster data port, which have no bind setting.
    assert wide <= {("weaviate-server", grpc_port), ("weaviate-server", cluster_port)}, sockets
    assert 6060 not in {p for _, _, p in sockets}, "the Go profiler must be off"
    assert (data / "weaviate" / "server.json").stat().st_mode & 0o077 == 0  # holds the key

    # Each wide listener refuses a caller without the run's secret (reached here over
    # loopback: an outsider reaches the same listener).
    assert httpx.get(f"http://127.0.0.1:{cluster_port}/nodes/", timeout=5).status_code == 401
    _assert_grpc_refuses_anonymous(grpc_port)

    redis_port = next(p for n, _, p in sockets if n == "redis-server")
    anonymous = redis.Redis(host="127.0.0.1", port=redis_port, socket_timeout=5)
    with pytest.raises(redis.AuthenticationError):
        anonymous.ping()
    anonymous.close()
    assert (data / "redis" / "redis.conf").stat().st_mode & 0o077 == 0  # holds the password


def _assert_grpc_refuses_anonymous(grpc_port: int) -> None:
    """A gRPC ``Search`` and a ``BatchDelete`` dry run without the key are refused."""
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        stub = weaviate_pb2_grpc.WeaviateStub(channel)
        calls = (
            lambda: stub.Search(search_get_pb2.SearchRequest(collection="Chunk", limit=1)),
            lambda: stub.BatchDelete(
                batch_delete_pb2.BatchDeleteRequest(collection="Chunk", dry_run=True)
            ),
        )
        for call in calls:
            with pytest.raises(grpc.RpcError) as refused:
                call()
            # Weaviate answers UNKNOWN with this message, not UNAUTHENTICATED.
            assert "unauthorized" in (refused.value.details() or ""), refused.value

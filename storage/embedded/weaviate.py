"""The real Weaviate server on loopback, one per data directory: :class:`LocalWeaviate`.

:class:`LocalWeaviate` starts the cached build (:mod:`.weaviate_build`) with
anonymous access, no modules, no telemetry, a given data directory and free
loopback ports, waits until ``/v1/.well-known/ready`` answers, and stops it without
leaving orphans (:mod:`.process`).

One data directory has at most one server. The process that starts it holds an
exclusive lock on ``DATA_DIR/owner.lock`` and records the server in
``DATA_DIR/server.json``; any other process asking for the same data directory
(e.g. ``chunkweave search`` while ``chunkweave serve`` runs) attaches to that
server instead of starting a second one, and leaves it running when it is done.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedded.process import ServerProcess, free_port, log_tail, port_free
from chunkweave.storage.embedded.weaviate_build import (
    PINNED_VERSION,
    LocalWeaviateError,
    ensure_binary,
)


@dataclass(frozen=True)
class Ports:
    """The loopback ports one server uses (``gossip + 1`` and ``raft + 1`` too)."""

    http: int
    grpc: int
    gossip: int
    raft: int
    profiling: int

    @classmethod
    def pick(cls) -> Ports:
        """Free ports for every listener, none shared."""
        taken: set[int] = set()

        def take(pair: bool = False) -> int:
            port = free_port(pair=pair, avoid=frozenset(taken))
            taken.update({port, port + 1} if pair else {port})
            return port

        return cls(http=take(), grpc=take(), gossip=take(True), raft=take(True), profiling=take())

    def all_free(self) -> bool:
        """Whether every port (including the ``+1`` companions) is free right now."""
        wanted = (self.http, self.grpc, self.gossip, self.gossip + 1, self.raft, self.raft + 1)
        return all(port_free(p) for p in (*wanted, self.profiling))


def server_env(data_dir: Path, ports: Ports) -> dict[str, str]:
    """Environment for a single-node, loopback-only, module-free server."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", str(data_dir)),
        "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
        "PERSISTENCE_DATA_PATH": str(data_dir),
        "DEFAULT_VECTORIZER_MODULE": "none",
        "ENABLE_MODULES": "",
        "AUTOSCHEMA_ENABLED": "false",
        "DISABLE_TELEMETRY": "true",
        "PROMETHEUS_MONITORING_ENABLED": "false",
        "GRPC_PORT": str(ports.grpc),
        "CLUSTER_HOSTNAME": "node1",
        "CLUSTER_IN_LOCALHOST": "true",
        "CLUSTER_BIND_ADDR": "127.0.0.1",
        "CLUSTER_GOSSIP_BIND_PORT": str(ports.gossip),
        "CLUSTER_DATA_BIND_PORT": str(ports.gossip + 1),
        "RAFT_PORT": str(ports.raft),
        "RAFT_INTERNAL_RPC_PORT": str(ports.raft + 1),
        "RAFT_BOOTSTRAP_EXPECT": "1",
        "RAFT_JOIN": f"node1:{ports.raft}",
        "GO_PROFILING_PORT": str(ports.profiling),
    }


def _is_ready(url: str) -> bool:
    with (
        contextlib.suppress(urllib.error.URLError, OSError),
        urllib.request.urlopen(f"{url}/v1/.well-known/ready", timeout=2) as resp,
    ):
        return bool(resp.status == 200)
    return False


class LocalWeaviate(ServerProcess):
    """A real Weaviate server process on loopback; a context manager.

    ``data_dir`` holds its data (persistent across runs when reused). Ports default
    to those remembered in ``data_dir/ports.json`` when still free, else fresh free
    ports. ``start`` blocks until the server is ready or ``ready_timeout_s`` passes.
    ``extra_env`` adds or overrides server settings (e.g. ``QUERY_MAXIMUM_RESULTS``).
    """

    stop_timeout_s = 20.0
    error = LocalWeaviateError

    def __init__(
        self,
        data_dir: str | Path,
        *,
        ports: Ports | None = None,
        version: str = PINNED_VERSION,
        log_path: str | Path | None = None,
        ready_timeout_s: float = 90.0,
        extra_env: dict[str, str] | None = None,
        binary: Path | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.version = version
        #: A server binary to run instead of the cached build of ``version``.
        self.binary = binary
        self.log_path = Path(log_path) if log_path else self.data_dir / "weaviate.log"
        self.ready_timeout_s = ready_timeout_s
        self._ports = ports
        self.extra_env = dict(extra_env or {})
        self._lock: int | None = None  # fd of owner.lock while this process owns the server
        self.attached = False  # True when using a server another process started

    @property
    def ports(self) -> Ports:
        """The ports in use (valid after :meth:`start`)."""
        if self._ports is None:
            raise LocalWeaviateError("LocalWeaviate not started")
        return self._ports

    @property
    def url(self) -> str:
        """REST base URL, e.g. ``http://127.0.0.1:8090``."""
        return f"http://127.0.0.1:{self.ports.http}"

    def config(self, base: WeaviateConfig | None = None) -> WeaviateConfig:
        """Return ``base`` (or the defaults) pointed at this server."""
        update = {"url": self.url, "grpc_port": self.ports.grpc, "api_key": None}
        return (base or WeaviateConfig()).model_copy(update=update)

    def _choose_ports(self) -> Ports:
        if self._ports is not None:
            return self._ports
        remembered = self.data_dir / "ports.json"
        # Reuse the previous ports when possible: raft remembers its peer address.
        with contextlib.suppress(OSError, ValueError, TypeError):
            ports = Ports(**json.loads(remembered.read_text()))
            if ports.all_free():
                return ports
        ports = Ports.pick()
        remembered.write_text(json.dumps(asdict(ports)))
        return ports

    def start(self) -> LocalWeaviate:
        """Start the server (or attach to the one already serving this data directory).

        Waits until it is ready; raises with the server's log tail if it is not.
        """
        if self.pid is not None or self.attached:
            return self
        self.data_dir.mkdir(parents=True, exist_ok=True)
        lock = os.open(self.data_dir / "owner.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            return self._attach()
        self._lock = lock
        try:
            self._spawn()
        except BaseException:
            self._release()
            raise
        (self.data_dir / "server.json").write_text(
            json.dumps({"pid": self.pid, **asdict(self.ports)})
        )
        return self

    def _attach(self) -> LocalWeaviate:
        # Another process owns this data directory: wait for its server.json and
        # readiness (it may still be starting), then use that server.
        deadline = time.monotonic() + self.ready_timeout_s
        record = self.data_dir / "server.json"
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError, TypeError):
                info = json.loads(record.read_text())
                info.pop("pid", None)
                ports = Ports(**info)
                if _is_ready(f"http://127.0.0.1:{ports.http}"):
                    self._ports = ports
                    self.attached = True
                    return self
            time.sleep(0.2)
        raise LocalWeaviateError(
            f"another process holds {self.data_dir} but its Weaviate did not become ready "
            f"within {self.ready_timeout_s:.0f}s; log {self.log_path}:\n{log_tail(self.log_path)}"
        )

    def _release(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                (self.data_dir / "server.json").unlink()
            os.close(self._lock)  # closing the fd releases the flock
            self._lock = None

    def _spawn(self) -> None:
        if self.binary is not None and not self.binary.is_file():
            raise LocalWeaviateError(f"Weaviate server binary not found: {self.binary}")
        binary = self.binary or ensure_binary(self.version)
        self._ports = self._choose_ports()
        args = [str(binary), "--scheme", "http", "--host", "127.0.0.1", "--port"]
        self._start(
            [*args, str(self.ports.http)],
            lambda: _is_ready(self.url),
            name=f"Weaviate at {self.url}",
            log=self.log_path,
            timeout_s=self.ready_timeout_s,
            env={**server_env(self.data_dir, self.ports), **self.extra_env},
        )

    def stop(self) -> None:
        """Stop the server: SIGTERM to its process group, SIGKILL after 20 s.

        An attached server (started by another process) is left running.
        """
        self.attached = False
        try:
            super().stop()
        finally:
            self._release()

"""The real Weaviate server on loopback, one per data directory: :class:`LocalWeaviate`.

:class:`LocalWeaviate` starts the cached build (:mod:`.build`) with no
modules, no telemetry, a given data directory and free loopback ports, waits until
``/v1/.well-known/ready`` answers, and stops it without leaving orphans
(:mod:`chunkweave.storage.server_process`).

Nobody else on the network gets in. REST, gossip and raft bind 127.0.0.1. Weaviate
has no bind address for its gRPC API and its cluster data port, which listen on
every interface, so the server runs with a secret instead of anonymous access: an
API key for the gRPC and REST APIs, basic auth on the cluster port, both random and
made once per data directory (``DATA_DIR/secrets.json``, mode 0600, so a client
survives a server restart). The Go profiler (with its debug endpoints) is off unless
``profiling=True`` (benchmarks only). Processes that attach read the key from
``DATA_DIR/server.json`` (mode 0600).

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
import secrets
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import SecretStr

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.server_process import ServerProcess, free_port, log_tail, port_free
from chunkweave.storage.weaviate.server.build import (
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


#: The user the API key belongs to, and the cluster port's basic-auth user.
SERVER_USER = "chunkweave"


@dataclass(frozen=True)
class Secrets:
    """One run's credentials: the API key clients use, the cluster port's password."""

    api_key: str
    cluster_password: str

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> Secrets:
        """Return the data directory's credentials: read back, or made once (random, 0600).

        Kept with the data, so a client survives a restart of the server it talks to.
        """
        path = data_dir / "secrets.json"
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            saved = json.loads(path.read_text())
            return cls(saved["api_key"], saved["cluster_password"])
        made = cls(secrets.token_urlsafe(32), secrets.token_urlsafe(32))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(asdict(made), fh)
        return made


def server_env(
    data_dir: Path, ports: Ports, keys: Secrets, *, profiling: bool = False
) -> dict[str, str]:
    """Environment for a single-node, module-free server that admits only ``keys``."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", str(data_dir)),
        "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "false",
        "AUTHENTICATION_APIKEY_ENABLED": "true",
        "AUTHENTICATION_APIKEY_ALLOWED_KEYS": keys.api_key,
        "AUTHENTICATION_APIKEY_USERS": SERVER_USER,
        "CLUSTER_BASIC_AUTH_USERNAME": SERVER_USER,
        "CLUSTER_BASIC_AUTH_PASSWORD": keys.cluster_password,
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
    }
    if profiling:  # binds every interface: for benchmarks on a private machine only
        env["GO_PROFILING_PORT"] = str(ports.profiling)
    else:
        env["GO_PROFILING_DISABLE"] = "true"
    return env


def recorded_server(data_dir: Path) -> tuple[Ports, str] | None:
    """Return the ports and API key recorded in ``DATA_DIR/server.json``, or None.

    The record is written by the process that started the server and removed when it
    stops it; one left by a process that died names a server that no longer answers
    (check with :func:`is_ready`).
    """
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        info = json.loads((Path(data_dir) / "server.json").read_text())
        info.pop("pid", None)
        api_key = str(info.pop("api_key"))
        return Ports(**info), api_key
    return None


def is_ready(url: str) -> bool:
    """Tell whether the Weaviate at ``url`` answers ``/v1/.well-known/ready`` (2 s at most)."""
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
        profiling: bool = False,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.version = version
        #: A server binary to run instead of the cached build of ``version``.
        self.binary = binary
        self.log_path = Path(log_path) if log_path else self.data_dir / "weaviate.log"
        self.ready_timeout_s = ready_timeout_s
        self._ports = ports
        self.extra_env = dict(extra_env or {})
        #: Run the Go profiler (``/debug/pprof``) on ``ports.profiling``: benchmarks only.
        self.profiling = profiling
        self._keys: Secrets | None = None
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

    @property
    def api_key(self) -> str:
        """The API key of this run (valid after :meth:`start`)."""
        if self._keys is None:
            raise LocalWeaviateError("LocalWeaviate not started")
        return self._keys.api_key

    def config(self, base: WeaviateConfig | None = None) -> WeaviateConfig:
        """Return ``base`` (or the defaults) pointed at this server, with its key."""
        update = {"url": self.url, "grpc_port": self.ports.grpc, "api_key": SecretStr(self.api_key)}
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
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
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
        self._record()
        return self

    def respawn(self) -> LocalWeaviate:
        """Start the server again after its process died: same ports, data and key.

        The data directory's lock and record are kept throughout, so no other process
        starts a server of its own there meanwhile (``chunkweave serve`` restarting the
        one it supervises). Without the lock (never started, or a failed respawn
        released it) this is :meth:`start`.
        """
        if self._lock is None:
            return self.start()
        self._spawn()
        self._record()
        return self

    def _record(self) -> None:
        record = self.data_dir / "server.json"
        fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:  # the key: readable by this user only
            json.dump({"pid": self.pid, "api_key": self.api_key, **asdict(self.ports)}, fh)

    def _attach(self) -> LocalWeaviate:
        # Another process owns this data directory: wait for its server.json and
        # readiness (it may still be starting), then use that server.
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if (found := recorded_server(self.data_dir)) is not None:
                ports, api_key = found
                if is_ready(f"http://127.0.0.1:{ports.http}"):
                    self._ports = ports
                    self._keys = Secrets(api_key, "")
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
        self._keys = Secrets.for_data_dir(self.data_dir)
        env = server_env(self.data_dir, self.ports, self._keys, profiling=self.profiling)
        args = [str(binary), "--scheme", "http", "--host", "127.0.0.1", "--port"]
        self._start(
            [*args, str(self.ports.http)],
            lambda: is_ready(self.url),
            name=f"Weaviate at {self.url}",
            log=self.log_path,
            timeout_s=self.ready_timeout_s,
            env={**env, **self.extra_env},
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

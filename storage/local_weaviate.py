"""Build, cache and run the real Weaviate server on loopback (no Docker).

The server is built once from its Go module with ``go install`` and cached by
version under the user's cache directory (outside any clone, so CI runs in fresh
clones reuse it). The build is profile-guided (``go install -pgo``) with
``storage/weaviate.pgo``, a CPU profile of chunkweave's own write-heavy workload
recorded by ``bench/weaviate_profile.py``: bench/weaviate_pgo.py measured 7-15% less
server CPU per insert than a plain build (1.12-1.22x the rate).
``CHUNKWEAVE_WEAVIATE_PGO=off`` builds (and uses) the plain binary instead.

:class:`LocalWeaviate` starts it with anonymous access, no modules, no telemetry, a
given data directory and free loopback ports, waits until ``/v1/.well-known/ready``
answers, and stops it (SIGTERM, then SIGKILL) without
leaving orphans: the server runs in its own process group and receives SIGTERM
from the kernel if the process that started it dies (``PR_SET_PDEATHSIG``).

One data directory has at most one server. The process that starts it holds an
exclusive lock on ``DATA_DIR/owner.lock`` and records the server in
``DATA_DIR/server.json``; any other process asking for the same data directory
(e.g. ``chunkweave search`` while ``chunkweave serve`` runs) attaches to that
server instead of starting a second one, and leaves it running when it is done.

Command line (used by the project's scripts)::

    python -m chunkweave.storage.local_weaviate path    # print where the binary lives
    python -m chunkweave.storage.local_weaviate build   # build it if missing
    python -m chunkweave.storage.local_weaviate start --data-dir DIR [--port N] [--grpc-port N]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

from platformdirs import user_cache_dir

from chunkweave.storage.config import WeaviateConfig

#: The Weaviate version we build and test against. v1.36+ need
#: github.com/weaviate/sroar >= v0.0.18, which the Go module proxy does not serve.
PINNED_VERSION = "1.35.2"
GO_PACKAGE = "github.com/weaviate/weaviate/cmd/weaviate-server"
BINARY_NAME = "weaviate-server"
#: CPU profile for the profile-guided build (see the module docstring).
PGO_PROFILE = Path(__file__).with_name("weaviate.pgo")
_PR_SET_PDEATHSIG = 1


class LocalWeaviateError(RuntimeError):
    """The local server could not be built, started or reached."""


def pgo_profile(guided: bool = True) -> Path | None:
    """Return the profile the build uses (``None``: unguided, none shipped, or PGO off).

    ``CHUNKWEAVE_WEAVIATE_PGO=off`` switches it off.
    """
    if not guided or os.environ.get("CHUNKWEAVE_WEAVIATE_PGO", "").lower() in (
        "off",
        "0",
        "false",
        "no",
    ):
        return None
    return PGO_PROFILE if PGO_PROFILE.is_file() else None


def binary_path(version: str = PINNED_VERSION, *, guided: bool = True) -> Path:
    """Where the server binary for ``version`` lives (it may not exist yet).

    ``guided=False`` names the plain build even where a profile is shipped.
    """
    return _binary_for(version, pgo_profile(guided))


def _binary_for(version: str, profile: Path | None) -> Path:
    # A profile-guided build lives in its own folder named after the profile's
    # digest, so a new profile gets a new build and never a stale one.
    flavour = f"v{version}"
    if profile is not None:
        flavour += f"-pgo-{hashlib.sha256(profile.read_bytes()).hexdigest()[:12]}"
    return Path(user_cache_dir("chunkweave")) / "weaviate" / flavour / BINARY_NAME


def ensure_binary(
    version: str = PINNED_VERSION,
    *,
    guided: bool = True,
    echo: Callable[[str], None] | None = None,
) -> Path:
    """Return the cached binary for ``version``, building it first if missing."""
    path = binary_path(version, guided=guided)
    if path.is_file():
        return path
    return build(version, guided=guided, echo=echo)


def build(
    version: str = PINNED_VERSION,
    *,
    guided: bool = True,
    echo: Callable[[str], None] | None = None,
) -> Path:
    """Build the server with ``go install`` into the cache and return its path.

    Profile-guided unless ``guided`` is false (see :func:`pgo_profile`). Builds into
    a temporary ``GOBIN`` next to the final path and renames the result into place,
    so a reader never sees a half-written binary. A lock file makes concurrent
    builders wait for the first one instead of racing. ``echo`` receives progress
    lines (the Go tool's output); default: stderr.
    """
    say = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    profile = pgo_profile(guided)
    final = _binary_for(version, profile)
    final.parent.mkdir(parents=True, exist_ok=True)
    go = shutil.which("go")
    if go is None:
        raise LocalWeaviateError(
            f"cannot build Weaviate v{version}: the Go toolchain ('go') is not on PATH; "
            f"install Go, or put a weaviate-server binary at {final}, "
            "or set CHUNKWEAVE_WEAVIATE__URL to use a running server"
        )
    with open(final.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if final.is_file():  # another process built it while we waited
            return final
        gobin = Path(tempfile.mkdtemp(prefix=".build-", dir=final.parent))
        try:
            pgo = [f"-pgo={profile}"] if profile is not None else []
            how = f", profile-guided by {profile.name}" if profile is not None else ""
            say(f"building Weaviate v{version} with go install{how} (first run only; minutes)...")
            env = {**os.environ, "CGO_ENABLED": "0", "GOBIN": str(gobin)}
            cmd = [go, "install", "-v", *pgo, f"{GO_PACKAGE}@v{version}"]
            proc = subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            assert proc.stdout is not None
            tail: list[str] = []
            for line in proc.stdout:
                tail = [*tail[-19:], line.rstrip()]
                say(line.rstrip())
            if proc.wait() != 0:
                raise LocalWeaviateError(
                    f"go install of Weaviate v{version} failed (exit {proc.returncode}):\n"
                    + "\n".join(tail)
                )
            os.replace(gobin / BINARY_NAME, final)
        finally:
            shutil.rmtree(gobin, ignore_errors=True)
    say(f"built {final}")
    return final


def _port_free(port: int) -> bool:
    # gRPC binds every interface, so the port must be free there as well as on
    # loopback. SO_REUSEADDR as Go's listeners set it: TIME_WAIT leftovers don't count.
    for host in ("127.0.0.1", ""):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                return False
    return True


def free_port(*, pair: bool = False, avoid: frozenset[int] = frozenset()) -> int:
    """Return a free TCP port (and the next one too when ``pair``), chosen by the kernel."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        wanted = (port, port + 1) if pair else (port,)
        if all(p not in avoid and p < 65535 and _port_free(p) for p in wanted):
            return port
    raise LocalWeaviateError("no free loopback port found")


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
        return all(_port_free(p) for p in (*wanted, self.profiling))


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


def die_with_parent() -> None:
    """``preexec_fn``: the kernel sends SIGTERM to the child when its parent dies.

    Runs in the child between fork and exec. An embedded server (Weaviate here, Redis
    and SeaweedFS in ``worker``) must not outlive the thread that started it: a killed
    test run or ``serve`` would otherwise leave orphans holding ports.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _is_ready(url: str) -> bool:
    with (
        contextlib.suppress(urllib.error.URLError, OSError),
        urllib.request.urlopen(f"{url}/v1/.well-known/ready", timeout=2) as resp,
    ):
        return bool(resp.status == 200)
    return False


def _terminate(proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class LocalWeaviate:
    """A real Weaviate server process on loopback; a context manager.

    ``data_dir`` holds its data (persistent across runs when reused). Ports default
    to those remembered in ``data_dir/ports.json`` when still free, else fresh free
    ports. ``start`` blocks until the server is ready or ``ready_timeout_s`` passes.
    ``extra_env`` adds or overrides server settings (e.g. ``QUERY_MAXIMUM_RESULTS``).
    """

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
        self._proc: subprocess.Popen[bytes] | None = None
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
    def pid(self) -> int | None:
        """Server process id while running."""
        return self._proc.pid if self._proc and self._proc.poll() is None else None

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
            f"within {self.ready_timeout_s:.0f}s; log {self.log_path}:\n{self._log_tail()}"
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
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                [
                    str(binary),
                    "--scheme",
                    "http",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.ports.http),
                ],
                env={**server_env(self.data_dir, self.ports), **self.extra_env},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,  # noqa: PLW1509 - only a prctl call
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise LocalWeaviateError(
                    f"Weaviate exited with code {self._proc.returncode} while starting; "
                    f"log {self.log_path}:\n{self._log_tail()}"
                )
            if _is_ready(self.url):
                return
            time.sleep(0.2)
        raise LocalWeaviateError(
            f"Weaviate not ready after {self.ready_timeout_s:.0f}s at {self.url}; "
            f"log {self.log_path}:\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 15) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return "(no log)"

    def stop(self, timeout_s: float = 20.0) -> None:
        """Stop the server: SIGTERM to its process group, SIGKILL after ``timeout_s``.

        An attached server (started by another process) is left running.
        """
        self.attached = False
        proc, self._proc = self._proc, None
        try:
            if proc is not None and proc.poll() is None:
                _terminate(proc, timeout_s)
        finally:
            self._release()

    def __enter__(self) -> LocalWeaviate:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@contextlib.contextmanager
def running(data_dir: str | Path, **kwargs: object) -> Iterator[LocalWeaviate]:
    """Start a :class:`LocalWeaviate` for the duration of a ``with`` block."""
    server = LocalWeaviate(data_dir, **kwargs)  # type: ignore[arg-type]
    with server:
        yield server


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m chunkweave.storage.local_weaviate", description=__doc__
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("path", help="print the cached binary's path")
    sub.add_parser("build", help="build the binary if missing")
    start = sub.add_parser("start", help="run a server in the foreground until SIGTERM/Ctrl-C")
    start.add_argument("--data-dir", required=True, type=Path)
    start.add_argument("--port", type=int, help="REST port (default: free port)")
    start.add_argument("--grpc-port", type=int, help="gRPC port (default: free port)")
    start.add_argument("--log", type=Path, help="log file (default: DATA_DIR/weaviate.log)")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "path":
            print(binary_path())
        elif args.cmd == "build":
            print(ensure_binary())
        else:
            ports = None
            if args.port or args.grpc_port:
                picked = Ports.pick()
                ports = Ports(
                    http=args.port or picked.http,
                    grpc=args.grpc_port or picked.grpc,
                    gossip=picked.gossip,
                    raft=picked.raft,
                    profiling=picked.profiling,
                )
            server = LocalWeaviate(args.data_dir, ports=ports, log_path=args.log)
            stop = {"now": False}

            def _on_signal(signum: int, frame: object) -> None:
                stop["now"] = True

            signal.signal(signal.SIGTERM, _on_signal)
            signal.signal(signal.SIGINT, _on_signal)
            with server:
                info = {"url": server.url, "grpc_port": server.ports.grpc, "pid": server.pid}
                print(json.dumps({**info, "log": str(server.log_path)}), flush=True)
                while not stop["now"] and server.pid is not None:
                    time.sleep(0.5)
    except LocalWeaviateError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())

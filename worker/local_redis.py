"""An embedded, real ``redis-server`` on loopback, for ``serve`` and for tests.

``LocalRedis`` starts the system ``redis-server`` (Debian's, or any on ``PATH``) on a
free loopback port with its data directory under the caller's directory, waits until
it answers ``PING`` and stops it on exit. Persistence is the append-only file, so an
embedded service keeps its queue and job state across restarts.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

import redis

from chunkweave.storage.local_weaviate import die_with_parent


class LocalServiceError(RuntimeError):
    """An embedded server could not be found or did not become ready."""


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find_redis_server() -> str:
    """Path of a ``redis-server`` binary, or :class:`LocalServiceError` saying what to install."""
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if found is None:
        raise LocalServiceError(
            "redis-server not found: install it (apt-get install redis-server) "
            "or set CHUNKWEAVE_REDIS_URL to an existing Redis"
        )
    return found


class ServerProcess:
    """Base for a context manager that owns one server process (``_proc``).

    Subclasses implement ``start`` (spawn into ``self._proc`` and wait until ready);
    leaving the ``with`` block stops the process: SIGTERM, then SIGKILL after 10 s.
    """

    _proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        """Start the server and wait until it is ready."""
        raise NotImplementedError

    def _wait_ready(
        self,
        ready: Callable[[], bool],
        *,
        name: str,
        log: Path,
        timeout_s: float,
        poll_s: float,
        tail_chars: int = 800,
    ) -> None:
        """Poll ``ready`` until it returns True; raise if the process exits or time runs out.

        An exit raises :class:`LocalServiceError` with the end of ``log``; a timeout
        stops the process first. ``ready`` returns False (never raises) while the
        server is still coming up.
        """
        assert self._proc is not None
        deadline = time.monotonic() + timeout_s
        while True:
            if self._proc.poll() is not None:
                tail = log.read_text(errors="replace")[-tail_chars:] if log.exists() else ""
                raise LocalServiceError(f"{name} exited with code {self._proc.returncode}: {tail}")
            if ready():
                return
            if time.monotonic() > deadline:
                self.stop()
                raise LocalServiceError(f"{name} not ready after {timeout_s:.0f}s (log: {log})")
            time.sleep(poll_s)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class LocalRedis(ServerProcess):
    """Context manager running one ``redis-server`` process.

    ``url`` is ``redis://127.0.0.1:<port>/0`` once entered. ``persist=False`` turns
    off every form of persistence (tests); otherwise an append-only file is written
    under ``data_dir``.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        persist: bool = True,
        start_timeout_s: float = 15.0,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.persist = persist
        self.start_timeout_s = start_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The ``redis://`` URL of the running server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> LocalRedis:
        """Start the server and block until it answers ``PING``."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [
            find_redis_server(),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--save", "",
            "--appendonly", "yes" if self.persist else "no",
            "--logfile", str(self.data_dir / "redis.log"),
        ]  # fmt: skip
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        try:
            self._wait_ready(
                answers,
                name=f"redis-server on port {self.port}",
                log=self.data_dir / "redis.log",
                timeout_s=self.start_timeout_s,
                poll_s=0.05,
            )
        finally:
            client.close()
        return self

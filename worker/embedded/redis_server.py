"""An embedded, real ``redis-server`` on loopback, for ``serve`` and for tests.

``LocalRedis`` starts the system ``redis-server`` (Debian's, or any on ``PATH``) on a
free loopback port with its data directory under the caller's directory, waits until
it answers ``PING`` and stops it on exit (process handling:
:mod:`chunkweave.storage.embedded.process`). Persistence is the append-only file, so
an embedded service keeps its queue and job state across restarts.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import redis

from chunkweave.storage.embedded.process import LocalServiceError, ServerProcess, free_port


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

    @property
    def url(self) -> str:
        """The ``redis://`` URL of the running server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> LocalRedis:
        """Start the server and block until it answers ``PING``."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.data_dir / "redis.log"
        args = [
            find_redis_server(),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--save", "",
            "--appendonly", "yes" if self.persist else "no",
            "--logfile", str(log),
        ]  # fmt: skip
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        try:
            self._start(
                args,
                answers,
                name=f"redis-server on port {self.port}",
                log=log,
                timeout_s=self.start_timeout_s,
                poll_s=0.05,
            )
        finally:
            client.close()
        return self

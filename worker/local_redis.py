"""An embedded, real ``redis-server`` on loopback, for ``serve`` and for tests.

``LocalRedis`` starts the system ``redis-server`` (Debian's, or any on ``PATH``) on a
free loopback port with its data directory under the caller's directory, waits until
it answers ``PING`` and stops it on exit (process handling:
:mod:`chunkweave.storage.server_process`). Persistence is the append-only file, so
an embedded service keeps its queue and job state across restarts.

While it runs, ``DATA_DIR/server.json`` (mode 0600) records its URL, so other
commands on the same data directory (``chunkweave status`` in a second terminal) use
it: :func:`running_redis`.

It binds 127.0.0.1 only and requires a per-run password, so another local user or
process cannot queue tasks or read job state. The password is in its config file
(mode 0600, never on a command line) and in :attr:`LocalRedis.url`, which callers
must treat as a secret (``Settings.redis_url`` is a ``SecretStr``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from pathlib import Path

import redis

from chunkweave.storage.server_process import LocalServiceError, ServerProcess, free_port


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


RECORD = "server.json"


def recorded_redis(data_dir: Path) -> str | None:
    """Return the URL (a secret) recorded in ``data_dir/server.json``, or None.

    A record left by a server that died names one that no longer answers: see
    :func:`running_redis`.
    """
    try:
        return str(json.loads((Path(data_dir) / RECORD).read_text())["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def redis_address(url: str) -> str:
    """``redis://host:port/db`` of a URL, without its password: safe to print."""
    return "redis://" + url.rpartition("@")[2].removeprefix("redis://")


def running_redis(data_dir: Path) -> str | None:
    """Return the URL of the embedded Redis serving ``data_dir`` right now, or None."""
    url = recorded_redis(data_dir)
    if url is None:
        return None
    client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
    try:
        return str(url) if client.ping() else None
    except redis.RedisError:
        return None  # a record left by a server that is gone
    finally:
        client.close()


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
        self.password = secrets.token_urlsafe(32)

    @property
    def url(self) -> str:
        """The ``redis://`` URL of the running server, with its password: a secret."""
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    @property
    def address(self) -> str:
        """Where the server listens, safe to print (no password)."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> LocalRedis:
        """Start the server and block until it answers ``PING``."""
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        log = self.data_dir / "redis.log"
        options = {
            "bind": "127.0.0.1",
            "port": str(self.port),
            "dir": str(self.data_dir),
            "protected-mode": "yes",
            "daemonize": "no",
            "save": '""',
            "appendonly": "yes" if self.persist else "no",
            "logfile": str(log),
            "requirepass": self.password,
        }
        conf = self.data_dir / "redis.conf"
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.writelines(f"{key} {value}\n" for key, value in options.items())
        args = [find_redis_server(), str(conf)]
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
        fd = os.open(self.data_dir / RECORD, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"url": self.url, "pid": self.pid}, fh)
        return self

    def stop(self) -> None:
        """Stop the server and remove its record."""
        with contextlib.suppress(OSError):
            (self.data_dir / RECORD).unlink()
        super().stop()

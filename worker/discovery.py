"""Finding the running service: the Redis and Weaviate a ``chunkweave serve`` started.

Every process that talks to the service (the CLI's ``enqueue``, ``status``,
``backfill``, ``watch``, ``worker``, ``api``, ``reindex`` and ``mcp``, the Python
``enqueue()``, the HTTP API and its ``/ui``) settles where Redis and Weaviate are
here, in :func:`discover`, by one rule per server:

- a URL in the settings (``CHUNKWEAVE_REDIS_URL``, ``CHUNKWEAVE_WEAVIATE__URL``) is
  used as it is (*configured*);
- otherwise the embedded server recorded on the data directory is used when it
  answers (*found*): ``DATA_DIR/redis/server.json`` for Redis and
  ``<weaviate data dir>/server.json`` for Weaviate (``CHUNKWEAVE_WEAVIATE__DATA_DIR``,
  default ``DATA_DIR/weaviate``), both mode 0600 with the server's password or API
  key, written by ``serve`` (or by another command that started the embedded
  Weaviate) and removed when it stops them;
- a record whose server does not answer (its process died without removing it) is
  *unreachable*, and nothing at all is *absent*.

:meth:`Discovery.line` says in one line what was found or is unreachable, and
:meth:`Discovery.missing` is the error for a server that is needed but not there:
the "run ``chunkweave serve``" hint only when no server was recorded, "unreachable"
when one was. Secrets are never in either.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

from chunkweave.storage.config import server_env
from chunkweave.worker.local_redis import RECORD, recorded_redis, redis_address
from chunkweave.worker.settings import Settings, get_settings

log = logging.getLogger(__name__)

State = Literal["configured", "found", "unreachable", "absent"]
Server = Literal["Redis", "Weaviate"]

#: The setting that names each server.
SETTING: dict[Server, str] = {
    "Redis": "CHUNKWEAVE_REDIS_URL",
    "Weaviate": "CHUNKWEAVE_WEAVIATE__URL",
}


@dataclass(frozen=True)
class Found:
    """Where one server is, and how that was learnt."""

    state: State
    #: Where it listens, safe to print (no password); None when absent.
    address: str | None = None
    #: The record looked at (found, unreachable, absent).
    record: Path | None = None


def redis_dir(settings: Settings) -> Path:
    """Return the data directory of the embedded Redis: ``DATA_DIR/redis``."""
    return Path(settings.data_dir) / "redis"


def weaviate_dir(settings: Settings) -> Path:
    """Return where the embedded Weaviate keeps its data (and its ``server.json``)."""
    configured = settings.weaviate.data_dir
    return Path(configured) if configured else Path(settings.data_dir) / "weaviate"


def _redis(settings: Settings) -> tuple[Settings, Found]:
    if settings.redis_url is not None and settings.redis_url.get_secret_value():
        return settings, Found("configured", redis_address(settings.redis_url.get_secret_value()))
    import redis

    record = redis_dir(settings) / RECORD
    url = recorded_redis(record.parent)
    if url is None:
        return settings, Found("absent", record=record)
    client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
    try:
        answers = bool(client.ping())
    except redis.RedisError:
        answers = False
    finally:
        client.close()
    if not answers:
        return settings, Found("unreachable", redis_address(url), record)
    attached = settings.model_copy(update={"redis_url": SecretStr(url)})
    return attached, Found("found", redis_address(url), record)


def _weaviate(settings: Settings) -> tuple[Settings, Found]:
    if settings.weaviate.url:
        return settings, Found("configured", settings.weaviate.url)
    from chunkweave.storage.stores import local_server_ready, recorded_local_server

    folder = weaviate_dir(settings)
    record = folder / "server.json"
    recorded = recorded_local_server(folder)
    if recorded is None:
        return settings, Found("absent", record=record)
    url, grpc_port, api_key = recorded
    if not local_server_ready(url):
        return settings, Found("unreachable", url, record)
    update = {"url": url, "grpc_port": grpc_port, "api_key": SecretStr(api_key)}
    weaviate = settings.weaviate.model_copy(update=update)
    return settings.model_copy(update={"weaviate": weaviate}), Found("found", url, record)


@dataclass(frozen=True)
class Discovery:
    """The settings pointed at the servers found, and what was found."""

    settings: Settings
    redis: Found
    weaviate: Found

    def line(self) -> str | None:
        """One line on what was found on the data directory or is unreachable, or None."""
        servers: tuple[tuple[Server, Found], ...] = (
            ("Redis", self.redis),
            ("Weaviate", self.weaviate),
        )
        found = [f"{name} ({f.address})" for name, f in servers if f.state == "found"]
        down = [f"{name} ({f.address})" for name, f in servers if f.state == "unreachable"]
        parts = []
        if found:
            parts.append("using the running `chunkweave serve`'s embedded " + " and ".join(found))
        if down:
            parts.append(
                "the embedded " + " and ".join(down) + " recorded there is unreachable "
                "(being restarted, or `chunkweave serve` stopped or crashed?)"
            )
        if not parts:
            return None
        return "; ".join(parts) + f" on {self.settings.data_dir}"

    def missing(self, name: Server) -> str:
        """Why ``name`` cannot be used, and what to do: for an error message."""
        found = self.redis if name == "Redis" else self.weaviate
        setting = SETTING[name]
        if found.state == "unreachable":
            return (
                f"{name} unreachable: the embedded {name} ({found.address}) recorded in "
                f"{found.record} is unreachable. A running `chunkweave serve` on "
                f"{self.settings.data_dir} restarts it within seconds: try again; if serve "
                f"stopped or crashed, start it again (or set {setting})"
            )
        if found.state == "configured":
            return f"{name} at {found.address} ({setting}) is unreachable"
        if found.state == "found":  # a caller skipped discover(): a programming error
            return (
                f"no {name} in these settings, though `chunkweave serve` runs one on "
                f"{self.settings.data_dir}: build them with chunkweave.worker.discovery.discover()"
            )
        example = " (e.g. redis://localhost:6379/0)" if name == "Redis" else ""
        return (
            f"no {name} configured: set {setting}{example}, or run `chunkweave serve` "
            f"(none runs on {self.settings.data_dir}), which starts an embedded {name}"
        )

    def export(self) -> None:
        """Put what was found into this process's environment; reload :func:`get_settings`.

        The Celery app and the child processes this one forks read it there.
        """
        if self.redis.state == "found" and self.settings.redis_url is not None:
            os.environ["CHUNKWEAVE_REDIS_URL"] = self.settings.redis_url.get_secret_value()
        if self.weaviate.state == "found":
            os.environ.update(server_env(self.settings.weaviate))
        get_settings.cache_clear()


def discover(settings: Settings | None = None, *, weaviate: bool = True) -> Discovery:
    """Point ``settings`` (default :func:`get_settings`) at the running service's servers.

    Configured URLs are kept; missing ones are filled from the records on the data
    directory when their servers answer (a ping, a readiness call: loopback, at most
    a second or two each). ``weaviate=False`` looks for Redis only (producers).
    """
    settings = settings or get_settings()
    settings, redis_found = _redis(settings)
    if weaviate:
        settings, weaviate_found = _weaviate(settings)
    else:
        weaviate_found = Found("configured" if settings.weaviate.url else "absent")
    found = Discovery(settings, redis_found, weaviate_found)
    if (line := found.line()) is not None:
        log.info("%s", line)
    return found


def missing_redis(settings: Settings) -> str:
    """Return the error for settings with no Redis URL: unreachable, or no service runs."""
    return Discovery(settings, _redis(settings)[1], Found("absent")).missing("Redis")

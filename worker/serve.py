"""``chunkweave serve``: workers, watcher and HTTP API as one service, one Ctrl-C.

Without ``CHUNKWEAVE_REDIS_URL`` an embedded ``redis-server`` is started (data under
``<data_dir>/redis``); without ``CHUNKWEAVE_WEAVIATE__URL`` the embedded Weaviate of
:func:`chunkweave.storage.stores.local_server` (data under ``<data_dir>/weaviate``).
Workers and the API run as child processes that inherit those URLs through the
environment; the watcher runs in this process.

Every part is supervised (:mod:`chunkweave.worker.supervise`): an embedded Redis or
Weaviate, the worker or the API process that dies is restarted with backoff on the same
port and data directory, with one line saying so; the watcher thread likewise. The API's
``/healthz`` reports each part (serve writes their state to ``supervise.health_file``).

Every child and embedded server runs in its own session, so a terminal's Ctrl-C
(SIGINT to the foreground process group) reaches only ``serve``, which then stops
everything in order with one line per step and a bounded wait each: the watcher (no
new jobs), the API, the workers (a warm shutdown: running tasks finish or are
redelivered later; 2 s only when Redis is gone, as they can finish nothing), then
Weaviate and Redis. A part already gone is not waited on.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, suppress
from pathlib import Path
from types import FrameType

from pydantic import SecretStr

from chunkweave.storage.config import server_env as weaviate_env
from chunkweave.worker import sources
from chunkweave.worker.celery_app import make_app
from chunkweave.worker.discovery import weaviate_dir
from chunkweave.worker.local_redis import LocalRedis
from chunkweave.worker.reconcile import start_reconciler
from chunkweave.worker.runtime import yield_cpu
from chunkweave.worker.settings import Settings
from chunkweave.worker.supervise import ChildPart, Part, ServerPart, State, Supervisor
from chunkweave.worker.supervise import write_health as _write_health

log = logging.getLogger(__name__)
#: Seconds the API and the embedded servers get to stop before SIGKILL.
_STOP_GRACE_S = 10.0
#: Seconds a worker gets to stop when Redis is gone (it can neither finish nor ack).
_NO_REDIS_GRACE_S = 2.0
#: A watcher that raised is restarted after this many seconds, doubling up to the second.
_WATCH_BACKOFF_S = (2.0, 60.0)


def _child_env(settings: Settings) -> dict[str, str]:
    env = dict(os.environ)
    if settings.redis_url is not None:
        env["CHUNKWEAVE_REDIS_URL"] = settings.redis_url.get_secret_value()
    if settings.weaviate.url is not None:
        env.update(weaviate_env(settings.weaviate))
    env["CHUNKWEAVE_SOURCES__ROOTS"] = json.dumps([str(p) for p in settings.sources.roots])
    env["CHUNKWEAVE_SOURCES__BUCKETS"] = json.dumps(list(settings.sources.buckets))
    if settings.supervise.health_file is not None:
        env["CHUNKWEAVE_SUPERVISE__HEALTH_FILE"] = str(settings.supervise.health_file)
    return env


def _redis_answers(url: str) -> bool:
    """Whether the Redis at ``url`` answers a PING within half a second."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def worker_command(settings: Settings, concurrency: int, queues: str | None = None) -> list[str]:
    """Return the ``celery worker`` command line for this project's app."""
    return [
        sys.executable, "-m", "celery", "-A", "chunkweave.worker.celery_app", "worker",
        "--pool", "prefork", "--concurrency", str(concurrency),
        "-Q", queues or settings.queue, "--loglevel", "INFO",
        "--without-gossip", "--without-mingle",
    ]  # fmt: skip


def api_command(host: str, port: int) -> list[str]:
    """Return the uvicorn command line serving ``chunkweave.worker.api``."""
    return [
        sys.executable, "-m", "uvicorn", "chunkweave.worker.api:app_factory", "--factory",
        "--host", host, "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip


def _forget_dead_serves(folder: Path) -> None:
    """Remove the health records of ``serve`` processes that died without removing them."""
    for record in folder.glob("health-*.json"):
        pid = record.stem.removeprefix("health-")
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            record.unlink(missing_ok=True)
        except OSError:
            pass  # someone else's process: alive


class Service:
    """Everything ``serve`` runs; :meth:`run` blocks until stopped."""

    def __init__(
        self,
        settings: Settings,
        *,
        watch: str | None,
        workers: int,
        api_port: int | None,
        host: str = "127.0.0.1",
        polling: bool = False,
        say: Callable[[str], None] = print,
    ) -> None:
        self.settings = settings
        self.watch = watch
        self.workers = workers
        self.api_port = api_port
        self.host = host
        self.polling = polling
        self.say = say
        self.stop = threading.Event()
        self.supervisor = Supervisor(settings.supervise, self.stop, say)
        #: The watcher thread's state, for ``/healthz`` (None: nothing watched).
        self.watcher_state: State | None = None

    def _embedded(self, settings: Settings) -> Settings:
        data = Path(settings.data_dir)
        if settings.redis_url is None or not settings.redis_url.get_secret_value():
            server = LocalRedis(data / "redis").start()
            part = ServerPart("redis", server, title="embedded Redis", restart=server.start)
            self.supervisor.add(part)
            settings = settings.model_copy(update={"redis_url": SecretStr(server.url)})
            self.say(f"started embedded Redis on {server.address} (data: {data / 'redis'})")
        if settings.weaviate.url is None:
            from chunkweave.storage.stores import local_server

            folder = weaviate_dir(settings)  # where other commands look for it
            weaviate = local_server(folder).start()
            if not weaviate.attached:  # one another process started is its to look after
                part = ServerPart(
                    "weaviate", weaviate, title="embedded Weaviate", restart=weaviate.respawn
                )
                self.supervisor.add(part)
            settings = settings.model_copy(update={"weaviate": weaviate.config(settings.weaviate)})
            how = "using running" if weaviate.attached else "started"
            self.say(f"{how} embedded Weaviate on {weaviate.url} (data: {folder})")
        return settings

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.say(f"received {signal.Signals(signum).name}: shutting down")
        self.stop.set()

    def _grace(self, part: Part) -> float:
        """Seconds ``part`` gets to stop: a worker's own grace, or 2 s once Redis is gone."""
        if part.name != "worker":
            return _STOP_GRACE_S
        redis = self.supervisor.part("redis")
        if redis is not None:
            gone = not redis.alive() or redis.state != "ok"
        else:  # configured: the worker runs only with a URL
            url = self.settings.redis_url
            gone = url is None or not _redis_answers(url.get_secret_value())
        return _NO_REDIS_GRACE_S if gone else self.settings.supervise.stop_grace_s

    def run(self) -> int:
        """Start everything, block until a signal or a part gives up; return an exit code.

        Raises ``ValueError`` before anything starts when a watched source would have no
        usable tenant (a multi-tenant store needs ``CHUNKWEAVE_WEAVIATE__TENANT``).
        """
        if self.watch:
            from chunkweave.worker.enqueue import check_job_tenant

            try:
                check_job_tenant(None, self.settings)
            except ValueError as err:
                raise ValueError(
                    f"cannot watch {self.watch}: {err} (CHUNKWEAVE_WEAVIATE__TENANT names the "
                    "tenant a watched folder's documents go to)"
                ) from err
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        code = 0
        with ExitStack() as stack:
            stack.callback(lambda: [signal.signal(s, h) for s, h in previous.items()])
            # Where the API's /healthz reads what this process supervises.
            health = Path(self.settings.data_dir) / "serve" / f"health-{os.getpid()}.json"
            health.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _forget_dead_serves(health.parent)
            stack.callback(lambda: health.unlink(missing_ok=True))
            stack.callback(self.supervisor.close, self._grace)
            supervise = self.settings.supervise.model_copy(update={"health_file": health})
            settings = self.settings.model_copy(update={"supervise": supervise})
            self.settings = settings = self._embedded(settings)
            if self.watch:
                # The API may name what the service watches (and the uploads folder).
                allowed = sources.scheme_for(self.watch).allowing(self.watch, settings.sources)
                settings = settings.model_copy(update={"sources": allowed})
            env = _child_env(settings)
            reconciler = start_reconciler(settings, make_app(settings), close_app=True)
            stack.callback(reconciler.stop)  # requeues what dead parts held
            self.supervisor.add(ChildPart("worker", worker_command(settings, self.workers), env))
            if self.api_port is not None:
                self.supervisor.add(ChildPart("api", api_command(self.host, self.api_port), env))
                docs = "docs at /docs" if not settings.api_guarded else "token required"
                self.say(f"HTTP API on http://{self.host}:{self.api_port} ({docs})")
            watcher = self._start_watcher(settings, stack) if self.watch else None
            self.say(f"{self.workers} worker process(es) on queue {settings.queue!r}; Ctrl-C stops")
            while not self.stop.wait(0.5):
                with suppress(OSError):  # a full disk must not stop the service
                    _write_health(health, self.supervisor.health(self.watcher_state, self.workers))
                if self.supervisor.gave_up is not None:
                    self.say(f"{self.supervisor.gave_up} would not start: stopping the service")
                    code = 1
                    break
                if watcher is not None and not watcher.is_alive():
                    self.say("watcher exited unexpectedly: stopping the service")
                    code = 1
                    break
            self.stop.set()
        return code

    def _start_watcher(self, settings: Settings, stack: ExitStack) -> threading.Thread:
        from chunkweave.worker.enqueue import Enqueuer

        enq = Enqueuer(settings)
        stack.callback(enq.close)
        assert self.watch is not None
        watcher = sources.watcher(self.watch, enq, polling=self.polling)

        def target(stop: threading.Event) -> None:
            yield_cpu(settings)  # this thread only (Linux): the workers keep their priority
            backoff = _WATCH_BACKOFF_S[0]
            while not stop.is_set():
                started = time.monotonic()
                self.watcher_state = "ok"
                try:
                    watcher.run(stop)
                    return
                except Exception as err:  # noqa: BLE001 - no one file stops the service
                    if time.monotonic() - started > 60:
                        backoff = _WATCH_BACKOFF_S[0]  # it had run a while: start over
                    self.watcher_state = "restarting"
                    self.say(
                        f"watcher stopped: {type(err).__name__}: {err}; "
                        f"restarting it in {backoff:.0f}s"
                    )
                    stop.wait(backoff)
                    backoff = min(backoff * 2, _WATCH_BACKOFF_S[1])

        thread = threading.Thread(target=target, args=(self.stop,), name="watcher", daemon=True)
        thread.start()
        # Bounded: it waits on the stop event, or on a Redis call that fails at once.
        stack.callback(lambda: thread.join(timeout=5))
        stack.callback(self.say, "stopping the watcher")
        self.say(f"watching {self.watch}")
        return thread

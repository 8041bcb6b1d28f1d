"""``chunkweave serve``: workers, watcher and HTTP API as one service, one Ctrl-C.

Without ``CHUNKWEAVE_REDIS_URL`` an embedded ``redis-server`` is started (data under
``<data_dir>/redis``); without ``CHUNKWEAVE_WEAVIATE__URL`` the embedded Weaviate of
:func:`chunkweave.storage.stores.local_server` (data under ``<data_dir>/weaviate``).
Workers and the API run as child processes that inherit those URLs through the
environment; the watcher runs in this process.

Every child and embedded server runs in its own session, so a terminal's Ctrl-C
(SIGINT to the foreground process group) reaches only ``serve``, which then stops
everything in order with one line per step and a bounded wait each: the watcher (no
new jobs), the API, the workers (a warm shutdown: running tasks finish or are
redelivered later), then Weaviate and Redis. Any child dying stops the service too.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from types import FrameType

from pydantic import SecretStr

from chunkweave.storage.config import server_env as weaviate_env
from chunkweave.storage.server_process import die_with_parent
from chunkweave.worker import sources
from chunkweave.worker.celery_app import make_app
from chunkweave.worker.discovery import weaviate_dir
from chunkweave.worker.local_redis import LocalRedis
from chunkweave.worker.reconcile import start_reconciler
from chunkweave.worker.runtime import yield_cpu
from chunkweave.worker.settings import Settings

log = logging.getLogger(__name__)
_STOP_GRACE_S = 30.0
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
    return env


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
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []

    def _embedded(self, stack: ExitStack) -> Settings:
        settings = self.settings
        data = Path(settings.data_dir)
        if settings.redis_url is None or not settings.redis_url.get_secret_value():
            server = stack.enter_context(LocalRedis(data / "redis"))
            stack.callback(self.say, "stopping the embedded Redis")
            settings = settings.model_copy(update={"redis_url": SecretStr(server.url)})
            self.say(f"started embedded Redis on {server.address} (data: {data / 'redis'})")
        if settings.weaviate.url is None:
            from chunkweave.storage.stores import local_server

            folder = weaviate_dir(settings)  # where other commands look for it
            weaviate = stack.enter_context(local_server(folder))
            if not weaviate.attached:
                stack.callback(self.say, "stopping the embedded Weaviate")
            settings = settings.model_copy(update={"weaviate": weaviate.config(settings.weaviate)})
            how = "using running" if weaviate.attached else "started"
            self.say(f"{how} embedded Weaviate on {weaviate.url} (data: {folder})")
        return settings

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> None:
        # Its own session: a terminal's Ctrl-C reaches serve alone, which stops things in
        # order. Should serve die without doing so (killed, crashed), the kernel sends
        # the child SIGTERM: nothing is left running behind it.
        proc = subprocess.Popen(
            args,
            env=env,
            start_new_session=True,
            preexec_fn=die_with_parent,  # noqa: PLW1509 - only a prctl call
        )
        self.children.append((name, proc))

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.say(f"received {signal.Signals(signum).name}: shutting down")
        self.stop.set()

    def run(self) -> int:
        """Start everything, block until a signal or a child exits; return an exit code.

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
            settings = self._embedded(stack)
            if self.watch:
                # The API may name what the service watches (and the uploads folder).
                allowed = sources.scheme_for(self.watch).allowing(self.watch, settings.sources)
                settings = settings.model_copy(update={"sources": allowed})
            env = _child_env(settings)
            reconciler = start_reconciler(settings, make_app(settings), close_app=True)
            stack.callback(reconciler.stop)  # requeues what dead parts held
            stack.callback(self._stop_children)
            self._spawn("worker", worker_command(settings, self.workers), env)
            if self.api_port is not None:
                self._spawn("api", api_command(self.host, self.api_port), env)
                docs = "docs at /docs" if not settings.api_guarded else "token required"
                self.say(f"HTTP API on http://{self.host}:{self.api_port} ({docs})")
            watcher = self._start_watcher(settings, stack) if self.watch else None
            self.say(f"{self.workers} worker process(es) on queue {settings.queue!r}; Ctrl-C stops")
            while not self.stop.wait(0.5):
                dead = [(n, p) for n, p in self.children if p.poll() is not None]
                if dead or (watcher is not None and not watcher.is_alive()):
                    what = dead[0][0] if dead else "watcher"
                    self.say(f"{what} exited unexpectedly: stopping the service")
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
                try:
                    watcher.run(stop)
                    return
                except Exception as err:  # noqa: BLE001 - no one file stops the service
                    if time.monotonic() - started > 60:
                        backoff = _WATCH_BACKOFF_S[0]  # it had run a while: start over
                    self.say(
                        f"watcher stopped: {type(err).__name__}: {err}; "
                        f"restarting it in {backoff:.0f}s"
                    )
                    stop.wait(backoff)
                    backoff = min(backoff * 2, _WATCH_BACKOFF_S[1])

        thread = threading.Thread(target=target, args=(self.stop,), name="watcher", daemon=True)
        thread.start()
        stack.callback(lambda: thread.join(timeout=10))
        stack.callback(self.say, "stopping the watcher")
        self.say(f"watching {self.watch}")
        return thread

    def _stop_children(self) -> None:
        # API first (stop taking jobs), then workers: SIGTERM is Celery's warm shutdown.
        for name, proc in reversed(self.children):
            if proc.poll() is not None:
                continue
            self.say(f"stopping the {name} (up to {_STOP_GRACE_S:.0f}s)")
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.say(f"the {name} did not stop in {_STOP_GRACE_S:.0f}s: killing it")
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

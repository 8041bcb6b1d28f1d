"""What ``chunkweave serve`` started, kept running: restarts with backoff, health, stops.

A :class:`Part` is one thing serve started: the embedded Redis or Weaviate
(:class:`ServerPart`) or a child process, the workers or the API (:class:`ChildPart`).
:class:`Supervisor` watches each in a thread of its own. A part that dies is restarted
on the same port and data directory after a delay that doubles per restart
(``SuperviseConfig.backoff_s`` up to ``backoff_max_s``, back to the first once the part
has run ``healthy_s``), with one line saying so::

    serve: redis exited (signal 9); restarting in 1 s
    serve: redis is back (1.2 s after it exited)

After ``max_failed_restarts`` restarts in a row that did not come up it gives up and
:attr:`Supervisor.gave_up` names the part: serve then stops with an error.

Each watching thread lives until :meth:`Supervisor.close` has stopped every part: a
child started with ``PR_SET_PDEATHSIG`` is signalled when the *thread* that started
it ends, not the process, so a thread that restarted a part must outlive it.

:meth:`Supervisor.health` is what serve writes to ``SuperviseConfig.health_file`` for
its API's ``/healthz`` (:mod:`chunkweave.worker.api.health`): states, no addresses.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from chunkweave.storage.server_process import ServerProcess, die_with_parent
from chunkweave.worker.settings import SuperviseConfig

State = Literal["ok", "restarting", "down"]
#: Seconds between two looks at a part that runs.
_POLL_S = 0.2


def exit_reason(code: int | None) -> str:
    """``signal 9`` or ``code 1`` for a :attr:`subprocess.Popen.returncode`."""
    if code is None:
        return "running"
    if code < 0:
        return f"signal {-code}"
    return f"code {code}"


class Part:
    """One thing serve started and keeps running."""

    def __init__(self, name: str, title: str | None = None) -> None:
        self.name = name
        #: How "stopping the ..." names it.
        self.title = title or name
        self.state: State = "ok"
        #: ``time.monotonic()`` when it last came up.
        self.up_since = time.monotonic()

    def alive(self) -> bool:
        """Whether its process runs."""
        raise NotImplementedError

    def reason(self) -> str:
        """How its process ended (``signal 9``, ``code 1``)."""
        raise NotImplementedError

    def restart(self) -> None:
        """Start it again as it was (same ports, data, command); raise if it does not come up."""
        raise NotImplementedError

    def stop(self, grace_s: float) -> None:
        """Stop it: SIGTERM to its process group, SIGKILL after ``grace_s``. Idempotent."""
        raise NotImplementedError


class ChildPart(Part):
    """A child process (workers, API) in its own session, dying with serve."""

    def __init__(self, name: str, args: list[str], env: dict[str, str]) -> None:
        super().__init__(name)
        self.args = args
        self.env = env
        self.proc = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        # Its own session: a terminal's Ctrl-C reaches serve alone, which stops things in
        # order. Should serve die without doing so (killed, crashed), the kernel sends
        # the child SIGTERM: nothing is left running behind it.
        return subprocess.Popen(
            self.args,
            env=self.env,
            start_new_session=True,
            preexec_fn=die_with_parent,  # noqa: PLW1509 - only a prctl call
        )

    def alive(self) -> bool:
        """Whether the process runs."""
        return self.proc.poll() is None

    def reason(self) -> str:
        """How the process ended."""
        return exit_reason(self.proc.poll())

    def restart(self) -> None:
        """Start the same command again (it is up once started: no readiness to wait for).

        What the dead process left in its group (a worker's pool) is killed first, so
        no task runs twice at once.
        """
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = self._spawn()

    def children(self) -> int:
        """How many processes it has forked that still run (a worker's pool), -1 if unknown."""
        pid = self.proc.pid
        try:
            return len(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
        except OSError:
            return -1

    def stop(self, grace_s: float) -> None:
        """SIGTERM to its group, SIGKILL after ``grace_s``."""
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


class ServerPart(Part):
    """An embedded server (:class:`ServerProcess`): restarted on its ports and data dir."""

    def __init__(
        self,
        name: str,
        server: ServerProcess,
        *,
        title: str,
        restart: Callable[[], object],
    ) -> None:
        super().__init__(name, title)
        self.server = server
        self._restart = restart

    def alive(self) -> bool:
        """Whether the server process runs."""
        return self.server.pid is not None

    def reason(self) -> str:
        """How the server process ended."""
        code = self.server.returncode
        return exit_reason(code) if code is not None else "not running"

    def restart(self) -> None:
        """Start the server again and wait until it answers."""
        self._restart()

    def stop(self, grace_s: float) -> None:
        """Stop the server (its own bounded SIGTERM-then-SIGKILL), removing its record."""
        self.server.stop_timeout_s = min(self.server.stop_timeout_s, grace_s)
        self.server.stop()


class Supervisor:
    """Watches parts in threads and restarts those that die; see the module docstring."""

    def __init__(
        self, config: SuperviseConfig, stop: threading.Event, say: Callable[[str], None]
    ) -> None:
        self.config = config
        self.stop = stop
        self.say = say
        self.parts: list[Part] = []
        #: The name of a part that would not come up again (serve then stops).
        self.gave_up: str | None = None
        self._done = threading.Event()
        self._threads: list[threading.Thread] = []

    def add(self, part: Part) -> Part:
        """Supervise ``part`` from now on (it runs already)."""
        self.parts.append(part)
        thread = threading.Thread(target=self._watch, args=(part,), name=f"supervise-{part.name}")
        thread.daemon = True
        thread.start()
        self._threads.append(thread)
        return part

    def part(self, name: str) -> Part | None:
        """Return the part called ``name``, if any."""
        return next((p for p in self.parts if p.name == name), None)

    def _watch(self, part: Part) -> None:
        cfg = self.config
        delay, failed = cfg.backoff_s, 0
        while not self.stop.is_set():
            if part.alive():
                if time.monotonic() - part.up_since >= cfg.healthy_s:
                    delay, failed = cfg.backoff_s, 0  # it ran a while: start over
                self.stop.wait(_POLL_S)
                continue
            part.state = "restarting"
            lost = time.monotonic()
            self.say(f"serve: {part.name} exited ({part.reason()}); restarting in {delay:g} s")
            if self.stop.wait(delay):
                break
            try:
                part.restart()
            except Exception as err:  # noqa: BLE001 - any failure to start is retried
                failed += 1
                first = str(err).splitlines()[0] if str(err) else type(err).__name__
                self.say(f"serve: {part.name} did not come back: {first}")
                if failed >= cfg.max_failed_restarts:
                    part.state = "down"
                    self.gave_up = part.name
                    self.say(f"serve: giving up on {part.name} after {failed} failed restarts")
                    break
            else:
                failed = 0
                part.state, part.up_since = "ok", time.monotonic()
                took = part.up_since - lost
                back = "started again" if isinstance(part, ChildPart) else "is back"
                self.say(f"serve: {part.name} {back} ({took:.1f} s after it exited)")
                if self.stop.is_set():  # restarted while serve was stopping: stop it again
                    part.stop(grace_s=2.0)
            delay = min(delay * 2, cfg.backoff_max_s)
        self._done.wait()  # outlive what this thread started (PR_SET_PDEATHSIG)

    def health(self, watcher: State | None, expected_workers: int) -> dict[str, object]:
        """Each part's state for ``/healthz``: ``{"parts": {name: {"status": ...}}, "at": t}``."""
        parts: dict[str, dict[str, object]] = {}
        for part in self.parts:
            status = part.state
            if status == "ok" and not part.alive():
                status = "down"  # died a moment ago: its thread has not seen it yet
            entry: dict[str, object] = {"status": status}
            if isinstance(part, ChildPart) and part.name == "worker":
                pool = part.children() if part.alive() else 0
                alive = pool if pool >= 0 else (expected_workers if part.alive() else 0)
                entry.update(alive=alive, expected=expected_workers)
                if entry["status"] == "ok" and alive == 0:
                    entry["status"] = "starting"
            parts[part.name] = entry
        if watcher is not None:
            parts["watcher"] = {"status": watcher}
        return {"at": time.time(), "parts": parts}

    def close(self, grace_s: Callable[[Part], float]) -> None:
        """Stop every part, last added first, each within ``grace_s(part)`` seconds.

        A part already gone is not waited on. Then the watching threads end.
        """
        self.stop.set()
        try:
            for part in reversed(self.parts):
                if not part.alive():
                    self.say(f"the {part.title} is already gone: not waiting on it")
                    part.stop(0.1)  # nothing to wait for; a server's record is removed
                    continue
                grace = grace_s(part)
                self.say(f"stopping the {part.title} (up to {grace:g} s)")
                part.stop(grace)
        finally:
            self._done.set()
            deadline = time.monotonic() + 5
            for thread in self._threads:
                thread.join(timeout=max(0.1, deadline - time.monotonic()))


def write_health(path: Path, health: dict[str, object]) -> None:
    """Replace ``path`` with ``health`` as JSON (atomically: the API never reads half)."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(health, fh)
    os.replace(tmp, path)

"""What every embedded server shares: free ports, a child in its own session, bounded waits.

A server starts in its own session (its own process group, so a stop reaches every
process it forked) and receives SIGTERM from the kernel if the process that started
it dies (``PR_SET_PDEATHSIG``): a killed test run or ``serve`` leaves no orphans
holding ports. Readiness is polled with a deadline; a stop is SIGTERM to the group,
then SIGKILL after a bounded wait.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from chunkweave.errors import ChunkweaveError

_PR_SET_PDEATHSIG = 1


class LocalServiceError(ChunkweaveError, RuntimeError):
    """An embedded server could not be found, started or reached."""


def port_free(port: int) -> bool:
    """Whether ``port`` can be bound on loopback and on every interface right now.

    gRPC servers bind every interface, so loopback alone is not enough. SO_REUSEADDR
    as Go's and Redis's listeners set it: TIME_WAIT leftovers don't count.
    """
    for host in ("127.0.0.1", ""):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                return False
    return True


def free_port(*, pair: bool = False, avoid: frozenset[int] = frozenset()) -> int:
    """Return a free TCP port (and the next one too when ``pair``), chosen by the kernel.

    Free a moment ago, not reserved: a caller choosing several ports passes the ones
    it took in ``avoid``.
    """
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        wanted = (port, port + 1) if pair else (port,)
        if all(p not in avoid and p < 65535 and port_free(p) for p in wanted):
            return port
    raise LocalServiceError("no free loopback port found")


def die_with_parent() -> None:
    """``preexec_fn``: the kernel sends SIGTERM to the child when its parent dies.

    Runs in the child between fork and exec (only a ``prctl`` call).
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def spawn(
    args: Sequence[str], *, log: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start ``args`` in its own session, stdout and stderr appended to ``log``.

    The child dies with this process (:func:`die_with_parent`); ``env`` ``None``
    inherits this process's environment.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(
            list(args),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent,  # noqa: PLW1509 - only a prctl call
        )


def log_tail(log: Path, lines: int = 15) -> str:
    """Return the last ``lines`` lines of ``log`` (``(no log)`` when it cannot be read)."""
    with contextlib.suppress(OSError):
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    return "(no log)"


def wait_ready(
    proc: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    *,
    name: str,
    log: Path,
    timeout_s: float,
    poll_s: float = 0.2,
    error: type[LocalServiceError] = LocalServiceError,
) -> None:
    """Poll ``ready`` until it returns True, at most ``timeout_s`` seconds.

    ``ready`` returns False (never raises) while the server is still coming up. Raises
    ``error`` with the tail of ``log`` if the process exits first (``"<name> exited
    with code N"``) or time runs out (``"<name> not ready after"``); the caller stops
    the process.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise error(
                f"{name} exited with code {proc.returncode} while starting; "
                f"log {log}:\n{log_tail(log)}"
            )
        if ready():
            return
        if time.monotonic() > deadline:
            raise error(f"{name} not ready after {timeout_s:.0f}s; log {log}:\n{log_tail(log)}")
        time.sleep(poll_s)


def terminate(proc: subprocess.Popen[bytes], timeout_s: float = 10.0) -> None:
    """Stop ``proc``'s process group: SIGTERM, then SIGKILL after ``timeout_s``."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout_s)


class ServerProcess:
    """Base for a context manager that owns one server process.

    Subclasses implement :meth:`start` with :meth:`_start`; leaving the ``with``
    block calls :meth:`stop`.
    """

    _proc: subprocess.Popen[bytes] | None = None
    #: Seconds :meth:`stop` waits after SIGTERM before SIGKILL.
    stop_timeout_s: float = 10.0
    #: What a failed start raises.
    error: type[LocalServiceError] = LocalServiceError

    @property
    def pid(self) -> int | None:
        """Server process id while it runs."""
        return self._proc.pid if self._proc and self._proc.poll() is None else None

    @property
    def returncode(self) -> int | None:
        """How its process ended (negative: the signal); None while it runs or when stopped."""
        return self._proc.poll() if self._proc is not None else None

    def start(self) -> Self:
        """Start the server and wait until it is ready."""
        raise NotImplementedError

    def _start(
        self,
        args: Sequence[str],
        ready: Callable[[], bool],
        *,
        name: str,
        log: Path,
        timeout_s: float,
        env: dict[str, str] | None = None,
        poll_s: float = 0.2,
    ) -> None:
        """Spawn ``args`` (:func:`spawn`) and wait until ``ready`` (:func:`wait_ready`).

        A server that does not become ready is stopped before the error propagates.
        """
        self._proc = spawn(args, log=log, env=env)
        try:
            wait_ready(
                self._proc,
                ready,
                name=name,
                log=log,
                timeout_s=timeout_s,
                poll_s=poll_s,
                error=self.error,
            )
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server (SIGTERM to its group, SIGKILL after :attr:`stop_timeout_s`)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate(proc, self.stop_timeout_s)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

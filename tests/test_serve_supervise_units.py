"""The supervisor's rules on stand-in parts: backoff doubles, is bounded, resets, gives up.

Pure logic (no process): what a real part does when killed is in
``test_serve_supervise.py``.
"""

from __future__ import annotations

import re
import threading
import time

from chunkweave.worker.settings import SuperviseConfig
from chunkweave.worker.supervise import Part, Supervisor, exit_reason
from tests.fixtures_services import wait_for


class _Flaky(Part):
    """Dies whenever told to; ``restart`` fails the first ``failures`` times."""

    def __init__(self, failures: int = 0) -> None:
        super().__init__("thing", "embedded Thing")
        self.up = True
        self.failures = failures
        self.restarts = 0
        self.stopped_with: list[float] = []

    def alive(self) -> bool:
        return self.up

    def reason(self) -> str:
        return exit_reason(-9)

    def restart(self) -> None:
        self.restarts += 1
        if self.failures:
            self.failures -= 1
            raise RuntimeError("port taken\nlog tail line")
        self.up = True

    def stop(self, grace_s: float) -> None:
        self.stopped_with.append(grace_s)
        self.up = False


def _delays(said: list[str]) -> list[float]:
    return [float(m) for line in said for m in re.findall(r"restarting in ([\d.]+) s", line)]


def test_backoff_doubles_up_to_its_bound_and_resets_after_a_healthy_run():
    cfg = SuperviseConfig(backoff_s=0.05, backoff_max_s=0.2, healthy_s=0.6)
    said: list[str] = []
    sup = Supervisor(cfg, threading.Event(), said.append)
    part = _Flaky()
    sup.add(part)
    for n in range(1, 5):  # dies again as soon as it is back
        part.up = False
        wait_for(lambda n=n: part.restarts == n, timeout_s=5, what=f"restart {n}")
    assert _delays(said) == [0.05, 0.1, 0.2, 0.2]
    time.sleep(0.9)  # healthy for longer than healthy_s: the next wait is the first again
    part.up = False
    wait_for(lambda: part.restarts == 5, timeout_s=5, what="restart after a healthy run")
    assert _delays(said)[-1] == 0.05
    assert said[0] == "serve: thing exited (signal 9); restarting in 0.05 s"
    assert any(line.startswith("serve: thing is back (") for line in said), said
    sup.close(lambda _p: 1.0)


def test_it_gives_up_after_restarts_that_do_not_come_up():
    cfg = SuperviseConfig(backoff_s=0.01, backoff_max_s=0.02, max_failed_restarts=3)
    said: list[str] = []
    sup = Supervisor(cfg, threading.Event(), said.append)
    part = _Flaky(failures=10)
    sup.add(part)
    part.up = False
    wait_for(lambda: sup.gave_up == "thing", timeout_s=5, what="giving up")
    assert part.restarts == 3 and part.state == "down"
    # One line per failure, the error's first line only.
    assert said.count("serve: thing did not come back: port taken") == 3, said
    assert sup.health(None, 1)["parts"] == {"thing": {"status": "down"}}
    sup.close(lambda _p: 1.0)


def test_close_waits_on_no_part_that_is_already_gone():
    cfg = SuperviseConfig(backoff_s=60)  # a dead part stays dead until close
    said: list[str] = []
    sup = Supervisor(cfg, threading.Event(), said.append)
    gone, running = _Flaky(), _Flaky()
    running.name, running.title = "other", "other"
    sup.add(gone)
    sup.add(running)
    gone.up = False
    wait_for(lambda: gone.state == "restarting", timeout_s=5, what="the death seen")
    started = time.monotonic()
    sup.close(lambda _p: 7.0)
    assert time.monotonic() - started < 2  # no 60 s backoff, no grace for the gone part
    assert running.stopped_with == [7.0] and gone.stopped_with == [0.1]
    assert "the embedded Thing is already gone: not waiting on it" in said
    assert "stopping the other (up to 7 s)" in said
    assert gone.restarts == 0

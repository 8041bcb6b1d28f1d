"""The embedded service under faults (issue 37): what is lost, duplicated or stuck, how long.

Runs ``chunkweave serve`` as a subprocess (its own embedded Redis and Weaviate in a
temporary data directory, the ``none`` embedder unless ``--embedder`` says otherwise)
on small documents of the shared corpus, and prints one table:

    scenario | documents | ok | failed | lost | duplicated | stuck | recover_s | restarted by

Scenarios, each on fresh copies of the documents (new document ids), the fault injected
once the first document of the job is stored:

- ``pool-child``: one busy pool child of the worker SIGKILLed;
- ``worker-group``: the worker's whole process group SIGKILLed (main process and pool);
- ``redis``: the embedded Redis SIGKILLed;
- ``weaviate``: the embedded Weaviate SIGKILLed (mid-upsert);
- ``uploads``: 24 parallel uploads of one file under one ``document_id`` (HTTP);
- ``fanout``: two 18-page PDFs fanned out (serve restarted with ``fanout`` set to
  parts of 2 pages and slices of 8 chunks), the worker's process group SIGKILLed while
  it holds a step of one (a page-range part, the join, a slice or the commit).

A part that is killed is left for ``serve`` to bring back; if nothing has brought it
back after ``--grace`` seconds the bench restarts it itself (same port, data and
password) and says so in the last column, as it restarts a ``serve`` that exited.
A scenario whose job is not finished within ``--timeout`` seconds counts its unfinished
documents as stuck (it is reported, never a crash).

Columns: ``ok``: the job says done and the ledger says ``ok`` with as many chunks as
Weaviate holds for the document; ``lost``: said done (or submitted and missing from
the job) but not so stored; ``duplicated``: Weaviate holds more objects than the ledger
counts, or the job counts more documents than were submitted; ``stuck``: not final
when the timeout passed; ``recover_s``: seconds from the fault to the job finished.

Then a backfill of the same ``--scale-docs`` documents with 1, 2 and 4 worker processes
(``serve -w``), in the same run, after a warm-up job: documents/s from the job's own
clock (created to finished), and the ratios.

Usage: ``.venv/bin/python -m bench.faults [--docs 12] [--timeout 180] [--only redis,uploads]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from pydantic import SecretStr

from chunkweave.storage.config import EmbedderConfig, WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.pipeline.conductor import Pipeline, open_pipeline
from chunkweave.storage.server_process import free_port
from chunkweave.storage.weaviate.server.local import LocalWeaviate, Secrets, is_ready
from chunkweave.worker.local_redis import find_redis_server

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
CHUNKWEAVE = str(Path(sys.executable).parent / "chunkweave")
SCENARIOS = ("pool-child", "worker-group", "redis", "weaviate", "uploads", "fanout")
#: The PDF of the ``fanout`` scenario, and the fan-out settings it runs serve with.
FANOUT_PDF = "redp5110_sampled.pdf"
FANOUT_ENV = {
    "CHUNKWEAVE_FANOUT__PAGES": "4",
    "CHUNKWEAVE_FANOUT__PART_PAGES": "2",
    "CHUNKWEAVE_FANOUT__EMBED_CHUNKS": "8",
}
STEP = r"(part|slice)\d+|finish|commit"
UPLOADS = 24


def small_documents(corpus: Path, n: int) -> list[Path]:
    """Return the ``n`` smallest PDF/DOCX files of ``corpus`` (cycled when it holds fewer)."""
    found = sorted(
        (p for p in corpus.iterdir() if p.suffix.lower() in (".pdf", ".docx")),
        key=lambda p: p.stat().st_size,
    )
    return [found[i % len(found)] for i in range(n)]


def copy_documents(files: list[Path], folder: Path) -> Path:
    """Copy ``files`` into ``folder`` under unique names (new paths: new document ids)."""
    folder.mkdir(parents=True)
    for i, src in enumerate(files):
        shutil.copyfile(src, folder / f"{i:03d}-{src.name}")
    return folder


class Serve:
    """One ``chunkweave serve`` subprocess on a data directory, and what it started."""

    def __init__(self, data: Path, docs_root: Path, embedder: str, log: Path) -> None:
        self.data = data
        self.port = free_port()
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.workers = 2
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
        env.update(
            {
                "CHUNKWEAVE_DATA_DIR": str(data),
                "CHUNKWEAVE_EMBEDDER__KIND": embedder,
                "CHUNKWEAVE_SOURCES__ROOTS": json.dumps([str(docs_root)]),
                "PYTHONPATH": str(ROOT),
            }
        )
        self.env = env
        #: Servers the bench itself restarted (stopped before serve is started again).
        self.ours: list[Callable[[], None]] = []
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=30)

    def start(self, workers: int | None = None) -> None:
        """Start serve (with ``workers`` processes) and wait until its API answers."""
        self.workers = workers or self.workers
        self._drop_ours()
        with open(self.log, "ab") as fh:
            self.proc = subprocess.Popen(
                [CHUNKWEAVE, "serve", "-w", str(self.workers), "--api-port", str(self.port)],
                env=self.env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited at start; see {self.log}")
            with suppress(httpx.HTTPError):
                if self.http.get("/healthz").status_code == 200 and self.worker() is not None:
                    return
            time.sleep(0.5)
        raise RuntimeError(f"serve did not come up in 240 s; see {self.log}")

    def alive(self) -> bool:
        """Whether the serve process still runs."""
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """Stop serve (SIGTERM, SIGKILL to what is left after 60 s), then our restarts."""
        if self.proc is not None:
            tree = _tree(self.proc.pid)
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            for p in tree:
                with suppress(psutil.Error):
                    p.kill()
            self.proc = None
        self._drop_ours()

    def _drop_ours(self) -> None:
        for stop in self.ours:
            with suppress(Exception):
                stop()
        self.ours.clear()

    def worker(self) -> psutil.Process | None:
        """Return the ``celery worker`` main process serve started (``None``: none now)."""
        if not self.alive():
            return None
        assert self.proc is not None
        for p in _tree(self.proc.pid):
            with suppress(psutil.Error):
                cmd = p.cmdline()
                if "celery" in " ".join(cmd) and "worker" in cmd and p.ppid() == self.proc.pid:
                    return p
        return None

    def weaviate_cfg(self) -> WeaviateConfig:
        """Return settings reaching the embedded Weaviate (its ports and key stay in its data)."""
        folder = self.data / "weaviate"
        ports = json.loads((folder / "ports.json").read_text())
        key = Secrets.for_data_dir(folder).api_key
        url = f"http://127.0.0.1:{ports['http']}"
        return WeaviateConfig(url=url, grpc_port=ports["grpc"], api_key=SecretStr(key), retries=2)

    def submit(self, folder: Path) -> str:
        """Queue every document under ``folder`` as one job; return its id."""
        resp = self.http.post("/jobs", json={"sources": [str(folder)]})
        resp.raise_for_status()
        return str(resp.json()["job_id"])

    def job(self, job_id: str) -> dict[str, Any] | None:
        """Return the job's state with its documents (``None`` while the API cannot tell)."""
        with suppress(httpx.HTTPError, ValueError):
            resp = self.http.get(f"/jobs/{job_id}")
            if resp.status_code == 200:
                return dict(resp.json())
        return None


def _tree(pid: int) -> list[psutil.Process]:
    with suppress(psutil.Error):
        return list(psutil.Process(pid).children(recursive=True))
    return []


def _final(doc: dict[str, Any]) -> bool:
    return doc.get("status") in ("done", "failed")


@dataclass
class Row:
    """One line of the table."""

    scenario: str
    documents: int
    ok: int = 0
    failed: int = 0
    lost: int = 0
    duplicated: int = 0
    stuck: int = 0
    recover_s: float | None = None
    restarted_by: str = "-"
    notes: list[str] = field(default_factory=list)


def wait_jobs(serve: Serve, job_ids: list[str], timeout_s: float) -> dict[str, dict[str, Any]]:
    """Poll the jobs until all are finished or ``timeout_s`` passes; the last states seen."""
    seen: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for job_id in job_ids:
            if (job := serve.job(job_id)) is not None:
                seen[job_id] = job
        if len(seen) == len(job_ids) and all(j.get("finished_at") for j in seen.values()):
            break
        time.sleep(0.5)
    return seen


def judge(row: Row, serve: Serve, jobs: dict[str, dict[str, Any]], submitted: int) -> Row:
    """Fill ``row`` from the jobs' states and what the ledger and Weaviate hold."""
    docs = [d for job in jobs.values() for d in job.get("docs") or ()]
    row.stuck = sum(not _final(d) for d in docs) + max(0, submitted - len(docs))
    row.failed = sum(d.get("status") == "failed" for d in docs)
    codes = sorted({str(d.get("error_code")) for d in docs if d.get("status") == "failed"})
    if codes:
        row.notes.append("failed: " + ",".join(codes))
    row.duplicated = max(0, len(docs) - submitted)
    try:
        pipe = _pipeline(serve)
    except Exception as err:  # noqa: BLE001 - a store still down is a finding, not a crash
        row.notes.append(f"store unreadable: {type(err).__name__}")
        return row
    try:
        stored: dict[str, str] = {}  # doc_id -> ok, lost or duplicated (24 uploads: one)
        for doc in docs:
            if doc.get("status") != "done":
                continue
            doc_id = doc["doc_id"]
            if doc_id not in stored:
                entry = pipe.ledger.get(doc_id)
                held = len(pipe.store.doc_uuids(doc_id))
                count = entry.chunk_count if entry is not None and entry.status == "ok" else 0
                lost = count < 1 or held < count
                stored[doc_id] = "lost" if lost else "duplicated" if held > count else "ok"
            found = stored[doc_id]
            row.ok += found == "ok"
            row.lost += found == "lost"
            row.duplicated += found == "duplicated"
    finally:
        pipe.close()
    return row


def _pipeline(serve: Serve) -> Pipeline:
    kind = serve.env["CHUNKWEAVE_EMBEDDER__KIND"]
    embedder = make_embedder(EmbedderConfig.model_validate({"kind": kind}))
    return open_pipeline(serve.weaviate_cfg(), embedder)


def first_done(serve: Serve, job_id: str, timeout_s: float = 240) -> bool:
    """Wait until the job has stored one document (the fault comes mid-run)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = serve.job(job_id)
        if job and any(d.get("status") == "done" for d in job.get("docs") or ()):
            return not job.get("finished_at")
        time.sleep(0.1)
    return False


# The faults. Each returns who restarted the part ("serve", "bench" or "-").


def kill_pool_child(serve: Serve, grace_s: float) -> str:
    """SIGKILL the busiest pool child of the worker."""
    worker = serve.worker()
    assert worker is not None, "no worker process"
    children = worker.children()
    before = {p.pid: sum(p.cpu_times()[:2]) for p in children}
    time.sleep(0.3)
    busy = max(children, key=lambda p: sum(p.cpu_times()[:2]) - before.get(p.pid, 0.0))
    busy.send_signal(signal.SIGKILL)
    return "-"


def kill_worker_group(serve: Serve, grace_s: float) -> str:
    """SIGKILL the worker's process group (main process and pool), as a dead host would."""
    worker = serve.worker()
    assert worker is not None, "no worker process"
    os.killpg(os.getpgid(worker.pid), signal.SIGKILL)
    time.sleep(1)

    def back() -> bool:
        again = serve.worker()
        return again is not None and again.pid != worker.pid

    return _brought_back(serve, grace_s, back, lambda: None)


def kill_redis(serve: Serve, grace_s: float) -> str:
    """SIGKILL the embedded Redis; restart it from its own config if nothing else does."""
    folder = serve.data / "redis"
    pid = int(json.loads((folder / "server.json").read_text())["pid"])
    os.kill(pid, signal.SIGKILL)

    def back() -> bool:
        with suppress(OSError, ValueError, KeyError):
            again = int(json.loads((folder / "server.json").read_text())["pid"])
            return again != pid and psutil.pid_exists(again)
        return False

    def restart() -> None:
        log = open(folder / "redis.log", "ab")  # noqa: SIM115 - the server's until it stops
        proc = subprocess.Popen(
            [find_redis_server(), str(folder / "redis.conf")],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def stop() -> None:
            proc.terminate()
            proc.wait(10)
            log.close()

        serve.ours.append(stop)

    return _brought_back(serve, grace_s, back, restart)


def kill_weaviate(serve: Serve, grace_s: float) -> str:
    """SIGKILL the embedded Weaviate; restart it on its port and data if nothing else does."""
    folder = serve.data / "weaviate"
    pid = int(json.loads((folder / "server.json").read_text())["pid"])
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    time.sleep(1)

    def back() -> bool:  # started again (maybe on other ports: read them again)
        with suppress(OSError, ValueError, KeyError):
            again = int(json.loads((folder / "server.json").read_text())["pid"])
            return again != pid and is_ready(serve.weaviate_cfg().url or "")
        return False

    def restart() -> None:
        server = LocalWeaviate(folder)
        server._spawn()  # its ports and key from the data dir; serve keeps the dir's lock
        serve.ours.append(server.stop)

    return _brought_back(serve, grace_s, back, restart)


def _brought_back(
    serve: Serve, grace_s: float, back: Callable[[], bool], restart: Callable[[], None]
) -> str:
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if back():
            return "serve"
        if not serve.alive():
            break
        time.sleep(0.5)
    if not serve.alive():  # serve stopped (a part of it died): as an operator would
        serve.stop()
        serve.start()
        return "bench (serve)"
    restart()
    return "bench"


FAULTS: dict[str, Callable[[Serve, float], str]] = {
    "pool-child": kill_pool_child,
    "worker-group": kill_worker_group,
    "redis": kill_redis,
    "weaviate": kill_weaviate,
}


def fault_run(
    serve: Serve, name: str, files: list[Path], work: Path, timeout_s: float, grace_s: float
) -> Row:
    """Run one job on copies of ``files``, inject fault ``name`` mid-run, and judge it."""
    if not serve.alive():
        serve.start()
    folder = copy_documents(files, work / name)
    job_id = serve.submit(folder)
    row = Row(name, len(files))
    if not first_done(serve, job_id):
        row.notes.append("finished before the fault")
    fault_at = time.monotonic()
    row.restarted_by = FAULTS[name](serve, grace_s)
    jobs = wait_jobs(serve, [job_id], max(0.0, timeout_s - (time.monotonic() - fault_at)))
    if jobs.get(job_id, {}).get("finished_at"):
        row.recover_s = round(time.monotonic() - fault_at, 1)
    return judge(row, serve, jobs, len(files))


def uploads_run(serve: Serve, files: list[Path], timeout_s: float) -> Row:
    """Upload one file ``UPLOADS`` times at once under one ``document_id``; judge it."""
    if not serve.alive():
        serve.start()
    body = files[0].read_bytes()
    name = files[0].name

    def upload(_: int) -> str | int:
        with httpx.Client(base_url=str(serve.http.base_url), timeout=60) as client:
            resp = client.post(
                "/jobs",
                files=[("file", (name, body, "application/octet-stream"))],
                data={"document_id": "faults-bench-upload"},
            )
            return str(resp.json()["job_id"]) if resp.status_code == 202 else resp.status_code

    started = time.monotonic()
    with ThreadPoolExecutor(UPLOADS) as pool:
        answers = list(pool.map(upload, range(UPLOADS)))
    job_ids = [a for a in answers if isinstance(a, str)]
    jobs = wait_jobs(serve, job_ids, timeout_s)
    row = Row("uploads", UPLOADS)
    if all(j.get("finished_at") for j in jobs.values()) and len(jobs) == len(job_ids):
        row.recover_s = round(time.monotonic() - started, 1)
    judge(row, serve, jobs, len(job_ids))
    row.failed += len(answers) - len(job_ids)  # a refused upload is a failed one
    refused = sorted({str(a) for a in answers if not isinstance(a, str)})
    row.notes.append(f"{UPLOADS} jobs, one document_id" + (f"; HTTP {refused}" if refused else ""))
    return row


def fanout_run(serve: Serve, corpus: Path, work: Path, timeout_s: float, grace_s: float) -> Row:
    """Kill the worker group while it holds a step of a fanned-out PDF; judge the job."""
    serve.stop()
    serve.env.update(FANOUT_ENV)
    serve.start()
    try:
        folder = copy_documents([corpus / FANOUT_PDF] * 2, work / "fanout")
        job_id = serve.submit(folder)
        row = Row("fanout", 2)
        step = _step_held(serve, job_id, timeout_s=120)
        if step is None:
            row.notes.append("no step seen held before the job finished")
        else:
            row.notes.append(f"killed holding {step}")
        fault_at = time.monotonic()
        row.restarted_by = kill_worker_group(serve, grace_s)
        jobs = wait_jobs(serve, [job_id], max(0.0, timeout_s - (time.monotonic() - fault_at)))
        if jobs.get(job_id, {}).get("finished_at"):
            row.recover_s = round(time.monotonic() - fault_at, 1)
        return judge(row, serve, jobs, 2)
    finally:
        serve.stop()
        for name in FANOUT_ENV:
            serve.env.pop(name, None)


def _step_held(serve: Serve, job_id: str, timeout_s: float) -> str | None:
    """Wait until a worker holds a fan-out step of the job (``w1 part3; queue part4``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = serve.job(job_id) or {}
        if job.get("finished_at"):
            return None
        for doc in job.get("docs") or ():
            for held in str(doc.get("owner") or "").split("; "):
                worker, _, step = held.rpartition(" ")
                if worker not in ("", "queue") and re.fullmatch(STEP, step):
                    return step
        time.sleep(0.05)
    return None


def scaling_run(serve: Serve, files: list[Path], work: Path, timeout_s: float) -> list[str]:
    """Backfill copies of ``files`` with 1, 2 and 4 worker processes; lines to print."""
    rates: dict[int, float] = {}
    for workers in (1, 2, 4):
        serve.stop()
        serve.start(workers)
        # Each pool child builds its pipeline on its first task (imports, a store
        # client): a warm-up job of two documents a process keeps that out of the rate.
        warm = copy_documents(files[: 2 * workers], work / f"warm-{workers}")
        wait_jobs(serve, [serve.submit(warm)], timeout_s)
        folder = copy_documents(files, work / f"scale-{workers}")
        job_id = serve.submit(folder)
        job = wait_jobs(serve, [job_id], timeout_s).get(job_id) or {}
        if not job.get("finished_at"):
            rates[workers] = float("nan")
            continue
        rates[workers] = len(files) / (float(job["finished_at"]) - float(job["created_at"]))
    one = rates[1]
    return [
        f"backfill of {len(files)} documents, {w} worker process(es): {r:.2f} docs/s "
        f"({r / one:.2f}x one)"
        for w, r in rates.items()
    ]


def table(rows: list[Row]) -> str:
    """Return the rows as a Markdown table."""
    head = "| scenario | documents | ok | failed | lost | duplicated | stuck | recover_s | restarted by | notes |"  # noqa: E501
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        rec = "-" if r.recover_s is None else f"{r.recover_s:.1f}"
        lines.append(
            f"| {r.scenario} | {r.documents} | {r.ok} | {r.failed} | {r.lost} | {r.duplicated} "
            f"| {r.stuck} | {rec} | {r.restarted_by} | {'; '.join(r.notes)} |"
        )
    return "\n".join(lines)


@contextmanager
def service(work: Path, embedder: str) -> Iterator[Serve]:
    """Yield a serve on a fresh data directory under ``work`` (stopped at the end)."""
    docs_root = work / "docs"
    docs_root.mkdir(parents=True)
    serve = Serve(work / "data", docs_root, embedder, work / "serve.log")
    try:
        yield serve
    finally:
        serve.stop()


def main() -> None:
    """Run the scenarios and the scaling backfill; print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--docs", type=int, default=12, help="documents per scenario")
    ap.add_argument("--scale-docs", type=int, default=24, help="documents of the backfill")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds a scenario may take")
    ap.add_argument("--grace", type=float, default=20.0, help="seconds to wait for serve")
    ap.add_argument("--embedder", default="none", help="CHUNKWEAVE_EMBEDDER__KIND of serve")
    ap.add_argument("--only", default=",".join(SCENARIOS) + ",scaling")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    only = set(args.only.split(","))
    files = small_documents(args.corpus, args.docs)
    work = Path(tempfile.mkdtemp(prefix="chunkweave-faults-"))
    rows: list[Row] = []
    scaling: list[str] = []
    try:
        with service(work, args.embedder) as serve:
            for name in SCENARIOS:
                if name not in only:
                    continue
                print(f"scenario {name} ...", file=sys.stderr, flush=True)
                if name == "uploads":
                    rows.append(uploads_run(serve, files, args.timeout))
                elif name == "fanout":
                    root = Path(json.loads(serve.env["CHUNKWEAVE_SOURCES__ROOTS"])[0])
                    rows.append(fanout_run(serve, args.corpus, root, args.timeout, args.grace))
                else:
                    docs = serve.env["CHUNKWEAVE_SOURCES__ROOTS"]
                    root = Path(json.loads(docs)[0])
                    rows.append(fault_run(serve, name, files, root, args.timeout, args.grace))
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
            if "scaling" in only:
                root = Path(json.loads(serve.env["CHUNKWEAVE_SOURCES__ROOTS"])[0])
                big = small_documents(args.corpus, args.scale_docs)
                scaling = scaling_run(serve, big, root, args.timeout * 3)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"work directory kept: {work}", file=sys.stderr)
    print(table(rows))
    for line in scaling:
        print(line)


if __name__ == "__main__":
    main()

"""Backfill throughput of the worker service: 1 vs 2 worker processes, fan-out on vs off.

Everything real: an embedded redis-server, the local Weaviate server, ``celery
worker`` processes running the real pipeline (parse -> chunk -> embed -> upsert).
Each run writes into fresh collections, so nothing is skipped as unchanged.

Runs (one machine, one process invocation, so ratios are comparable even when the
machine is shared):

1. scaling: the whole shared corpus with 1 worker process, then with 2
   (``--concurrency``), default fan-out settings; documents/min and pages/min
   (PDF pages: DOCX has no page count), queue latency (enqueue -> task start) per
   document.
2. fan-out: the 400-page PDF alone on 2 worker processes, fanned out
   (``fanout.pages=200``, parts of 100 pages) vs not fanned out; wall seconds.
3. pickup latency: a tiny document enqueued to idle workers, enqueue -> start.
4. scale (``--scale 1000 10000 100000``): that many small generated DOCX files in one
   job on 2 worker processes with the ``none`` embedder, which isolates the queue,
   the job state, the ledger and the store. Reports documents/s per block of 1,000
   completions (it must stay flat), Redis memory (peak, and growth per document), and
   how long ``chunkweave status``, ``GET /jobs`` and ``GET /jobs?status=failed`` take
   once the job is done.

5. enqueue (``--enqueue-only N``): the producer alone, submitting ``N`` documents as one
   job to an embedded Redis with no worker: CPU and wall seconds, Redis commands per
   document.

Usage: ``.venv/bin/python -m bench.backfill [--corpus DIR] [--out FILE] [--only scaling|fanout]``
or ``.venv/bin/python -m bench.backfill --scale 1000 10000 [--scale-embedder minilm] --out F``
or ``.venv/bin/python -m bench.backfill --enqueue-only 10000 --out F``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from chunkweave.storage.config import server_env
from chunkweave.storage.server_process import die_with_parent
from chunkweave.storage.weaviate.server.local import LocalWeaviate
from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.jobs import JobState
from chunkweave.worker.local_redis import LocalRedis
from chunkweave.worker.runtime import yield_cpu
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import expand

ROOT = Path(__file__).resolve().parents[1]

BIG_PDF = "pdf2image-memory-error-test-400p.pdf"


def _env(redis_url: str, weaviate: LocalWeaviate, tag: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env.update(
        {
            "CHUNKWEAVE_REDIS_URL": redis_url,
            "CHUNKWEAVE_TASKS__QUEUE": f"bench-{tag}",
            **server_env(weaviate.config()),
            "CHUNKWEAVE_WEAVIATE__COLLECTION": f"Bench_{tag}",
            "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": f"BenchLedger_{tag}",
            "CHUNKWEAVE_TASKS__SOFT_TIME_LIMIT_S": "1800",
            "CHUNKWEAVE_TASKS__HARD_TIME_LIMIT_S": "1900",
            "PYTHONPATH": str(ROOT),
            **extra,
        }
    )
    return env


def _settings(env: dict[str, str]) -> Settings:
    return Settings(
        redis_url=env["CHUNKWEAVE_REDIS_URL"], tasks={"queue": env["CHUNKWEAVE_TASKS__QUEUE"]}
    )


class Workers:
    """One ``celery worker`` with ``concurrency`` processes, waited until ready."""

    def __init__(self, env: dict[str, str], concurrency: int, log: Path) -> None:
        args = [
            sys.executable, "-m", "celery", "-A", "chunkweave.worker.celery_app", "worker",
            "--pool", "prefork", "--concurrency", str(concurrency),
            "-Q", env["CHUNKWEAVE_TASKS__QUEUE"], "--loglevel", "INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        self.log = log
        with open(log, "wb") as fh:
            self.proc = subprocess.Popen(
                args,
                cwd=ROOT,
                env=env,
                stdout=fh,
                stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent,  # never outlive the bench
            )
        deadline = time.monotonic() + 180
        while " ready." not in log.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"worker did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        time.sleep(3)  # pool children build their pipelines (model load) after "ready"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _run(env: dict[str, str], sources: list[str], timeout_s: float) -> dict[str, object]:
    enq = Enqueuer(_settings(env))
    try:
        started = time.time()
        job_id = enq.submit([(s, "ingest") for s in sources])
        job: JobState | None = None
        while time.time() - started < timeout_s:
            job = enq.jobs.get(job_id, with_docs=True)
            if job is not None and job.finished_at is not None:
                break
            time.sleep(0.5)
        assert job is not None and job.finished_at is not None, "backfill timed out"
    finally:
        enq.close()
    docs = job.docs or ()
    seconds = job.finished_at - job.created_at
    latencies = [d.started_at - d.queued_at for d in docs if d.started_at and d.queued_at]
    pages = sum(d.pages for d in docs)
    return {
        "documents": len(docs),
        "done": job.done,
        "failed": {d.source.rsplit("/", 1)[-1]: d.error_code for d in docs if d.status == "failed"},
        "pages": pages,
        "chunks": sum(d.chunks_added for d in docs),
        "seconds": round(seconds, 2),
        "documents_per_min": round(len(docs) / seconds * 60, 2),
        "pages_per_min": round(pages / seconds * 60, 1),
        "queue_latency_s": {
            "median": round(statistics.median(latencies), 3),
            "p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 3),
            "max": round(max(latencies), 3),
        },
    }


def _pickup_latency(env: dict[str, str], tmp: Path, n: int = 5) -> list[float]:
    """Enqueue -> start for a tiny document on idle workers."""
    import docx

    out = []
    for i in range(n):
        path = tmp / f"tiny-{i}.docx"
        document = docx.Document()
        document.add_paragraph(f"Tiny document {i} for pickup latency.")
        document.save(str(path))
        result = _run(env, [str(path)], timeout_s=120)
        out.append(result["queue_latency_s"]["max"])  # type: ignore[index]
    return out


def make_docs(folder: Path, n: int) -> list[str]:
    """``n`` small, distinct DOCX files (a heading and two paragraphs each), made fast.

    One real DOCX is written with python-docx; the others copy its package with the
    text of ``word/document.xml`` changed, so each has its own content hash.
    """
    import zipfile

    import docx

    folder.mkdir(parents=True, exist_ok=True)
    template = folder / "template.docx"
    document = docx.Document()
    document.add_heading("Record TPLNUM", level=1)
    document.add_paragraph("This is backfill record TPLNUM. " * 8)
    document.add_paragraph("It lists the items that were received on day TPLNUM. " * 6)
    document.save(str(template))
    with zipfile.ZipFile(template) as zf:
        parts = {name: zf.read(name) for name in zf.namelist()}
    body = parts["word/document.xml"]
    out = []
    for i in range(n):
        path = folder / f"record-{i:06d}.docx"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in parts.items():
                zf.writestr(
                    name, body.replace(b"TPLNUM", str(i).encode()) if data is body else data
                )
        out.append(str(path))
    template.unlink()
    return out


def _timed(fn: Callable[[], object], runs: int = 3) -> float:
    """Median seconds of ``fn`` over ``runs`` calls."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 4)


def _median_ms(seconds: Iterable[float]) -> float:
    """Median of ``seconds``, in milliseconds, rounded to 0.1."""
    return round(1000 * statistics.median(seconds), 1)


def _rates(samples: list[tuple[float, int]], block: int = 1000) -> list[float]:
    """Documents/s over each block of ``block`` completions, from (time, count) samples."""
    rates: list[float] = []
    edge, last_t = block, 0.0
    for (t0, c0), (t1, c1) in zip(samples, samples[1:], strict=False):
        while c0 < edge <= c1:
            t_edge = t0 + (t1 - t0) * (edge - c0) / (c1 - c0)  # when the block ended
            if t_edge > last_t:
                rates.append(round(block / (t_edge - last_t), 1))
            last_t, edge = t_edge, edge + block
    return rates


def _cpu_seconds(pid: int | None) -> float:
    """CPU seconds (user + system) of ``pid`` and its live descendants; 0 if it is gone."""
    import psutil

    if pid is None:
        return 0.0
    total = 0.0
    try:
        proc = psutil.Process(pid)
        family = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    for member in family:
        try:
            times = member.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def _cpu_per_block(
    samples: list[tuple[float, int]], cpu: list[dict[str, float]], block: int = 1000
) -> dict[str, list[float]]:
    """Per block of ``block`` completions: CPU ms a document of each process group.

    ``samples`` are the run's (seconds, documents finished) and ``cpu[i]`` each process
    group's CPU seconds when ``samples[i]`` was taken; block edges fall on the first
    sample at or past them. ``busy`` is the share of the machine's cores that all
    groups together used over the block.
    """
    cpus = os.cpu_count() or 1
    points = list(zip(samples, cpu, strict=True))
    if not points:
        return {}
    groups = list(cpu[0])
    out: dict[str, list[float]] = {g: [] for g in [*groups, "busy"]}
    (t0, done0), cpu0 = points[0]
    edge = block
    for (t, done), now in points[1:]:
        if done < edge:
            continue
        used = 0.0
        for g in groups:
            used += now[g] - cpu0[g]
            out[g].append(round(1000 * (now[g] - cpu0[g]) / (done - done0), 1))
        out["busy"].append(round(used / (cpus * (t - t0)), 2) if t > t0 else 0.0)
        (t0, done0), cpu0, edge = (t, done), now, edge + block
    return out


def _produce(env: dict[str, str], sources: list[str]) -> tuple[str, float, float]:
    """Submit ``sources`` as one job the way ``chunkweave backfill`` does; run in a child.

    Lowers its CPU priority first (``yield_cpu``, the ``producer_nice`` setting), as the
    CLI producers do. Returns the job id, wall and CPU seconds of the submit.
    """
    settings = _settings(env)
    yield_cpu(settings)
    enq = Enqueuer(settings)
    try:
        started, cpu_started = time.time(), time.process_time()
        job_id = enq.submit([(s, "ingest") for s in sources])
        return job_id, time.time() - started, time.process_time() - cpu_started
    finally:
        enq.close()


def _scale_run(
    redis_url: str,
    redis_pid: int | None,
    weaviate: LocalWeaviate,
    tmp: Path,
    n: int,
    embedder: str = "none",
    progress: Path | None = None,
) -> dict[str, object]:
    """One ``--scale`` run of ``n`` documents (see the module docstring, run 4)."""
    import redis as redis_lib
    from fastapi.testclient import TestClient

    from chunkweave.worker.api import create_app

    sources = make_docs(tmp / f"scale-{n}", n)
    tag = f"scale_{n}_{uuid.uuid4().hex[:6]}"
    env = _env(redis_url, weaviate, tag, CHUNKWEAVE_EMBEDDER__KIND=embedder)
    client = redis_lib.Redis.from_url(redis_url)
    client.flushdb()  # each scale run starts from an empty Redis
    base_memory = int(client.info("memory")["used_memory"])
    workers = Workers(env, 2, tmp / f"{tag}.log")
    enq = Enqueuer(_settings(env))
    peak = base_memory
    try:
        # Where the CPU went: each process group's CPU seconds so far, from before the
        # enqueue on, sampled with the progress below.
        groups = {"workers": workers.proc.pid, "weaviate": weaviate.pid, "redis": redis_pid}
        cpu = [{g: _cpu_seconds(pid) for g, pid in groups.items()}]
        # The producer is its own process, as a `chunkweave backfill` beside the workers.
        fork = multiprocessing.get_context("fork")
        started = time.time()
        with ProcessPoolExecutor(1, mp_context=fork) as producer:
            job_id, enqueue_s, enqueue_cpu_s = producer.submit(_produce, env, sources).result()
        print(
            f"[bench] scale {n}: enqueued in {enqueue_s:.1f}s ({enqueue_cpu_s:.1f}s CPU)",
            flush=True,
        )
        # (seconds since the enqueue began, documents finished)
        samples: list[tuple[float, int]] = [(0.0, 0)]
        while True:
            job = enq.jobs.get(job_id)
            peak = max(peak, int(client.info("memory")["used_memory"]))
            if job is not None:
                samples.append((time.time() - started, job.done + job.failed))
                cpu.append({g: _cpu_seconds(pid) for g, pid in groups.items()})
                if progress is not None and len(samples) % 15 == 0:
                    progress.write_text(json.dumps({"n": n, "rates": _rates(samples)}) + "\n")
            if job is not None and job.finished_at is not None:
                break
            if time.time() - started > 4 * 3600:
                raise RuntimeError("scale run timed out")
            time.sleep(2)
        seconds = job.finished_at - started
        end_memory = int(client.info("memory")["used_memory"])
        full = enq.jobs.get(job_id, with_docs=True)
        assert full is not None and full.docs is not None
        finished = sorted(d.updated_at for d in full.docs if d.status in ("done", "failed"))
        per_thousand = [
            round(1000 / (finished[k + 999] - finished[k]), 1)
            for k in range(0, len(finished) - 999, 1000)
            if finished[k + 999] > finished[k]
        ]
        stage_names = sorted({k for d in full.docs for k in (d.timings or {})})
        # Does any stage slow down as documents accumulate? Median ms per stage (and per
        # task) over each block of 1,000 completions, in completion order.
        in_order = sorted(
            (d for d in full.docs if d.status in ("done", "failed")), key=lambda d: d.updated_at
        )
        blocks = [in_order[i : i + 1000] for i in range(0, len(in_order) - 999, 1000)]
        stage_trend = {
            k: [_median_ms((d.timings or {}).get(k, 0.0) for d in block) for block in blocks]
            for k in stage_names
        }
        stage_trend["task"] = [_median_ms(d.seconds or 0.0 for d in block) for block in blocks]
        stages_ms = {
            k: _median_ms((d.timings or {}).get(k, 0.0) for d in full.docs) for k in stage_names
        }
        task_ms = round(1000 * statistics.median(d.seconds or 0.0 for d in full.docs), 1)
        app = create_app(_settings(env))
        cli = str(Path(sys.executable).parent / "chunkweave")
        with TestClient(app) as http:
            timings = {
                "GET /jobs": _timed(lambda: http.get("/jobs").raise_for_status()),
                "GET /jobs?status=failed": _timed(
                    lambda: http.get("/jobs", params={"status": "failed"}).raise_for_status()
                ),
                "GET /jobs/{id}?docs=false": _timed(
                    lambda: http.get(f"/jobs/{job_id}", params={"docs": "false"})
                ),
                "GET /jobs/{id} (all documents)": _timed(lambda: http.get(f"/jobs/{job_id}"), 1),
            }

        def run_cli(*words: str) -> None:
            subprocess.run([cli, *words], env=env, capture_output=True, check=True)

        timings["chunkweave status"] = _timed(lambda: run_cli("status"), 1)
        timings["chunkweave status JOB --json"] = _timed(
            lambda: run_cli("status", job_id, "--json"), 1
        )
    finally:
        enq.close()
        workers.stop()
        client.close()
    return {
        "documents": n,
        "embedder": embedder,
        "done": full.done,
        "failed": full.failed,
        "seconds": round(seconds, 1),
        "enqueue_seconds": round(enqueue_s, 1),
        "enqueue_cpu_seconds": round(enqueue_cpu_s, 1),
        "documents_per_s": round(n / seconds, 1),
        "documents_per_s_per_1000": per_thousand,
        "first_to_last_1000_ratio": round(per_thousand[-1] / per_thousand[0], 2)
        if per_thousand
        else None,
        "median_task_ms": task_ms,
        "median_stage_ms": stages_ms,
        "median_stage_ms_per_1000": stage_trend,
        "cpu_ms_per_document_per_1000": _cpu_per_block(samples, cpu),
        "redis_peak_mb": round(peak / 2**20, 1),
        "redis_growth_bytes_per_document": round((end_memory - base_memory) / n),
        "weaviate_ledger_reads_per_document": 1,  # Pipeline.ingest reads the ledger once
        "query_seconds": timings,
    }


def _enqueue_run(redis_url: str, tmp: Path, n: int, repeats: int = 3) -> dict[str, object]:
    """Cost of submitting ``n`` documents as one job, producer side only (run 5).

    The files are empty ``.docx`` names (submitting never opens a file). No worker
    consumes the queue; Redis is flushed before each repeat. CPU seconds are this
    process's own (``time.process_time``), which other load on the machine hardly
    moves; wall seconds also include Redis' share and any waiting for the CPU.
    """
    import redis as redis_lib

    folder = tmp / f"enqueue-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    sources = []
    for i in range(n):
        path = folder / f"record-{i:06d}.docx"
        path.touch()
        sources.append(str(path))
    settings = Settings(redis_url=redis_url, tasks={"queue": "bench-enqueue"})
    client = redis_lib.Redis.from_url(redis_url)
    enq = Enqueuer(settings)
    cpu: list[float] = []
    wall: list[float] = []
    commands = 0
    try:
        enq.submit([(sources[0], "ingest")])  # connect and declare once, untimed
        for _ in range(repeats):
            client.flushdb()
            client.config_resetstat()
            started, cpu_started = time.perf_counter(), time.process_time()
            job_id = enq.submit([(s, "ingest") for s in sources])
            cpu.append(time.process_time() - cpu_started)
            wall.append(time.perf_counter() - started)
            stats = client.info("commandstats")
            commands = sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")
            job = enq.jobs.get(job_id)
            assert job is not None and job.total == n, "job does not hold every document"
            assert client.llen(settings.tasks.queue) == n, "one task message per document"
    finally:
        enq.close()
        client.close()
    cpu_s, wall_s = statistics.median(cpu), statistics.median(wall)
    return {
        "documents": n,
        "repeats": repeats,
        "cpu_seconds": [round(c, 2) for c in cpu],
        "wall_seconds": [round(w, 2) for w in wall],
        "cpu_us_per_document": round(1e6 * cpu_s / n),
        "documents_per_cpu_s": round(n / cpu_s),
        "documents_per_wall_s": round(n / wall_s),
        "redis_commands_per_document": round(commands / n, 2),
    }


def main() -> None:
    # SIGTERM -> SystemExit, so the context managers stop the servers and workers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "backfill.json")
    parser.add_argument("--only", choices=["scaling", "fanout"], default=None)
    parser.add_argument("--scale", type=int, nargs="+", default=None, metavar="N")
    parser.add_argument(
        "--scale-embedder",
        default="none",
        help="embedder kind for --scale runs: none (isolates the service) or minilm",
    )
    parser.add_argument(
        "--enqueue-only",
        type=int,
        default=None,
        metavar="N",
        help="only time submitting N documents (producer side, Redis only, no workers)",
    )
    args = parser.parse_args()
    if args.enqueue_only:
        with tempfile.TemporaryDirectory(prefix="cw-bench-") as tmp_name:
            tmp = Path(tmp_name)
            with LocalRedis(tmp / "redis", persist=False) as redis_server:
                result = _enqueue_run(redis_server.url, tmp, args.enqueue_only)
        print(json.dumps(result, indent=2))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        return
    if args.scale:
        scale: dict[str, object] = {"cpus": os.cpu_count()}
        with tempfile.TemporaryDirectory(prefix="cw-bench-") as tmp_name:
            tmp = Path(tmp_name)
            with (
                LocalRedis(tmp / "redis", persist=False) as redis_server,
                LocalWeaviate(tmp / "weaviate") as weaviate,
            ):
                progress = args.out.with_suffix(".progress.json")
                args.out.parent.mkdir(parents=True, exist_ok=True)
                for n in args.scale:
                    key = f"{n}_{args.scale_embedder}"
                    scale[key] = _scale_run(
                        redis_server.url,
                        redis_server.pid,
                        weaviate,
                        tmp,
                        n,
                        args.scale_embedder,
                        progress,
                    )
                    print(f"[bench] scale {key}: {json.dumps(scale[key])}", flush=True)
                    args.out.write_text(json.dumps(scale, indent=2) + "\n")  # after each run
        return

    results: dict[str, object] = {"cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="cw-bench-") as tmp_name:
        tmp = Path(tmp_name)
        with (
            LocalRedis(tmp / "redis", persist=False) as redis_server,
            LocalWeaviate(tmp / "weaviate") as weaviate,
        ):
            settings = Settings(redis_url=redis_server.url)
            corpus = list(expand(args.corpus, settings))
            runs: list[tuple[str, int, list[str], dict[str, str]]] = []
            if args.only in (None, "scaling"):
                runs += [
                    ("scaling_1_process", 1, corpus, {}),
                    ("scaling_2_processes", 2, corpus, {}),
                ]
            if args.only in (None, "fanout"):
                big = [str(args.corpus / BIG_PDF)]
                runs += [
                    ("fanout_off_400p", 2, big, {"CHUNKWEAVE_FANOUT__PAGES": "100000"}),
                    (
                        "fanout_on_400p",
                        2,
                        big,
                        {"CHUNKWEAVE_FANOUT__PAGES": "200", "CHUNKWEAVE_FANOUT__PART_PAGES": "100"},
                    ),
                ]
            for label, procs, sources, extra in runs:
                tag = f"{label}_{uuid.uuid4().hex[:6]}"
                env = _env(redis_server.url, weaviate, tag, **extra)
                workers = Workers(env, procs, tmp / f"{label}.log")
                try:
                    print(
                        f"[bench] {label}: {len(sources)} documents, {procs} process(es)",
                        flush=True,
                    )
                    results[label] = _run(env, sources, timeout_s=3600)
                    if label == "scaling_2_processes":
                        results["pickup_latency_idle_s"] = _pickup_latency(env, tmp)
                finally:
                    workers.stop()
                print(f"[bench] {label}: {json.dumps(results[label])}", flush=True)
    if "scaling_1_process" in results and "scaling_2_processes" in results:
        one, two = results["scaling_1_process"], results["scaling_2_processes"]
        results["speedup_2_vs_1_processes"] = round(one["seconds"] / two["seconds"], 2)  # type: ignore[index]
    if "fanout_off_400p" in results and "fanout_on_400p" in results:
        off, on = results["fanout_off_400p"], results["fanout_on_400p"]
        results["speedup_fanout_400p"] = round(off["seconds"] / on["seconds"], 2)  # type: ignore[index]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

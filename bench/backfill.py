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
   (``fanout_pages=200``, parts of 100 pages) vs not fanned out; wall seconds.
3. pickup latency: a tiny document enqueued to idle workers, enqueue -> start.

Usage: ``.venv/bin/python bench/backfill.py [--corpus DIR] [--out FILE] [--only scaling|fanout]``
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunkweave.storage.config import server_env  # noqa: E402
from chunkweave.storage.embedded.process import die_with_parent  # noqa: E402
from chunkweave.storage.embedded.weaviate import LocalWeaviate  # noqa: E402
from chunkweave.worker.embedded.redis_server import LocalRedis  # noqa: E402
from chunkweave.worker.enqueue import Enqueuer  # noqa: E402
from chunkweave.worker.jobs import JobState  # noqa: E402
from chunkweave.worker.settings import Settings  # noqa: E402
from chunkweave.worker.sources import expand  # noqa: E402

BIG_PDF = "pdf2image-memory-error-test-400p.pdf"


def _env(redis_url: str, weaviate: LocalWeaviate, tag: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNKWEAVE_")}
    env.update(
        {
            "CHUNKWEAVE_REDIS_URL": redis_url,
            "CHUNKWEAVE_QUEUE": f"bench-{tag}",
            **server_env(weaviate.config()),
            "CHUNKWEAVE_WEAVIATE__COLLECTION": f"Bench_{tag}",
            "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION": f"BenchLedger_{tag}",
            "CHUNKWEAVE_TASK_SOFT_TIME_LIMIT_S": "1800",
            "CHUNKWEAVE_TASK_HARD_TIME_LIMIT_S": "1900",
            "PYTHONPATH": str(ROOT),
            **extra,
        }
    )
    return env


def _settings(env: dict[str, str]) -> Settings:
    return Settings(redis_url=env["CHUNKWEAVE_REDIS_URL"], queue=env["CHUNKWEAVE_QUEUE"])


class Workers:
    """One ``celery worker`` with ``concurrency`` processes, waited until ready."""

    def __init__(self, env: dict[str, str], concurrency: int, log: Path) -> None:
        args = [
            sys.executable, "-m", "celery", "-A", "chunkweave.worker.celery_app", "worker",
            "--pool", "prefork", "--concurrency", str(concurrency),
            "-Q", env["CHUNKWEAVE_QUEUE"], "--loglevel", "INFO",
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


def main() -> None:
    # SIGTERM -> SystemExit, so the context managers stop the servers and workers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "backfill.json")
    parser.add_argument("--only", choices=["scaling", "fanout"], default=None)
    args = parser.parse_args()

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
                    ("fanout_off_400p", 2, big, {"CHUNKWEAVE_FANOUT_PAGES": "100000"}),
                    (
                        "fanout_on_400p",
                        2,
                        big,
                        {"CHUNKWEAVE_FANOUT_PAGES": "200", "CHUNKWEAVE_FANOUT_PART_PAGES": "100"},
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

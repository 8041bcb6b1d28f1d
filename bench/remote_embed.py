r"""Chunks/s of the OpenAI-compatible embedder with 1, 4 and 16 requests in flight.

A stand-in embeddings server runs in a child process on 127.0.0.1 (stdlib
``ThreadingHTTPServer``, HTTP/1.1 keep-alive, real HTTP): it sleeps a fixed time per
request, as a GPU server busy with a batch would, and answers every text with a
deterministic vector of the configured dimension whose first component is a checksum
of the text, so the bench also checks that the vectors come back in input order.

The real :class:`~chunkweave.storage.embedders.openai.OpenAIEmbedder` embeds the same
synthetic chunks (~250 words each) at each ``concurrent_requests``; runs are
interleaved across the settings (the machine's speed drifts) and the median is
reported, with the ideal (``N`` batches per server delay, no overhead) and the
client's CPU per chunk. The stand-in serves any number of requests at once, so the
ideal grows with ``N``: a real GPU server saturates somewhere, which this does not
model.

    .venv/bin/python -m bench.remote_embed [--chunks 1024] [--runs 5] \\
        [--concurrency 1,4,16] [--delay-ms 50] [--json bench/results/remote_embed.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
import zlib
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.options import bench_parser, write_json
from chunkweave.storage.embedders.openai import OpenAIEmbedder

REPO = Path(__file__).resolve().parents[1]

PROSE = (
    "the river delta carries sediment into a shallow basin where tides sort sand from "
    "silt and the engineers who dredge the channel measure each season how far the "
    "banks have moved before they plan the next cut"
)
WORDS = PROSE.split()


def tag(text: str) -> float:
    """Return the first component of the stand-in's vector for ``text``."""
    return float(zlib.crc32(text.encode()) % 1_000_000)


def serve(delay_s: float, dimension: int) -> None:
    """Run the stand-in server until killed; print its port on the first stdout line."""
    tail = "".join(f",{(j % 97) / 97:.6f}" for j in range(1, dimension))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the embedder's pool expects
        # Headers and body go out in two writes: with Nagle's algorithm the body waits
        # for the client's delayed ACK (~40 ms), which would dwarf a 50 ms server.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(delay_s)
            data = ",".join(
                f'{{"object":"embedding","index":{i},"embedding":[{tag(text)}{tail}]}}'
                for i, text in enumerate(body["input"])
            )
            out = f'{{"object":"list","model":{json.dumps(body["model"])},"data":[{data}]}}'
            payload = out.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128  # up to N connections arrive at once

    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def make_chunks(n: int, words: int) -> list[str]:
    """``n`` distinct synthetic chunks of ``words`` words each."""
    return [
        f"chunk {i}: " + " ".join(WORDS[(i + j) % len(WORDS)] for j in range(words))
        for i in range(n)
    ]


def run_once(embedder: OpenAIEmbedder, chunks: list[str]) -> tuple[float, float]:
    """Embed ``chunks``; check the order; return (wall seconds, client CPU seconds)."""
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = embedder.embed_documents(chunks)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if [v[0] for v in vectors] != [tag(c) for c in chunks]:
        sys.exit("vectors came back out of order")
    return wall, cpu


def main() -> None:
    """Measure and print one table; write the figures with ``--json``."""
    ap = bench_parser(__doc__)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # child mode
    ap.add_argument("--chunks", type=int, default=1024)
    ap.add_argument("--words", type=int, default=250, help="words per chunk")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--dimension", type=int, default=384)
    ap.add_argument("--delay-ms", type=float, default=50.0, help="the stand-in's time per request")
    ap.add_argument("--concurrency", default="1,4,16", help="comma list of N")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if args.serve:
        serve(args.delay_ms / 1000, args.dimension)
        return

    levels = [int(n) for n in args.concurrency.split(",") if n]
    chunks = make_chunks(args.chunks, args.words)
    batches = -(-args.chunks // args.batch_size)
    command = [sys.executable, "-m", "bench.remote_embed", "--serve"]
    command += ["--delay-ms", str(args.delay_ms)]
    command += ["--dimension", str(args.dimension)]
    server = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        embedders = {
            n: OpenAIEmbedder(
                base_url=f"http://127.0.0.1:{port}/v1",
                model="stand-in",
                dimension=args.dimension,
                max_tokens=100_000,  # the stand-in truncates nothing
                batch_size=args.batch_size,
                concurrent_requests=n,
            )
            for n in levels
        }
        for n, embedder in embedders.items():  # open the pool's connections
            run_once(embedder, chunks[: n * args.batch_size])
        walls: dict[int, list[float]] = {n: [] for n in levels}
        cpus: dict[int, list[float]] = {n: [] for n in levels}
        for _ in range(args.runs):  # interleaved: drift hits every N alike
            for n, embedder in embedders.items():
                wall, cpu = run_once(embedder, chunks)
                walls[n].append(wall)
                cpus[n].append(cpu)
        for embedder in embedders.values():
            embedder.close()
    finally:
        server.terminate()
        server.wait(timeout=10)

    rows: dict[str, dict[str, Any]] = {}
    print(f"{args.chunks} chunks, {args.batch_size} per request, stand-in {args.delay_ms} ms")
    print(f"{'N':>3} {'chunks/s':>9} {'ideal':>7} {'of ideal':>8} {'CPU ms/chunk':>12}")
    for n in levels:
        rates = [args.chunks / w for w in walls[n]]
        ideal = args.chunks / (-(-batches // n) * args.delay_ms / 1000)
        median = statistics.median(rates)
        cpu_ms = statistics.median(cpus[n]) * 1000 / args.chunks
        rows[str(n)] = {
            "chunks_per_s": round(median, 1),
            "chunks_per_s_runs": [round(r, 1) for r in rates],
            "ideal_chunks_per_s": round(ideal, 1),
            "share_of_ideal": round(median / ideal, 3),
            "client_cpu_ms_per_chunk": round(cpu_ms, 3),
        }
        print(f"{n:>3} {median:>9.0f} {ideal:>7.0f} {median / ideal:>8.0%} {cpu_ms:>12.3f}")
    base = rows[str(levels[0])]["chunks_per_s"]
    for n in levels[1:]:
        print(f"N={n}: {rows[str(n)]['chunks_per_s'] / base:.2f}x N={levels[0]}")
    write_json(
        args.json,
        {
            "bench": "remote_embed",
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()}, Python {platform.python_version()}",
            "chunks": args.chunks,
            "words_per_chunk": args.words,
            "batch_size": args.batch_size,
            "dimension": args.dimension,
            "server_delay_ms": args.delay_ms,
            "runs": args.runs,
            "by_concurrent_requests": rows,
        },
    )


if __name__ == "__main__":
    main()

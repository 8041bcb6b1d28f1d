"""Command line for the embedded Weaviate (used by the project's scripts).

    python -m chunkweave.storage.weaviate.server path    # print where the binary lives
    python -m chunkweave.storage.weaviate.server build   # build it if missing
    python -m chunkweave.storage.weaviate.server start --data-dir DIR [--port N] [--grpc-port N]

``start`` prints one JSON line (url, grpc_port, pid, log) once the server is ready
and serves until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

from chunkweave.storage.weaviate.server.build import (
    LocalWeaviateError,
    binary_path,
    ensure_binary,
)
from chunkweave.storage.weaviate.server.local import LocalWeaviate, Ports


def _ports(port: int | None, grpc_port: int | None) -> Ports | None:
    if not (port or grpc_port):
        return None
    picked = Ports.pick()
    return Ports(
        http=port or picked.http,
        grpc=grpc_port or picked.grpc,
        gossip=picked.gossip,
        raft=picked.raft,
        profiling=picked.profiling,
    )


def _serve(server: LocalWeaviate) -> None:
    stop = {"now": False}

    def _on_signal(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with server:
        info = {
            "url": server.url,
            "grpc_port": server.ports.grpc,
            "api_key": server.api_key,  # this run's key: the server admits nothing else
            "pid": server.pid,
        }
        print(json.dumps({**info, "log": str(server.log_path)}), flush=True)
        while not stop["now"] and server.pid is not None:
            time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (1 with a message on failure)."""
    parser = argparse.ArgumentParser(
        prog="python -m chunkweave.storage.weaviate.server", description=__doc__
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("path", help="print the cached binary's path")
    sub.add_parser("build", help="build the binary if missing")
    start = sub.add_parser("start", help="run a server in the foreground until SIGTERM/Ctrl-C")
    start.add_argument("--data-dir", required=True, type=Path)
    start.add_argument("--port", type=int, help="REST port (default: free port)")
    start.add_argument("--grpc-port", type=int, help="gRPC port (default: free port)")
    start.add_argument("--log", type=Path, help="log file (default: DATA_DIR/weaviate.log)")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "path":
            print(binary_path())
        elif args.cmd == "build":
            print(ensure_binary())
        else:
            ports = _ports(args.port, args.grpc_port)
            _serve(LocalWeaviate(args.data_dir, ports=ports, log_path=args.log))
    except LocalWeaviateError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

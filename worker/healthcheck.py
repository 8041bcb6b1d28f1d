"""Container healthcheck: ``python -m chunkweave.worker.healthcheck`` exits 0 when healthy.

Checks that Redis (broker and job state) answers; when ``CHUNKWEAVE_HEALTH_URL`` is
set (the API container) also that the URL answers 2xx. Prints one line saying what
failed, so ``docker inspect`` shows the reason.
"""

from __future__ import annotations

import os
import sys

import httpx

from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import get_settings


def check() -> str | None:
    """None when healthy, else the reason."""
    try:
        client = redis_client(get_settings())
        client.ping()
        client.close()
    except Exception as err:  # noqa: BLE001 - any failure is "unhealthy"
        return f"redis: {type(err).__name__}: {err}"
    url = os.environ.get("CHUNKWEAVE_HEALTH_URL")
    if url:
        try:
            resp = httpx.get(url, timeout=5.0)
        except httpx.HTTPError as err:
            return f"{url}: {type(err).__name__}: {err}"
        if not 200 <= resp.status_code < 300:
            return f"{url}: HTTP {resp.status_code}"
    return None


def main() -> int:
    """Print the verdict and return the exit code."""
    problem = check()
    print(problem or "healthy")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())

"""The CLI facing a Redis that does not answer: say so without secrets, or ride it out.

``chunkweave status`` says "Redis unreachable" with the address (never the password)
and exits 1; ``backfill --wait`` keeps waiting through a restart of Redis (``serve``
brings its embedded one back within seconds), saying so, for at most
:data:`REDIS_GONE_MAX_S` seconds in a row.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from chunkweave.worker.settings import Settings

if TYPE_CHECKING:
    import redis

    from chunkweave.worker.enqueue import Enqueuer

T = TypeVar("T")
#: How long ``backfill --wait`` rides out an unreachable Redis before it gives up waiting.
REDIS_GONE_MAX_S = 300.0


def riding_out(enq: Enqueuer, call: Callable[[], T], job_id: str) -> T:
    """Return ``call()``, retried while Redis does not answer (a restart, a blip).

    Says so once per attempt on stderr, backing off from 0.5 s to 5 s, and gives up
    after :data:`REDIS_GONE_MAX_S` seconds in a row: the job itself goes on regardless.
    """
    import redis

    from chunkweave.worker.local_redis import redis_address

    where = redis_address(
        enq.settings.redis_url.get_secret_value() if enq.settings.redis_url else ""
    )
    delay, since = 0.5, None
    while True:
        try:
            value = call()
        except (redis.ConnectionError, redis.TimeoutError) as err:
            now = time.monotonic()
            since = since if since is not None else now
            if now - since > REDIS_GONE_MAX_S:
                raise click.ClickException(
                    f"Redis ({where}) unreachable for {now - since:.0f} s: no longer waiting; "
                    f"job {job_id} goes on (`chunkweave status {job_id}`)"
                ) from err
            click.echo(
                f"Redis ({where}) unreachable; retrying in {delay:g} s (job {job_id} goes on)",
                err=True,
            )
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
            continue
        if since is not None:
            click.echo(f"Redis is back after {time.monotonic() - since:.1f} s", err=True)
        return value


def answering(client: redis.Redis, settings: Settings) -> redis.Redis:
    """Return ``client`` once it answers; else say Redis is unreachable (no secret) and exit 1."""
    import redis

    from chunkweave.worker.local_redis import redis_address

    try:
        client.ping()
    except (redis.ConnectionError, redis.TimeoutError):
        url = settings.redis_url.get_secret_value() if settings.redis_url else ""
        click.echo(
            f"error: Redis unreachable: {redis_address(url)} does not answer (is it "
            "running? `chunkweave serve` restarts its own within seconds)",
            err=True,
        )
        sys.exit(1)
    return client

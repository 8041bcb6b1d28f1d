"""Service commands: worker, watch, serve, enqueue, backfill, status, api."""

from __future__ import annotations

import os
import sys
import threading
import time
from datetime import UTC, datetime

import click

from chunkweave.worker.cli.common import (
    check_watchable,
    echo_json,
    friendly_errors,
    metadata_options,
)
from chunkweave.worker.cli.reachable import answering, riding_out
from chunkweave.worker.discovery import Discovery
from chunkweave.worker.jobs import DocState, JobState
from chunkweave.worker.runtime import yield_cpu
from chunkweave.worker.settings import Settings, get_settings

_INSECURE_HELP = "Serve beyond loopback without a token (something else must guard it)."


def _discovered() -> Discovery:
    """Discover the running service (:mod:`..discovery`) and say so in one line on stderr.

    What it found (a running ``serve``'s Redis and Weaviate, when none is configured)
    also goes into this process's environment, where the Celery app and any worker
    child processes read it.
    """
    from chunkweave.worker.discovery import discover

    found = discover(get_settings())
    found.export()
    if (line := found.line()) is not None:
        click.echo(line, err=True)
    return found


def _service_settings() -> Settings:
    """Return the settings of :func:`_discovered`."""
    return _discovered().settings


def _producer_settings() -> Settings:
    """Like :func:`_service_settings`, for a bulk producer: also lower its CPU priority.

    ``enqueue``, ``backfill`` and ``watch`` only send tasks; at ``producer_nice`` they
    leave the CPU to workers on the same machine (see :func:`yield_cpu`).
    """
    settings = _service_settings()
    yield_cpu(settings)
    return settings


@click.command()
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: CPU count).",
)
@click.option("--queues", "-Q", default=None, help="Comma-separated queues (default: settings).")
@click.option("--loglevel", "-l", default="INFO", show_default=True)
@friendly_errors
def worker(concurrency: int | None, queues: str | None, loglevel: str) -> None:
    """Run a Celery worker (prefork pool) consuming ingest tasks from Redis.

    Without CHUNKWEAVE_REDIS_URL / CHUNKWEAVE_WEAVIATE__URL it uses the Redis and
    Weaviate of a `chunkweave serve` running on the same data directory; with no
    Weaviate at all it refuses to start (it could only fail what it takes).
    """
    from chunkweave.worker.runtime import redis_url

    found = _discovered()
    settings = found.settings
    broker = redis_url(settings)  # fail early and clearly without a broker
    default_factory = Settings.model_fields["pipeline_factory"].default
    if settings.weaviate.url is None and settings.pipeline_factory == default_factory:
        # Taking tasks it cannot store would fail every queued document.
        raise click.ClickException(found.missing("Weaviate"))
    from chunkweave.worker.celery_app import app

    # The app was built when its module was imported, maybe before the URL was found:
    # point it at that Redis now, never at Celery's default broker (AMQP on localhost).
    app.conf.broker_url = broker
    from chunkweave.worker.reindex import ReindexRefusedError, check_embedder

    try:
        check_embedder(settings)  # a model the live collection was not built with
    except ReindexRefusedError as err:
        raise click.ClickException(str(err)) from err
    argv = [
        "worker", "--pool", "prefork", "--loglevel", loglevel,
        "-Q", queues or settings.tasks.queue, "--without-gossip", "--without-mingle",
        "--concurrency", str(concurrency or os.cpu_count() or 1),
    ]  # fmt: skip
    app.worker_main(argv)


@click.command()
@click.argument("source")
@click.option("--polling", is_flag=True, help="Poll the folder (network filesystems).")
@click.option(
    "--tenant",
    default=None,
    help="Tenant every document goes to (multi-tenancy on; default: settings).",
)
@friendly_errors
def watch(source: str, polling: bool, tenant: str | None) -> None:
    """Watch a folder or s3://bucket/prefix and enqueue new, changed and removed documents."""
    check_watchable(source, "SOURCE")
    from chunkweave.worker import sources
    from chunkweave.worker.enqueue import Enqueuer, check_job_tenant

    try:  # refused before anything starts: a multi-tenant store needs a tenant named
        tenant = check_job_tenant(tenant, get_settings())
    except ValueError as err:
        raise click.UsageError(f"{err} (--tenant names it)") from None
    settings = _producer_settings()
    if tenant is not None:
        weaviate = settings.weaviate.model_copy(update={"tenant": tenant})
        settings = settings.model_copy(update={"weaviate": weaviate})
    enq = Enqueuer(settings)
    stop = threading.Event()
    runner = sources.watcher(source, enq, polling=polling).run
    click.echo(f"watching {source} (Ctrl-C stops)", err=True)
    try:
        runner(stop)
    except KeyboardInterrupt:
        stop.set()
    finally:
        enq.close()


@click.command()
@click.option(
    "--watch",
    "watch_source",
    default=None,
    metavar="DIR|s3://bucket/prefix",
    help="Also watch a folder or bucket prefix.",
)
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Worker processes.",
)
@click.option(
    "--api-port",
    type=click.IntRange(min=0, max=65535),
    default=8000,
    show_default=True,
    help="HTTP API port (0 disables the API).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="HTTP API bind address; beyond loopback it needs CHUNKWEAVE_API__TOKEN.",
)
@click.option("--insecure", is_flag=True, help=_INSECURE_HELP)
@click.option("--polling", is_flag=True, help="Poll the watched folder (network filesystems).")
@friendly_errors
def serve(
    watch_source: str | None,
    workers: int,
    api_port: int,
    host: str,
    insecure: bool,
    polling: bool,
) -> None:
    """Run the whole service: workers, watcher and HTTP API (embedded Redis/Weaviate if unset).

    The API may read the uploads folder and, with --watch, the watched folder or bucket
    (add more with CHUNKWEAVE_SOURCES__ROOTS / __BUCKETS).
    """
    from chunkweave.worker.api import check_bind
    from chunkweave.worker.serve import Service

    check_watchable(watch_source, "--watch")
    settings = get_settings()
    if api_port and (warning := check_bind(host, settings, insecure=insecure)):
        click.echo(warning, err=True)
    service = Service(
        settings,
        watch=watch_source,
        workers=workers,
        api_port=api_port or None,
        host=host,
        polling=polling,
        say=lambda msg: click.echo(msg, err=True),
    )
    raise SystemExit(service.run())


@click.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--force", is_flag=True, help="Re-process even unchanged documents.")
@click.option("--webhook", default=None, help="URL to POST the job summary to when done.")
@click.option("--json", "as_json", is_flag=True, help="Print {job_id, total} as JSON.")
@metadata_options
@friendly_errors
def enqueue(
    sources: tuple[str, ...],
    force: bool,
    webhook: str | None,
    as_json: bool,
    meta: tuple[str, ...],
    meta_file: str | None,
    tenant: str | None,
) -> None:
    """Queue files, folders or s3://bucket/prefix for the workers; print the job id.

    Sends at a lower CPU priority (CHUNKWEAVE_TASKS__PRODUCER_NICE, default 10), so workers on
    this machine keep the cores.
    """
    from chunkweave.worker.enqueue import Enqueuer, command_line_metadata
    from chunkweave.worker.sources import expand

    settings = _producer_settings()
    metadata = command_line_metadata(meta, meta_file, settings)  # before anything is queued
    enq = Enqueuer(settings)
    try:
        found = [doc for src in sources for doc in expand(src, enq.settings)]
        job_id = enq.submit(
            ((s, "ingest") for s in found),
            force=force,
            webhook_url=webhook,
            metadata=metadata,
            tenant=tenant,
        )
    finally:
        enq.close()
    if as_json:
        echo_json({"job_id": job_id, "total": len(set(found))})
    else:
        click.echo(job_id)


@click.command()
@click.argument("source")
@click.option("--force", is_flag=True, help="Re-process even unchanged documents.")
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Show progress until the job finishes.",
)
@click.option("--webhook", default=None, help="URL to POST the job summary to when done.")
@friendly_errors
def backfill(source: str, force: bool, wait: bool, webhook: str | None) -> None:
    """Enqueue everything under a folder or s3://bucket/prefix, with progress.

    Sends at a lower CPU priority (CHUNKWEAVE_TASKS__PRODUCER_NICE, default 10), so workers on
    this machine keep the cores.
    """
    from rich.progress import Progress

    from chunkweave.worker.enqueue import Enqueuer
    from chunkweave.worker.sources import expand

    enq = Enqueuer(_producer_settings())
    try:
        with Progress(transient=False) as progress:
            found = list(expand(source, enq.settings))
            sent = progress.add_task("enqueued", total=len(found))
            job_id = enq.submit(
                ((s, "ingest") for s in found),
                force=force,
                webhook_url=webhook,
                on_each=lambda _s: progress.advance(sent),
            )
            if wait:
                done = progress.add_task("processed", total=len(found))
                while True:
                    job = riding_out(enq, lambda: enq.jobs.get(job_id), job_id)
                    if job is None:
                        raise click.ClickException(f"job {job_id} vanished (expired?)")
                    progress.update(done, completed=job.done + job.failed)
                    if job.finished_at is not None:
                        break
                    time.sleep(0.5)
        job = riding_out(enq, lambda: enq.jobs.get(job_id), job_id)
    finally:
        enq.close()
    click.echo(f"job {job_id}: " + (_summary(job) if job else "queued"))
    if job is not None and job.failed:
        raise SystemExit(1)


def _timings(doc: DocState) -> str:
    """Where a document's time went, biggest stage first: ``2.10s: embed 1.80, parse 0.20``."""
    if not doc.timings or doc.seconds is None:
        return ""
    stages = sorted(doc.timings.items(), key=lambda kv: -kv[1])
    return f"  ({doc.seconds:.2f}s: " + ", ".join(f"{k} {v:.2f}" for k, v in stages) + ")"


def _summary(job: JobState) -> str:
    return (
        f"{job.status}, {job.total} documents: {job.done} done, {job.failed} failed, "
        f"{job.running} running, {job.queued} queued"
    )


@click.command()
@click.argument("job_id", required=False)
@click.option(
    "--status",
    "job_status",
    default=None,
    type=click.Choice(["queued", "running", "done", "failed"]),
    help="Only jobs in this state (listing).",
)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@friendly_errors
def status(job_id: str | None, job_status: str | None, limit: int, as_json: bool) -> None:
    """Show one job with its documents, or list recent jobs."""
    from chunkweave.worker.jobs import JobStore
    from chunkweave.worker.runtime import NoRedisConfiguredError, redis_client

    settings = _service_settings()
    try:
        client = redis_client(settings)
    except NoRedisConfiguredError as err:  # none configured: absent, or recorded but down
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    store = JobStore(answering(client, settings), ttl_s=settings.tasks.job_ttl_s)
    if job_id is None:
        jobs = store.list(status=job_status, limit=limit)  # type: ignore[arg-type]
        if as_json:
            echo_json([j.shown().model_dump(mode="json", exclude={"docs"}) for j in jobs])
            return
        for j in jobs:
            when = datetime.fromtimestamp(j.created_at, UTC).strftime("%Y-%m-%d %H:%M:%S")
            click.echo(f"{j.id}  {when}  {_summary(j)}")
        from chunkweave.worker.reindex import status_lines

        for line in status_lines(store.r):
            click.echo(line)
        return
    job = store.get(job_id, with_docs=True)
    if job is None:
        raise click.ClickException(f"job {job_id} not found (unknown or expired)")
    if as_json:
        echo_json(job.shown().model_dump(mode="json"))
        return
    click.echo(f"job {job.id}: {_summary(job)}")
    for d in job.docs or ():
        detail = d.outcome or d.stage or ""
        if d.status == "done":
            detail = f"{d.outcome}, {d.pages} pages, +{d.chunks_added}/={d.chunks_unchanged}"
            detail += _timings(d)
        elif d.status == "failed":
            detail = f"[{d.error_code}] {d.error}"
        click.echo(f"  {d.status:<8} {d.source}  {detail}")


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Bind address; beyond loopback it needs CHUNKWEAVE_API__TOKEN.",
)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(min=1, max=65535))
@click.option("--insecure", is_flag=True, help=_INSECURE_HELP)
@friendly_errors
def api(host: str, port: int, insecure: bool) -> None:
    """Serve the HTTP API (FastAPI + uvicorn; docs at /docs when no token is set).

    POST /jobs may name paths under CHUNKWEAVE_SOURCES__ROOTS (default: the uploads
    folder) and buckets in CHUNKWEAVE_SOURCES__BUCKETS.
    """
    import uvicorn

    from chunkweave.worker.api import check_bind, create_app

    settings = _service_settings()
    if warning := check_bind(host, settings, insecure=insecure):
        click.echo(warning, err=True)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


def register(group: click.Group) -> None:
    """Add the service commands to the root ``chunkweave`` group."""
    for command in (worker, watch, serve, enqueue, backfill, status, api):
        group.add_command(command)

"""Fan-out of large PDFs: page-range parse subtasks, joined for one write.

A PDF with more than ``fanout_pages`` pages is split into parts of
``fanout_part_pages`` pages. Each part is a ``parse_part`` task (any worker, any
host) that parses its page range (``ParseOptions.page_range``) and stores the
resulting ``ParsedDocument`` as a part of the fan-out (:mod:`.parts`: scratch keys
under ``keys.fanout_parts``, with a TTL). No elements travel as task payloads:
messages carry only the URI, the content SHA1 and the page range.

The part that completes the set enqueues ``finish_document``. That task
concatenates the parts in page order, runs ``chunkweave.parsers.structure.finalize``
over the whole sequence (so heading paths continue across part boundaries and orders
are renumbered), and writes the document as a single-task ingest does
(``IngestPipeline.ingest_parsed``, under the document's write lock); one with many
chunks is written in slices on many workers instead (:mod:`.slices`). Scratch data
is deleted after the write; abandoned parts (a failed sibling) expire with their TTL.

Each part and the join are owned by the job record like whole documents
(:func:`~chunkweave.worker.tasks.base.send_step`): a part whose worker dies, or
whose message Redis lost, is sent again by the reconciler within its bounds, not
after the broker's visibility timeout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from celery import Task

from chunkweave.parsers import ParsedDocument, page_count, parse_document, warm_up
from chunkweave.parsers.errors import ErrorCode
from chunkweave.parsers.parts import join_parts
from chunkweave.storage.pipeline.check import file_version
from chunkweave.worker import keys, ownership
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import fetched
from chunkweave.worker.tasks import slices
from chunkweave.worker.tasks.base import doc_task, send_step, step_kwargs, write_lock
from chunkweave.worker.tasks.parts import Parts
from chunkweave.worker.tasks.recorder import DocRun

# At module load, i.e. in the worker's parent process before it forks, so no task
# pays the (seconds-long) first import of PyMuPDF against its time limit.
warm_up()


def plan_ranges(pages: int, part_pages: int) -> list[tuple[int, int]]:
    """1-based inclusive page ranges covering ``1..pages`` in parts of ``part_pages``."""
    return [(a, min(a + part_pages - 1, pages)) for a in range(1, pages + 1, part_pages)]


def plan(path: Path, settings: Settings) -> list[tuple[int, int]] | None:
    """Page ranges to fan out into, or None when the document runs as one task."""
    pages = page_count(path)
    if pages is None or pages <= settings.fanout.pages:
        return None
    return plan_ranges(pages, settings.fanout.part_pages)


def _parts(run: DocRun, sha1: str) -> Parts:
    """Return the page-range parts of this version of the run's document."""
    ttl_s = run.rt.settings.tasks.job_ttl_s
    return Parts(run.rt.redis, keys.fanout_parts(run.doc_id, sha1), kind="part", ttl_s=ttl_s)


def fan_out(run: DocRun, path: Path, *, force: bool, task: Task) -> dict[str, Any] | None:
    """Fan a large PDF out into ``parse_part`` tasks; None when it runs as one task.

    The pipeline's check stage runs first, on the file's hash the task took: an
    unchanged document is recorded as such before anything is fanned out, and one
    whose metadata alone changed is given it in place (under the document's write lock).
    """
    parts = plan(path, run.rt.settings)
    if parts is None:
        return None
    if not force:
        pipeline = run.rt.pipeline
        ids: dict[str, Any] = {"source": run.source, "doc_id": run.doc_id, "sha1": run.sha1}
        checked = pipeline.check(path, **ids, **run.carried())
        if checked.verdict == "unchanged":
            return run.done(checked.unchanged())
        if checked.verdict == "metadata_only":
            with write_lock(task, run):
                retagged = pipeline.retag(path, **ids, **run.carried())
            if retagged is not None:
                return run.done(retagged)
    start(run, parts)
    return {"doc_id": run.doc_id, "status": "fanned_out", "parts": len(parts)}


def start(run: DocRun, parts: list[tuple[int, int]]) -> None:
    """Enqueue one ``parse_part`` per range for the document ``run`` is processing."""
    assert run.sha1 is not None
    run.clear_attempts()  # the parent's work ends here; parts count their own
    run.running(stage=f"parsing {len(parts)} parts", progress=0.0)
    _parts(run, run.sha1).reset()
    ownership.forget_steps(run.rt.redis, run.job_id, run.doc_id)
    for index, (first, last) in enumerate(parts):
        kwargs = step_kwargs(run, run.sha1, index=index, first=first, last=last, parts=len(parts))
        send_step(run, parse_part, kwargs)


def _still_wanted(run: DocRun) -> bool:
    current = run.rt.jobs.get_doc(run.job_id, run.doc_id)
    return current is None or current.status not in ("done", "failed")


@doc_task("chunkweave.parse_part")
def parse_part(
    task: Task, run: DocRun, *, sha1: str, index: int, first: int, last: int, parts: int
) -> dict[str, Any]:
    """Parse pages ``first..last`` of the source into the scratch store."""
    rt = run.rt
    settings = rt.settings
    run.sha1, run.part = sha1, f"part{index}"
    if not _still_wanted(run):
        return {"doc_id": run.doc_id, "status": "skipped"}
    with fetched(run.source, settings) as path:
        if file_version(path) != sha1:
            return run.failed(
                ErrorCode.CHANGED, f"{run.source}: changed while being processed; re-enqueue it"
            )
        if not run.count_attempt():
            return run.poisoned(f"pages {first}-{last}")
        opts = settings.parse.model_copy(update={"page_range": (first, last)})
        # The pipeline's parse stage for one page range; the file's version is checked above.
        doc = parse_document(path, opts, sha1=sha1)
    _, count = _parts(run, sha1).finish(index, parts, payload=doc.model_dump_json().encode())
    run.clear_attempts()
    if count == parts:
        # Whichever run of a part sees the set complete may send the join; the job
        # record lets one through, even when the part that completed it died before.
        send_step(run, finish_document, step_kwargs(run, sha1, parts=parts), once=True)
    run.running(stage=f"parsed {count}/{parts} parts", progress=count / (parts + 1))
    return {"doc_id": run.doc_id, "status": "part_parsed", "index": index}


@doc_task("chunkweave.finish_document")
def finish_document(task: Task, run: DocRun, *, sha1: str, parts: int) -> dict[str, Any]:
    """Join the parsed parts and write the document once."""
    rt = run.rt
    run.sha1 = sha1
    source, doc_id = run.source, run.doc_id
    if not _still_wanted(run):
        return {"doc_id": doc_id, "status": "skipped"}
    run.running(stage="writing", progress=parts / (parts + 1))
    scratch = _parts(run, sha1)
    payloads = scratch.get_all(parts)
    if payloads is None:
        return run.failed(ErrorCode.INTERNAL, f"{source}: fan-out parts expired before the join")
    doc = join_parts([ParsedDocument.model_validate_json(p) for p in payloads], source=source)
    chunks = rt.pipeline.chunk(doc, source=source, doc_id=doc_id)
    if len(chunks) > rt.settings.fanout.embed_chunks:
        # Embedding dominates big documents: spread it over the workers too.
        result = slices.start(run, task, doc, chunks)
    else:
        with write_lock(task, run):
            outcome = rt.pipeline.ingest_parsed(
                doc, source=source, doc_id=doc_id, chunks=chunks, **run.carried()
            )
        result = run.done(outcome)
    scratch.clear(parts)
    return result

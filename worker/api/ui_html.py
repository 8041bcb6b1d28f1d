"""HTML of the service dashboard (``/ui``): server-rendered, one hash-pinned script, no assets.

Every value shown is escaped; links carry their parameters URL-encoded.
"""

from __future__ import annotations

import html
import time
import zlib
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from urllib.parse import urlencode

from chunkweave.worker.inspect.write import script_hash
from chunkweave.worker.jobs import DocState, JobState

#: The one script of the dashboard: the status filter applies when it changes.
_FILTER_SCRIPT = (
    "document.querySelector('#filter select')"
    ".addEventListener('change', e => e.target.form.submit());"
)
#: Content-Security-Policy of every dashboard page: nothing loads from elsewhere and no
#: script runs but the one above (pinned by its hash: no inline script, no handlers).
CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    f"script-src {script_hash(_FILTER_SCRIPT)}; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
STATUSES = ("queued", "running", "done", "failed")

_STYLE = """
body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1d1d1f;background:#eef0f3}
header{background:#fff;border-bottom:1px solid #ccd;padding:10px 16px}
header h1{margin:0;font-size:18px} header a{color:inherit;text-decoration:none}
main{padding:12px 16px} table{border-collapse:collapse;background:#fff;width:100%}
th,td{border-bottom:1px solid #e2e4e8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f7f9;font-weight:600} td.num{text-align:right}
.st{padding:1px 6px;border-radius:8px;font-size:12px}
.st-done{background:#d8f3dc}.st-failed{background:#ffd6d6}.st-running{background:#dbe8ff}
.st-queued{background:#eee}
.bar{display:flex;width:260px;height:14px;background:#eee;border-radius:3px;overflow:hidden}
.bar span{display:block;height:100%}
.timings{font-size:12px;color:#444}
.err{color:#9b1c1c;font-size:12px} .pager{margin:10px 0}
form.login{background:#fff;padding:16px;max-width:420px;border:1px solid #ccd;border-radius:6px}
"""


def page(title: str, body: str) -> str:
    """Return a whole dashboard page around ``body``."""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)} · chunkweave</title><style>{_STYLE}</style></head>"
        "<body><header><h1><a href='/ui'>chunkweave</a> · "
        f"{html.escape(title)}</h1></header><main>{body}</main></body></html>"
    )


def login(message: str | None = None) -> str:
    """Return the token form (shown with 401 to a browser without a valid session)."""
    note = f"<p class='err'>{html.escape(message)}</p>" if message else ""
    return page(
        "sign in",
        "<form class='login' method='post' action='/ui/login'>"
        "<p>This service needs its API token (<code>CHUNKWEAVE_API__TOKEN</code>).</p>"
        f"{note}<label>Token <input type='password' name='token' id='token' "
        "autocomplete='current-password' required></label> "
        "<button type='submit'>Sign in</button></form>",
    )


def jobs_page(
    jobs: Sequence[JobState],
    status: str | None,
    limit: int,
    next_cursor: float | None,
    sources: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """Return the job list: a status filter, one row per job, a link to the next page.

    A job is named by the file names of (a few of) its documents, from ``sources``.
    """
    options = "".join(
        f"<option value='{s}'{' selected' if s == status else ''}>{s}</option>"
        for s in ("", *STATUSES)
    )
    rows = []
    for job in jobs:
        link = f"/ui/jobs/{html.escape(job.id)}"
        rows.append(
            f"<tr class='job' data-job='{html.escape(job.id)}'>"
            f"<td><a href='{link}'>{_names(job, (sources or {}).get(job.id, ()))}</a>"
            f"<br><small class='id'>{html.escape(job.id)}</small></td>"
            f"<td>{_status(job.status)}</td><td>{_when(job.created_at)}</td>"
            f"<td class='num'>{job.total}</td><td class='num'>{job.done}</td>"
            f"<td class='num'>{job.failed}</td><td class='num'>{job.running + job.queued}</td>"
            f"<td>{_duration(job)}</td></tr>"
        )
    table = (
        "<table id='jobs'><tr><th>job</th><th>status</th><th>created (UTC)</th><th>docs</th>"
        "<th>done</th><th>failed</th><th>pending</th><th>took</th></tr>"
        + ("".join(rows) or "<tr><td colspan='8'>no jobs</td></tr>")
        + "</table>"
    )
    pager = ""
    if next_cursor is not None:
        query = {"limit": limit, "cursor": repr(next_cursor)}
        if status:
            query["status"] = status
        pager = f"<p class='pager'><a id='next' href='/ui?{urlencode(query)}'>next page →</a></p>"
    form = (
        "<form method='get' action='/ui' id='filter'><label>status "
        f"<select name='status'>{options}</select></label>"
        f"<input type='hidden' name='limit' value='{limit}'> <noscript><button>filter"
        f"</button></noscript></form><script>{_FILTER_SCRIPT}</script>"
    )
    return page("jobs", form + table + pager)


def _names(job: JobState, sources: Sequence[str]) -> str:
    """``report.pdf, q3.docx +12 more``: the file names of a job's documents (escaped)."""
    names = [PurePosixPath(s.rstrip("/")).name or s for s in sources]
    if not names:
        return "(no documents)" if job.total == 0 else f"{job.total} document(s)"
    more = job.total - len(names)
    return html.escape(", ".join(names)) + (f" +{more} more" if more > 0 else "")


def job_page(job: JobState, docs: Sequence[DocState], offset: int, per_page: int) -> str:
    """Return one job's documents: status, error code, stage timings as a bar, inspector link."""
    rows = []
    for doc in docs:
        inspect = ""
        if doc.action == "ingest" and doc.status == "done":
            href = "/ui/inspect?" + urlencode({"doc_id": doc.doc_id})
            inspect = f"<a class='inspect' href='{html.escape(href)}'>inspect</a>"
        error = ""
        if doc.error_code or doc.error:
            error = (
                f"<div class='err'><code>{html.escape(doc.error_code or '')}</code> "
                f"{html.escape(doc.error or '')}</div>"
            )
        rows.append(
            f"<tr class='doc' data-doc='{html.escape(doc.doc_id)}'>"
            f"<td>{html.escape(doc.source)}{error}</td><td>{_status(doc.status)}</td>"
            f"<td>{html.escape(doc.outcome or '')}</td><td class='num'>{doc.pages}</td>"
            f"<td class='num'>{doc.chunks_added}/{doc.chunks_unchanged}/{doc.chunks_deleted}</td>"
            f"<td>{timings(doc.timings, doc.seconds)}</td><td>{inspect}</td></tr>"
        )
    more = ""
    total = job.total
    if offset + per_page < len(job.docs or ()):
        more = (
            f"<p class='pager'><a id='next' href='/ui/jobs/{html.escape(job.id)}?"
            f"offset={offset + per_page}'>next {per_page} documents →</a></p>"
        )
    head = (
        f"<p>{_status(job.status)} · {total} documents · {job.done} done · {job.failed} failed"
        f" · created {_when(job.created_at)} UTC · took {_duration(job)}</p>"
    )
    table = (
        "<table id='docs'><tr><th>source</th><th>status</th><th>outcome</th><th>pages</th>"
        "<th>chunks added/unchanged/deleted</th><th>stage timings</th><th></th></tr>"
        + ("".join(rows) or "<tr><td colspan='7'>no documents</td></tr>")
        + "</table>"
    )
    return page(f"job {job.id}", head + table + more)


def timings(stages: dict[str, float] | None, seconds: float | None) -> str:
    """Return the stage timings as a bar (one coloured part per stage) and as text."""
    if not stages:
        return "" if seconds is None else f"<span class='timings'>{seconds:.2f} s</span>"
    total = sum(max(v, 0.0) for v in stages.values()) or 1.0
    parts, labels = [], []
    for stage, secs in stages.items():
        name = html.escape(stage)
        share = max(secs, 0.0) / total * 100
        parts.append(
            f"<span class='stage' data-stage='{name}' title='{name}: {secs:.3f} s' "
            f"style='width:{share:.2f}%;background:{_stage_colour(stage)}'></span>"
        )
        labels.append(f"{name} {secs:.2f} s")
    took = f" · total {seconds:.2f} s" if seconds is not None else ""
    return (
        f"<div class='bar'>{''.join(parts)}</div>"
        f"<div class='timings'>{' · '.join(labels)}{took}</div>"
    )


def _stage_colour(stage: str) -> str:
    # The same stage has the same colour on every row and page.
    hue = zlib.crc32(stage.encode()) % 360
    return f"hsl({hue},65%,55%)"


def _status(status: str) -> str:
    s = html.escape(status)
    return f"<span class='st st-{s}'>{s}</span>"


def _when(ts: float | None) -> str:
    return "" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts))


def _duration(job: JobState) -> str:
    if job.finished_at is None:
        return ""
    return f"{job.finished_at - job.created_at:.1f} s"

"""The completion webhook task: POST a finished job's summary, signed, with retries.

The URL is checked again at delivery (its name may resolve elsewhere by now); a
refused URL is logged (redacted) and not retried.
"""

from __future__ import annotations

import logging

from celery import Task

from chunkweave.worker.celery_app import app
from chunkweave.worker.runtime import get_runtime
from chunkweave.worker.tasks.base import NOTIFY_TASK, backoff_s
from chunkweave.worker.webhook import WebhookRefusedError, deliver, redact

log = logging.getLogger(__name__)


@app.task(bind=True, name=NOTIFY_TASK, max_retries=None, acks_late=True)
def send_webhook(self: Task, *, job_id: str) -> None:
    """POST the finished job's summary to its webhook URL (retried with backoff)."""
    rt = get_runtime()
    job = rt.jobs.get(job_id)
    if job is None or not job.webhook_url:
        return
    secret = rt.settings.webhook.secret
    if secret is None:
        log.error("job %s: no CHUNKWEAVE_WEBHOOK__SECRET on this worker; webhook not sent", job_id)
        return
    summary = job.model_copy(update={"webhook_url": redact(job.webhook_url)})
    try:
        deliver(
            job.webhook_url,
            summary.model_dump_json().encode(),
            secret=secret.get_secret_value(),
            timeout_s=rt.settings.webhook.timeout_s,
            allow=rt.settings.webhook.allow_hosts,
        )
    except WebhookRefusedError as err:
        log.error("job %s: %s; not sent", job_id, err)
    except Exception as err:
        if self.request.retries >= rt.settings.webhook.retries:
            log.error("job %s: giving up on webhook %s: %s", job_id, redact(job.webhook_url), err)
            return
        raise self.retry(exc=err, countdown=backoff_s(self)) from err

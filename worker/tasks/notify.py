"""The completion webhook task: POST a finished job's summary, signed, with retries."""

from __future__ import annotations

import logging

from celery import Task

from chunkweave.worker.celery_app import app
from chunkweave.worker.runtime import get_runtime
from chunkweave.worker.tasks.base import NOTIFY_TASK, backoff_s
from chunkweave.worker.webhook import deliver

log = logging.getLogger(__name__)


@app.task(bind=True, name=NOTIFY_TASK, max_retries=None, acks_late=True)
def send_webhook(self: Task, *, job_id: str) -> None:
    """POST the finished job's summary to its webhook URL (retried with backoff)."""
    rt = get_runtime()
    job = rt.jobs.get(job_id)
    if job is None or not job.webhook_url:
        return
    secret = rt.settings.webhook_secret
    try:
        deliver(
            job.webhook_url,
            job.model_dump_json().encode(),
            secret=secret.get_secret_value() if secret else None,
            timeout_s=rt.settings.webhook_timeout_s,
        )
    except Exception as err:
        if self.request.retries >= rt.settings.webhook_retries:
            log.error("giving up on webhook for job %s: %s", job_id, err)
            return
        raise self.retry(exc=err, countdown=backoff_s(self)) from err

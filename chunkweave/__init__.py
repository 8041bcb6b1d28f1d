"""chunkweave for other applications: ``from chunkweave import enqueue``.

``enqueue(*sources, force=False, webhook_url=None)`` queues files, folders or
``s3://bucket/prefix`` sources for the worker service and returns a job id; see
:func:`chunkweave.worker.enqueue.enqueue`. Job state: ``chunkweave status JOB`` or the HTTP API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["enqueue"]

if TYPE_CHECKING:
    from chunkweave.worker.enqueue import enqueue
else:

    def enqueue(*sources: Any, **kwargs: Any) -> str:
        """Queue sources for ingestion; see :func:`chunkweave.worker.enqueue.enqueue`."""
        # Imported on call so `import chunkweave` stays cheap (no Celery, no boto3).
        from chunkweave.worker.enqueue import enqueue as _enqueue

        return _enqueue(*sources, **kwargs)

"""Celery tasks: thin shells over the pipeline that take references, never bytes.

- :mod:`.base`: the :func:`~.base.doc_task` decorator, failure handling, write lock.
- :mod:`.recorder`: :class:`~.recorder.DocRun`, how every outcome is recorded.
- :mod:`.ingest`: ``ingest_document`` and ``delete_document``.
- :mod:`.fanout`: large PDFs parsed in page-range parts on every worker, then joined.
- :mod:`.slices`: a big document's chunks embedded and written in slices, then committed.
- :mod:`.parts`: the Redis parts-join protocol both halves of a fan-out use.
- :mod:`.notify`: the completion webhook.
- :mod:`.reindex`: a document written into a reindex's target version; the reindex's steps.
"""

#: Modules the Celery app loads so that workers know every task.
TASK_MODULES = (
    "chunkweave.worker.tasks.ingest",
    "chunkweave.worker.tasks.fanout",
    "chunkweave.worker.tasks.slices",
    "chunkweave.worker.tasks.notify",
    "chunkweave.worker.tasks.reindex",
)

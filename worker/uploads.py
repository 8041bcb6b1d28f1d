"""Where HTTP uploads live until their document is stored: a folder, or an S3 prefix.

Single host: ``upload_dir/<sha1>/<name>``, a folder every worker must be able to
read. Several hosts with no shared disk: set ``CHUNKWEAVE_UPLOADS_S3`` to an
``s3://bucket/prefix/`` and uploads go to ``<prefix><sha1>/<name>`` there, so any
worker fetches them like any ``s3://`` source. Either way the file is named by its
content, written completely before any task names it, and deleted once its document
is final (``upload_retention``). The same bytes uploaded again under the same name,
while the first is still queued, share the file: each upload holds it (``cw:uploads``)
and the last to end deletes it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import redis

from chunkweave.worker import keys
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources.s3 import s3_client, split_s3

#: Longest wait for another process storing or releasing the same file.
_LOCK_WAIT_S = 30


@contextlib.contextmanager
def _locked(r: redis.Redis, source: str) -> Iterator[None]:
    with r.lock(keys.upload_lock(source), timeout=60, blocking_timeout=_LOCK_WAIT_S):
        yield


def save(staged: Path, sha1: str, name: str, settings: Settings, r: redis.Redis) -> str:
    """Move a complete, staged upload into the uploads store, held once; return its source.

    The same bytes uploaded under the same name share one file; each upload holds it
    (a count in ``cw:uploads``) until its document ends (:func:`release`), so
    concurrent uploads of one file never delete it from under each other. ``staged``
    is consumed (renamed into the folder, or uploaded and removed).
    """
    if settings.uploads_s3:
        bucket, prefix = split_s3(settings.uploads_s3)
        key = f"{prefix.rstrip('/')}/{sha1}/{name}".lstrip("/")
        source = f"s3://{bucket}/{key}"
        try:
            with _locked(r, source):
                r.hincrby(keys.UPLOAD_HOLDS, source, 1)
                s3_client(settings.s3).upload_file(str(staged), bucket, key)
        finally:
            staged.unlink(missing_ok=True)
        return source
    final = settings.upload_dir / sha1 / name
    with _locked(r, str(final)):
        # Under the lock: the last release of the same file removes its folder.
        final.parent.mkdir(parents=True, exist_ok=True)
        r.hincrby(keys.UPLOAD_HOLDS, str(final), 1)
        staged.replace(final)  # atomic: workers never see a partial upload
    return str(final)


def is_upload(source: str, settings: Settings) -> bool:
    """Tell whether ``source`` is a file of the uploads store."""
    if settings.uploads_s3 and source.startswith("s3://"):
        bucket, prefix = split_s3(settings.uploads_s3)
        sbucket, key = split_s3(source)
        return sbucket == bucket and key.startswith(prefix)
    path = Path(source)
    return path.is_absolute() and path.resolve().is_relative_to(settings.upload_dir.resolve())


def release(source: str, settings: Settings, r: redis.Redis, *, delete: bool = True) -> None:
    """Drop one hold on an upload; delete it when none is left (unless ``delete=False``).

    A no-op for any other source, or an upload already gone. A file held by no count
    (stored before counts were kept) is deleted at once, as it was then.
    """
    if not is_upload(source, settings):
        return
    with _locked(r, source):
        if r.hincrby(keys.UPLOAD_HOLDS, source, -1) > 0:
            return  # another queued document still reads this file
        r.hdel(keys.UPLOAD_HOLDS, source)
        if not delete:
            return
        if source.startswith("s3://"):
            bucket, key = split_s3(source)
            s3_client(settings.s3).delete_object(Bucket=bucket, Key=key)
            return
        path = Path(source)
        path.unlink(missing_ok=True)
        if path.parent != settings.upload_dir.resolve():
            with contextlib.suppress(OSError):  # another upload of the same bytes is there
                path.parent.rmdir()

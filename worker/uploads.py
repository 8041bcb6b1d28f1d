"""Where HTTP uploads live until their document is stored: a folder, or an S3 prefix.

Single host: ``upload_dir/<sha1>/<name>``, a folder every worker must be able to
read. Several hosts with no shared disk: set ``CHUNKWEAVE_UPLOADS_S3`` to an
``s3://bucket/prefix/`` and uploads go to ``<prefix><sha1>/<name>`` there, so any
worker fetches them like any ``s3://`` source. Either way the file is named by its
content, written completely before any task names it, and deleted once its document
is final (``upload_retention``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from chunkweave.worker.settings import Settings
from chunkweave.worker.sources.s3 import s3_client, split_s3


def save(staged: Path, sha1: str, name: str, settings: Settings) -> tuple[str, bool]:
    """Move a complete, staged upload into the uploads store.

    Return its source URI and whether this call created it (``False``: the same bytes
    under the same name were there already, from another upload). ``staged`` is
    consumed (renamed into the folder, or uploaded and removed).
    """
    if settings.uploads_s3:
        bucket, prefix = split_s3(settings.uploads_s3)
        key = f"{prefix.rstrip('/')}/{sha1}/{name}".lstrip("/")
        try:
            s3_client(settings.s3).upload_file(str(staged), bucket, key)
        finally:
            staged.unlink(missing_ok=True)
        return f"s3://{bucket}/{key}", True
    final = settings.upload_dir / sha1 / name
    final.parent.mkdir(parents=True, exist_ok=True)
    existed = final.exists()
    staged.replace(final)  # atomic: workers never see a partial upload
    return str(final), not existed


def is_upload(source: str, settings: Settings) -> bool:
    """Tell whether ``source`` is a file of the uploads store."""
    if settings.uploads_s3 and source.startswith("s3://"):
        bucket, prefix = split_s3(settings.uploads_s3)
        sbucket, key = split_s3(source)
        return sbucket == bucket and key.startswith(prefix)
    path = Path(source)
    return path.is_absolute() and path.resolve().is_relative_to(settings.upload_dir.resolve())


def release(source: str, settings: Settings) -> None:
    """Delete an upload (no-op for any other source, or one already gone)."""
    if not is_upload(source, settings):
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

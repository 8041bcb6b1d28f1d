"""Uploaded files: streamed to a staging file, then into the uploads store.

The store (a folder or an S3 prefix) is :mod:`chunkweave.worker.uploads`.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path

import redis
from fastapi import HTTPException, status
from fastapi.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from chunkweave.worker import uploads
from chunkweave.worker.settings import Settings

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_COPY_BLOCK = 1 << 20


#: Longest stored upload name, in bytes (file systems take 255; the name is ASCII).
MAX_NAME = 200


def safe_name(name: str | None) -> str:
    """Return the name without its directory part, reduced to ``[A-Za-z0-9._-]``.

    A name longer than :data:`MAX_NAME` keeps its suffix (``.pdf``) and loses the end
    of its stem.
    """
    base = _SAFE_NAME.sub("_", Path(name or "upload").name).lstrip(".") or "upload"
    if len(base) <= MAX_NAME:
        return base
    suffix = Path(base).suffix[:16]
    return base[: MAX_NAME - len(suffix)] + suffix


async def store_upload(upload: UploadFile, settings: Settings, r: redis.Redis) -> str:
    """Stream one upload into the uploads store, held once; return its source.

    The source is a path or an ``s3://`` URI; the caller releases the hold
    (:func:`chunkweave.worker.uploads.release`) if it queues no document on it.

    Staged under a temporary name in ``upload_dir`` first, so workers never see a
    partial upload; raises 413 past ``max_upload_bytes`` (nothing is left behind).
    """
    staging = settings.upload_dir
    staging.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1()
    size = 0
    with tempfile.NamedTemporaryFile(dir=staging, prefix=".upload-", delete=False) as tmp:
        tmp_path = Path(tmp.name)
        try:
            while block := await upload.read(_COPY_BLOCK):
                size += len(block)
                if size > settings.api.max_upload_bytes:
                    raise HTTPException(
                        status.HTTP_413_CONTENT_TOO_LARGE,
                        f"{upload.filename}: larger than {settings.api.max_upload_bytes} bytes",
                    )
                digest.update(block)
                tmp.write(block)
        except BaseException:
            tmp_path.unlink(missing_ok=True)
            raise
    name = safe_name(upload.filename)
    return await run_in_threadpool(uploads.save, tmp_path, digest.hexdigest(), name, settings, r)

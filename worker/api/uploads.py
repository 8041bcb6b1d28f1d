"""Uploaded files: streamed to ``Settings.upload_dir`` under their content SHA1."""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path

from fastapi import HTTPException, status
from starlette.datastructures import UploadFile

from chunkweave.worker.settings import Settings

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_COPY_BLOCK = 1 << 20


def safe_name(name: str | None) -> str:
    """Return the name without its directory part, reduced to ``[A-Za-z0-9._-]``."""
    base = Path(name or "upload").name
    return _SAFE_NAME.sub("_", base).lstrip(".") or "upload"


async def store_upload(upload: UploadFile, settings: Settings) -> Path:
    """Copy one upload to ``upload_dir/<sha1>/<name>``, enforcing the size limit.

    Written to a temporary name first and renamed, so workers never see a partial
    upload; raises 413 past ``max_upload_bytes`` (nothing is left behind).
    """
    target_dir = settings.upload_dir
    target_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1()
    size = 0
    with tempfile.NamedTemporaryFile(dir=target_dir, prefix=".upload-", delete=False) as tmp:
        tmp_path = Path(tmp.name)
        try:
            while block := await upload.read(_COPY_BLOCK):
                size += len(block)
                if size > settings.max_upload_bytes:
                    raise HTTPException(
                        status.HTTP_413_CONTENT_TOO_LARGE,
                        f"{upload.filename}: larger than {settings.max_upload_bytes} bytes",
                    )
                digest.update(block)
                tmp.write(block)
        except BaseException:
            tmp_path.unlink(missing_ok=True)
            raise
    final = target_dir / digest.hexdigest() / safe_name(upload.filename)
    final.parent.mkdir(exist_ok=True)
    tmp_path.replace(final)
    return final

"""Source URIs: what a task is given instead of bytes, and how a worker reads one.

A source is either an absolute local path (on a filesystem every worker sees) or
``s3://bucket/key``. Tasks carry only the URI; the worker reads local files in place
and downloads S3 objects to a temporary file that is removed after the task.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from chunkweave.worker.settings import S3Config

#: File suffixes the service picks up when walking folders and prefixes.
DOC_SUFFIXES = frozenset({".pdf", ".docx"})
_TEMP_SUFFIXES = (".tmp", ".part", ".crdownload", ".swp", ".partial", "~")


class SourceNotFoundError(FileNotFoundError):
    """The source named in a task no longer exists."""

    code = "not_found"


def is_s3(source: str) -> bool:
    """Tell whether ``source`` is an ``s3://`` URI."""
    return source.startswith("s3://")


def split_s3(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/key`` -> ``("bucket", "some/key")``."""
    rest = uri.removeprefix("s3://")
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise ValueError(f"{uri}: not an s3://bucket/key URI")
    return bucket, key


def normalize(source: str | Path) -> str:
    """Canonical form of a source: S3 URIs as given, local paths absolute and resolved.

    ``file://`` URIs (what ``doc_id_for`` makes of local paths) become paths again.
    """
    text = str(source)
    if is_s3(text):
        return text
    if text.startswith("file://"):  # a doc_id of a local file is its file:// URI
        text = unquote(urlsplit(text).path)
    return str(Path(text).expanduser().resolve())


def wanted(name: str) -> bool:
    """Tell whether a file name is a document to process (not hidden, temp, other type).

    Editors and copy tools write ``.~lock``/``~$x.docx``/``x.pdf.part`` files and
    atomic writers use hidden temp names; none of them is a finished document.
    """
    base = PurePosixPath(name).name
    if base.startswith((".", "~$")) or base.endswith(_TEMP_SUFFIXES):
        return False
    return PurePosixPath(base).suffix.lower() in DOC_SUFFIXES


def iter_local(root: Path) -> Iterator[Path]:
    """Every wanted document under ``root`` (a file or a folder), sorted, hidden dirs skipped."""
    if root.is_file():
        yield root.resolve()
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if wanted(name):
                yield (Path(dirpath) / name).resolve()


def s3_client(cfg: S3Config) -> Any:
    """Build a boto3 S3 client for the configured endpoint and credentials."""
    import boto3  # deferred: boto3 import costs ~0.3 s and most commands never need it

    return boto3.client(
        "s3",
        endpoint_url=cfg.endpoint_url,
        region_name=cfg.region,
        aws_access_key_id=(cfg.access_key_id.get_secret_value() if cfg.access_key_id else None),
        aws_secret_access_key=(
            cfg.secret_access_key.get_secret_value() if cfg.secret_access_key else None
        ),
    )


def iter_s3(client: Any, uri: str) -> Iterator[tuple[str, str]]:
    """``(s3 URI, ETag)`` of every wanted object under the ``s3://bucket/prefix``."""
    bucket, prefix = split_s3(uri)
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", ()):
            if wanted(obj["Key"]):
                yield f"s3://{bucket}/{obj['Key']}", str(obj.get("ETag", "")).strip('"')


@contextmanager
def fetched(source: str, s3: S3Config) -> Iterator[Path]:
    """Yield a local path holding the source's bytes for the duration of the block.

    Raises :class:`SourceNotFoundError` when the file or object is gone.
    """
    if not is_s3(source):
        path = Path(source)
        if not path.is_file():
            raise SourceNotFoundError(f"{source}: no such file")
        yield path
        return
    from botocore.exceptions import ClientError

    bucket, key = split_s3(source)
    suffix = PurePosixPath(key).suffix
    with tempfile.TemporaryDirectory(prefix="chunkweave-s3-") as tmp:
        local = Path(tmp) / f"object{suffix}"
        try:
            s3_client(s3).download_file(bucket, key, str(local))
        except ClientError as err:
            status = err.response.get("Error", {}).get("Code", "")
            if status in ("404", "NoSuchKey", "NotFound"):
                raise SourceNotFoundError(f"{source}: no such object") from err
            raise
        yield local

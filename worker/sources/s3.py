"""``s3://bucket/key`` sources on any S3-compatible store (AWS, MinIO, SeaweedFS...).

Workers download an object to a temporary file that is removed after the task.
Credentials and the endpoint come from ``CHUNKWEAVE_S3__*`` (:class:`~.settings.S3Config`).

Watched prefixes (:class:`BucketWatcher`): S3-compatible stores have no portable change
feed, so the watcher lists ``s3://bucket/prefix`` every ``poll_interval_s``
(``list_objects_v2``, paginated) and compares it with a ledger in Redis, the hash
``cw:s3ledger:<bucket>/<prefix>`` of key -> ETag:

- a key not in the ledger, or with a different ETag, is a new object version:
  one ingest is enqueued, then the ledger records that ETag;
- a ledger key missing from the listing was deleted: one delete is enqueued and the
  key leaves the ledger.

The ledger is written after the job is enqueued, so a watcher killed in between
re-enqueues that version on restart (at least once; the pipeline makes the repeat
a no-op). Several watchers on one prefix would each enqueue: run one.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from chunkweave.worker import keys
from chunkweave.worker.jobs import Action
from chunkweave.worker.sources.base import (
    InvalidSourceError,
    SourceNotFoundError,
    SourceUnavailableError,
    Submitter,
    Watcher,
    not_allowed,
    remembered,
    submit_and_remember,
    wanted,
)

if TYPE_CHECKING:
    from chunkweave.worker.settings import S3Config, Settings, SourcesConfig

PREFIX = "s3://"
log = logging.getLogger(__name__)


def split_s3(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/key`` -> ``("bucket", "some/key")``."""
    rest = uri.removeprefix(PREFIX)
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise InvalidSourceError(f"{uri}: not an s3://bucket/key URI")
    return bucket, key


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
                yield f"{PREFIX}{bucket}/{obj['Key']}", str(obj.get("ETag", "")).strip('"')


class S3Source:
    """``s3://`` URIs."""

    def claims(self, uri: str) -> bool:
        """URIs starting with ``s3://``."""
        return uri.startswith(PREFIX)

    def normalize(self, uri: str) -> str:
        """S3 URIs are canonical as given."""
        return uri

    def expand(self, uri: str, settings: Settings) -> Iterator[str]:
        """Every wanted object under the prefix (a full key names just that object)."""
        for found, _etag in iter_s3(s3_client(settings.s3), uri):
            yield found

    def confine(self, uri: str, settings: Settings) -> str:
        """Return ``uri`` if its bucket is one of ``settings.sources.buckets``."""
        bucket, _key = split_s3(uri)
        if bucket not in settings.sources.buckets:
            raise not_allowed(uri)
        return uri

    def expand_confined(self, uri: str, settings: Settings) -> Iterator[str]:
        """Every wanted object under an allowed prefix (a missing bucket reads as not allowed)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            yield from self.expand(self.confine(uri, settings), settings)
        except ClientError as err:
            raise not_allowed(uri) from err
        except BotoCoreError as err:  # no endpoint, no credentials, nothing listening
            raise SourceUnavailableError(
                f"{uri}: S3 cannot be reached ({type(err).__name__}); set "
                "CHUNKWEAVE_S3__ENDPOINT_URL and its credentials"
            ) from err

    def allowing(self, uri: str, sources: SourcesConfig) -> SourcesConfig:
        """Add the bucket to the allowed buckets."""
        bucket, _prefix = split_s3(uri)
        return sources.model_copy(update={"buckets": (*sources.buckets, bucket)})

    @contextmanager
    def fetched(self, uri: str, settings: Settings) -> Iterator[Path]:
        """Download the object to a temporary file, removed after the block."""
        from botocore.exceptions import ClientError

        bucket, key = split_s3(uri)
        suffix = PurePosixPath(key).suffix
        with tempfile.TemporaryDirectory(prefix="chunkweave-s3-") as tmp:
            local = Path(tmp) / f"object{suffix}"
            try:
                s3_client(settings.s3).download_file(bucket, key, str(local))
            except ClientError as err:
                status = err.response.get("Error", {}).get("Code", "")
                if status in ("404", "NoSuchKey", "NotFound"):
                    raise SourceNotFoundError(f"{uri}: no such object") from err
                raise
            yield local

    def metadata(self, uri: str, settings: Settings) -> dict[str, str]:
        """Return the object's user metadata (``x-amz-meta-*``), then its tags, as text.

        Keys lower-cased with ``-`` as ``_`` (``x-amz-meta-source-url`` is
        ``source_url``); a tag wins over user metadata of the same key. A server
        without tagging (``NotImplemented``) or one refusing it gives no tags.
        """
        from botocore.exceptions import ClientError

        bucket, key = split_s3(uri)
        client = s3_client(settings.s3)
        head = client.head_object(Bucket=bucket, Key=key)
        found = {_meta_key(k): str(v) for k, v in (head.get("Metadata") or {}).items()}
        try:
            tags = client.get_object_tagging(Bucket=bucket, Key=key).get("TagSet") or []
        except ClientError as err:
            code = err.response.get("Error", {}).get("Code", "")
            if code not in ("NotImplemented", "AccessDenied", "MethodNotAllowed"):
                raise
            tags = []
        found.update({_meta_key(t["Key"]): str(t["Value"]) for t in tags})
        return found

    def watcher(self, uri: str, submitter: Submitter, *, polling: bool = False) -> Watcher:
        """Build a :class:`BucketWatcher` polling the prefix (S3 has no change feed)."""
        return BucketWatcher(uri, submitter)


def _meta_key(name: str) -> str:
    return name.lower().replace("-", "_")


class BucketWatcher:
    """Polls one ``s3://bucket/prefix`` and enqueues jobs through ``enqueuer``."""

    def __init__(self, uri: str, enqueuer: Submitter, *, client: Any | None = None) -> None:
        bucket, prefix = split_s3(uri)
        self.uri = f"s3://{bucket}/{prefix}"
        self.enq = enqueuer
        self.client = client or s3_client(enqueuer.settings.s3)
        self.ledger_key = keys.watched_prefix(bucket, prefix)
        self.interval_s = enqueuer.settings.s3.poll_interval_s
        self.jobs: list[str] = []

    def poll(self) -> str | None:
        """One listing pass; returns the id of the job it enqueued, if any."""
        listed = dict(iter_s3(self.client, self.uri))
        ledger = remembered(self.enq, self.ledger_key)
        items: list[tuple[str, Action]] = [
            (uri, "ingest") for uri, etag in sorted(listed.items()) if ledger.get(uri) != etag
        ]
        items += [(uri, "delete") for uri in sorted(set(ledger) - set(listed))]
        job_id = submit_and_remember(self.enq, self.ledger_key, items, listed)
        if job_id is None:
            return None
        log.info("watch %s: job %s with %d object(s)", self.uri, job_id, len(items))
        self.jobs.append(job_id)
        return job_id

    def run(self, stop: threading.Event) -> None:
        """Poll until ``stop`` is set; a failed listing is logged and retried next round."""
        while not stop.is_set():
            try:
                self.poll()
            except Exception as err:  # noqa: BLE001 - keep watching through outages
                log.warning("watch %s: listing failed: %s", self.uri, err)
            stop.wait(self.interval_s)

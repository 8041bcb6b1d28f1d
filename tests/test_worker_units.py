"""Pure logic of the worker: source names, retry classification, signing, app config."""

from __future__ import annotations

import pytest

from chunkweave.parsers.errors import CorruptDocumentError
from chunkweave.storage.embedders import EmbeddingServiceError
from chunkweave.storage.errors import StoreUnavailableError
from chunkweave.worker.celery_app import make_app, visibility_timeout_s
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import normalize, wanted
from chunkweave.worker.sources.s3 import split_s3
from chunkweave.worker.tasks.base import TRANSIENT_CODES, is_transient
from chunkweave.worker.webhook import sign, verify


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("report.pdf", True),
        ("dir/Report.PDF", True),
        ("a/b/c.docx", True),
        (".report.pdf", False),  # hidden / atomic-writer temp name
        ("~$report.docx", False),  # Word lock file
        ("report.pdf.part", False),
        ("report.pdf.crdownload", False),
        ("report.pdf~", False),
        ("report.tmp", False),
        ("notes.txt", False),
        ("archive.pdf.zip", False),
    ],
)
def test_wanted_names(name: str, expected: bool):
    assert wanted(name) is expected


def test_normalize_round_trips_file_uris(tmp_path):
    path = tmp_path / "a b" / "c.pdf"
    assert normalize(path.as_uri()) == str(path)
    assert normalize(str(path)) == str(path)
    assert normalize("s3://bucket/key with space.pdf") == "s3://bucket/key with space.pdf"
    assert split_s3("s3://bucket/deep/key.pdf") == ("bucket", "deep/key.pdf")
    assert split_s3("s3://bucket") == ("bucket", "")
    with pytest.raises(ValueError, match="not an s3"):
        split_s3("s3:///key")


def test_transient_errors_are_retried_bad_documents_are_not():
    def chained(outer: Exception, inner: Exception) -> Exception:
        try:
            raise outer from inner
        except Exception as err:  # noqa: BLE001
            return err

    assert is_transient(ConnectionRefusedError())
    assert is_transient(TimeoutError())
    assert is_transient(chained(RuntimeError("wrapped"), ConnectionResetError()))
    assert is_transient(EmbeddingServiceError("down", status=503))
    assert is_transient(EmbeddingServiceError("throttled", status=429))
    assert is_transient(EmbeddingServiceError("unreachable", status=None))
    assert not is_transient(EmbeddingServiceError("bad request", status=400))
    assert not is_transient(CorruptDocumentError("x.pdf", "truncated"))
    assert not is_transient(ValueError("bug"))
    # The store marks its own outage; its code is also in the transient outcome codes.
    assert StoreUnavailableError.code in TRANSIENT_CODES


def test_webhook_signature_binds_body_timestamp_and_secret():
    sig = sign("k", "1700000000", b'{"id":"j"}')
    assert sig.startswith("sha256=") and len(sig) == 7 + 64
    assert verify("k", "1700000000", b'{"id":"j"}', sig)
    assert not verify("k", "1700000001", b'{"id":"j"}', sig)
    assert not verify("k", "1700000000", b'{"id":"x"}', sig)
    assert not verify("other", "1700000000", b'{"id":"j"}', sig)


def test_celery_config_follows_settings():
    settings = Settings(
        redis_url="redis://:pw@localhost:6399/2",
        tasks={
            "soft_time_limit_s": 50,
            "hard_time_limit_s": 70,
            "max_memory_mb": 1000,
            "queue": "q1",
        },
    )
    conf = make_app(settings).conf
    assert conf.task_serializer == "json" and list(conf.accept_content) == ["json"]
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert (conf.task_soft_time_limit, conf.task_time_limit) == (50, 70)
    vt = conf.broker_transport_options["visibility_timeout"]
    assert vt == visibility_timeout_s(settings) and vt > 2 * 70
    assert conf.worker_max_memory_per_child == 750 * 1024
    assert conf.task_default_queue == "q1"
    assert conf.broker_url == "redis://:pw@localhost:6399/2"
    assert "pw" not in repr(settings)  # the password never shows up in logs

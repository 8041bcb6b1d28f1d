"""The settings groups (tasks, fanout, watch, webhook, api, reconcile) and their old flat names.

Pure logic: environment variables in, fields out.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from chunkweave.worker.settings import FLAT_NAMES, Settings

ROOT = Path(__file__).resolve().parents[1]

#: Old flat variable -> (the value a user sets, what the grouped field must then hold).
#: Every value differs from the field's default, so a name that is not read fails.
OLD_VALUES: dict[str, tuple[str, object]] = {
    "CHUNKWEAVE_QUEUE": ("q-old", "q-old"),
    "CHUNKWEAVE_TASK_SOFT_TIME_LIMIT_S": ("41", 41),
    "CHUNKWEAVE_TASK_HARD_TIME_LIMIT_S": ("42", 42),
    "CHUNKWEAVE_MAX_MEMORY_MB": ("1234", 1234),
    "CHUNKWEAVE_MAX_ATTEMPTS": ("7", 7),
    "CHUNKWEAVE_TASK_MAX_RETRIES": ("8", 8),
    "CHUNKWEAVE_RETRY_BACKOFF_MAX_S": ("99", 99),
    "CHUNKWEAVE_LOCK_TTL_S": ("12", 12),
    "CHUNKWEAVE_JOB_TTL_S": ("3600", 3600),
    "CHUNKWEAVE_PRODUCER_NICE": ("3", 3),
    "CHUNKWEAVE_FANOUT_PAGES": ("17", 17),
    "CHUNKWEAVE_FANOUT_PART_PAGES": ("9", 9),
    "CHUNKWEAVE_FANOUT_EMBED_CHUNKS": ("64", 64),
    "CHUNKWEAVE_WATCH_RECONCILE_S": ("12.5", 12.5),
    "CHUNKWEAVE_WATCH_SETTLE_S": ("0.25", 0.25),
    "CHUNKWEAVE_WEBHOOK_SECRET": ("hook-key", "hook-key"),
    "CHUNKWEAVE_WEBHOOK_ALLOW_HOSTS": (
        '["10.0.0.0/8", "hooks.internal"]',
        ("10.0.0.0/8", "hooks.internal"),
    ),
    "CHUNKWEAVE_WEBHOOK_RETRIES": ("2", 2),
    "CHUNKWEAVE_WEBHOOK_TIMEOUT_S": ("3.5", 3.5),
    "CHUNKWEAVE_API_TOKEN": ("main-token", "main-token"),
    "CHUNKWEAVE_API_TENANT_TOKENS": ('{"acme": "token-a"}', {"acme": "token-a"}),
    "CHUNKWEAVE_MAX_UPLOAD_BYTES": ("2048", 2048),
    "CHUNKWEAVE_MAX_JSON_BYTES": ("4096", 4096),
    "CHUNKWEAVE_UPLOAD_RETENTION": ("keep", "keep"),
    "CHUNKWEAVE_UPLOADS_DIR": ("/srv/uploads", Path("/srv/uploads")),
    "CHUNKWEAVE_UPLOADS_S3": ("s3://bucket/uploads/", "s3://bucket/uploads/"),
    "CHUNKWEAVE_HEARTBEAT_INTERVAL_S": ("0.5", 0.5),
    "CHUNKWEAVE_HEARTBEAT_TTL_S": ("2", 2.0),
    "CHUNKWEAVE_RECONCILE_INTERVAL_S": ("0.75", 0.75),
    "CHUNKWEAVE_RECONCILE_GRACE_S": ("4", 4.0),
    "CHUNKWEAVE_RECONCILE_AUDIT_S": ("0", 0.0),
    "CHUNKWEAVE_MAX_REQUEUES": ("6", 6),
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("CHUNKWEAVE_"):
            monkeypatch.delenv(name)


def _plain(value: object) -> object:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _field(settings: Settings, group: str, name: str) -> Any:
    return _plain(getattr(getattr(settings, group), name))


def test_the_table_covers_every_flat_name():
    assert {f"CHUNKWEAVE_{old.upper()}" for old in FLAT_NAMES} == set(OLD_VALUES)


@pytest.mark.parametrize("old", sorted(FLAT_NAMES))
def test_each_old_flat_name_lands_in_its_grouped_field(monkeypatch, old):
    group, name = FLAT_NAMES[old]
    raw, expected = OLD_VALUES[f"CHUNKWEAVE_{old.upper()}"]
    assert _field(Settings(), group, name) != expected, "the test value must not be the default"
    monkeypatch.setenv(f"CHUNKWEAVE_{old.upper()}", raw)
    assert _field(Settings(), group, name) == expected


def test_all_old_names_at_once_fill_every_group(monkeypatch):
    for env, (raw, _) in OLD_VALUES.items():
        monkeypatch.setenv(env, raw)
    settings = Settings()
    for old, (group, name) in FLAT_NAMES.items():
        assert _field(settings, group, name) == OLD_VALUES[f"CHUNKWEAVE_{old.upper()}"][1], old
    assert settings.api.guarded and settings.upload_dir == Path("/srv/uploads")


def test_the_nested_names_set_the_groups(monkeypatch):
    monkeypatch.setenv("CHUNKWEAVE_TASKS__HARD_TIME_LIMIT_S", "900")
    monkeypatch.setenv("CHUNKWEAVE_FANOUT__PAGES", "50")
    monkeypatch.setenv("CHUNKWEAVE_WATCH__SETTLE_S", "2")
    monkeypatch.setenv("CHUNKWEAVE_WEBHOOK__ALLOW_HOSTS", '["127.0.0.1"]')
    monkeypatch.setenv("CHUNKWEAVE_API__TENANT_TOKENS", '{"a": "t"}')
    settings = Settings()
    assert settings.tasks.hard_time_limit_s == 900 and settings.fanout.pages == 50
    assert settings.watch.settle_s == 2.0 and settings.webhook.allow_hosts == ("127.0.0.1",)
    assert _plain(settings.api.tenant_tokens) == {"a": "t"} and settings.api.guarded


def test_a_nested_name_wins_over_its_old_flat_name(monkeypatch):
    monkeypatch.setenv("CHUNKWEAVE_QUEUE", "old")
    monkeypatch.setenv("CHUNKWEAVE_TASKS__QUEUE", "new")
    assert Settings().tasks.queue == "new"


def test_old_and_nested_names_of_one_group_combine(monkeypatch):
    monkeypatch.setenv("CHUNKWEAVE_FANOUT_PAGES", "30")
    monkeypatch.setenv("CHUNKWEAVE_FANOUT__PART_PAGES", "10")
    monkeypatch.setenv("chunkweave_upload_retention", "keep")  # any case, as before
    settings = Settings()
    assert (settings.fanout.pages, settings.fanout.part_pages) == (30, 10)
    assert settings.api.upload_retention == "keep"


def test_an_old_name_is_validated_by_its_group(monkeypatch):
    monkeypatch.setenv("CHUNKWEAVE_MAX_ATTEMPTS", "0")
    with pytest.raises(ValidationError, match="max_attempts"):
        Settings()


def test_explicit_arguments_beat_the_environment_and_merge_with_it(monkeypatch):
    monkeypatch.setenv("CHUNKWEAVE_MAX_ATTEMPTS", "4")
    settings = Settings(tasks={"queue": "given"})
    assert (settings.tasks.queue, settings.tasks.max_attempts) == ("given", 4)


def test_flat_names_are_not_keyword_arguments():
    # Code builds the groups; an old flat keyword is an unknown key, refused loudly.
    with pytest.raises(ValidationError, match="queue"):
        Settings(queue="q")  # type: ignore[call-arg]


def test_the_readme_names_every_grouped_field():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Configuration") : readme.index("## How it works")]
    documented = set(re.findall(r"CHUNKWEAVE_([A-Z]+)__([A-Z0-9_]+)", table))
    for group, name in FLAT_NAMES.values():
        assert (group.upper(), name.upper()) in documented, f"{group}.{name}"

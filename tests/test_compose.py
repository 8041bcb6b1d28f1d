"""Deployment files: no Docker engine runs here, so check their structure instead.

The compose file must parse, pin Weaviate to the version we build and test
against, give every long-running service a healthcheck, keep state in named
volumes, and leave the worker scalable (no fixed name or host port). Every
``chunkweave`` command it runs must exist. The Dockerfile must run as a non-root
user, install Tesseract and declare a healthcheck whose module exists.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import click
import yaml

from chunkweave.storage.weaviate.server.build import PINNED_VERSION
from chunkweave.worker.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]


def _compose() -> dict:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_compose_services_and_topology():
    services = _compose()["services"]
    assert set(services) == {"redis", "weaviate", "worker", "watcher", "api"}
    assert services["weaviate"]["image"].endswith(f"/weaviate:{PINNED_VERSION}")
    assert re.fullmatch(r"redis:\d+(\.\d+)*-alpine", services["redis"]["image"])
    worker = services["worker"]
    assert "container_name" not in worker and "ports" not in worker  # --scale worker=N
    for name in ("worker", "watcher", "api"):
        svc = services[name]
        deps = svc["depends_on"]
        assert deps["redis"]["condition"] == "service_healthy"
        assert deps["weaviate"]["condition"] == "service_healthy"
        env = svc["environment"]
        assert env["CHUNKWEAVE_REDIS_URL"].startswith("redis://redis:")
        assert env["CHUNKWEAVE_WEAVIATE__URL"].startswith("http://weaviate:")
        assert "data:/data" in svc["volumes"]  # uploads visible to every worker


def test_compose_healthchecks_and_named_volumes():
    data = _compose()
    services = data["services"]
    for name in ("redis", "weaviate"):
        check = services[name]["healthcheck"]
        assert check["test"][0] == "CMD" and check["retries"] >= 3
    declared = set(data["volumes"])
    used = {
        v.split(":", 1)[0]
        for svc in services.values()
        for v in svc.get("volumes", [])
        if not v.startswith((".", "/"))
    }
    assert used == declared, (used, declared)
    assert {"redis-data", "weaviate-data"} <= declared


def test_compose_commands_exist():
    ctx = click.Context(cli_main)
    for name, svc in _compose()["services"].items():
        cmd = svc.get("command")
        if cmd and cmd[0] == "chunkweave":
            command = cli_main.get_command(ctx, cmd[1])  # commands load on first use
            assert command is not None, f"{name}: unknown command {cmd[1]}"
            command.make_context(cmd[1], list(cmd[2:]))  # its options parse


def test_dockerfile_is_slim_non_root_with_ocr_and_healthcheck():
    text = (ROOT / "Dockerfile").read_text()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    assert lines[0].startswith("FROM python:3.11-slim")
    users = [ln.split()[1] for ln in lines if ln.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert "tesseract-ocr" in text and "--no-install-recommends" in text
    health = next(ln for ln in lines if ln.startswith("HEALTHCHECK"))
    module = re.search(r'"-m", "([\w.]+)"', text[text.index(health) :])
    assert module and importlib.util.find_spec(module.group(1)) is not None
    for copied in re.findall(r"^COPY (\w+) ", text, flags=re.M):
        assert (ROOT / copied).is_dir(), copied

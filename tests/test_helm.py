"""The Helm chart: rendered by ``helm template`` with two value sets, validated by kubeconform.

The tools come from ``scripts/helm-tools.sh`` (helm and kubeconform built from their Go
modules, the Kubernetes schemas of ``kubernetes-validate``, the KEDA CRDs' schemas from
the KEDA Go module), cached per machine; the fixture runs it, so a clean clone builds
them here too. kubeconform runs strict (no unknown field anywhere), with no schema
missing: every rendered object is checked.
"""

from __future__ import annotations

import base64
import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHART = ROOT / "deploy" / "helm" / "chunkweave"
VALUE_SETS = ("bundled", "external")

# Building helm from source takes minutes the first time (scripts/test.sh does it first).
pytestmark = pytest.mark.timeout(1800)


@dataclass(frozen=True)
class Tools:
    helm: str
    kubeconform: str
    keda_schemas: str
    kubernetes_schemas: str
    kubernetes_version: str


@pytest.fixture(scope="session")
def tools() -> Tools:
    """The chart tools, installed by the project's own script (a check once they are)."""
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "helm-tools.sh")],
        capture_output=True,
        text=True,
        timeout=1700,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    values = {k: shlex.split(v)[0] for k, v in found.items()}
    return Tools(
        values["HELM"],
        values["KUBECONFORM"],
        values["KEDA_SCHEMAS"],
        values["KUBERNETES_SCHEMAS"],
        values["KUBERNETES_VERSION"],
    )


def _template(tools: Tools, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tools.helm, "template", "cw", str(CHART), "--namespace", "docs"]
        + ["--kube-version", tools.kubernetes_version, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def render(tools: Tools, *args: str) -> str:
    proc = _template(tools, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def objects(manifest: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(manifest) if doc]


def validate(tools: Tools, manifest: str) -> dict[str, Any]:
    """kubeconform's JSON report on ``manifest`` (strict, every kind needs its schema)."""
    k8s = "{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}"
    proc = subprocess.run(
        [
            tools.kubeconform,
            "-strict",
            "-summary",
            "-output",
            "json",
            "-kubernetes-version",
            tools.kubernetes_version,
            "-schema-location",
            f"{tools.kubernetes_schemas}/{k8s}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json",
            "-schema-location",
            f"{tools.keda_schemas}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json",
            "-",
        ],
        input=manifest,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(proc.stdout)
    report["returncode"] = proc.returncode
    return report


def by_kind(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    (only,) = deployment["spec"]["template"]["spec"]["containers"]
    return only


def env_of(deployment: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container(deployment)["env"]}


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_chart_renders_and_every_object_validates(tools, value_set):
    manifest = render(tools, "-f", str(CHART / "ci" / f"{value_set}-values.yaml"))
    objs = objects(manifest)
    report = validate(tools, manifest)
    assert report["returncode"] == 0, report["resources"]
    summary = report["summary"]
    assert summary == {"valid": len(objs), "invalid": 0, "errors": 0, "skipped": 0}
    kinds = {o["kind"] for o in objs}
    assert {"Deployment", "ScaledObject", "TriggerAuthentication", "ConfigMap"} <= kinds


def test_the_validator_refuses_what_kubernetes_and_keda_would(tools):
    objs = objects(render(tools, "-f", str(CHART / "ci" / "bundled-values.yaml")))
    worker = by_kind(objs, "Deployment")["cw-chunkweave-worker"]
    container(worker)["resource"] = {"limits": {"memory": "1Gi"}}  # misspelt: resources
    scaled = next(iter(by_kind(objs, "ScaledObject").values()))
    scaled["spec"]["maxReplicas"] = 3  # KEDA's field is maxReplicaCount
    report = validate(tools, yaml.safe_dump_all(objs))
    assert report["returncode"] != 0
    assert report["summary"]["invalid"] == 2
    errors = " ".join(r.get("msg", "") for r in report["resources"])
    assert "'resource' not allowed" in errors and "'maxReplicas' not allowed" in errors


def test_bundled_redis_and_weaviate_with_generated_secrets(tools):
    objs = objects(render(tools, "-f", str(CHART / "ci" / "bundled-values.yaml")))
    deployments = by_kind(objs, "Deployment")
    assert set(deployments) == {
        "cw-chunkweave-api",
        "cw-chunkweave-watcher",
        "cw-chunkweave-worker",
    }
    assert set(by_kind(objs, "StatefulSet")) == {"cw-chunkweave-redis", "cw-chunkweave-weaviate"}
    assert container(deployments["cw-chunkweave-api"])["command"][:2] == ["chunkweave", "api"]
    assert container(deployments["cw-chunkweave-watcher"])["command"] == [
        "chunkweave",
        "watch",
        "/inbox",
        "--polling",
    ]
    worker = deployments["cw-chunkweave-worker"]
    assert container(worker)["command"] == ["chunkweave", "worker", "--concurrency", "2"]
    assert "replicas" not in worker["spec"]  # KEDA owns the count

    (secret,) = by_kind(objs, "Secret").values()
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert data["api-token"] == "test-token-not-secret"
    password = data["redis-password"]
    assert len(password) == 32
    assert data["redis-address"] == "cw-chunkweave-redis:6379"
    assert data["redis-url"] == f"redis://:{password}@cw-chunkweave-redis:6379/0"
    assert len(data["weaviate-api-key"]) == 40
    # Secrets reach the pods only by reference, never as plain values.
    ref = {"secretKeyRef": {"name": secret["metadata"]["name"], "key": "redis-url"}}
    for deployment in deployments.values():
        assert env_of(deployment)["CHUNKWEAVE_REDIS_URL"] == ref
    assert env_of(deployments["cw-chunkweave-api"])["CHUNKWEAVE_API_TOKEN"] == {
        "secretKeyRef": {"name": secret["metadata"]["name"], "key": "api-token"}
    }
    (config,) = by_kind(objs, "ConfigMap").values()
    assert config["data"]["CHUNKWEAVE_WEAVIATE__URL"] == "http://cw-chunkweave-weaviate:8080"
    assert password not in json.dumps([o for o in objs if o["kind"] != "Secret"])

    (scaled,) = by_kind(objs, "ScaledObject").values()
    assert scaled["spec"]["scaleTargetRef"]["name"] == "cw-chunkweave-worker"
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "redis"
    assert trigger["metadata"]["listName"] == config["data"]["CHUNKWEAVE_QUEUE"] == "chunkweave"
    assert trigger["metadata"]["listLength"] == "4"
    auth = by_kind(objs, "TriggerAuthentication")[trigger["authenticationRef"]["name"]]
    assert {(r["parameter"], r["key"]) for r in auth["spec"]["secretTargetRef"]} == {
        ("address", "redis-address"),
        ("password", "redis-password"),
    }


def test_external_redis_and_weaviate_with_an_existing_secret(tools):
    objs = objects(render(tools, "-f", str(CHART / "ci" / "external-values.yaml")))
    assert not by_kind(objs, "StatefulSet") and not by_kind(objs, "Secret")
    assert not by_kind(objs, "PersistentVolumeClaim")  # existing claims named
    deployments = by_kind(objs, "Deployment")
    assert set(deployments) == {"cw-chunkweave-api", "cw-chunkweave-worker"}  # no watcher
    (config,) = by_kind(objs, "ConfigMap").values()
    assert config["data"]["CHUNKWEAVE_WEAVIATE__URL"] == "https://weaviate.internal.example:443"
    assert config["data"]["CHUNKWEAVE_WEAVIATE__GRPC_PORT"] == "443"
    assert config["data"]["CHUNKWEAVE_WEAVIATE__MULTI_TENANCY"] == "true"
    assert config["data"]["OTEL_TRACES_EXPORTER"] == "otlp"
    ref = env_of(deployments["cw-chunkweave-worker"])["CHUNKWEAVE_REDIS_URL"]
    assert ref == {"secretKeyRef": {"name": "chunkweave-prod", "key": "redis-url"}}
    (scaled,) = by_kind(objs, "ScaledObject").values()
    assert scaled["spec"]["minReplicaCount"] == 0
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["metadata"] == {
        "listName": "documents",
        "listLength": "8",
        "activationListLength": "1",
        "databaseIndex": "2",
        "enableTLS": "true",
    }
    volumes = deployments["cw-chunkweave-worker"]["spec"]["template"]["spec"]["volumes"]
    claims = {
        v["persistentVolumeClaim"]["claimName"] for v in volumes if "persistentVolumeClaim" in v
    }
    assert claims == {"chunkweave-uploads", "chunkweave-inbox"}


def test_an_external_redis_url_is_split_for_keda(tools):
    objs = objects(
        render(
            tools,
            "--set",
            "secrets.apiToken=t,redis.enabled=false,externalRedis.url=rediss://:s3cret@redis.example:6380/1",
        )
    )
    (secret,) = by_kind(objs, "Secret").values()
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert data["redis-url"] == "rediss://:s3cret@redis.example:6380/1"
    assert (data["redis-address"], data["redis-password"]) == ("redis.example:6380", "s3cret")


def test_workers_without_autoscaling_have_a_fixed_count(tools):
    objs = objects(
        render(
            tools,
            "--set",
            "secrets.apiToken=t,worker.autoscaling.enabled=false,worker.replicas=3",
        )
    )
    assert not by_kind(objs, "ScaledObject") and not by_kind(objs, "TriggerAuthentication")
    assert by_kind(objs, "Deployment")["cw-chunkweave-worker"]["spec"]["replicas"] == 3


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ((), "secrets.apiToken is required"),
        (("secrets.apiToken=t,redis.enabled=false",), "externalRedis.url is required"),
        (("secrets.apiToken=t,weaviate.enabled=false",), "externalWeaviate.url is required"),
        # values.schema.json: a misspelt key or a wrong kind of value, named.
        (("secrets.apiToken=t,worker.autoscalling.enabled=false",), "'autoscalling' not allowed"),
        (("secrets.apiToken=t,externalRedis.url=http://r:6379",), "/externalRedis/url"),
        (("secrets.apiToken=t,worker.concurrency=0",), "/worker/concurrency"),
    ],
)
def test_missing_required_values_are_refused_naming_them(tools, values, message):
    args = [a for v in values for a in ("--set", v)]
    proc = _template(tools, *args)
    assert proc.returncode != 0 and message in proc.stderr

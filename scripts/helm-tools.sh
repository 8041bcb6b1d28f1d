#!/usr/bin/env bash
# The chart's test tools, built once per machine and cached under the user's cache
# directory (like the Weaviate server): helm and kubeconform from their Go modules (the
# Go module proxy), the KEDA ScaledObject and TriggerAuthentication schemas from the KEDA
# Go module's CRDs. The Kubernetes schemas come from the `kubernetes-validate` PyPI
# package (the dev extra). Idempotent: a second run only checks. Prints the tools' paths
# as shell assignments (HELM=, KUBECONFORM=, KEDA_SCHEMAS=, KUBERNETES_SCHEMAS=,
# KUBERNETES_VERSION=); scripts/test.sh runs it, and so does tests/test_helm.py.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.21.4
KUBECONFORM_VERSION=v0.7.0
KEDA_VERSION=v2.20.2  # v2.21 needs go >= 1.27 to download
KUBERNETES_VERSION=1.31.0  # the oldest Kubernetes the chart is validated for
PYTHON="${PYTHON:-$PWD/.venv/bin/python}"  # PyYAML: the dev extra
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/chunkweave"

say() { printf '[helm-tools] %s\n' "$*" >&2; }

# Go is needed only for what is not cached yet.
need_go() { command -v go >/dev/null 2>&1 || { say "go is needed to build $1 (not on PATH)"; exit 1; }; }
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"

# go_tool NAME PACKAGE VERSION: `go install PACKAGE@VERSION` into $CACHE/NAME/VERSION.
go_tool() {
    local name=$1 package=$2 version=$3 dir="$CACHE/$1/$3"
    if [ ! -x "$dir/$name" ]; then
        need_go "$name"
        say "building $name $version with go install (once per machine)"
        local tmp
        tmp="$(mktemp -d "$CACHE/.build-$name.XXXXXX")"
        CGO_ENABLED=0 GOBIN="$tmp" nice go install "$package@$version" >&2
        mkdir -p "$dir"
        mv "$tmp/$name" "$dir/$name"  # a rename: a concurrent run sees all or nothing
        rmdir "$tmp"
    fi
    printf '%s\n' "$dir/$name"
}

mkdir -p "$CACHE"
helm="$(go_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION")"
kubeconform="$(go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION")"

# The KEDA CRDs' OpenAPI schemas (ScaledObject, TriggerAuthentication) as JSON schema files
# named the way kubeconform looks them up ({{ .ResourceKind }}{{ .KindSuffix }}.json:
# scaledobject-keda-v1alpha1.json), closed: a field the CRD does not know is an error,
# not silently pruned by the API server.
keda="$CACHE/keda-schemas/$KEDA_VERSION-closed"
if [ ! -s "$keda/scaledobject-keda-v1alpha1.json" ] ||
    [ ! -s "$keda/triggerauthentication-keda-v1alpha1.json" ]; then
    need_go "the KEDA schemas"
    say "reading the ScaledObject and TriggerAuthentication CRDs from the KEDA $KEDA_VERSION Go module"
    moddir="$(cd "$CACHE" && go mod download -json "github.com/kedacore/keda/v2@$KEDA_VERSION" |
        "$PYTHON" -c 'import json, sys; m = json.load(sys.stdin); print(m.get("Dir") or sys.exit(m.get("Error")))')"
    mkdir -p "$keda"
    "$PYTHON" - "$keda" "$moddir/config/crd/bases/keda.sh_scaledobjects.yaml" \
        "$moddir/config/crd/bases/keda.sh_triggerauthentications.yaml" <<'PY'
import json, os, sys
import yaml  # PyYAML: the dev extra

out = sys.argv[1]


def closed(node):
    """The schema with unknown fields refused where the API server would prune them."""
    if isinstance(node, list):
        return [closed(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: closed(v) for k, v in node.items()}
    if (
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        node["additionalProperties"] = False
    return node


for crd_path in sys.argv[2:]:
    with open(crd_path) as fh:
        crd = yaml.safe_load(fh)
    kind = crd["spec"]["names"]["kind"].lower()
    group = crd["spec"]["group"].split(".")[0]
    for version in crd["spec"]["versions"]:
        path = os.path.join(out, f"{kind}-{group}-{version['name']}.json")
        with open(path + ".tmp", "w") as fh:
            json.dump(closed(version["schema"]["openAPIV3Schema"]), fh)
        os.replace(path + ".tmp", path)
PY
fi

# The Kubernetes schemas of kubernetes-validate, their references to the shared
# definitions made file URLs (they name kubernetes.io URLs, which only that package's own
# validator maps to its files): kubeconform reads them offline, strict.
kv_version="$("$PYTHON" -c 'from importlib.metadata import version; print(version("kubernetes-validate"))')"
k8s="$CACHE/kubernetes-schemas/kubernetes-validate-$kv_version"
strict="v$KUBERNETES_VERSION-local-strict"
if [ ! -s "$k8s/$strict/_definitions.json" ]; then
    say "preparing the Kubernetes $KUBERNETES_VERSION schemas of kubernetes-validate $kv_version"
    "$PYTHON" - "$k8s" "$strict" <<'PY'
import os, shutil, sys, tempfile
from pathlib import Path

import kubernetes_validate

out, name = Path(sys.argv[1]), sys.argv[2]
source = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / name
out.mkdir(parents=True, exist_ok=True)
work = Path(tempfile.mkdtemp(dir=out))
shared = f'"file://{out / name}/_definitions.json#'
for schema in source.glob("*.json"):
    text = schema.read_text().replace('"/api/_definitions.json#', shared)
    (work / schema.name).write_text(text)
if (out / name).exists():
    shutil.rmtree(out / name)
os.replace(work, out / name)
PY
fi

printf 'HELM=%q\nKUBECONFORM=%q\nKEDA_SCHEMAS=%q\nKUBERNETES_SCHEMAS=%q\nKUBERNETES_VERSION=%q\n' \
    "$helm" "$kubeconform" "$keda" "$k8s" "$KUBERNETES_VERSION"

#!/usr/bin/env bash
# The chart's test tools, built once per machine and cached under the user's cache
# directory (like the Weaviate server): helm and kubeconform from their Go modules (the
# Go module proxy), the KEDA ScaledObject schema from the KEDA Go module's CRD. The
# Kubernetes schemas come from the `kubernetes-validate` PyPI package (the dev extra).
# Idempotent: a second run only checks. Prints the tools' paths as shell assignments
# (HELM=..., KUBECONFORM=..., KEDA_SCHEMAS=...); scripts/test.sh runs it, and so does
# tests/test_helm.py when the tools are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.21.4
KUBECONFORM_VERSION=v0.7.0
KEDA_VERSION=v2.20.2  # v2.21 needs go >= 1.27 to download
PYTHON="${PYTHON:-$PWD/.venv/bin/python}"  # PyYAML: the dev extra
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/chunkweave"

say() { printf '[helm-tools] %s\n' "$*" >&2; }

command -v go >/dev/null 2>&1 || { say "go is needed (https://go.dev/dl)"; exit 1; }
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"

# go_tool NAME PACKAGE VERSION: `go install PACKAGE@VERSION` into $CACHE/NAME/VERSION.
go_tool() {
    local name=$1 package=$2 version=$3 dir="$CACHE/$1/$3"
    if [ ! -x "$dir/$name" ]; then
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

# The ScaledObject CRD's OpenAPI schema as a JSON schema file named the way kubeconform
# looks it up ({{ .ResourceKind }}{{ .KindSuffix }}.json: scaledobject-keda-v1alpha1.json).
keda="$CACHE/keda-schemas/$KEDA_VERSION"
if [ ! -s "$keda/scaledobject-keda-v1alpha1.json" ]; then
    say "reading the ScaledObject CRD from the KEDA $KEDA_VERSION Go module"
    moddir="$(cd "$CACHE" && go mod download -json "github.com/kedacore/keda/v2@$KEDA_VERSION" |
        "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
    mkdir -p "$keda"
    "$PYTHON" - "$moddir/config/crd/bases/keda.sh_scaledobjects.yaml" "$keda" <<'PY'
import json, os, sys
import yaml  # PyYAML: the dev extra

crd_path, out = sys.argv[1], sys.argv[2]
with open(crd_path) as fh:
    crd = yaml.safe_load(fh)
kind = crd["spec"]["names"]["kind"].lower()
group = crd["spec"]["group"].split(".")[0]
for version in crd["spec"]["versions"]:
    path = os.path.join(out, f"{kind}-{group}-{version['name']}.json")
    with open(path + ".tmp", "w") as fh:
        json.dump(version["schema"]["openAPIV3Schema"], fh)
    os.replace(path + ".tmp", path)
PY
fi

printf 'HELM=%q\nKUBECONFORM=%q\nKEDA_SCHEMAS=%q\n' "$helm" "$kubeconform" "$keda"

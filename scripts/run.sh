#!/usr/bin/env bash
# The main job, set-up included: installs what is missing (scripts/bootstrap.sh), then
# runs `chunkweave serve`: worker processes, the folder watcher and the HTTP API, on an
# embedded Redis and an embedded Weaviate unless CHUNKWEAVE_REDIS_URL /
# CHUNKWEAVE_WEAVIATE__URL name real servers. With no arguments it watches ./inbox:
# drop PDF/DOCX files there. Arguments replace the defaults and go to `chunkweave serve`
# (see `chunkweave serve --help`). Ctrl-C stops everything cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
if [ "$#" -eq 0 ]; then
    mkdir -p inbox
    set -- --watch inbox
fi
exec .venv/bin/chunkweave serve "$@"

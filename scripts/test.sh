#!/usr/bin/env bash
# The whole test suite, set-up included: installs what is missing (scripts/bootstrap.sh,
# with the optional docling and unstructured parser backends, the LangChain and
# LlamaIndex integrations and OpenTelemetry so their tests run too; scripts/helm-tools.sh
# for the Helm chart's tests), then lint (ruff), types (mypy) and pytest. The tests
# start their own real servers (Redis, Weaviate, SeaweedFS S3) on free loopback ports
# and stop them afterwards.
# Extra arguments go to pytest, e.g. `scripts/test.sh -k chunk`.
set -euo pipefail
cd "$(dirname "$0")/.."
CHUNKWEAVE_EXTRAS="${CHUNKWEAVE_EXTRAS:-dev,docling,unstructured,langchain,llama-index,otel}" \
    bash scripts/bootstrap.sh
bash scripts/helm-tools.sh >/dev/null
echo "[test] ruff" >&2
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "[test] mypy" >&2
.venv/bin/mypy
echo "[test] pytest" >&2
exec .venv/bin/pytest -p no:cacheprovider \
    -n "${CHUNKWEAVE_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@"

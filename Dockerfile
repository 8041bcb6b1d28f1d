# chunkweave: one image for the worker, the watcher and the HTTP API.
#   docker build -t chunkweave .
#   docker run --rm chunkweave chunkweave --help
# Slim Debian base, Tesseract for OCR of scanned pages, a non-root user, and a
# healthcheck that asks Redis (workers/watcher) or the API (api) whether it is up.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CHUNKWEAVE_DATA_DIR=/data

RUN apt-get update \
    && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng \
    && rm -rf /var/lib/apt/lists/*

# uid/gid 10001: the Helm chart's runAsUser (deploy/helm/chunkweave).
RUN groupadd --system --gid 10001 chunkweave \
    && useradd --system --uid 10001 --gid chunkweave --home-dir /home/chunkweave --create-home chunkweave \
    && mkdir -p /data && chown chunkweave:chunkweave /data

WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY parsers ./parsers
COPY chunking ./chunking
COPY storage ./storage
COPY worker ./worker
COPY chunkweave ./chunkweave
# Optional extras, e.g. `docker build --build-arg EXTRAS=otel` for OpenTelemetry traces.
ARG EXTRAS=""
RUN pip install ".${EXTRAS:+[$EXTRAS]}"

USER chunkweave
VOLUME ["/data"]
EXPOSE 8000

# `python -m chunkweave.worker.healthcheck` exits 0 when the component this container runs can
# reach what it needs (Redis; plus the HTTP API itself when CHUNKWEAVE_HEALTH_URL is set).
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-m", "chunkweave.worker.healthcheck"]

CMD ["chunkweave", "worker"]

"""The real pipeline, with its embedder's calls counted in Redis (for worker-process tests).

Workers load it through the documented ``CHUNKWEAVE_PIPELINE_FACTORY`` setting; each
``embed_documents`` call adds its number of texts to ``cw:test:embedded:<COUNT_NS>``,
so a test in another process can tell exactly how many texts the workers embedded.
"""

from __future__ import annotations

import os

import redis

from chunkweave.storage.protocols import IngestPipeline
from chunkweave.worker.runtime import default_pipeline
from chunkweave.worker.settings import Settings

FACTORY = "tests.counting_pipeline:make_counting"


def counter_key(ns: str) -> str:
    """The Redis key the workers of namespace ``ns`` count embedded texts under."""
    return f"cw:test:embedded:{ns}"


def make_counting(settings: Settings) -> IngestPipeline:
    """Build the default pipeline and count every text its embedder embeds."""
    pipeline = default_pipeline(settings)
    assert settings.redis_url is not None
    client = redis.Redis.from_url(settings.redis_url.get_secret_value())
    key = counter_key(os.environ["COUNT_NS"])
    embedder = pipeline.embedder
    assert embedder is not None
    embed = embedder.embed_documents

    def counted(texts: list[str]) -> list[list[float]]:
        client.incrby(key, len(texts))
        return embed(texts)

    embedder.embed_documents = counted
    return pipeline

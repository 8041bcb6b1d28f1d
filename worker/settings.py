"""The one settings object, loaded once from the environment (prefix ``CHUNKWEAVE_``).

Nested fields use ``__``: ``CHUNKWEAVE_WEAVIATE__URL``, ``CHUNKWEAVE_EMBEDDER__KIND``,
``CHUNKWEAVE_CHUNKING__MAX_TOKENS``. Secrets are ``SecretStr``: never logged or printed.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from chunking.models import ChunkOptions
from parsers.document import ParseOptions
from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict
from storage.config import EmbedderConfig, WeaviateConfig


class S3Config(BaseModel):
    """An S3-compatible endpoint and its credentials."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    poll_interval_s: float = Field(default=10.0, gt=0)


class Settings(BaseSettings):
    """Everything chunkweave is configured with. Build with :func:`get_settings`."""

    model_config = SettingsConfigDict(
        env_prefix="CHUNKWEAVE_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    data_dir: Path = Field(default_factory=lambda: Path(user_data_dir("chunkweave")))
    redis_url: SecretStr | None = None
    weaviate: WeaviateConfig = WeaviateConfig()
    embedder: EmbedderConfig = EmbedderConfig()
    parse: ParseOptions = ParseOptions()
    chunking: ChunkOptions = ChunkOptions()
    s3: S3Config = S3Config()
    api_token: SecretStr | None = None
    max_upload_bytes: int = Field(default=100 * 1024 * 1024, gt=0)
    task_soft_time_limit_s: int = Field(default=540, gt=0)
    task_hard_time_limit_s: int = Field(default=600, gt=0)
    max_memory_mb: int = Field(default=2048, gt=0)
    max_attempts: int = Field(default=3, ge=1)
    fanout_pages: int = Field(default=200, gt=0)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Load the settings once per process."""
    return Settings()

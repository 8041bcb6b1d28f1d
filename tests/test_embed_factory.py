"""make_embedder: one embedder per kind, and clear errors for bad configurations."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from pydantic import SecretStr

from chunkweave.chunking.models import TokenCounter
from chunkweave.storage.config import EmbedderConfig
from chunkweave.storage.embedders import EmbedderConfigError, EmbedderError, make_embedder
from chunkweave.storage.embedders.minilm import DEFAULT_BATCH_SIZE, MiniLMEmbedder
from chunkweave.storage.embedders.none import NoneEmbedder
from chunkweave.storage.embedders.openai import OpenAIEmbedder


def test_default_is_the_bundled_minilm() -> None:
    embedder = make_embedder(EmbedderConfig())
    assert isinstance(embedder, MiniLMEmbedder)
    assert (embedder.name, embedder.dimension, embedder.max_tokens) == (
        "all-MiniLM-L6-v2-int8",
        384,
        256,
    )
    assert embedder.batch_size == DEFAULT_BATCH_SIZE
    counter: TokenCounter = embedder  # the chunker counts with the embedder itself
    assert counter.count("hello world") == 4


def test_minilm_honours_an_explicit_batch_size_and_a_lower_token_limit() -> None:
    embedder = make_embedder(EmbedderConfig(batch_size=8, max_tokens=128))
    assert isinstance(embedder, MiniLMEmbedder)
    assert (embedder.batch_size, embedder.max_tokens) == (8, 128)


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (EmbedderConfig(max_tokens=512), "reads at most 256 tokens"),
        (EmbedderConfig(dimension=768), "dimension 384, not 768"),
        (EmbedderConfig(base_url="http://x/v1"), "'minilm' does not use base_url"),
        (EmbedderConfig(kind="none", api_key=SecretStr("k")), "'none' does not use api_key"),
        (EmbedderConfig(kind="openai", model="m"), "needs base_url, dimension"),
        (EmbedderConfig(kind="sentence-transformers"), "needs model = a local model folder"),
    ],
)
def test_bad_configurations_are_clear_errors(cfg: EmbedderConfig, message: str) -> None:
    with pytest.raises(EmbedderConfigError, match=message):
        make_embedder(cfg)


def test_openai_kind_builds_an_http_embedder() -> None:
    cfg = EmbedderConfig(
        kind="openai",
        base_url="http://127.0.0.1:8000/v1/",
        model="text-embedding-3-small",
        api_key=SecretStr("sk-secret"),
        dimension=1536,
        batch_size=64,
        concurrent_requests=7,
    )
    embedder = make_embedder(cfg)
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.concurrent_requests == 7
    assert embedder.url == "http://127.0.0.1:8000/v1/embeddings"
    assert (embedder.name, embedder.dimension, embedder.max_tokens) == (
        "openai:text-embedding-3-small",
        1536,
        512,
    )
    assert embedder.batch_size == 64
    assert "sk-secret" not in repr(vars(embedder))


def test_none_kind_stores_without_vectors() -> None:
    embedder = make_embedder(EmbedderConfig(kind="none", max_tokens=300))
    assert isinstance(embedder, NoneEmbedder)
    assert (embedder.name, embedder.dimension, embedder.max_tokens) == ("none", 0, 300)
    assert embedder.embed_documents(["a", "b"]) == [[], []]
    assert embedder.count("some text") > 0
    with pytest.raises(EmbedderError, match="Weaviate-side vectorizer"):
        embedder.embed_query("what?")


def test_sentence_transformers_needs_an_existing_local_folder(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(EmbedderConfigError, match="does not exist.*only local paths") as err:
        make_embedder(EmbedderConfig(kind="sentence-transformers", model=str(missing)))
    assert str(missing) in str(err.value)


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None,
    reason="sentence-transformers is installed here",
)
def test_sentence_transformers_without_the_extra_says_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(EmbedderConfigError, match=r"chunkweave\[sentence-transformers\]"):
        make_embedder(EmbedderConfig(kind="sentence-transformers", model=str(tmp_path)))

"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1.

The server is a small FastAPI app run by uvicorn in a thread, serving
``/v1/embeddings`` with the bundled MiniLM model; a queue of forced error
statuses lets each test script the server's failures.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import uvicorn
from fastapi import FastAPI, Header
from fastapi.responses import JSONResponse
from pydantic import SecretStr

from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.embedders.errors import EmbeddingServiceError, TextTooLongError
from chunkweave.storage.embedders.minilm import MODEL_DIR, MiniLMEmbedder
from chunkweave.storage.embedders.openai import OpenAIEmbedder

KEY = "sk-test-not-a-real-key"


@dataclass
class Server:
    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)
    delay_s: float = 0.0


def _app(state: Server, local: MiniLMEmbedder) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/embeddings")
    def embeddings(body: dict[str, Any], authorization: str | None = Header(None)) -> Any:
        state.requests.append(body)
        if authorization != f"Bearer {KEY}":
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
            return JSONResponse({"error": error}, status_code=401)
        if state.fail_next:
            status = state.fail_next.pop(0)
            return JSONResponse(
                {"error": {"message": f"forced {status}"}},
                status_code=status,
                headers={"Retry-After": "0"} if status == 429 else None,
            )
        time.sleep(state.delay_s)
        vectors = local.embed_documents(body["input"])
        if body["model"] == "wrong-width":
            vectors = [v[:100] for v in vectors]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        data.reverse()  # the index field, not the position, says which text is which
        return {"object": "list", "data": data, "model": body["model"]}

    return app


@pytest.fixture(scope="module")
def local() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def server_instance(local: MiniLMEmbedder) -> Iterator[Server]:
    state = Server(base_url="")
    config = uvicorn.Config(_app(state, local), host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the test embeddings server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    state.base_url = f"http://127.0.0.1:{port}/v1"
    yield state
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def server(server_instance: Server) -> Server:
    server_instance.requests.clear()
    server_instance.fail_next.clear()
    server_instance.delay_s = 0.0
    return server_instance


def _embedder(server: Server, **kw: Any) -> OpenAIEmbedder:
    args: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "all-MiniLM-L6-v2",
        "dimension": 384,
        "api_key": SecretStr(KEY),
        "backoff_s": 0.01,
    }
    return OpenAIEmbedder(**(args | kw))


TEXTS = [f"sentence number {i} about {topic}" for i, topic in enumerate(
    ["rivers", "taxes", "proteins", "compilers", "volcanoes"]
)]  # fmt: skip


def test_vectors_come_back_in_order_over_several_requests(server, local) -> None:
    remote = _embedder(server, batch_size=2)
    vectors = remote.embed_documents(TEXTS)
    assert [r["input"] for r in server.requests] == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:5]]
    assert server.requests[0]["model"] == "all-MiniLM-L6-v2"
    assert np.allclose(vectors, local.embed_documents(TEXTS), atol=1e-6)
    assert np.allclose(remote.embed_query(TEXTS[3]), vectors[3], atol=1e-6)
    assert remote.name == "openai:all-MiniLM-L6-v2" and remote.dimension == 384


def test_server_error_then_success_is_retried(server, local) -> None:
    server.fail_next[:] = [500, 503]
    vectors = _embedder(server).embed_documents(TEXTS[:2])
    assert len(server.requests) == 3
    assert np.allclose(vectors, local.embed_documents(TEXTS[:2]), atol=1e-6)


def test_rate_limit_is_retried(server) -> None:
    server.fail_next[:] = [429]
    assert len(_embedder(server).embed_documents(TEXTS[:1])) == 1
    assert len(server.requests) == 2


def test_wrong_api_key_fails_at_once_with_a_clear_error(server) -> None:
    remote = _embedder(server, api_key=SecretStr("sk-wrong-key-123"))
    with pytest.raises(EmbeddingServiceError) as err:
        remote.embed_documents(TEXTS[:1])
    message = str(err.value)
    assert err.value.status == 401
    assert not err.value.transient and err.value.code == ErrorCode.EMBEDDER_ERROR
    assert "HTTP 401" in message and "Incorrect API key" in message and "API key" in message
    assert server.base_url in message
    assert "sk-wrong-key-123" not in message
    assert len(server.requests) == 1  # a 401 is not retried


def test_persistent_server_errors_give_up_after_retries(server) -> None:
    server.fail_next[:] = [502] * 10
    with pytest.raises(EmbeddingServiceError, match=r"gave up after 3 attempts.*HTTP 502") as err:
        _embedder(server, retries=2).embed_documents(TEXTS[:1])
    assert len(server.requests) == 3
    assert (err.value.status, err.value.transient) == (502, True)
    assert err.value.code == ErrorCode.EMBEDDER_UNAVAILABLE


def test_timeouts_are_retried_then_reported(server) -> None:
    server.delay_s = 1.0
    with pytest.raises(EmbeddingServiceError, match=r"gave up after 2 attempts.*Timeout"):
        _embedder(server, retries=1, timeout_s=0.2).embed_documents(TEXTS[:1])
    assert len(server.requests) == 2


def test_unreachable_server_is_retried_then_reported() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    remote = OpenAIEmbedder(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", dimension=384, retries=2, backoff_s=0.01
    )
    with pytest.raises(
        EmbeddingServiceError, match=r"gave up after 3 attempts.*ConnectError"
    ) as err:
        remote.embed_documents(["hello"])
    assert (err.value.status, err.value.transient) == (None, True)
    assert err.value.code == ErrorCode.EMBEDDER_UNAVAILABLE


def test_dimension_mismatch_is_an_error(server) -> None:
    with pytest.raises(
        EmbeddingServiceError, match=r"returned \[100\]-d vectors.*dimension is 384"
    ) as err:
        _embedder(server, model="wrong-width").embed_documents(TEXTS[:1])
    # The service answered: asking again gives the same wrong answer.
    assert not err.value.transient and err.value.code == ErrorCode.EMBEDDER_ERROR


def test_too_long_text_is_refused_before_any_request(server) -> None:
    remote = _embedder(server, max_tokens=32)
    with pytest.raises(TextTooLongError):
        remote.embed_documents(["ok", "word " * 40])
    assert server.requests == []


def test_count_is_exact_with_a_local_tokenizer_else_an_overestimate(local) -> None:
    exact = OpenAIEmbedder(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        dimension=384,
        tokenizer_path=MODEL_DIR / "tokenizer.json",
    )
    approx = OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", model="m", dimension=384)
    for text in TEXTS + ["Zürich — 東京", "hyperparameterization " * 5]:
        assert exact.count(text) == local.count(text)
        assert approx.count(text) >= local.count(text)


def test_missing_tokenizer_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        OpenAIEmbedder(
            base_url="http://x/v1", model="m", dimension=3, tokenizer_path=tmp_path / "t.json"
        )

"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1.

The server is a small FastAPI app run by uvicorn in a thread, serving
``/v1/embeddings`` with the bundled MiniLM model; a queue of forced error
statuses lets each test script the server's failures. For the concurrency tests
it also delays or fails a request by its first text, counts the requests it is
serving at once, and (model ``tagged``) answers each text ``t<n>`` with a cheap
vector whose first component is ``n``.
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
from pydantic import SecretStr, ValidationError

from chunkweave.parsers.errors import ErrorCode
from chunkweave.storage.config import EmbedderConfig
from chunkweave.storage.embedders.errors import (
    EmbedderConfigError,
    EmbeddingServiceError,
    TextTooLongError,
)
from chunkweave.storage.embedders.minilm import MODEL_DIR, MiniLMEmbedder
from chunkweave.storage.embedders.openai import OpenAIEmbedder

KEY = "sk-test-not-a-real-key"


@dataclass
class Server:
    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)
    delay_s: float = 0.0
    # Keyed by a request's first text: seconds to wait, statuses to answer in turn.
    delay_for: dict[str, float] = field(default_factory=dict)
    fail_for: dict[str, list[int]] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)  # first texts, in completion order
    serving: int = 0
    peak: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        self.requests.clear()
        self.fail_next.clear()
        self.delay_s = 0.0
        self.delay_for.clear()
        self.fail_for.clear()
        self.finished.clear()
        self.serving = self.peak = 0


def _app(state: Server, local: MiniLMEmbedder) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/embeddings")
    def embeddings(body: dict[str, Any], authorization: str | None = Header(None)) -> Any:
        with state.lock:
            state.requests.append(body)
            state.serving += 1
            state.peak = max(state.peak, state.serving)
        try:
            return _answer(body, authorization)
        finally:
            with state.lock:
                state.serving -= 1
                state.finished.append(body["input"][0])

    def _answer(body: dict[str, Any], authorization: str | None) -> Any:
        first = body["input"][0]
        time.sleep(state.delay_for.get(first, 0.0))
        with state.lock:
            forced = state.fail_for.get(first)
            status = forced.pop(0) if forced else None
        if status is not None:
            return JSONResponse({"error": {"message": f"forced {status} for {first}"}}, status)
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
        if body["model"] == "tagged":
            vectors = [[float(text[1:])] + [0.0] * 383 for text in body["input"]]
        else:
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
    server_instance.reset()
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


@pytest.mark.parametrize("concurrent", [1, 3])
def test_vectors_come_back_in_order_over_several_requests(server, local, concurrent) -> None:
    remote = _embedder(server, batch_size=2, concurrent_requests=concurrent)
    vectors = remote.embed_documents(TEXTS)
    sent = [r["input"] for r in server.requests]
    if concurrent == 1:  # one after another, as before
        assert sent == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:5]]
    else:
        assert sorted(sent) == sorted([TEXTS[0:2], TEXTS[2:4], TEXTS[4:5]])
    assert server.requests[0]["model"] == "all-MiniLM-L6-v2"
    assert np.allclose(vectors, local.embed_documents(TEXTS), atol=1e-6)
    assert np.allclose(remote.embed_query(TEXTS[3]), vectors[3], atol=1e-6)
    assert remote.name == "openai:all-MiniLM-L6-v2" and remote.dimension == 384


def _tagged(n: int) -> list[str]:
    """Texts ``t0`` .. ``t<n-1>``: the ``tagged`` model answers ``t<i>`` with ``[i, 0, ...]``."""
    return [f"t{i}" for i in range(n)]


def _tags(vectors: list[list[float]]) -> list[int]:
    assert all(len(v) == 384 for v in vectors)
    return [int(v[0]) for v in vectors]


def test_concurrent_batches_finishing_out_of_order_keep_input_order(server) -> None:
    texts = _tagged(24)  # 12 batches of 2
    # Early batches answer slowest, so later ones complete first.
    server.delay_for = {f"t{2 * k}": 0.05 * ((11 - k) % 4) + 0.02 for k in range(12)}
    server.delay_for["t0"] = 0.4
    remote = _embedder(server, model="tagged", batch_size=2, concurrent_requests=4)
    vectors = remote.embed_documents(texts)
    assert _tags(vectors) == list(range(24))
    assert len(server.requests) == 12
    firsts = texts[::2]
    assert server.finished != firsts and sorted(server.finished) == sorted(firsts)
    assert server.peak == 4


@pytest.mark.parametrize("concurrent", [2, 4, 16])
def test_at_most_concurrent_requests_are_in_flight(server, concurrent) -> None:
    texts = _tagged(2 * concurrent + 1)  # batch_size 1: more batches than the window
    # Long enough that every slot fills before the first answer, even on a busy machine.
    server.delay_for = dict.fromkeys(texts, 0.3)
    remote = _embedder(server, model="tagged", batch_size=1, concurrent_requests=concurrent)
    assert _tags(remote.embed_documents(texts)) == list(range(len(texts)))
    assert server.peak == concurrent
    assert len(server.requests) == len(texts)


def test_the_window_slides_past_a_slow_batch(server) -> None:
    # Sent in waves of 2, nothing after t1 could start while t0 is answering; with a
    # sliding window the other slot serves t1..t9 meanwhile.
    texts = _tagged(10)
    server.delay_for = {"t0": 1.0}
    remote = _embedder(server, model="tagged", batch_size=1, concurrent_requests=2)
    assert _tags(remote.embed_documents(texts)) == list(range(10))
    assert server.finished[-1] == "t0"
    assert server.peak == 2


def test_one_request_at_a_time_when_concurrent_requests_is_1(server) -> None:
    texts = _tagged(10)
    server.delay_for = {"t0": 0.2, "t4": 0.1}
    remote = _embedder(server, model="tagged", batch_size=2, concurrent_requests=1)
    assert _tags(remote.embed_documents(texts)) == list(range(10))
    assert [r["input"] for r in server.requests] == [texts[i : i + 2] for i in range(0, 10, 2)]
    assert server.finished == texts[::2]
    assert server.peak == 1


def test_a_batch_failing_then_succeeding_is_retried_under_concurrency(server) -> None:
    texts = _tagged(16)
    server.delay_for = dict.fromkeys(texts[::2], 0.03)
    server.fail_for = {"t6": [503, 429]}
    remote = _embedder(server, model="tagged", batch_size=2, concurrent_requests=4)
    assert _tags(remote.embed_documents(texts)) == list(range(16))
    assert [r["input"][0] for r in server.requests].count("t6") == 3
    assert len(server.requests) == 8 + 2


def test_a_batch_refused_under_concurrency_fails_the_call_at_once(server) -> None:
    texts = _tagged(20)
    server.delay_for = dict.fromkeys(texts[::2], 0.2)
    server.delay_for["t0"] = 0.0
    server.fail_for = {"t0": [400] * 5}
    remote = _embedder(server, model="tagged", batch_size=2, concurrent_requests=2)
    with pytest.raises(EmbeddingServiceError, match=r"HTTP 400 Bad Request: forced 400") as err:
        remote.embed_documents(texts)
    assert (err.value.status, err.value.transient) == (400, False)
    assert err.value.code == ErrorCode.EMBEDDER_ERROR
    firsts = [r["input"][0] for r in server.requests]
    assert firsts.count("t0") == 1  # a 400 is not retried
    assert set(firsts) <= {"t0", "t2"}  # no batch is sent after the failure
    assert server.serving == 0  # the batch in flight was waited for


def test_a_batch_failing_for_good_under_concurrency_gives_up_as_before(server) -> None:
    texts = _tagged(16)
    server.delay_for = dict.fromkeys(texts[::2], 0.03)
    server.fail_for = {"t6": [502] * 10}
    remote = _embedder(server, model="tagged", batch_size=2, concurrent_requests=4, retries=2)
    with pytest.raises(EmbeddingServiceError, match=r"gave up after 3 attempts.*HTTP 502") as err:
        remote.embed_documents(texts)
    assert (err.value.status, err.value.transient) == (502, True)
    assert err.value.code == ErrorCode.EMBEDDER_UNAVAILABLE
    assert [r["input"][0] for r in server.requests].count("t6") == 3
    assert server.serving == 0


def test_a_failed_batch_ends_the_other_batches_retries(server) -> None:
    # t2 answers 503 at once and would back off for 15-30 s; t0 fails for good at 0.3 s:
    # t2 stops waiting and is not sent again.
    texts = _tagged(4)
    server.delay_for = {"t0": 0.3}
    server.fail_for = {"t0": [400], "t2": [503] * 5}
    remote = _embedder(server, model="tagged", batch_size=2, concurrent_requests=2, backoff_s=30.0)
    started = time.monotonic()
    with pytest.raises(EmbeddingServiceError, match="HTTP 400") as err:
        remote.embed_documents(texts)
    assert time.monotonic() - started < 5
    assert err.value.status == 400
    assert sorted(r["input"][0] for r in server.requests) == ["t0", "t2"]


def test_concurrent_requests_must_be_positive() -> None:
    with pytest.raises(EmbedderConfigError, match="concurrent_requests"):
        OpenAIEmbedder(base_url="http://x/v1", model="m", dimension=3, concurrent_requests=0)
    assert EmbedderConfig().concurrent_requests == 4
    with pytest.raises(ValidationError):
        EmbedderConfig(kind="openai", concurrent_requests=0)


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

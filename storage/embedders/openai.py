"""Embedder for any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

Works with OpenAI, vLLM, TEI, Ollama, LM Studio and the like. ``base_url`` is the
API root including its version segment, as OpenAI's own clients take it (e.g.
``https://api.openai.com/v1``, ``http://127.0.0.1:8080/v1``).
"""

from __future__ import annotations

import os
import random
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from tokenizers import Tokenizer

from chunkweave.errors import ChunkweaveError
from chunkweave.storage.embedders.counting import approx_token_count, load_tokenizer
from chunkweave.storage.embedders.errors import (
    EmbedderConfigError,
    EmbeddingServiceError,
    TextTooLongError,
)

DEFAULT_MAX_TOKENS = 512
#: Requests in flight at once. A GPU embedding server (TEI, vLLM, Infinity) batches
#: concurrent requests together; one at a time leaves it idle between them.
DEFAULT_CONCURRENT_REQUESTS = 4
# 408 request timeout, 409 conflict (some gateways), 425 too early, 429 rate limit;
# every 5xx is treated as transient too.
_RETRYABLE = frozenset({408, 409, 425, 429})
_HINTS = {
    401: "check the API key (embedder api_key)",
    403: "the API key may not use this model",
    404: "check base_url (it should end in the API version, e.g. /v1) and the model name",
}


class OpenAIEmbedder:
    """Embeds by calling a remote OpenAI-compatible embeddings endpoint.

    - Sends ``batch_size`` texts per request and returns vectors in input order.
    - Keeps up to ``concurrent_requests`` requests in flight at once, from a
      thread pool of that size: a sliding window, where the next batch is sliced
      and sent as soon as any request finishes, so no more than that many batches
      are ever in flight whatever the input size. With 1 (or a single batch) the
      requests go one after another from the calling thread.
    - Retries 429, 408/409/425, 5xx, timeouts and connection errors up to
      ``retries`` times with exponential backoff and jitter (``Retry-After`` is
      honoured, capped at ``max_backoff_s``); any other status fails at once.
      Either way the raised :class:`EmbeddingServiceError` names the URL, status
      and the server's reason (the API key never appears in it) and carries the
      last status: ``transient`` when the service never answered or last answered
      429 or 5xx.
    - With several requests in flight, the first batch to fail for good decides
      the error, raised as above: no further batch is sent, the batches in flight
      finish their current attempt but retry no more, and the call returns only
      once none of its requests is in flight.
    - Checks every response: one vector per text, each of ``dimension`` floats.
    - ``count`` is exact when ``tokenizer_path`` names the model's local
      ``tokenizer.json``; otherwise it is :func:`approx_token_count`, an
      over-estimate. A text counted over ``max_tokens`` raises TextTooLongError
      rather than letting the server truncate it.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimension: int,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        api_key: SecretStr | None = None,
        batch_size: int = 16,
        concurrent_requests: int = DEFAULT_CONCURRENT_REQUESTS,
        timeout_s: float = 60.0,
        retries: int = 5,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        tokenizer_path: Path | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise EmbedderConfigError(f"openai embedder: base_url {base_url!r} is not http(s)")
        if min(dimension, max_tokens, batch_size, concurrent_requests) < 1 or retries < 0:
            raise EmbedderConfigError(
                "openai embedder: dimension, max_tokens, batch_size and concurrent_requests "
                "must be >= 1, retries >= 0"
            )
        self.name = f"openai:{model}"
        self.dimension = dimension
        self.max_tokens = max_tokens
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self.batch_size = batch_size
        self.concurrent_requests = concurrent_requests
        self.retries = retries
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s
        self._tokenizer: Tokenizer | None = (
            load_tokenizer(tokenizer_path) if tokenizer_path is not None else None
        )
        self._client: httpx.Client | None = None
        self._client_pid = 0

    def count(self, text: str) -> int:
        """Tokens of ``text``: exact with a local tokenizer, else an over-estimate."""
        if self._tokenizer is not None:
            return len(self._tokenizer.encode(text).ids)
        return approx_token_count(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order; one request per ``batch_size`` texts."""
        for index, text in enumerate(texts):
            tokens = self.count(text)
            if tokens > self.max_tokens:
                raise TextTooLongError(self.name, index, tokens, self.max_tokens)
        # Made here, in the calling thread: the pool's threads share it (httpx.Client
        # is thread-safe) and never race to create it.
        client = self._http()
        if self.concurrent_requests > 1 and len(texts) > self.batch_size:
            return self._embed_concurrently(client, texts)
        never = threading.Event()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._request(client, texts[start : start + self.batch_size], never))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query."""
        return self.embed_documents([text])[0]

    def close(self) -> None:
        """Close the HTTP connection pool (the embedder reopens it if used again)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _embed_concurrently(self, client: httpx.Client, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts`` in order, with up to ``concurrent_requests`` requests in flight."""
        starts = iter(enumerate(range(0, len(texts), self.batch_size)))
        results: dict[int, list[list[float]]] = {}
        in_flight: dict[Future[list[list[float]]], int] = {}
        stop = threading.Event()
        failure: Exception | None = None
        with ThreadPoolExecutor(self.concurrent_requests, thread_name_prefix="embed") as pool:
            try:
                while True:
                    # Slice and send only as many batches as there are free slots, so
                    # a huge input never has more than the window's texts in requests.
                    while failure is None and len(in_flight) < self.concurrent_requests:
                        item = next(starts, None)
                        if item is None:
                            break
                        number, start = item
                        batch = texts[start : start + self.batch_size]
                        in_flight[pool.submit(self._request, client, batch, stop)] = number
                    if not in_flight:
                        break
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=in_flight.__getitem__):
                        number = in_flight.pop(future)
                        try:
                            results[number] = future.result()
                        except _Abandoned:
                            pass
                        except Exception as exc:  # re-raised once none is in flight
                            if failure is None:
                                failure = exc
                                stop.set()
            finally:
                # On a failure or an interrupt here: the requests in flight retry no
                # more, and leaving the pool waits for their current attempt.
                stop.set()
        if failure is not None:
            raise failure
        return [vector for number in range(len(results)) for vector in results[number]]

    def _http(self) -> httpx.Client:
        # One pooled client per process: sockets inherited over fork are shared with
        # the parent and must not be reused by the child.
        if self._client is None or self._client_pid != os.getpid():
            headers = {"Content-Type": "application/json"}
            if self._api_key is not None:
                headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
            # Keep a connection alive for every request that may be in flight.
            limits = httpx.Limits(
                max_connections=max(100, self.concurrent_requests),
                max_keepalive_connections=max(20, self.concurrent_requests),
            )
            self._client = httpx.Client(timeout=self._timeout_s, headers=headers, limits=limits)
            self._client_pid = os.getpid()
        return self._client

    def _request(
        self, client: httpx.Client, batch: list[str], stop: threading.Event
    ) -> list[list[float]]:
        """Vectors of one batch, retried per the class rules.

        Raises :class:`_Abandoned` instead of starting or waiting for another attempt
        once ``stop`` is set.
        """
        payload = {"model": self.model, "input": batch, "encoding_format": "float"}
        last = ""
        status: int | None = None  # of the last response; None: no response at all
        for attempt in range(self.retries + 1):
            if stop.is_set():
                raise _Abandoned
            delay: float | None = None
            try:
                resp = client.post(self.url, json=payload)
            except httpx.TransportError as exc:  # timeouts, refused/reset connections
                last, status = f"{type(exc).__name__}: {exc or 'no detail'}", None
            else:
                if resp.status_code == 200:
                    return self._parse(resp, len(batch))
                last, status = _describe(resp), resp.status_code
                if resp.status_code not in _RETRYABLE and resp.status_code < 500:
                    raise EmbeddingServiceError(f"{self.url}: {last}", resp.status_code)
                delay = _retry_after(resp)
            if attempt < self.retries:
                backoff = self._backoff_s * 2**attempt * (0.5 + random.random() / 2)
                # An interruptible sleep: another batch's failure ends the wait.
                if stop.wait(min(self._max_backoff_s, delay if delay is not None else backoff)):
                    raise _Abandoned
        raise EmbeddingServiceError(
            f"{self.url}: gave up after {self.retries + 1} attempts; last error: {last}", status
        )

    def _parse(self, resp: httpx.Response, expected: int) -> list[list[float]]:
        try:
            items = sorted(resp.json()["data"], key=lambda item: item["index"])
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingServiceError(
                f"{self.url}: response is not an embeddings list ({type(exc).__name__}: {exc})",
                resp.status_code,
            ) from exc
        if len(vectors) != expected:
            raise EmbeddingServiceError(
                f"{self.url}: sent {expected} texts, got {len(vectors)} vectors", resp.status_code
            )
        widths = {len(v) for v in vectors}
        if widths != {self.dimension}:
            raise EmbeddingServiceError(
                f"{self.url}: model {self.model!r} returned {sorted(widths)}-d vectors, "
                f"configured dimension is {self.dimension}",
                resp.status_code,
            )
        return vectors


class _Abandoned(ChunkweaveError):
    """A batch given up because another batch of the same call failed for good."""


def _describe(resp: httpx.Response) -> str:
    """``HTTP 401 Unauthorized: <server message> (<hint>)`` for an error response."""
    detail = resp.text[:300]
    try:
        body: Any = resp.json()
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and error.get("message"):
            detail = str(error["message"])[:300]
        elif isinstance(body, dict) and body.get("detail"):
            detail = str(body["detail"])[:300]
    except ValueError:
        pass
    hint = _HINTS.get(resp.status_code)
    text = f"HTTP {resp.status_code} {resp.reason_phrase}: {detail.strip() or '(empty body)'}"
    return f"{text} ({hint})" if hint else text


def _retry_after(resp: httpx.Response) -> float | None:
    """Seconds from a numeric ``Retry-After`` header, if the server sent one."""
    value = resp.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None

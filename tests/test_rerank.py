"""The rerank client and the ranking settings.

No real rerank server (TEI, Infinity, Cohere) can run here. These are protocol
tests: a tiny in-process HTTP server answers in the documented request/response
shapes (TEI ``/rerank``: ``{query, texts}`` -> ``[{index, score}]``; Cohere/Jina/
Infinity: ``{model, query, documents, top_n}`` -> ``{results: [{index,
relevance_score}]}``), and the test checks what the client sent and how it read the
answer. They show the client speaks the documented shapes, not that a given server
version answers exactly so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from chunkweave.storage.hits import Hit
from chunkweave.storage.ranking import Ranking, RerankConfig
from chunkweave.storage.rerank import HttpReranker, RerankError, Rerankers, rerank_hits

Answer = Callable[[dict[str, Any]], tuple[int, Any]]


class _Server:
    """An HTTP server on loopback answering POSTs with ``answer(body)``; records requests."""

    def __init__(self, answer: Answer) -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, dict(self.headers), body))
                status, payload = answer(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _overlap(query: str, text: str) -> float:
    # A stand-in relevance: shared words (the test's "model").
    return float(len(set(query.lower().split()) & set(text.lower().split())))


def tei_answer(body: dict[str, Any]) -> tuple[int, Any]:
    """TEI's shape: sorted by score, best first."""
    scored = [
        {"index": i, "score": _overlap(body["query"], t)} for i, t in enumerate(body["texts"])
    ]
    return 200, sorted(scored, key=lambda r: -r["score"])


def cohere_answer(body: dict[str, Any]) -> tuple[int, Any]:
    """Cohere/Jina/Infinity's shape, cut to ``top_n``."""
    scored = [
        {"index": i, "relevance_score": _overlap(body["query"], t)}
        for i, t in enumerate(body["documents"])
    ]
    scored.sort(key=lambda r: -r["relevance_score"])
    return 200, {"model": body.get("model"), "results": scored[: body["top_n"]]}


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], _Server]]:
    servers: list[_Server] = []

    def start(answer: Answer) -> _Server:
        servers.append(_Server(answer))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


TEXTS = ["red apples grow here", "the capital of France is Paris", "nothing in common"]


def test_tei_shape_is_sent_and_scores_come_back_in_input_order(serve):
    server = serve(tei_answer)
    reranker = HttpReranker(RerankConfig(url=server.url + "/rerank", api="tei"))
    try:
        scores = reranker.rerank("capital of France", TEXTS)
    finally:
        reranker.close()
    assert scores == [0.0, 3.0, 0.0]
    path, headers, body = server.requests[0]
    assert path == "/rerank"
    assert body == {"query": "capital of France", "texts": TEXTS}
    assert "authorization" not in {k.lower() for k in headers}


def test_cohere_shape_sends_model_top_n_and_the_key(serve):
    server = serve(cohere_answer)
    cfg = RerankConfig(
        url=server.url + "/v1/rerank", api="cohere", model="bge-reranker", api_key=SecretStr("k1")
    )
    reranker = HttpReranker(cfg)
    try:
        scores = reranker.rerank("red apples", TEXTS)
    finally:
        reranker.close()
    assert scores == [2.0, 0.0, 0.0]
    path, headers, body = server.requests[0]
    assert (path, headers["Authorization"]) == ("/v1/rerank", "Bearer k1")
    assert body == {"model": "bge-reranker", "query": "red apples", "documents": TEXTS, "top_n": 3}


@pytest.mark.parametrize(
    ("answer", "match"),
    [
        (lambda body: (500, {"error": "model not loaded"}), "HTTP 500"),
        (lambda body: (200, {"unexpected": True}), "unexpected answer"),
        (lambda body: (200, [{"index": 0, "score": 1.0}]), "no score for texts \\[1, 2\\]"),
    ],
)
def test_a_failed_or_malformed_answer_raises_rather_than_keeping_the_old_order(
    serve, answer, match
):
    server = serve(answer)
    reranker = HttpReranker(RerankConfig(url=server.url + "/rerank"))
    try:
        with pytest.raises(RerankError, match=match):
            reranker.rerank("q", TEXTS)
    finally:
        reranker.close()


def test_an_unreachable_endpoint_raises_a_rerank_error():
    reranker = HttpReranker(RerankConfig(url="http://127.0.0.1:9/rerank", timeout_s=2))
    try:
        with pytest.raises(RerankError, match="ConnectError"):
            reranker.rerank("q", ["a"])
    finally:
        reranker.close()


def _hit(n: int, text: str, path: tuple[str, ...] = ()) -> Hit:
    return Hit(
        uuid=str(n), score=1.0 / (n + 1), text=text, heading_path=path, pages=(), source="s",
        doc_id="d", type="text",
    )  # fmt: skip


def test_rerank_hits_reorders_by_the_reranker_and_reads_the_heading_path(serve):
    server = serve(tei_answer)
    hits = [_hit(0, "nothing"), _hit(1, "body text", ("Paris", "capital France")), _hit(2, "x")]
    pool = Rerankers()
    reranker = pool.get(RerankConfig(url=server.url + "/rerank"))
    assert reranker is not None
    try:
        top = rerank_hits(reranker, "capital France", hits, k=2)
    finally:
        pool.close()
    assert [h.uuid for h in top] == ["1", "0"]  # ties keep the first stage's order
    assert top[0].score == 2.0
    assert server.requests[0][2]["texts"][1] == "Paris > capital France\nbody text"
    assert Rerankers().get(RerankConfig()) is None  # no url: no rerank stage


def test_ranking_settings_are_validated():
    assert Ranking().field_names() == ["text", "heading_path", "caption", "text_cjk"]
    for bad in [("text^x",), ("text;drop",), ()]:
        with pytest.raises(ValidationError, match="keyword fields"):
            Ranking(fields=bad)
    with pytest.raises(ValidationError):
        Ranking(alpha=1.5)
    with pytest.raises(ValidationError):
        Ranking(extra=1)  # type: ignore[call-arg]


def test_a_query_in_a_language_the_vectors_lack_is_ranked_mostly_by_keyword():
    ranking = Ranking(alpha=0.75, foreign_alpha=0.25)
    assert ranking.alpha_for("How many adult women were covered in 2011-12?") == 0.75
    assert (
        ranking.alpha_for("광역탄소중립 위원 구성 현황에서 울산의 기타 민간위원은 누구인가?")
        == 0.25
    )
    assert ranking.alpha_for("Wann gelingt es, das Thema im Unternehmen zu verankern?") == 0.25
    assert ranking.alpha_for("2011-12") == 0.75  # no letters: no language, no switch
    assert (
        Ranking(alpha=0.6, vector_languages=()).alpha_for("东北电气2018年第一季度营业收入") == 0.6
    )


def test_only_a_cjk_query_searches_the_trigram_field():
    ranking = Ranking()
    assert "text_cjk" in ranking.fields_for("东北电气2018年第一季度营业收入比上年同期增减了多少？")
    assert "text_cjk" in ranking.fields_for("개인 정보 표기 형식 표에서 휴대폰번호")
    assert ranking.fields_for("What share of households have a male head?") == (
        "text",
        "heading_path^2",
        "caption^2",
    )
    assert Ranking(fields=("text_cjk",)).fields_for("English words") == ("text_cjk",)

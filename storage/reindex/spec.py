"""What a reindex builds: the target's chunking and embedder, the gate, the retention.

Recorded as JSON on the target version (:class:`~chunkweave.storage.weaviate.alias.IndexVersion`),
so any worker can build the target's pipeline from it and a reindex resumes after
Redis lost everything. No secret is recorded: an API key comes from the settings of
the process that embeds.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from chunkweave.chunking.models import ChunkOptions
from chunkweave.storage.config import EmbedderConfig
from chunkweave.storage.evaluate import QAItem

#: Questions a gate may carry (the spec is one catalog object).
MAX_QA = 5_000


class ReindexSpec(BaseModel):
    """The target of one reindex, and how it is checked before the switch."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Chunk options of the target (resolved against its embedder's input limit).
    chunking: ChunkOptions
    #: The target's embedder (``api_key`` never recorded).
    embedder: EmbedderConfig
    #: The collection and ledger that were live when the reindex began.
    live_collection: str
    live_ledger: str
    #: Options the live collection was chunked with, for reusing its vectors (its
    #: chunk IDs are reproduced and checked); ``None``: nothing to reuse (another
    #: embedder, or ``--no-reuse``).
    live_chunking: ChunkOptions | None = None
    #: Gate questions (empty: no gate), the allowed drop of recall@5 and MRR, ``force``.
    qa: tuple[QAItem, ...] = Field(default=(), max_length=MAX_QA)
    margin: float = Field(default=0.02, ge=0.0, le=1.0)
    force: bool = False
    #: Retired versions kept after the switch (the newest is the rollback target).
    keep: int = Field(default=1, ge=0)

    def to_json(self) -> str:
        """Return the spec as recorded (no secret: ``embedder.api_key`` is dropped)."""
        clean = self.model_copy(
            update={"embedder": self.embedder.model_copy(update={"api_key": None})}
        )
        return clean.model_dump_json()

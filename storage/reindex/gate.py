"""The retrieval gate: the target must retrieve about as well as the live collection.

Both collections are asked the same questions (the QA format of ``chunkweave eval``,
:mod:`chunkweave.storage.evaluate`) by vector search in the store itself, top 10,
section (parent) chunks left out. A hit is a chunk whose text holds the evidence,
from the question's document when it names one (compared by file name). The target
passes when neither recall@5 nor MRR is lower than the live figure by more than
``margin``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from pydantic import BaseModel, ConfigDict

from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.evaluate import QAItem, Scores, normalize, score
from chunkweave.storage.filters import Condition, SearchRequest
from chunkweave.storage.protocols import ChunkStore

K = 10


class GateResult(BaseModel):
    """Live and target scores, and the verdict."""

    model_config = ConfigDict(frozen=True)

    live: Scores
    target: Scores
    margin: float
    passed: bool

    def summary(self) -> str:
        """One line: both figures of both collections and the verdict."""
        verdict = "passed" if self.passed else "refused"
        return (
            f"gate {verdict}: recall@5 {self.live.recall_at_5:.3f} -> "
            f"{self.target.recall_at_5:.3f}, MRR {self.live.mrr:.3f} -> {self.target.mrr:.3f} "
            f"(margin {self.margin:.3f}, {self.live.n} questions)"
        )


def _name(source: str) -> str:
    return PurePath(source.replace("\\", "/")).name


def score_store(store: ChunkStore, embedder: Embedder, questions: Sequence[QAItem]) -> Scores:
    """Recall@k and MRR of ``store`` on ``questions`` (vector search, top :data:`K`)."""
    where = (Condition("type", "not_equal", "section"),)
    ranks: list[int | None] = []
    for item in questions:
        vector = embedder.embed_query(item.question) if embedder.dimension else None
        hits = store.search(
            SearchRequest(item.question, vector, k=K, where=where, hybrid=vector is None)
        )
        evidence = normalize(item.evidence)
        rank = None
        for position, hit in enumerate(hits, 1):
            if evidence in normalize(hit.text) and (
                item.doc is None or _name(hit.source) == item.doc
            ):
                rank = position
                break
        ranks.append(rank)
    return score(ranks)


def judge(live: Scores, target: Scores, margin: float) -> GateResult:
    """Pass unless recall@5 or MRR dropped by more than ``margin``."""
    passed = (
        target.recall_at_5 >= live.recall_at_5 - margin - 1e-9
        and target.mrr >= live.mrr - margin - 1e-9
    )
    return GateResult(live=live, target=target, margin=margin, passed=passed)

"""Whether a target version's ledger accounts for every source of the live ledger.

A target may only go live when it does (:attr:`Accounting.complete`): every live
document has a target entry, ``ok`` where the live one is ``ok`` and at the same or a
later version, and the target has nothing the live store no longer has. Documents
ingested or changed in the live store while the target was being built show up as
``missing`` (the reindex replays them onto the target); documents deleted meanwhile
show up as ``extra`` (deleted from the target).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from chunkweave.storage.values import LedgerEntry


@dataclass
class Accounting:
    """The live ledger compared with the target's."""

    total: int = 0
    done: int = 0
    #: Live entries the target lacks, or holds at an older version: to (re)write.
    missing: list[LedgerEntry] = field(default_factory=list)
    #: Live ``ok`` entries the target failed on: the target cannot go live.
    failed: list[LedgerEntry] = field(default_factory=list)
    #: Doc ids in the target that the live ledger no longer has: to delete.
    extra: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether every live source is accounted for and nothing else is there."""
        return not self.missing and not self.failed and not self.extra


def _current(live: LedgerEntry, target: LedgerEntry) -> bool:
    if live.status != "ok":  # failed live: any target attempt accounts for it
        return True
    if target.status != "ok":
        return False
    if target.doc_sha1 == live.doc_sha1:
        # Same file: current unless the caller's metadata changed since (a retag).
        return target.meta_sha1 == live.meta_sha1
    # The target read a newer file than the live store holds: it is ahead, not behind.
    return bool(target.updated_at and live.updated_at and target.updated_at > live.updated_at)


def account(live: Iterable[LedgerEntry], target: Iterable[LedgerEntry]) -> Accounting:
    """Compare the live ledger with the target's (see the module docstring)."""
    have = {e.doc_id: e for e in target}
    result = Accounting()
    seen: set[str] = set()
    for entry in live:
        seen.add(entry.doc_id)
        result.total += 1
        got = have.get(entry.doc_id)
        if got is None:
            result.missing.append(entry)
        elif _current(entry, got):
            result.done += 1
        elif (
            got.status == "failed"
            and got.updated_at
            and entry.updated_at
            and (got.updated_at > entry.updated_at)
        ):
            result.failed.append(entry)
        else:
            result.missing.append(entry)
    result.extra = sorted(set(have) - seen)
    return result

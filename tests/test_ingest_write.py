"""The document write (begin -> write parts -> commit) on the in-memory store: no server."""

from __future__ import annotations

import pytest

from chunkweave.storage.identity import doc_id_for
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.values import LedgerEntry
from chunkweave.storage.write import ChunkWriter
from tests.store_helpers import CountingEmbedder, MemoryStore, make_chunk

SHA1 = "d" * 40


class Crash(RuntimeError):
    """What a worker dying mid-write looks like to the code after it."""


class RecordingStore(MemoryStore):
    """The in-memory store and ledger, logging each write in order; can crash on one."""

    def __init__(self, crash_on: str | None = None) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.crash_on = crash_on
        ledger_put = self.ledger.put

        def put(entry: LedgerEntry) -> LedgerEntry:
            self._call("ledger")
            return ledger_put(entry)

        self.ledger.put = put  # type: ignore[method-assign]

    def _call(self, name: str) -> None:
        if name == self.crash_on:
            raise Crash(name)
        self.calls.append(name)

    def upsert(self, chunks, vectors, *, metadata=None):  # type: ignore[no-untyped-def]
        self._call("upsert")
        return super().upsert(chunks, vectors, metadata=metadata)

    def delete_ids(self, uuids):  # type: ignore[no-untyped-def]
        self._call("prune")
        return super().delete_ids(uuids)


def _writer(store: MemoryStore) -> ChunkWriter:
    return ChunkWriter(store, store.ledger, CountingEmbedder(), chunker="t/v1/x")


def _begin(writer: ChunkWriter, doc_id: str = "doc", **kw):  # type: ignore[no-untyped-def]
    return writer.begin(doc_id=doc_id, source=f"/docs/{doc_id}.pdf", doc_sha1=SHA1, pages=3, **kw)


def _stored(writer: ChunkWriter, chunks) -> None:  # type: ignore[no-untyped-def]
    """Store ``chunks`` as the document's committed version."""
    write = _begin(writer)
    write.write(chunks)
    write.commit()


OLD = [make_chunk("doc", i) for i in range(6)]
NEW = [*OLD[:3], *(make_chunk("doc", i, text=f"new text {i}") for i in range(3, 6))]


def test_begin_writes_nothing():
    store = RecordingStore()
    write = _begin(_writer(store))
    assert store.calls == [] and not store.objects
    assert write.plan.existed is False and write.plan.doc_sha1 == SHA1


def test_commit_prunes_after_every_upsert_and_records_the_ledger_last():
    store = RecordingStore()
    writer = _writer(store)
    _stored(writer, OLD)
    store.calls.clear()
    write = _begin(writer)
    write.write(NEW[:3])
    write.write(NEW[3:])
    outcome = write.commit()
    assert store.calls == ["upsert", "prune", "ledger"]  # NEW[:3] were stored already
    assert store.doc_uuids("doc") == {chunk_uuid(c.id) for c in NEW}
    assert (outcome.status, outcome.chunks_added, outcome.chunks_unchanged) == ("updated", 3, 3)
    assert outcome.chunks_deleted == 3
    entry = store.ledger.get("doc")
    assert entry is not None and (entry.status, entry.chunk_count, entry.pages) == ("ok", 6, 3)
    assert (entry.doc_sha1, entry.chunker) == (SHA1, "t/v1/x")
    assert entry.embedder == "test-embedder (16-d)"


@pytest.mark.parametrize("crash_on", ["prune", "ledger"])
def test_a_crash_before_the_ledger_leaves_the_old_chunks_and_the_old_entry(crash_on):
    store = RecordingStore()
    writer = _writer(store)
    _stored(writer, OLD)
    before = store.ledger.get("doc")
    store.crash_on = crash_on
    write = _begin(writer)
    write.write(NEW)
    with pytest.raises(Crash):
        write.commit()
    old, new = {chunk_uuid(c.id) for c in OLD}, {chunk_uuid(c.id) for c in NEW}
    # Pruned or not, the document keeps chunks of a whole version: never none.
    assert store.doc_uuids("doc") == (old | new if crash_on == "prune" else new)
    assert store.ledger.get("doc") == before  # still says the old version: a re-run redoes it


def test_a_write_never_committed_leaves_the_old_chunks_and_the_rerun_embeds_only_new_ones():
    store = MemoryStore()
    writer = _writer(store)
    _stored(writer, OLD)
    _begin(writer).write(NEW[:4])  # the worker dies before the rest and the commit
    assert store.doc_uuids("doc") >= {chunk_uuid(c.id) for c in OLD}
    embedder = CountingEmbedder()
    again = ChunkWriter(store, store.ledger, embedder, chunker="t/v1/x")
    write = _begin(again)
    write.write(NEW)
    outcome = write.commit()
    assert embedder.embedded == [c.embed_text for c in NEW[4:]]  # the 4th was stored already
    assert (outcome.chunks_added, outcome.chunks_unchanged, outcome.chunks_deleted) == (2, 4, 3)
    assert store.doc_uuids("doc") == {chunk_uuid(c.id) for c in NEW}


def test_resumed_parts_commit_exactly_what_one_write_would():
    whole, parted = MemoryStore(), MemoryStore()
    for store in (whole, parted):
        _stored(_writer(store), OLD)
    single = _begin(_writer(whole))
    single.write(NEW)
    expected = single.commit()

    # The fan-out: begun by one task, a part per task, committed by another.
    plan = _begin(_writer(parted)).plan
    counts = [_writer(parted).resume(plan).write(part) for part in (NEW[:2], NEW[2:4], NEW[4:])]
    committed = _writer(parted).resume(
        plan,
        added=sum(c.added for c in counts),
        unchanged=sum(c.unchanged for c in counts),
        uuids=[chunk_uuid(c.id) for c in NEW],
    )
    assert committed.commit() == expected
    assert parted.doc_uuids("doc") == whole.doc_uuids("doc")
    drop = {"created_at", "updated_at"}
    assert parted.ledger.get("doc").model_dump(exclude=drop) == whole.ledger.get("doc").model_dump(
        exclude=drop
    )


def test_added_or_updated_is_whether_the_ledger_knew_the_document():
    store = MemoryStore()
    writer = _writer(store)
    first = _begin(writer)
    first.write(OLD)
    assert first.commit().status == "added"
    store.ledger.rows.clear()
    store.ledger.put(LedgerEntry(doc_id="doc", source="/docs/doc.pdf", status="failed"))
    again = _begin(writer)
    again.write(OLD)
    assert again.commit().status == "updated"  # a failed entry counts too
    told = _begin(writer, existed=False)  # the caller read the ledger already
    told.write(OLD)
    assert told.commit().status == "added"


def test_a_commit_with_nothing_written_is_refused_and_deletes_nothing():
    store = RecordingStore()
    writer = _writer(store)
    _stored(writer, OLD)
    store.calls.clear()
    with pytest.raises(ValueError, match="no chunks written"):
        _begin(writer).commit()
    assert store.calls == [] and len(store.doc_uuids("doc")) == len(OLD)


def test_doc_id_for_a_canonical_path_does_not_resolve_it_again(tmp_path):
    target = tmp_path / "real.pdf"
    target.write_bytes(b"x")
    link = tmp_path / "link.pdf"
    link.symlink_to(target)
    assert doc_id_for(link) == target.as_uri()
    assert doc_id_for(str(link), canonical=True) == link.as_uri()  # taken as given
    assert doc_id_for("S3://b/K.pdf", canonical=True) == "s3://b/K.pdf"

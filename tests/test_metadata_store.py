"""Caller metadata, ACLs and tenants in the store: validation, then a real Weaviate."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from docx import Document

from chunkweave.storage.errors import StoreError
from chunkweave.storage.filters import Condition, SearchRequest
from chunkweave.storage.metadata import (
    RESERVED_KEYS,
    MetadataConfig,
    MetadataError,
    check_tenant,
    jsonable,
    read_sidecar,
    sidecar_path,
    validate_metadata,
)
from chunkweave.storage.pipeline import conductor as ingest_module
from chunkweave.storage.pipeline.conductor import Pipeline
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.weaviate.schema import CHUNK_PROPERTIES
from chunkweave.storage.weaviate.store import WeaviateStore
from tests.store_helpers import CountingEmbedder, MemoryStore

CFG = MetadataConfig(
    fields={"version": "string", "year": "number", "draft": "bool", "issued": "date"},
    max_value_chars=20,
    max_list_items=3,
    max_bytes=120,
)


def test_declared_keys_are_typed_and_dates_get_a_timezone():
    got = validate_metadata(
        {"version": "3", "year": 2024, "draft": False, "issued": "2024-05-01", "acl": ["x"]},
        CFG,
        where="a.pdf",
    )
    assert got["issued"] == datetime(2024, 5, 1, tzinfo=UTC)
    assert jsonable(got)["issued"] == "2024-05-01T00:00:00+00:00"
    text = {"year": "2024.5", "draft": "yes", "acl": "team-x, team-y"}
    assert validate_metadata(text, CFG, where="--meta", from_text=True) == {
        "year": 2024.5,
        "draft": True,
        "acl": ["team-x", "team-y"],
    }


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"colour": "red"}, "'colour': not declared"),
        ({"year": "2024"}, "'year': expected a number"),
        ({"draft": 1}, "'draft': expected true or false"),
        ({"issued": "last week"}, "'issued': expected an ISO 8601 date"),
        ({"version": "v" * 21}, "'version': 21 characters, more than 20"),
        ({"acl": ["a", "b", "c", "d"]}, "'acl': 4 items, more than 3"),
        ({"acl": "team-x"}, "'acl': expected a list of strings"),
        ({"acl": ["x" * 20] * 3, "version": "y" * 20, "year": 1e300}, "more than 120"),
    ],
)
def test_bad_metadata_is_refused_naming_the_file_key_and_reason(raw, reason):
    with pytest.raises(MetadataError) as err:
        validate_metadata(raw, CFG, where="/in/report.pdf")
    assert str(err.value).startswith("/in/report.pdf: ") and reason in str(err.value)


@pytest.mark.parametrize("key", ["Version", "2nd", "has-dash", "text", "acl", "doc_id", "x" * 65])
def test_declared_keys_must_be_weaviate_property_names_not_taken(key):
    with pytest.raises(ValueError, match=repr(key)):
        MetadataConfig(fields={key: "string"})


def test_reserved_keys_cover_every_chunk_property():
    assert {p.name for p in CHUNK_PROPERTIES} <= RESERVED_KEYS


@pytest.mark.parametrize("tenant", ["", "a b", "x" * 65, "ü", "a/b"])
def test_tenant_names_weaviate_refuses_are_refused_first(tenant):
    with pytest.raises(MetadataError, match="tenant"):
        check_tenant(tenant)


def test_sidecar_is_read_and_a_bad_one_names_itself(tmp_path):
    doc = tmp_path / "r.pdf"
    assert read_sidecar(str(doc), CFG) is None
    Path(sidecar_path(str(doc))).write_text('{"version": "3", "acl": ["t"]}')
    assert read_sidecar(str(doc), CFG) == {"version": "3", "acl": ["t"]}
    Path(sidecar_path(str(doc))).write_text('{"version": 3}')
    with pytest.raises(MetadataError, match=r"r\.pdf\.meta\.json: metadata key 'version'"):
        read_sidecar(str(doc), CFG)
    Path(sidecar_path(str(doc))).write_text("[1, 2")
    with pytest.raises(MetadataError, match="not valid JSON"):
        read_sidecar(str(doc), CFG)


def _no_parsing(*args: object) -> None:
    raise AssertionError("parsed a document whose content did not change")


def _docx(path: Path, paragraphs: int = 4) -> Path:
    doc = Document()
    doc.add_heading("Intro", level=1)
    for i in range(paragraphs):
        doc.add_paragraph(f"Paragraph {i} says something about topic {i}. " * 3)
    doc.add_heading("Second part", level=1)
    doc.add_paragraph("The second part has its own text about zebras and lighthouses.")
    doc.save(str(path))
    return path


def test_metadata_only_change_embeds_nothing_on_any_store(tmp_path, monkeypatch):
    store = MemoryStore()
    embedder = CountingEmbedder()
    pipe = Pipeline(store=store, embedder=embedder)
    path = _docx(tmp_path / "a.docx")
    first = pipe.ingest(path, metadata={"acl": ["x"]})
    embedded = len(embedder.embedded)
    assert first.status == "added" and embedded > 0
    assert pipe.ingest(path, metadata={"acl": ["x"]}).status == "unchanged"
    with monkeypatch.context() as m:  # a metadata-only change is not even parsed
        m.setattr(ingest_module, "parse_document", _no_parsing)
        again = pipe.ingest(path, metadata={"acl": ["y"]})
    assert again.status == "updated" and again.chunks_added == 0
    assert again.chunks_unchanged == first.chunks_added == store.retagged
    assert len(embedder.embedded) == embedded
    assert {m["acl"][0] for m in store.metadata.values()} == {"y"}
    (entry,) = store.ledger.rows.values()
    assert entry.metadata == {"acl": ["y"]}
    # Text and metadata change together: new chunks embedded, kept ones re-tagged.
    _docx(path, paragraphs=5)
    both = pipe.ingest(path, metadata={"acl": ["z"]})
    assert both.chunks_added > 0 and len(embedder.embedded) == embedded + both.chunks_added
    assert {m["acl"][0] for u, m in store.metadata.items() if u in store.objects} == {"z"}


@pytest.fixture
def mt_pipeline(weaviate_cfg):
    cfg = weaviate_cfg.model_copy(
        update={
            "multi_tenancy": True,
            "metadata": MetadataConfig(fields={"version": "string", "year": "number"}),
        }
    )
    embedder = CountingEmbedder()
    store = WeaviateStore.open(cfg, EmbedderIdentity(embedder.name, embedder.dimension))
    yield Pipeline(store=store, embedder=embedder), embedder
    store.client.collections.delete([cfg.collection, cfg.ledger_collection])
    store.close()


def _search(store: WeaviateStore, **kw) -> set[str]:
    vector = CountingEmbedder().embed_query("zebras and lighthouses")
    request = SearchRequest("zebras and lighthouses", vector, k=50, **kw)
    return {h.doc_id for h in store.search(request)}


@pytest.mark.integration
def test_tenants_acls_and_metadata_on_real_weaviate(mt_pipeline, tmp_path, monkeypatch):
    pipe, embedder = mt_pipeline
    a_doc, b_doc = _docx(tmp_path / "a.docx"), _docx(tmp_path / "b.docx", paragraphs=2)
    meta = {"acl": ["team-x"], "version": "3"}
    assert pipe.ingest(a_doc, tenant="a", metadata=meta).status == "added"
    assert pipe.ingest(b_doc, tenant="b", metadata={"version": "4"}).status == "added"
    store = pipe.store
    assert isinstance(store, WeaviateStore)
    a_id = pipe.scope("a").ledger.entries().__next__().doc_id

    assert _search(store, tenant="a", principals=("team-x",)) == {a_id}
    assert _search(store, tenant="a", principals=("team-y",)) == set()
    assert _search(store, tenant="a", principals=()) == set()
    # Tenant b's document has no acl: never returned to a search given principals.
    assert _search(store, tenant="b", principals=("team-x",)) == set()
    assert len(_search(store, tenant="b")) == 1
    with pytest.raises(StoreError, match="name a tenant"):
        _search(store)
    where = (Condition("version", "equal", "3"),)
    assert _search(store, tenant="a", where=where) == {a_id}
    assert _search(store, tenant="b", where=where) == set()

    embedded = len(embedder.embedded)
    stored = pipe.scope("a").store
    uuids = stored.doc_uuids(a_id)
    vectors_before = stored.vectors(uuids)
    positions = {u: p[:2] for u, p in stored.positions(uuids).items()}
    texts = {h.text for h in store.search(SearchRequest("zebras", None, k=50, tenant="a"))}
    with monkeypatch.context() as m:  # rewritten in place: not parsed, not embedded
        m.setattr(ingest_module, "parse_document", _no_parsing)
        moved = pipe.ingest(a_doc, tenant="a", metadata={"acl": ["team-y"], "version": "3"})
    assert stored.vectors(uuids) == vectors_before and stored.doc_uuids(a_id) == uuids
    assert {u: p[:2] for u, p in stored.positions(uuids).items()} == positions
    assert {h.text for h in store.search(SearchRequest("zebras", None, k=50, tenant="a"))} == texts
    assert moved.status == "updated" and moved.chunks_added == 0
    assert len(embedder.embedded) == embedded  # nothing re-embedded
    assert _search(store, tenant="a", principals=("team-y",)) == {a_id}
    assert _search(store, tenant="a", principals=("team-x",)) == set()
    (entry,) = pipe.scope("a").ledger.entries()
    assert entry.metadata == {"acl": ["team-y"], "version": "3"} and entry.tenant == "a"
    (hit,) = store.search(SearchRequest("lighthouses", None, k=1, tenant="a"))
    assert hit.metadata == {"acl": ["team-y"], "version": "3"}

    assert store.delete_tenant("a") and not store.delete_tenant("a")
    assert store.tenants() == ["b"]
    assert len(_search(store, tenant="b")) == 1


@pytest.mark.integration
def test_multi_tenancy_is_refused_on_a_single_tenant_collection(weaviate_cfg):
    single = WeaviateStore.open(weaviate_cfg, EmbedderIdentity("test-embedder", 16))
    try:
        with pytest.raises(StoreError, match="single-tenant.*MULTI_TENANCY=true"):
            WeaviateStore.open(
                weaviate_cfg.model_copy(update={"multi_tenancy": True}),
                EmbedderIdentity("test-embedder", 16),
            )
        with pytest.raises(StoreError, match="multi-tenancy is off"):
            single.for_tenant("a")
    finally:
        single.client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])
        single.close()


@pytest.mark.integration
def test_documents_without_an_acl_are_public_only_when_the_collection_says_so(
    weaviate_cfg, tmp_path
):
    embedder = CountingEmbedder()
    identity = EmbedderIdentity(embedder.name, embedder.dimension)
    public = weaviate_cfg.model_copy(update={"metadata": MetadataConfig(public_without_acl=True)})
    store = WeaviateStore.open(public, identity)
    try:
        pipe = Pipeline(store=store, embedder=embedder)
        open_doc = _docx(tmp_path / "open.docx")
        private = _docx(tmp_path / "private.docx", paragraphs=2)
        pipe.ingest(open_doc)
        pipe.ingest(private, metadata={"acl": ["team-x"]})
        open_id, private_id = (f"file://{p}" for p in (open_doc, private))
        assert _search(store, principals=("team-x",)) == {open_id, private_id}
        assert _search(store, principals=("team-y",)) == _search(store, principals=()) == {open_id}
        assert _search(store) == {open_id, private_id}  # no access filter asked for
        closed = WeaviateStore(store.client, weaviate_cfg, identity)
        closed.ensure_schema()
        assert _search(closed, principals=("team-y",)) == set()
        assert _search(closed, principals=("team-x",)) == {private_id}
        with pytest.raises(StoreError, match="not declared"):
            store.upsert([], None, metadata={"colour": "red"})
    finally:
        store.client.collections.delete([weaviate_cfg.collection, weaviate_cfg.ledger_collection])
        store.close()


@pytest.mark.integration
def test_workers_adding_the_same_new_key_at_once_all_start(weaviate_cfg):
    """Worker processes start together: each finds a new key missing and adds it."""
    import threading

    from chunkweave.storage.weaviate.schema import metadata_properties
    from chunkweave.storage.weaviate.tenancy import add_missing_properties

    identity = EmbedderIdentity("test-embedder", 16)
    store = WeaviateStore.open(weaviate_cfg, identity)
    try:
        for round_ in range(3):
            declared = MetadataConfig(fields={f"key{round_}": "string"})
            props = metadata_properties(declared)
            start, errors = threading.Barrier(6), []

            def add(props=props, start=start, errors=errors) -> None:
                start.wait()
                try:
                    add_missing_properties(store.session, props, collection=store.serves)
                except StoreError as err:
                    errors.append(err)

            threads = [threading.Thread(target=add) for _ in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            assert errors == []
            coll = store.client.collections.use(store.serves or weaviate_cfg.collection)
            names = [p.name for p in coll.config.get().properties]
            assert names.count(f"key{round_}") == 1
    finally:
        store.close()

"""Ranking in the served search against a real Weaviate: field weights, language, CJK, rerank."""

from __future__ import annotations

import pytest
from weaviate.classes.config import Configure

from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.filters import Condition, SearchRequest
from chunkweave.storage.ranking import Ranking, RerankConfig
from chunkweave.storage.uuids import chunk_uuid
from chunkweave.storage.weaviate.client import connect
from chunkweave.storage.weaviate.schema import (
    CHUNK_PROPERTIES,
    LANGUAGE,
    TEXT_CJK,
    identity_description,
)
from chunkweave.storage.weaviate.store import WeaviateStore
from tests.store_helpers import ID16, det_vector, make_chunk, vectors
from tests.test_rerank import serve, tei_answer  # noqa: F401 (the fixture)

pytestmark = pytest.mark.integration

GERMAN = (
    "Die Erstellung barrierefreier Dokumente beginnt mit der Planung. Wer die Struktur "
    "früh festlegt, spart später viel Arbeit bei der Prüfung der fertigen Dateien."
)
ENGLISH = (
    "Accessible documents start with planning. Whoever fixes the structure early saves "
    "much work later when the finished files are checked."
)
CHINESE = [
    "其他流动资产 期初余额 3,696,251.15",
    "未分配利润 期初余额 -2,034,142,303.59",
    "营业收入 本期 比上年同期增减 -16.55%",
]


@pytest.fixture
def store(weaviate_cfg: WeaviateConfig):
    st = WeaviateStore.open(weaviate_cfg, ID16)
    yield st
    st.client.collections.delete(weaviate_cfg.collection)
    st.close()


def _bm25(query: str, ranking: Ranking, **kw) -> SearchRequest:
    return SearchRequest(query, None, k=3, ranking=ranking, **kw)


def test_a_weighted_heading_path_outranks_the_same_words_in_a_body(store):
    in_heading = make_chunk("doc-a", 0, text="Values are listed below.").model_copy(
        update={"heading_path": ("Rainfall",)}
    )
    in_body = make_chunk("doc-a", 1, text="Annual rainfall totals were high in one town.")
    store.upsert([in_heading, in_body], vectors([in_heading, in_body]))
    query = "annual rainfall totals"
    plain = store.search(_bm25(query, Ranking(fields=("text", "heading_path"))))
    boosted = store.search(_bm25(query, Ranking(fields=("text", "heading_path^10"))))
    text_only = store.search(_bm25(query, Ranking(fields=("text",))))
    assert plain[0].uuid == chunk_uuid(in_body.id)  # three words of the query to one
    assert boosted[0].uuid == chunk_uuid(in_heading.id)  # one word, weighted ten times
    assert [h.uuid for h in text_only] == [chunk_uuid(in_body.id)]
    # Hybrid takes alpha from the ranking: 0 is BM25 alone, whatever the vector says.
    vector = det_vector(in_body.embed_text, 16)
    bm25_only = Ranking(alpha=0.0, fields=("text", "heading_path^10"))
    hybrid = store.search(SearchRequest(query, vector, k=2, ranking=bm25_only))
    assert hybrid[0].uuid == chunk_uuid(in_heading.id)


def test_every_chunk_carries_its_documents_language_and_filters_on_it(store):
    de = [make_chunk("doc-de", i, text=f"{GERMAN} ({i})") for i in range(3)]
    en = [make_chunk("doc-en", i, text=f"{ENGLISH} ({i})") for i in range(2)]
    store.upsert(de + en, vectors(de + en))
    props = {
        str(o.uuid): o.properties[LANGUAGE]
        for o in store.collection().query.fetch_objects(limit=10).objects
    }
    assert props == {chunk_uuid(c.id): "de" for c in de} | {chunk_uuid(c.id): "en" for c in en}
    where = (Condition("language", "equal", "de"),)
    hits = store.search(SearchRequest("Planung", None, k=5, where=where))
    assert {h.doc_id for h in hits} == {"doc-de"}


def test_a_chinese_question_finds_its_cell_through_the_trigram_field(store):
    chunks = [make_chunk("doc-zh", i, text=t) for i, t in enumerate(CHINESE)]
    store.upsert(chunks, vectors(chunks))
    question = "东北电气2018年第一季度合并资产负债表中，其他流动资产的期初余额是多少？"
    words = store.search(_bm25(question, Ranking(fields=("text",))))
    assert words == []  # one "word" per run of Han characters: nothing matches
    hits = store.search(_bm25(question, Ranking()))  # the default fields hold text_cjk
    assert hits[0].uuid == chunk_uuid(chunks[0].id)
    english = make_chunk("doc-en", 0, text=ENGLISH)
    store.upsert([english], vectors([english]))
    stored = store.collection().query.fetch_object_by_id(chunk_uuid(english.id))
    assert stored.properties.get(TEXT_CJK) is None  # only CJK documents fill it


def test_the_configured_rerank_endpoint_reorders_the_served_hits(weaviate_cfg, serve):  # noqa: F811
    server = serve(tei_answer)
    rerank = RerankConfig(url=server.url + "/rerank", candidates=5)
    cfg = weaviate_cfg.model_copy(update={"ranking": Ranking(rerank=rerank)})
    st = WeaviateStore.open(cfg, ID16)
    try:
        chunks = [
            make_chunk("doc-a", i, text=t)
            for i, t in enumerate(["zebra facts", "zebra stripes are black and white", "lions"])
        ]
        st.upsert(chunks, vectors(chunks))
        query = "why are zebra stripes black and white"
        hits = st.search(SearchRequest(query, det_vector("x", 16), k=2))
        assert [h.uuid for h in hits] == [chunk_uuid(chunks[1].id), chunk_uuid(chunks[0].id)]
        assert len(server.requests[0][2]["texts"]) == 3  # every candidate (at most 5) scored
        assert hits[0].score == 6.0  # the stand-in's score: six shared words
    finally:
        st.client.collections.delete(cfg.collection)
        st.close()


def test_an_older_collection_gets_language_and_the_trigram_field_in_place(weaviate_cfg):
    with connect(weaviate_cfg) as client:
        client.collections.create(
            weaviate_cfg.collection,
            description=identity_description(ID16, schema=3),
            properties=[p for p in CHUNK_PROPERTIES if p.name not in (LANGUAGE, TEXT_CJK)],
            vector_config=Configure.Vectors.self_provided(),
        )
    old = WeaviateStore.open(weaviate_cfg, ID16)
    try:
        chunks = [make_chunk("doc-zh", i, text=t) for i, t in enumerate(CHINESE)]
        old.upsert(chunks, vectors(chunks))
        hits = old.search(_bm25("其他流动资产的期初余额", Ranking()))
        assert hits[0].uuid == chunk_uuid(chunks[0].id)
        where = (Condition("language", "equal", "zh"),)
        found = old.search(SearchRequest("期初余额", None, k=5, where=where))
        assert {h.uuid for h in found} == {chunk_uuid(c.id) for c in chunks[:2]}
    finally:
        old.client.collections.delete(weaviate_cfg.collection)
        old.close()

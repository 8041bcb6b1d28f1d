"""Fan-out of large PDFs: page ranges, the join, its Redis parts (the run is in test_worker_e2e)."""

from __future__ import annotations

import uuid
import zlib
from pathlib import Path

import redis

from chunkweave.parsers import ParseOptions, parse_document
from chunkweave.worker import keys
from chunkweave.worker.tasks.fanout import join_parts, plan_ranges
from chunkweave.worker.tasks.parts import Parts


def test_plan_ranges_cover_every_page_once():
    assert plan_ranges(5, 2) == [(1, 2), (3, 4), (5, 5)]
    assert plan_ranges(4, 2) == [(1, 2), (3, 4)]
    assert plan_ranges(1, 100) == [(1, 1)]
    for pages in range(1, 40):
        for size in range(1, 12):
            covered = [p for a, b in plan_ranges(pages, size) for p in range(a, b + 1)]
            assert covered == list(range(1, pages + 1))


def test_joined_parts_equal_whole_parse(corpus: Path):
    # Headings on early pages must head paragraphs of later parts after the join.
    path = corpus / "multi_page.pdf"
    whole = parse_document(path, ParseOptions())
    assert whole.page_count is not None and whole.page_count > 2
    parts = [
        parse_document(path, ParseOptions(page_range=r)) for r in plan_ranges(whole.page_count, 2)
    ]
    joined = join_parts(parts, source=str(path))
    assert [e.model_dump() for e in joined.elements] == [e.model_dump() for e in whole.elements]
    assert [e.order for e in joined.elements] == list(range(len(joined.elements)))
    crossing = [e for e in joined.elements if e.page and e.page > 2 and e.heading_path]
    assert crossing, "expected later-part elements under earlier headings"


def test_a_paragraph_cut_by_a_part_boundary_is_joined_as_in_a_whole_parse(tmp_path: Path):
    import pymupdf

    doc = pymupdf.open()
    body = "Every page of this report says something plain in a sentence of its own."
    for n in range(1, 5):
        lines = [body, body, body]
        if n == 2:  # ends mid-sentence: the sentence runs on at the top of page 3
            lines.append("and the last sentence of page two runs over onto")
        if n == 3:
            lines[0] = "the next page, where it ends."
        page = doc.new_page()
        for i, text in enumerate(lines):
            page.insert_text((72, 100 + 14 * i), text, fontsize=10)
    path = tmp_path / "cut.pdf"
    doc.save(path)

    whole = parse_document(path, ParseOptions(mode="fast"))
    ranges = plan_ranges(4, 2)  # the boundary falls between pages 2 and 3
    parts = [parse_document(path, ParseOptions(mode="fast", page_range=r)) for r in ranges]
    joined = join_parts(parts, source=str(path))
    assert [e.model_dump() for e in joined.elements] == [e.model_dump() for e in whole.elements]
    run_on = [e for e in joined.elements if "runs over onto the next page" in e.text]
    assert len(run_on) == 1 and run_on[0].page == 2 and [p for p, _ in run_on[0].continued] == [3]


def _doc_id() -> str:
    return f"file:///docs/{uuid.uuid4().hex}.pdf"


def test_the_part_that_completes_the_set_is_told_so_once(redis_client: redis.Redis):
    parts = Parts(redis_client, keys.fanout_parts(_doc_id(), "a" * 40), kind="part", ttl_s=60)
    parts.reset()
    assert parts.finish(0, 3, payload=b"zero") == (False, 1)
    assert parts.finish(0, 3, payload=b"zero") == (False, 1)  # a duplicate delivery
    assert parts.get_all(3) is None  # not all there yet
    assert parts.finish(2, 3, payload=b"two") == (False, 2)
    assert parts.finish(1, 3, payload=b"one") == (True, 3)
    assert parts.finish(1, 3, payload=b"one") == (False, 3)  # the last one, redelivered
    assert parts.get_all(3) == [b"zero", b"one", b"two"]
    parts.clear(3)
    assert not list(redis_client.scan_iter(f"{parts.base}*"))


def test_parts_keep_the_key_layout_in_flight_messages_expect(redis_client: redis.Redis):
    # Messages enqueued before a deploy are handled by the new code: same keys, same blobs.
    doc_id, sha1 = _doc_id(), "b" * 40
    parsed = Parts(redis_client, keys.fanout_parts(doc_id, sha1), kind="part", ttl_s=60)
    parsed.finish(0, 1, payload=b"pages")
    base = f"cw:fan:{doc_id}:{sha1}"
    assert zlib.decompress(redis_client.get(f"{base}:part:0")) == b"pages"
    assert redis_client.smembers(f"{base}:done") == {b"0"}
    assert 0 < redis_client.ttl(f"{base}:done") <= 60

    sliced = Parts(redis_client, keys.fanout_slices(doc_id, sha1), kind="slice", ttl_s=60)
    pipe = redis_client.pipeline(transaction=True)
    sliced.put(pipe, 0, b"chunks")
    sliced.put_extra(pipe, "keep", b"uuids")
    sliced.put_meta(pipe, {"token": "t", "pages": 7, "existed": 1, "slices": 2})
    pipe.execute()
    sliced.finish(0, 2, counts={"added": 3, "unchanged": 1})
    sliced.finish(1, 2, counts={"added": 2, "unchanged": 0})
    w = f"{base}:w"
    assert zlib.decompress(redis_client.get(f"{w}:slice:0")) == b"chunks"
    assert zlib.decompress(redis_client.get(f"{w}:keep")) == b"uuids"
    assert redis_client.hgetall(f"{w}:meta") == {
        b"token": b"t",
        b"pages": b"7",
        b"existed": b"1",
        b"slices": b"2",
    }
    assert redis_client.hgetall(f"{w}:counts") == {b"added": b"5", b"unchanged": b"1"}
    assert sliced.counts() == {"added": 5, "unchanged": 1}
    assert sliced.meta()["existed"] == "1" and sliced.get_extra("keep") == b"uuids"
    sliced.clear(2, "keep")
    parsed.clear(1)
    assert not list(redis_client.scan_iter(f"{base}*"))

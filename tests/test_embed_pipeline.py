"""The default embedder and the chunker agree on token counts for real documents."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chunkweave.chunking.api import chunk_document, resolve_options
from chunkweave.chunking.models import ChunkOptions
from chunkweave.parsers.api import parse_document
from chunkweave.storage.config import EmbedderConfig
from chunkweave.storage.embedders import make_embedder


@pytest.mark.parametrize("name", ["multi_page.pdf", "word_tables.docx", "2305.03393v1-pg9.pdf"])
def test_every_chunk_of_a_real_document_embeds_untruncated(corpus: Path, name: str) -> None:
    embedder = make_embedder(EmbedderConfig())
    opts = resolve_options(ChunkOptions(), embedder.max_tokens)
    chunks = chunk_document(parse_document(corpus / name), opts, embedder, doc_id=name)
    assert chunks
    # The chunker sized every chunk with the embedder's own counter, so none is
    # refused (TextTooLongError) and none would be cut.
    vectors = np.array(embedder.embed_documents([c.embed_text for c in chunks]))
    assert vectors.shape == (len(chunks), embedder.dimension)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert all(embedder.count(c.embed_text) <= embedder.max_tokens for c in chunks)

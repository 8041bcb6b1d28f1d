"""chunkweave where retrieval systems are assembled: LangChain and LlamaIndex.

- :mod:`chunkweave.integrations.langchain` (extra ``chunkweave[langchain]``):
  ``ChunkweaveRetriever`` (a ``BaseRetriever`` over the chunk store) and
  ``ChunkweaveLoader`` (a ``BaseLoader`` yielding a file's chunks, no store needed).
- :mod:`chunkweave.integrations.llama_index` (extra ``chunkweave[llama-index]``):
  ``ChunkweaveRetriever`` and ``ChunkweaveReader``, likewise.

Both search through the project's own path (:class:`.search.ChunkSearch`: the store
:func:`chunkweave.storage.stores.open_store` opens, one
:class:`~chunkweave.storage.filters.SearchRequest` per query) and describe a chunk with
the same metadata (:mod:`.metadata`). Nothing is imported here, so ``import
chunkweave`` never loads either framework.
"""

"""Reindexing a store without downtime: the parts that need no queue.

- :mod:`.spec`: what a reindex builds (:class:`~.spec.ReindexSpec`), recorded on its
  target version.
- :mod:`.cache`: the embedding cache, keyed by (embedder identity, SHA1 of the embed
  text), filled from the live collection's stored vectors.
- :mod:`.reindexer`: one document written into the target version (:class:`~.reindexer.Reindexer`).
- :mod:`.accounting`: whether the target's ledger accounts for every live source.
- :mod:`.gate`: the retrieval gate (recall@5 and MRR on a QA set, live vs target).
- :mod:`.plan`: the ``--dry-run`` plan (documents, chunks, reused vs to-embed vectors).

The versions and the alias are :mod:`chunkweave.storage.weaviate.alias`'s; the worker
drives a reindex (``chunkweave.worker.reindex``).
"""

"""Weaviate behind the store protocols: the only package that imports weaviate-client.

- :mod:`.store`: :class:`~.store.WeaviateStore`, the ``ChunkStore`` of
  :mod:`chunkweave.storage.protocols`, on one client per process.
- :mod:`.ledger`: :class:`~.ledger.WeaviateLedger`, its ``DocumentLedger``.
- :mod:`.schema`: the chunk collection's properties and the identity recorded on it.
- :mod:`.client`: connecting, classifying failures, bounded retries.
- :mod:`.grpc_batch`: our encoding of batch writes.
- :mod:`.server`: building and running the local Weaviate server.
"""

"""The real Weaviate server as a child process on loopback (no client code here).

- :mod:`.build`: building and caching the Weaviate binary (``go install``, PGO).
- :mod:`.local`: :class:`~.local.LocalWeaviate`, one server per data directory.
- ``python -m chunkweave.storage.weaviate.server build|path|start``: the command line.
"""

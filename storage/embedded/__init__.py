"""Real servers run as child processes on loopback: Weaviate here, Redis for the worker.

- :mod:`.process`: what every embedded server shares (free ports, starting in its own
  session, bounded readiness wait, bounded stop).
- :mod:`.weaviate_build`: building and caching the Weaviate binary (``go install``, PGO).
- :mod:`.weaviate`: :class:`~.weaviate.LocalWeaviate`, one server per data directory.
- ``python -m chunkweave.storage.embedded build|path|start``: the command line.
"""

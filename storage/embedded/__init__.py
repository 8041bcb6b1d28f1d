"""What every embedded server shares: :mod:`.process` (free ports, own session, bounded waits).

The servers themselves live with their users: Weaviate in
:mod:`chunkweave.storage.weaviate.server`, Redis in :mod:`chunkweave.worker.embedded`.
"""

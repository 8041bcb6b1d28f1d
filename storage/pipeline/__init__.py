"""The one document pipeline: every path that turns a file into stored chunks runs it.

A document goes through four stages, in order:

1. **check** (:mod:`.check`): read and hash the file once, read the ledger once, and
   decide: ``unchanged`` (skip), ``metadata_only`` (re-tag the stored chunks in place,
   nothing parsed or embedded) or ``changed``;
2. **parse** (:mod:`.stages`): file -> :class:`~chunkweave.parsers.ParsedDocument`;
3. **chunk** (:mod:`.chunker`): a :class:`~.chunker.Chunker` bound once to the chunk
   options and the embedder's token limit;
4. **write -> commit** (:mod:`chunkweave.storage.write`): embed and upsert the new
   chunks, prune the stale ones, then record the version in the ledger.

:class:`~.conductor.Pipeline` runs them for a store (the Celery task, the fan-out's
join and slices, ``chunkweave ingest``, reindex); ``chunkweave export`` runs check,
parse and chunk with its files as the target. Modules are imported by name (nothing
here), so a caller that needs only the chunker does not load a store client.
"""

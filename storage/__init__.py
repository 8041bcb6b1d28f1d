"""Chunks -> vectors -> Weaviate: embedders, the store, the ledger and the ingest pipeline."""

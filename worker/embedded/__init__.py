"""Servers the worker starts for itself where none is configured: Redis (:mod:`.redis_server`)."""

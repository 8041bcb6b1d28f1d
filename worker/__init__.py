"""The service around the pipeline: Celery app and tasks, sources, HTTP API, CLI, settings."""

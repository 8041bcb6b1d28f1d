"""Third-party readers (``--parser unstructured|docling``) behind our Element model.

Each module maps one library's output onto :class:`chunkweave.parsers.elements.Element`
and imports that library only inside its parse function, so this package costs nothing
until a backend is asked for. Absolute imports keep ``docling`` and ``unstructured``
meaning the libraries, never these modules.
"""

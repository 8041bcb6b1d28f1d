"""Heading levels for PDFs (see :mod:`.model`)."""

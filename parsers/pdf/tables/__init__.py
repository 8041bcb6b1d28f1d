"""Table detectors for PDF pages."""

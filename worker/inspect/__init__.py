"""The chunk inspector: one self-contained HTML report of how a document was chunked.

:func:`build_report` turns chunks (and, when the document was just parsed, its
elements and page routes) into a :class:`~chunkweave.worker.inspect.report.Report`;
:func:`write_report` writes it as one HTML file with the pages drawn as images
(PDF only), each chunk's regions in its own colour and a side panel. Nothing in
the file loads from the network: the script and the styles are inlined from
``assets/``, the page images are data URIs.
"""

from chunkweave.worker.inspect.parse import parse_with_routes
from chunkweave.worker.inspect.report import Report, build_report
from chunkweave.worker.inspect.write import render_report, write_report

__all__ = ["Report", "build_report", "parse_with_routes", "render_report", "write_report"]

"""``chunkweave parse FILE``: print a document's typed elements (JSONL, JSON or Markdown)."""

from __future__ import annotations

import json
from typing import get_args

import click

from chunkweave.parsers import ParseOptions, calibration_report, parse_document
from chunkweave.parsers.document import ParserName, PdfMode
from chunkweave.parsers.elements import Element
from chunkweave.parsers.markdown import to_markdown
from chunkweave.worker.cli.common import friendly_errors


def register(group: click.Group) -> None:
    """Add the ``parse`` command to the root command group."""
    group.add_command(parse_command)


@click.command("parse")
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "json", "md"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one element per line; json: the whole document; md: readable Markdown.",
)
@click.option(
    "--parser",
    type=click.Choice(list(get_args(ParserName))),
    default="auto",
    show_default=True,
    help="Backend; auto picks PyMuPDF for PDF and the built-in reader for DOCX.",
)
@click.option(
    "--mode",
    type=click.Choice(list(get_args(PdfMode))),
    default="auto",
    show_default=True,
    help=(
        "PDF layout analysis. fast: heuristics only. accurate: the pymupdf-layout model on "
        "every page (slow). auto: decides per document: the model's faster geometry-only "
        "variant runs on a sample of pages (the first three, then pages spread through the "
        "rest, eight in all) and its block classes are compared with the heuristics'; when "
        "they disagree beyond a margin the model parses every page, otherwise the "
        "heuristics do, with the heading styles the model confirmed. Outline entries keep "
        "the outline's levels. --explain shows the decision."
    ),
)
@click.option("--ocr/--no-ocr", default=True, show_default=True, help="OCR pages without text.")
@click.option("--password", default=None, help="Password for an encrypted PDF.")
@click.option("--page-markers", is_flag=True, help="md only: mark where each page starts.")
@click.option(
    "--explain",
    is_flag=True,
    help=(
        "PDF: print how the document was routed instead of its elements: the sampled "
        "pages, the model's and the heuristics' agreement per block class, the route and "
        "why, the heading styles the model confirmed, and the pages per route."
    ),
)
@friendly_errors
def parse_command(
    file: str,
    fmt: str,
    parser: str,
    mode: str,
    ocr: bool,
    password: str | None,
    page_markers: bool,
    explain: bool,
) -> None:
    """Parse FILE (PDF or DOCX, detected from its bytes) and print its elements.

    Warnings (e.g. pages without a text layer) go to stderr; the exit code is 0 on
    success and 1 with a one-line reason on error.
    """
    opts = ParseOptions.model_validate(
        {"parser": parser, "mode": mode, "ocr": ocr, "password": password}
    )
    with calibration_report() as routes:
        doc = parse_document(file, opts)
    for warning in doc.warnings:
        click.echo(f"warning: {file}: {warning}", err=True)
    if explain:
        if not routes:
            click.echo(f"{file}: {doc.format} documents have no PDF route to explain")
        for explanation in routes:
            click.echo("\n".join(explanation.lines()))
    elif fmt == "jsonl":
        for el in doc.elements:
            click.echo(json.dumps(element_record(el), ensure_ascii=False))
    elif fmt == "json":
        click.echo(json.dumps(doc.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        click.echo(to_markdown(doc, page_markers=page_markers))


def element_record(el: Element) -> dict[str, object]:
    """Return the JSON-ready fields of one element (the Element model's field names)."""
    return el.model_dump(mode="json")

"""``chunkweave chunk FILE`` and ``chunkweave eval --qa FILE --docs DIR``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from chunkweave.chunking import (
    Chunk,
    ChunkOptions,
    needs_embedder,
)
from chunkweave.chunking.models import Strategy, TableEmbed
from chunkweave.chunking.naive import naive_chunks
from chunkweave.parsers import ParsedDocument, parse_document
from chunkweave.parsers.document import SUPPORTED_SUFFIXES
from chunkweave.storage.pipeline.chunker import Chunker
from chunkweave.worker.cli.common import echo_json, friendly_errors, password_option
from chunkweave.worker.cli.eval_served import served_scorer, unit_runs

if TYPE_CHECKING:
    from chunkweave.storage.embedders.base import Embedder

STRATEGIES = list(get_args(Strategy))
#: ``eval --mode``: the served search modes, then the fast in-memory one.
EVAL_MODES = ["hybrid", "vector", "keyword", "numpy"]
#: Strategies ``eval`` compares when none is given (``semantic`` is opt-in: slow).
DEFAULT_EVAL_STRATEGIES = ("elements", "headings", "fixed", "recursive", "sentences")
#: ``eval``'s structure-blind baseline (:mod:`chunkweave.chunking.naive`) and its overlap.
NAIVE = "naive"
NAIVE_OVERLAP = 50


def register(group: click.Group) -> None:
    """Add the ``chunk`` and ``eval`` commands to the root command group."""
    group.add_command(chunk_command)
    group.add_command(eval_command)


@click.command("chunk")
@click.argument("file", type=click.Path(dir_okay=False, path_type=str))
@click.option("--strategy", type=click.Choice(STRATEGIES), default=None, help="Default: settings.")
@click.option("--max-tokens", type=click.IntRange(9), default=None, help="Hard chunk size.")
@click.option("--target-tokens", type=click.IntRange(9), default=None, help="Packing target.")
@click.option("--overlap-tokens", type=click.IntRange(0), default=None, help="Baselines only.")
@click.option("--parents", is_flag=True, help="Also emit section-level parent chunks.")
@click.option("--no-context", is_flag=True, help="Embed text without the context line.")
@click.option("--table-format", type=click.Choice(["markdown", "html"]), default=None)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "md"]),
    default="jsonl",
    show_default=True,
    help="jsonl: one chunk JSON per line; md: readable view with boundaries.",
)
@password_option
@friendly_errors
def chunk_command(
    file: str,
    strategy: str | None,
    max_tokens: int | None,
    target_tokens: int | None,
    overlap_tokens: int | None,
    parents: bool,
    no_context: bool,
    table_format: str | None,
    fmt: str,
) -> None:
    """Parse FILE and print its chunks."""
    from chunkweave.worker.settings import get_settings

    settings = get_settings()
    overrides: dict[str, Any] = {
        "strategy": strategy,
        "max_tokens": max_tokens,
        "target_tokens": target_tokens,
        "overlap_tokens": overlap_tokens,
        "table_format": table_format,
    }
    if parents:
        overrides["parent_chunks"] = True
    if no_context:
        overrides["contextualize"] = False
    opts = _options(settings.chunking, overrides)
    embedder = _embedder(settings, need_vectors=needs_embedder(opts))
    chunker = Chunker(opts, embedder)
    resolved = chunker.opts
    if max_tokens is not None and resolved.max_tokens != max_tokens:
        click.echo(
            f"note: --max-tokens {max_tokens} lowered to the embedder's limit "
            f"{resolved.max_tokens}",
            err=True,
        )
    doc = parse_document(file, settings.parse)
    chunks = chunker.chunk(doc, doc_id=_doc_id(file), source=file)
    if not chunks:
        click.echo(f"warning: {file}: no chunks (document has no body text)", err=True)
    for warning in doc.warnings:
        click.echo(f"warning: {file}: {warning}", err=True)
    if fmt == "jsonl":
        for c in chunks:
            click.echo(c.model_dump_json())
    else:
        click.echo(to_markdown(chunks), nl=False)


@click.command("eval")
@click.option("--qa", "qa_path", required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--docs", "docs_dir", required=True, type=click.Path(file_okay=False, exists=True))
@click.option(
    "--strategy",
    "strategies",
    type=click.Choice([*STRATEGIES, NAIVE]),
    multiple=True,
    help=f"Repeatable. Default: {', '.join(DEFAULT_EVAL_STRATEGIES)}. naive: the "
    "structure-blind yardstick, token windows over the parse's Markdown with no context "
    f"line (overlap --overlap-tokens, default {NAIVE_OVERLAP}); tables and headings are "
    "cut where a window ends.",
)
@click.option("-k", "k", type=click.IntRange(1), default=10, show_default=True)
@click.option("--max-tokens", type=click.IntRange(9), default=None)
@click.option("--overlap-tokens", type=click.IntRange(0), default=None, help="Baselines only.")
@click.option(
    "--table-embed",
    "table_embeds",
    type=click.Choice(list(get_args(TableEmbed))),
    multiple=True,
    help="Repeatable: score each strategy with each table serialisation (default: settings).",
)
@click.option(
    "--mode",
    type=click.Choice(EVAL_MODES),
    default="hybrid",
    show_default=True,
    help="hybrid, vector, keyword: served, each strategy's chunks are written into a "
    "scratch collection of the configured Weaviate (the local one without "
    "CHUNKWEAVE_WEAVIATE__URL) and each question asked as `chunkweave search` asks it "
    "(hybrid BM25 + vector, --vector, or BM25 only). numpy: the fast in-memory mode, "
    "exhaustive cosine over the vectors, no store.",
)
@click.option("--keep", is_flag=True, help="Served modes: keep the scratch collections.")
@click.option(
    "--compare-ranking",
    is_flag=True,
    help="Served modes: also score each strategy with each ranking option off "
    "(field weights, the CJK trigram field, the language-aware alpha, rerank) and with "
    "Weaviate's own defaults, on the same scratch collection ('STRATEGY|VARIANT').",
)
@click.option(
    "--small-to-big",
    "small_to_big",
    type=click.Choice(["on", "off", "both"]),
    default=None,
    help="Served modes: also index each chunk's match units (table rows, sentence "
    "windows) and search small-to-big, as CHUNKWEAVE_WEAVIATE__SMALL_TO_BIG does; both: "
    "score each strategy both ways (reports named <strategy>+s2b). Default: settings.",
)
@click.option(
    "--settle-s",
    type=click.FloatRange(min=0),
    default=75.0,
    show_default=True,
    help="Served modes: seconds to wait after writing a strategy's collection before "
    "asking. Weaviate ranks BM25 differently right after a write than once its memtables "
    "are flushed (after 60 s idle); a served collection is asked long after, so the "
    "figures wait for that state. 0: ask at once (the fresh-write figures).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--details", is_flag=True, help="Also print each question's hit rank per strategy.")
@password_option
@friendly_errors
def eval_command(
    qa_path: str,
    docs_dir: str,
    strategies: tuple[str, ...],
    k: int,
    max_tokens: int | None,
    overlap_tokens: int | None,
    table_embeds: tuple[str, ...],
    mode: str,
    keep: bool,
    compare_ranking: bool,
    small_to_big: str | None,
    settle_s: float,
    as_json: bool,
    details: bool,
) -> None:
    """Score retrieval of chunking strategies on a QA file, per question kind.

    Recall@1/5/10, MRR, nDCG@10, the ceiling (questions whose evidence is inside
    some chunk), p50/p95 search latency (served modes), embedded tokens and the
    mean tokens of a top-5 hit. Every document in DOCS (PDF/DOCX) is parsed once;
    when every question names its ``doc``, only those documents are used. Each
    strategy's chunks are embedded with the configured embedder, then searched as
    --mode says (scratch collections are removed afterwards unless --keep).
    """
    from chunkweave.storage.evaluate import details_table, evaluate_chunks, load_qa
    from chunkweave.worker.settings import get_settings

    settings = get_settings()
    questions = load_qa(qa_path)
    embedder = _embedder(settings, need_vectors=True)
    assert embedder is not None
    units = unit_runs(small_to_big or ("on" if settings.weaviate.small_to_big else "off"))
    if units != (False,) and mode == "numpy":
        raise click.UsageError("--small-to-big needs a served --mode (hybrid, vector, keyword)")
    score_chunks = served_scorer(
        settings,
        questions,
        embedder,
        mode,
        k,
        keep,
        compare_ranking,
        units=units,
        settle_s=settle_s,
    )
    files = _eval_files(Path(docs_dir), {q.doc for q in questions})
    parsed: dict[str, ParsedDocument] = {}
    for path in files:
        click.echo(f"parsing {path.name}", err=True)
        parsed[path.name] = parse_document(path, settings.parse)
    cache: dict[str, list[float]] = {}
    reports = []
    # The naive baseline has no table serialisation to vary: it runs once.
    runs = [
        (strategy, embed)
        for strategy in dict.fromkeys(strategies or DEFAULT_EVAL_STRATEGIES)
        for embed in ((None,) if strategy == NAIVE else table_embeds or (None,))
    ]
    for strategy, embed in runs:
        started = time.perf_counter()
        if strategy == NAIVE:
            window = max_tokens or embedder.max_tokens
            overlap = NAIVE_OVERLAP if overlap_tokens is None else overlap_tokens
            label = f"naive-{window}/{overlap}"
            chunks = {
                name: naive_chunks(doc, embedder, doc_id=name, window=window, overlap=overlap)
                for name, doc in parsed.items()
            }
        else:
            overrides = {"strategy": strategy, "max_tokens": max_tokens, "table_embed": embed}
            overrides["overlap_tokens"] = overlap_tokens
            chunker = Chunker(_options(settings.chunking, overrides), embedder)
            # With several serialisations each report is named "<strategy>/<serialisation>".
            label = f"{strategy}/{embed}" if len(table_embeds) > 1 else strategy
            chunks = {name: chunker.chunk(doc, doc_id=name) for name, doc in parsed.items()}
        if score_chunks is None:
            reports.append(evaluate_chunks(label, questions, chunks, embedder, k=k, cache=cache))
        else:
            reports.extend(score_chunks(label, chunks, cache))
        click.echo(f"{label}: {time.perf_counter() - started:.1f}s", err=True)
    if as_json:
        echo_json(
            {
                "k": k,
                "mode": mode,
                "questions": len(questions),
                "embedder": embedder.name,
                "reports": [r.model_dump() for r in reports],
            }
        )
        return
    click.echo(_report_table(reports, len(questions), embedder.name))
    if details:
        click.echo(details_table(questions, reports))


def to_markdown(chunks: list[Chunk]) -> str:
    """Render chunks for humans: a header line per chunk (type, pages, tokens, path)."""
    out: list[str] = []
    for c in chunks:
        pages = _pages(c)
        head = f"## [{c.chunk_index}] {c.type} · {pages} · {c.token_count} tokens"
        if c.table_id is not None:
            head += f" · table {c.table_id} rows {c.table_row_start}-{c.table_row_end}"
        out.append(head)
        out.append(f"path: {' > '.join(c.heading_path) or '(none)'}")
        out.append(f"id: {c.id}" + (f" · parent {c.parent_id}" if c.parent_id else ""))
        out.append("")
        out.append(c.text)
        out.append("")
        out.append("---")
        out.append("")
    return "\n".join(out)


def _pages(c: Chunk) -> str:
    if c.page_start is None:
        return "no page"
    if c.page_start == c.page_end:
        return f"p. {c.page_start}"
    return f"pp. {c.page_start}-{c.page_end}"


def _options(base: ChunkOptions, overrides: dict[str, Any]) -> ChunkOptions:
    # Validate the merged options as a whole (unknown or bad values are errors).
    data = base.model_dump()
    data.update({key: value for key, value in overrides.items() if value is not None})
    return ChunkOptions.model_validate(data)


def _embedder(settings: Any, *, need_vectors: bool) -> Embedder | None:
    """Build the configured embedder; None (with a note) when only counting is needed."""
    try:
        from chunkweave.storage.embedders import make_embedder
    except ImportError as err:
        if need_vectors:
            raise click.ClickException(f"no embedder available: {err}") from err
        click.echo(
            "note: embedder not available; sizes use the approximate token counter", err=True
        )
        return None
    try:
        return make_embedder(settings.embedder)
    except Exception as err:
        if need_vectors:
            raise
        click.echo(
            f"note: embedder unavailable ({err}); sizes use the approximate token counter",
            err=True,
        )
        return None


def _doc_id(path: str) -> str:
    try:
        from chunkweave.storage.identity import doc_id_for

        return doc_id_for(path)
    except (ImportError, NotImplementedError):
        return Path(path).resolve().as_uri()


def _eval_files(docs_dir: Path, named: set[str | None]) -> list[Path]:
    files = sorted(p for p in docs_dir.iterdir() if p.suffix.lower() in SUPPORTED_SUFFIXES)
    if None not in named:
        missing = sorted(str(n) for n in named if not (docs_dir / str(n)).is_file())
        if missing:
            raise click.ClickException(f"{docs_dir}: QA documents not found: {', '.join(missing)}")
        files = [p for p in files if p.name in named]
    if not files:
        raise click.ClickException(f"{docs_dir}: no PDF or DOCX documents")
    return files


def _report_table(reports: list[Any], n: int, embedder: str) -> str:
    lines = [
        f"{n} questions, embedder {embedder}, search {reports[0].mode if reports else '-'}",
        f"{'strategy':<15} {'n':>3} {'chunks':>6} {'tokens':>8} {'found':>5} "
        f"{'R@1':>5} {'R@5':>5} {'R@10':>5} {'MRR':>5} {'nDCG':>5} "
        f"{'p50ms':>6} {'p95ms':>6} {'hitTok':>6}",
    ]
    for r in reports:
        lines.append(
            f"{r.strategy:<15} {r.overall.n:>3} {r.chunks:>6} {r.embedded_tokens:>8} "
            + _cells(r.overall, r.evidence_in_chunks)
        )
        for kind, ks in r.by_kind.items():
            lines.append(f"  {kind:<13} {ks.n:>3} {'':>6} {'':>8} " + _cells(ks, ks.found))
    return "\n".join(lines)


def _cells(s: Any, found: int | None) -> str:
    def ms(value: float | None) -> str:
        return f"{value:>6.1f}" if value is not None else f"{'-':>6}"

    hit = f"{s.hit_tokens:>6.0f}" if s.hit_tokens is not None else f"{'-':>6}"
    return (
        f"{found if found is not None else '-':>5} {s.recall_at_1:>5.2f} {s.recall_at_5:>5.2f} "
        f"{s.recall_at_10:>5.2f} {s.mrr:>5.2f} {s.ndcg_at_10 or 0.0:>5.2f} "
        f"{ms(s.latency_p50_ms)} {ms(s.latency_p95_ms)} {hit}"
    )

"""What the benchmarks share: command-line options, the results table, the JSON file."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The shared evaluation corpus, next to the clone.
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
#: Document groups, in the order the tables list them (see ``bench/README.md``).
GROUPS = ("pdf", "docx", "outline", "tables")

#: Results by system (parser or chunker), then by group; each row has a "failed" list.
Results = Mapping[str, Mapping[str, Mapping[str, Any]]]


def name_list(known: Iterable[str], what: str) -> Callable[[str], list[str]]:
    """Return an argparse ``type`` for a comma list of ``known`` names (unknown: an error).

    Empty items are ignored; the list keeps the order given.
    """
    allowed = list(known)

    def parse(text: str) -> list[str]:
        names = [n for n in text.split(",") if n]
        unknown = sorted(set(names) - set(allowed))
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown {what}: {', '.join(unknown)} (known: {', '.join(allowed)})"
            )
        return names

    return parse


def bench_parser(description: str | None) -> argparse.ArgumentParser:
    """Return an argument parser with ``--json PATH``, which every benchmark takes."""
    ap = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("--json", type=Path, help="also write the results here")
    return ap


def add_names(ap: argparse.ArgumentParser, flag: str, known: Sequence[str]) -> None:
    """Add ``--<flag>``: a comma list of the ``known`` systems to run (default: all)."""
    ap.add_argument(
        f"--{flag}",
        type=name_list(known, flag),
        help=f"comma list (default all: {','.join(known)})",
    )


def corpus_parser(
    description: str | None,
    flag: str,
    known: Sequence[str],
    *,
    timeout: float,
    docs_help: str = "comma list of document names or stems",
) -> argparse.ArgumentParser:
    """Return a :func:`bench_parser` with the options of the corpus-wide benchmarks.

    ``--corpus``, ``--<flag>`` (see :func:`add_names`), ``--docs``, ``--max-pages``
    and ``--timeout`` (seconds per run of one system).
    """
    ap = bench_parser(description)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    add_names(ap, flag, known)
    ap.add_argument("--docs", help=docs_help)
    ap.add_argument("--max-pages", type=int, default=0, help="cut PDFs to N pages (0: all)")
    ap.add_argument("--timeout", type=float, default=timeout, help="seconds per system run")
    return ap


def group_table(
    head: str, results: Results, row: Callable[[str, str, Mapping[str, Any]], str]
) -> str:
    """Render ``results`` as one plain-text table: ``head``, then one ``row`` per system.

    Groups come in :data:`GROUPS` order, each followed by a blank line; a row whose
    system failed on some documents says how many.
    """
    lines = [head, "-" * len(head)]
    for group in GROUPS:
        if not any(group in rows for rows in results.values()):
            continue
        for name, rows in results.items():
            r = rows.get(group)
            if r is None:
                continue
            fails = f" ({len(r['failed'])} failed)" if r["failed"] else ""
            lines.append(row(name, group, r) + fails)
        lines.append("")
    return "\n".join(lines)


def print_failures(results: Results) -> None:
    """Print every failure of ``results``, one line each, naming the system and group."""
    for name, rows in results.items():
        for group, r in rows.items():
            for failure in r["failed"]:
                print(f"  ! {name} [{group}] {failure}")


def write_json(path: Path | None, payload: Mapping[str, Any]) -> None:
    """Write ``payload`` as indented JSON to ``path`` (its folder created); ``None``: skip."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")

"""Command-line options the benchmarks share."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable


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

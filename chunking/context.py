"""The one builder of ``embed_text``: a context line in front of the stored text.

The context line is ``Title > Section > Subsection`` (the document title, then the
chunk's heading path without repeating the title), and for table chunks the
table's caption on a second line when the chunk text does not already start with
it and the path does not already end with it (a table captioned by the heading
over it). So a table chunk's embed text says which section and which table it is
from, in every piece of the table. Nothing is paraphrased or generated: every word
comes from the document.
"""

from __future__ import annotations

from chunkweave.chunking.tokens import Meter

SEPARATOR = " > "


def context_lines(
    title: str | None, heading_path: tuple[str, ...], caption: str | None = None
) -> list[str]:
    """Return the context lines for a chunk (empty when there is nothing to say)."""
    parts = [p for p in heading_path if p]
    if title and title.strip():
        clean_title = " ".join(title.split())
        if not parts or parts[0] != clean_title:
            parts.insert(0, clean_title)
    lines = [SEPARATOR.join(parts)] if parts else []
    if caption and (not parts or parts[-1] != " ".join(caption.split())):
        lines.append(caption)
    return lines


def build_embed_text(
    text: str,
    *,
    title: str | None,
    heading_path: tuple[str, ...],
    caption: str | None = None,
    enabled: bool = True,
) -> str:
    """``text`` with the context lines in front (or ``text`` alone when disabled).

    A caption already at the start of ``text`` (a table's first piece) is not
    repeated.
    """
    if not enabled:
        return text
    if caption and text.startswith(caption):
        caption = None
    lines = context_lines(title, heading_path, caption)
    return "\n".join([*lines, text]) if lines else text


def fitting_path(
    title: str | None,
    heading_path: tuple[str, ...],
    caption: str | None,
    meter: Meter,
    limit: int,
) -> tuple[tuple[str, ...], str | None, str | None]:
    """Shorten the context until it costs at most ``limit`` tokens.

    Drops outer headings first (the innermost heading says most), then the title,
    then the last heading; a caption that alone exceeds ``limit`` is cut to its
    leading words that fit (a table's caption is never dropped entirely). Returns
    the ``(heading_path, title, caption)`` to use.
    """
    if caption is not None and meter.cost(caption) > limit:
        caption = _leading_words(caption, limit, meter)
    path = heading_path
    while meter.cost("\n".join(context_lines(title, path, caption))) > limit:
        if len(path) > 1:
            path = path[1:]
        elif title is not None:
            title = None
        elif path:
            path = ()
        else:
            break
    return path, title, caption


def _leading_words(text: str, limit: int, meter: Meter) -> str:
    end, used = 0, 0
    for _, word_end, cost in meter.words(text):
        if used + cost > limit:
            break
        end, used = word_end, used + cost
    return text[:end] if end else text[: max(1, len(text) * limit // max(meter.cost(text), 1))]

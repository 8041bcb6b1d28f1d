"""Token budgets: how much chunk text fits once the context line is paid for.

A chunk's ``embed_text`` costs ``base + context + text`` tokens (``base`` = the
embedder's special tokens). ``max_tokens`` bounds the whole ``embed_text`` (the
embedder's input limit); ``target_tokens`` is the size prose is packed up to.
The context line is shortened (see :func:`chunkweave.chunking.context.fitting_path`) so it
never takes more than a quarter of ``max_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chunkweave.chunking.context import build_embed_text, context_lines, fitting_path
from chunkweave.chunking.models import ChunkOptions
from chunkweave.chunking.tables import Tables
from chunkweave.chunking.tokens import Meter
from chunkweave.chunking.units import Piece

Context = tuple[tuple[str, ...], str | None, str | None]


@dataclass
class Budget:
    """Budgets for one chunking run (``opts`` must be resolved: ``max_tokens`` set).

    ``tables`` holds the run's tables (what is derived from each, once), costed with ``meter``.
    """

    meter: Meter
    opts: ChunkOptions
    title: str | None
    #: 1 when heading paths start with the document's title element, else 0.
    root_depth: int = 0
    _contexts: dict[tuple[tuple[str, ...], str | None], Context] = field(default_factory=dict)
    _context_costs: dict[tuple[tuple[str, ...], str | None], int] = field(default_factory=dict)
    _soft: dict[tuple[str, ...], int] = field(default_factory=dict)
    _hard: dict[tuple[str, ...], int] = field(default_factory=dict)
    tables: Tables = field(init=False)

    def __post_init__(self) -> None:
        """Start the run's tables on the same meter.

        A table piece's stored text gets what the embedder reads of a text alone (no
        context line); what it embeds gets :meth:`hard`.
        """
        text_limit = max(self.max_tokens - self.meter.base, 1)
        self.tables = Tables(self.meter, self.opts.table_embed, text_limit)

    @property
    def max_tokens(self) -> int:
        """Hard limit on a chunk's ``embed_text`` tokens."""
        assert self.opts.max_tokens is not None, "resolve_options() first"
        return self.opts.max_tokens

    @property
    def target_tokens(self) -> int:
        """Size prose is packed up to (never above ``max_tokens``)."""
        return min(self.opts.target_tokens or self.max_tokens, self.max_tokens)

    def context(self, path: tuple[str, ...], caption: str | None = None) -> Context:
        """Return the ``(heading_path, title, caption)`` the context line will show."""
        key = (path, caption)
        found = self._contexts.get(key)
        if found is None:
            if self.opts.contextualize:
                found = fitting_path(self.title, path, caption, self.meter, self.max_tokens // 4)
            else:
                found = ((), None, None)
            self._contexts[key] = found
        return found

    def embed_text(self, text: str, path: tuple[str, ...], caption: str | None = None) -> str:
        """Return ``text`` with the context line(s) :meth:`context` chose in front."""
        shown_path, title, shown_caption = self.context(path, caption)
        return build_embed_text(
            text,
            title=title,
            heading_path=shown_path,
            caption=shown_caption,
            enabled=self.opts.contextualize,
        )

    def context_cost(self, path: tuple[str, ...], caption: str | None = None) -> int:
        """Tokens the context line(s) for ``path`` (and ``caption``) add (cached)."""
        key = (path, caption)
        cost = self._context_costs.get(key)
        if cost is None:
            shown_path, title, shown_caption = self.context(path, caption)
            lines = context_lines(title, shown_path, shown_caption)
            cost = self.meter.cost("\n".join(lines)) if lines else 0
            self._context_costs[key] = cost
        return cost

    def hard(self, path: tuple[str, ...], caption: str | None = None) -> int:
        """Most text tokens a chunk under ``path`` may have (>= 1; cached per path)."""
        if caption is None:
            limit = self._hard.get(path)
            if limit is not None:
                return limit
        spare = max(self.max_tokens - self.meter.base - self.context_cost(path, caption), 1)
        if caption is None:
            self._hard[path] = spare
        return spare

    def soft(self, path: tuple[str, ...]) -> int:
        """Text tokens prose under ``path`` is packed up to (>= 1; cached per path)."""
        limit = self._soft.get(path)
        if limit is None:
            spare = self.target_tokens - self.meter.base - self.context_cost(path)
            limit = self._soft[path] = max(min(spare, self.hard(path)), 1)
        return limit

    def piece_cost(self, piece: Piece) -> int:
        """Estimated tokens of a piece's text."""
        return self.meter.cost(piece.text)


def common_path(pieces: tuple[Piece, ...] | list[Piece]) -> tuple[str, ...]:
    """Return the heading path a chunk of ``pieces`` sits under.

    The longest path shared by its content pieces; a heading piece counts only when
    it is not an ancestor of that content (a chunk opening with "2 Intro" and
    "2.1 Scope" followed by 2.1's paragraphs is under "2 Intro > 2.1 Scope").
    """
    if not pieces:
        return ()
    content = [p for p in pieces if p.kind != "heading"] or list(pieces)
    path = content[0].path
    for piece in content[1:]:
        path = _prefix(path, piece.path)
    for piece in pieces:
        if piece.kind == "heading" and piece.path != path[: len(piece.path)]:
            path = _prefix(path, piece.path)
    return path


def _prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    if a == b[: len(a)]:
        return a  # the common case: pieces of one section share (or extend) a path
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return a[:n]

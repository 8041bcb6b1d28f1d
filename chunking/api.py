"""Entry point: a parsed document + options -> chunks.

The pipeline is a chain of pure stages (no I/O, no globals):
``iter_units`` (furniture out, captions onto tables, sections numbered) ->
a strategy's drafts (the strategy registered under its name in
:mod:`chunkweave.chunking.strategies`: boundaries, packing, merging) ->
``iter_fitted`` (render, enforce the hard limit) -> parents (optional) -> IDs,
indexes and source regions (:mod:`chunkweave.chunking.regions`).
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import TypeAdapter

from chunkweave.chunking.boundaries import by_section_level
from chunkweave.chunking.budget import Budget
from chunkweave.chunking.context import context_lines
from chunkweave.chunking.emit import Rendered, iter_fitted
from chunkweave.chunking.fingerprint import chunker_fingerprint
from chunkweave.chunking.ids import assign_ids, sha1_hex
from chunkweave.chunking.models import Chunk, ChunkOptions, Embed, TokenCounter
from chunkweave.chunking.parents import parent_groups, section_parents
from chunkweave.chunking.regions import RegionIndex
from chunkweave.chunking.sections import held_section_numbers, nearest_section_number
from chunkweave.chunking.strategies import needs_embedder, strategy_drafts, strategy_for
from chunkweave.chunking.tokens import Meter
from chunkweave.parsers import ParsedDocument
from chunkweave.parsers.elements import FURNITURE_TYPES

#: The default embedder's input limit (all-MiniLM-L6-v2: 256 word pieces), used
#: when neither the options nor the caller say what the embedder can read.
DEFAULT_EMBEDDER_MAX_TOKENS = 256
#: Hard ceiling for embedders with long inputs: past ~1,800 tokens retrieval quality
#: falls off (the "context cliff"), so bigger windows are not filled.
CONTEXT_CLIFF_TOKENS = 1800
#: Default packing target for embedders that read more than this.
DEFAULT_TARGET_TOKENS = 512

_CHUNKS = TypeAdapter(list[Chunk])

__all__ = ["chunk_document", "needs_embedder", "resolve_options"]


def resolve_options(opts: ChunkOptions, embedder_max_tokens: int | None) -> ChunkOptions:
    """Fill in the token budget from the embedder's input limit.

    - ``max_tokens``: the embedder's limit (``DEFAULT_EMBEDDER_MAX_TOKENS`` when
      unknown), capped at ``CONTEXT_CLIFF_TOKENS`` when not set explicitly; an
      explicit value above the embedder's limit is lowered to it, so ``embed_text``
      (context line included) is never truncated by the embedder.
    - ``target_tokens``: ``min(max_tokens, DEFAULT_TARGET_TOKENS)`` when unset,
      never above ``max_tokens``.
    """
    limit = embedder_max_tokens or DEFAULT_EMBEDDER_MAX_TOKENS
    if opts.max_tokens is None:
        max_tokens = min(limit, CONTEXT_CLIFF_TOKENS)
    else:
        max_tokens = min(opts.max_tokens, limit)
    target = opts.target_tokens or min(max_tokens, DEFAULT_TARGET_TOKENS)
    return opts.model_copy(
        update={"max_tokens": max_tokens, "target_tokens": min(target, max_tokens)}
    )


def chunk_document(
    doc: ParsedDocument,
    opts: ChunkOptions,
    counter: TokenCounter,
    *,
    doc_id: str,
    source: str | None = None,
    embed: Embed | None = None,
) -> list[Chunk]:
    """Chunk ``doc`` with ``opts``; deterministic for the same inputs.

    ``doc_id`` is the stable identity of the source (not its content); ``source``
    defaults to ``doc.path``. ``embed`` is needed only by a strategy that embeds to
    chunk (``semantic``): ask :func:`needs_embedder`.
    Options with ``max_tokens`` unset are resolved against the default embedder's
    limit (call :func:`resolve_options` with the real embedder's limit first).

    Guarantees: every body element's text is in the chunks in reading order; no
    chunk's ``embed_text`` exceeds ``max_tokens`` as ``counter`` counts it (a table row
    too large on its own is cut between words, see :mod:`chunkweave.chunking.tables`); tables
    never share a chunk with prose;
    IDs are unique within the document and depend only on ``doc_id``, the chunker
    fingerprint and the chunk's content (see :mod:`chunkweave.chunking.ids`).
    """
    if not doc_id:
        raise ValueError("doc_id must be a non-empty string")
    if opts.max_tokens is None:
        opts = resolve_options(opts, None)
    strategy = strategy_for(opts)
    if strategy.needs_embedder and embed is None:
        raise ValueError(f"the {opts.strategy!r} strategy needs an embedder (embed=...)")
    has_title = any(e.type == "title" for e in doc.elements)
    meter = Meter(counter)
    # One batched count of every element text (and context line) up front: the
    # stages below then find nearly every cost in the meter's cache.
    meter.prefill(_prefill_texts(doc, opts))
    budget = Budget(meter=meter, opts=opts, title=doc.title, root_depth=int(has_title))
    chunker = chunker_fingerprint(opts, counter.name)
    drafts = strategy_drafts(strategy, doc.elements, budget, embed)
    children = list(iter_fitted(drafts, budget))
    if opts.parent_chunks:
        groups: list[int | None] = list(parent_groups(children))
        # Parents are cut at section_level; where the strategy's sections are cut
        # there too, heading-only ones fold as the strategy folded them.
        fold = strategy.fold and strategy.boundary is by_section_level
        parents = section_parents(doc.elements, children, budget, fold=fold)
    else:
        groups, parents = [None] * len(children), []
    return _assemble(children, groups, parents, doc, chunker, doc_id, source or doc.path)


def _prefill_texts(doc: ParsedDocument, opts: ChunkOptions) -> Iterator[str]:
    # The strings the stages will cost: trimmed prose element texts (a piece's
    # text; tables are costed by their rendered lines, furniture is left out
    # unless kept) and the plain context line of every heading path.
    paths: set[tuple[str, ...]] = set()
    skipped = {"table"} if opts.include_furniture else {"table", *FURNITURE_TYPES}
    for el in doc.elements:
        paths.add(el.heading_path)
        if el.type in skipped:
            continue
        text = el.text.strip()
        if text:
            yield text
    for path in paths:
        lines = context_lines(doc.title, path)
        if lines:
            yield "\n".join(lines)


def _assemble(
    children: list[Rendered],
    groups: list[int | None],
    parents: list[Rendered],
    doc: ParsedDocument,
    chunker: str,
    doc_id: str,
    source: str,
) -> list[Chunk]:
    # Regions are positional, like ``chunk_index``: they are not in the content key;
    # the pages of a joined text's later parts are (a chunk's pages are content).
    regions = RegionIndex(doc.elements)
    if regions.spread:
        for r in (*children, *parents):
            r.pages = regions.pages(r.element_orders, r.pages)
    # Parents first (children's content keys include their parent's ID); in the
    # output each parent comes right before its first child. Each text is hashed
    # once: its SHA1 is both the chunk's ``content_sha1`` and part of its key.
    parent_sha1 = [sha1_hex(p.text) for p in parents]
    child_sha1 = [sha1_hex(c.text) for c in children]
    parent_ids = assign_ids(
        doc_id, chunker, [p.key(None, h) for p, h in zip(parents, parent_sha1, strict=True)]
    )
    child_parent = [parent_ids[g] if g is not None else None for g in groups]
    keys = [c.key(p, h) for c, p, h in zip(children, child_parent, child_sha1, strict=True)]
    child_ids = assign_ids(doc_id, chunker, keys)
    # One lookup per distinct heading path (a section's chunks share theirs).
    paths = {p for r in (*children, *parents) for p in (r.heading_path, *r.paths)}
    numbers = {path: nearest_section_number(path) for path in paths}
    ordered: list[tuple[Rendered, str, str | None, str]] = []
    emitted: set[int] = set()
    for child, cid, pid, group, sha in zip(
        children, child_ids, child_parent, groups, child_sha1, strict=True
    ):
        if group is not None and pid is not None and group not in emitted:
            emitted.add(group)
            ordered.append((parents[group], pid, None, parent_sha1[group]))
        ordered.append((child, cid, pid, sha))
    # All chunks are validated in one call (the per-model call overhead is about
    # a third of validating a chunk).
    return _CHUNKS.validate_python(
        [
            dict(
                id=cid,
                doc_id=doc_id,
                source=source,
                text=r.text,
                embed_text=r.embed_text,
                type=r.type,
                heading_path=r.heading_path,
                section_headings=r.section_headings,
                page_start=r.pages[0] if r.pages else None,
                page_end=r.pages[-1] if r.pages else None,
                pages=r.pages,
                element_orders=r.element_orders,
                regions=regions.regions(r.element_orders),
                chunk_index=index,
                token_count=r.token_count,
                content_sha1=sha,
                doc_sha1=doc.sha1,
                chunker=chunker,
                table_id=r.table_id,
                table_row_start=r.table_row_start,
                table_row_end=r.table_row_end,
                table_markdown=r.table_markdown,
                table_html=r.table_html,
                caption=r.caption,
                parent_id=pid,
                section_number=numbers[r.heading_path],
                section_numbers=held_section_numbers(
                    numbers[r.heading_path], (numbers[p] for p in r.paths)
                ),
            )
            for index, (r, cid, pid, sha) in enumerate(ordered)
        ]
    )

"""The Chunk model (chunking's only output) and the chunking options, by strategy family."""

from __future__ import annotations

from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from chunkweave.parsers.elements import BBox

Strategy = Literal[
    "elements",
    "headings",
    "faq",
    "fixed",
    "sliding",
    "sentences",
    "recursive",
    "pages",
    "semantic",
]
#: How whole sections that merge into one chunk are labelled (see ``ChunkOptions``).
SectionMerge = Literal["parent", "listed", "never"]
ChunkType = Literal["text", "table", "list", "code", "formula", "figure", "section"]
TableFormat = Literal["markdown", "html"]
#: What a table chunk embeds (see ``ChunkOptions.table_embed``).
TableEmbed = Literal["text", "rows", "both"]
#: A strategy family's options model (see :meth:`ChunkOptions.family`).
F = TypeVar("F", bound="StrategyOptions")


class TokenCounter(Protocol):
    """Counts tokens the way the embedder will. ``name`` identifies it in fingerprints.

    A counter may also offer ``count_many(texts) -> list[int]`` (equal to
    ``[count(t) for t in texts]``, but in one call): chunking then counts all
    element texts of a document, and later all finished chunks, in one batch each.
    It may also declare ``additive = True`` when its counts add up over
    whitespace: ``count(a + w + b) == count(a) + count(b) - count("")`` for any
    non-empty ``a``, ``b`` and whitespace run ``w`` (true of WordPiece, which always
    splits at whitespace). Chunk sizes are then sums of cached parts, exactly, and
    no finished chunk is tokenised again. Both are optional; ``count`` alone is
    enough (chunks are then verified with the counter).
    """

    name: str

    def count(self, text: str) -> int:
        """Return how many tokens ``text`` becomes for the embedder (specials included)."""
        ...


class Embed(Protocol):
    """Embeds a batch of texts (used only by the ``semantic`` strategy)."""

    def __call__(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


class StrategyOptions(BaseModel):
    """The knobs of one strategy family, beyond the options every strategy reads.

    Each strategy declares its family's model when it is registered
    (:func:`chunkweave.chunking.strategies.register_chunking_strategy`); this empty base
    is the family of strategies with no knob of their own (``pages``). A family's fields
    are also :class:`ChunkOptions` fields (it derives from every family), so settings,
    environment variables and CLI flags name them as before.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")


class SectionOptions(StrategyOptions):
    """How the structure-aware strategies (``elements``, ``headings``, ``faq``) cut and merge.

    ``min_tokens``: sections smaller than this merge with a neighbour (``elements``)
    or into their predecessor (``headings``). ``merge_sections`` says how sections
    that merge stay addressable: ``parent`` labels the chunk with the common parent
    path only; ``listed`` also names each merged section's heading in the context
    line (and in ``Chunk.section_headings``); ``never`` merges no section that has a
    heading of its own with a sibling (empty headings still join their neighbour).
    The ``faq`` strategy never merges, whatever this says. ``heading_level`` is the
    level ``headings`` cuts at (``None``: the deepest level used at least twice).
    """

    min_tokens: int = Field(default=48, ge=0)
    merge_sections: SectionMerge = "listed"
    heading_level: int | None = Field(default=None, ge=1)


class WindowOptions(StrategyOptions):
    """How the window baselines (``fixed``, ``sliding``, ``sentences``, ``recursive``) overlap.

    ``overlap_tokens``: what consecutive windows share (``fixed``) or the trailing
    sentences repeated (``sentences``, ``recursive``); ``stride_tokens``: how far a
    ``sliding`` window advances (``None``: half a window).
    """

    overlap_tokens: int = Field(default=0, ge=0)
    stride_tokens: int | None = Field(default=None, gt=0)


class SemanticOptions(StrategyOptions):
    """Where the ``semantic`` strategy cuts: cosine distance between adjacent sentences."""

    semantic_threshold: float = Field(default=0.25, ge=0.0, le=2.0)


class ChunkOptions(SectionOptions, WindowOptions, SemanticOptions):
    """How to chunk. One validated, frozen model; unknown keys are errors.

    The options every strategy reads are declared here; each family's knobs come from
    its :class:`StrategyOptions` model (:class:`SectionOptions`, :class:`WindowOptions`,
    :class:`SemanticOptions`), so this flat model, the one settings, environment
    variables, the CLI and chunk fingerprints know, is their union by construction.
    :meth:`family` gives a strategy its own model.

    ``max_tokens`` ``None`` means "what the embedder can read" (the caller resolves
    it before chunking; see ``resolved``). ``include_furniture`` keeps running
    headers/footers and contents/index entries (:mod:`chunkweave.chunking.navigation`), which
    every strategy leaves out by default. ``section_level``: sections (and parent
    chunks) start at headings of this level or above.

    ``table_embed`` says what a table chunk's ``embed_text`` holds after the context
    line (heading path, caption): ``text``, its stored text (the ``table_format``
    rendering); ``rows``, one line per row, ``Column: value; Column: value``
    (:func:`chunkweave.chunking.table_rows.row_lines`); ``both``, the stored text then
    the rows. ``text`` stays Markdown (or HTML) whatever this says. ``rows`` is the
    default: it ranked table cells best in ``chunkweave eval`` (issue 26).
    """

    strategy: Strategy = "elements"
    max_tokens: int | None = Field(default=None, gt=8)
    target_tokens: int | None = Field(default=None, gt=8)
    section_level: int = Field(default=3, ge=1)
    table_format: TableFormat = "markdown"
    table_embed: TableEmbed = "rows"
    contextualize: bool = True
    include_furniture: bool = False
    parent_chunks: bool = False

    def family(self, model: type[F]) -> F:
        """Return these options' values for the family ``model`` (a strategy's own options)."""
        return model.model_validate(self.model_dump(include=set(model.model_fields)))


class Region(BaseModel):
    """Where on a page some of a chunk's text is: for highlighting a search hit.

    ``page`` is 1-based; ``bbox`` is ``(x0, y0, x1, y1)`` in PDF points, origin at
    the top-left, in the frame the parser read the page's text in: PyMuPDF's, the
    unrotated page (``page.rotation_matrix`` maps it onto a page shown rotated). See
    :mod:`chunkweave.chunking.regions` for how a chunk's regions are made.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    page: int = Field(ge=1)
    bbox: BBox


class Chunk(BaseModel):
    """One chunk, ready to embed and store.

    ``text`` is what is stored and shown; ``embed_text`` is what is embedded (a
    context line with document title and heading path, plus the caption for tables,
    in front of ``text`` when contextualisation is on). ``id`` is the SHA1 hex from
    :func:`chunkweave.chunking.ids.chunk_id`. ``section_headings`` names the sections
    merged into a chunk below its ``heading_path`` (``merge_sections="listed"``;
    empty for a chunk of one section). ``regions`` are the boxes of its elements on
    their pages (:mod:`chunkweave.chunking.regions`; empty where the format has no
    coordinates, as DOCX). Like ``chunk_index`` and ``element_orders`` they are
    positional: not part of the chunk's identity (``id``). ``section_number`` is the
    normalised number of the deepest numbered heading of ``heading_path``
    (:func:`chunkweave.chunking.sections.nearest_section_number`);
    ``section_numbers`` are every number the chunk holds, that one first, then those of
    the sections merged into it (:func:`chunkweave.chunking.sections.held_section_numbers`).
    Derived from the paths, they are not part of the identity either.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    doc_id: str
    source: str
    text: str
    embed_text: str
    type: ChunkType
    heading_path: tuple[str, ...] = ()
    section_headings: tuple[str, ...] = ()
    page_start: int | None = None
    page_end: int | None = None
    pages: tuple[int, ...] = ()
    element_orders: tuple[int, ...] = ()
    regions: tuple[Region, ...] = ()
    chunk_index: int = Field(ge=0)
    token_count: int = Field(ge=0)
    content_sha1: str
    doc_sha1: str
    chunker: str
    table_id: str | None = None
    table_row_start: int | None = None
    table_row_end: int | None = None
    table_markdown: str | None = None
    table_html: str | None = None
    caption: str | None = None
    parent_id: str | None = None
    section_number: str | None = None
    section_numbers: tuple[str, ...] = ()

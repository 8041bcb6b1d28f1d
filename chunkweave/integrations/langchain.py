"""LangChain: a retriever over the chunk store, a loader of a file's chunks.

Needs ``langchain-core`` (``pip install 'chunkweave[langchain]'``)::

    from chunkweave.integrations.langchain import ChunkweaveLoader, ChunkweaveRetriever

    retriever = ChunkweaveRetriever(k=4, filters={"section_number": "7.3"}, tenant="acme",
                                    principals=["team-legal"])
    docs = retriever.invoke("termination notice period")
    chunks = ChunkweaveLoader("contract.pdf").load()  # parsed and chunked here, not stored

Each ``Document`` carries the chunk's metadata (:mod:`chunkweave.integrations.metadata`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, PrivateAttr

from chunkweave.chunking.models import ChunkOptions
from chunkweave.integrations.metadata import chunk_metadata, hit_metadata, iter_chunks
from chunkweave.integrations.search import ChunkSearch
from chunkweave.storage.filters import Condition

__all__ = ["ChunkweaveLoader", "ChunkweaveRetriever"]


class ChunkweaveRetriever(BaseRetriever):
    """The best ``k`` stored chunks for a query, as LangChain ``Document`` values, best first.

    Searches as ``chunkweave search`` does (hybrid unless ``hybrid`` is off), through
    :class:`~chunkweave.integrations.search.ChunkSearch`. ``filters``: property ->
    value (all must hold; the chunk's filterable properties and the declared metadata
    keys), or :class:`~chunkweave.storage.filters.Condition` values for other
    operators. ``principals``: who asks (only chunks their ``acl`` lets through);
    ``None`` applies no access rule. ``tenant``: the tenant searched. ``settings``: a
    :class:`chunkweave.worker.settings.Settings` (default: the ``CHUNKWEAVE_*``
    environment). The store is opened on the first query; :meth:`close` releases it.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    k: int = 5
    filters: dict[str, Any] | list[Condition] | None = None
    tenant: str | None = None
    principals: tuple[str, ...] | None = None
    hybrid: bool = True
    settings: Any = None

    _search: ChunkSearch = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Bind the search to the settings (nothing is opened yet)."""
        self._search = ChunkSearch(self.settings)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = self._search.search(
            query,
            k=self.k,
            filters=self.filters,
            tenant=self.tenant,
            principals=self.principals,
            hybrid=self.hybrid,
        )
        return [Document(page_content=h.text, metadata=hit_metadata(h), id=h.uuid) for h in hits]

    def close(self) -> None:
        """Close the store's connection."""
        self._search.close()


class ChunkweaveLoader(BaseLoader):
    """The chunks of PDF/DOCX files as ``Document`` values, in order: no store, no server.

    Parsed and chunked as an ingest would (options from ``settings`` unless
    ``chunk_options`` are given), so the ids are the stored chunks'. ``content``: the
    chunk's stored ``text`` (default) or its ``embed_text`` (the heading path and
    caption in front: what chunkweave embeds).
    """

    def __init__(
        self,
        paths: str | Path | Sequence[str | Path],
        *,
        settings: Any = None,
        chunk_options: ChunkOptions | None = None,
        content: Literal["text", "embed_text"] = "text",
    ) -> None:
        self.paths = [paths] if isinstance(paths, str | Path) else list(paths)
        self.settings = settings
        self.chunk_options = chunk_options
        self.content = content

    def lazy_load(self) -> Iterator[Document]:
        """Yield each file's chunks in turn (a file is parsed when its turn comes)."""
        for chunk in iter_chunks(
            self.paths, settings=self.settings, chunk_options=self.chunk_options
        ):
            text = chunk.embed_text if self.content == "embed_text" else chunk.text
            yield Document(page_content=text, metadata=chunk_metadata(chunk), id=chunk.id)

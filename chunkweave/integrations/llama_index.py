"""LlamaIndex: a retriever over the chunk store, a reader of a file's chunks.

Needs ``llama-index-core`` (``pip install 'chunkweave[llama-index]'``)::

    from chunkweave.integrations.llama_index import ChunkweaveReader, ChunkweaveRetriever

    retriever = ChunkweaveRetriever(k=4, tenant="acme", principals=["team-legal"])
    nodes = retriever.retrieve("termination notice period")  # NodeWithScore, best first
    docs = ChunkweaveReader().load_data("contract.pdf")  # parsed and chunked, not stored

The reader also serves ``SimpleDirectoryReader(file_extractor={".pdf": reader})``.
Each node carries the chunk's metadata (:mod:`chunkweave.integrations.metadata`); only
``source``, ``heading_path``, ``section_number`` and ``pages`` reach the LLM's or the
embedder's view of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from llama_index.core.callbacks import CallbackManager
from llama_index.core.readers.base import BaseReader
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import Document, NodeWithScore, QueryBundle, TextNode

from chunkweave.chunking.models import ChunkOptions
from chunkweave.integrations.metadata import chunk_metadata, hit_metadata, iter_chunks
from chunkweave.integrations.search import ChunkSearch, Filters

__all__ = ["ChunkweaveReader", "ChunkweaveRetriever"]

#: Metadata keys shown to the LLM and the embedder; the others are for the application.
SHOWN = ("source", "heading_path", "section_number", "pages")


def _hidden(metadata: Mapping[str, Any]) -> list[str]:
    return [k for k in metadata if k not in SHOWN]


class ChunkweaveRetriever(BaseRetriever):
    """The best ``k`` stored chunks for a query as ``NodeWithScore`` values, best first.

    Arguments as :class:`chunkweave.integrations.langchain.ChunkweaveRetriever`'s:
    ``filters`` (property -> value, or conditions), ``tenant``, ``principals`` (who
    asks; ``None``: no access rule), ``hybrid``, ``settings``. A node's score is the
    hit's (higher is better).
    """

    def __init__(
        self,
        *,
        k: int = 5,
        filters: Filters | None = None,
        tenant: str | None = None,
        principals: Sequence[str] | None = None,
        hybrid: bool = True,
        settings: Any = None,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        super().__init__(callback_manager=callback_manager)
        self.k, self.filters, self.tenant, self.hybrid = k, filters, tenant, hybrid
        self.principals = None if principals is None else tuple(principals)
        self._search = ChunkSearch(settings)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self._search.search(
            query_bundle.query_str,
            k=self.k,
            filters=self.filters,
            tenant=self.tenant,
            principals=self.principals,
            hybrid=self.hybrid,
        )
        nodes = []
        for hit in hits:
            metadata = hit_metadata(hit)
            node = TextNode(
                id_=hit.uuid,
                text=hit.text,
                metadata=metadata,
                excluded_llm_metadata_keys=_hidden(metadata),
                excluded_embed_metadata_keys=_hidden(metadata),
            )
            nodes.append(NodeWithScore(node=node, score=hit.score))
        return nodes

    def close(self) -> None:
        """Close the store's connection."""
        self._search.close()


class ChunkweaveReader(BaseReader):
    """The chunks of PDF/DOCX files as ``Document`` values, in order: no store, no server.

    As :class:`chunkweave.integrations.langchain.ChunkweaveLoader`: parsed and chunked as
    an ingest would, ids the stored chunks', ``content`` the ``text`` or ``embed_text``.
    """

    def __init__(
        self,
        *,
        settings: Any = None,
        chunk_options: ChunkOptions | None = None,
        content: Literal["text", "embed_text"] = "text",
    ) -> None:
        self.settings = settings
        self.chunk_options = chunk_options
        self.content = content

    def lazy_load_data(
        self,
        file: str | Path | Sequence[str | Path],
        extra_info: Mapping[str, Any] | None = None,
    ) -> Iterator[Document]:
        """Yield the chunks of ``file`` (one path or several); ``extra_info`` joins their metadata.

        The chunk's own keys win over ``extra_info``'s.
        """
        paths = [file] if isinstance(file, str | Path) else list(file)
        for chunk in iter_chunks(paths, settings=self.settings, chunk_options=self.chunk_options):
            metadata = {**(extra_info or {}), **chunk_metadata(chunk)}
            yield Document(
                id_=chunk.id,
                text=chunk.embed_text if self.content == "embed_text" else chunk.text,
                metadata=metadata,
                excluded_llm_metadata_keys=_hidden(metadata),
                excluded_embed_metadata_keys=_hidden(metadata),
            )

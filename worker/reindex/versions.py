"""The index versions a reindex moves between: catalog, spec, rollback, prune, dry run."""

from __future__ import annotations

from chunkweave.chunking.models import ChunkOptions
from chunkweave.storage.config import WeaviateConfig
from chunkweave.storage.embedders import make_embedder
from chunkweave.storage.embedders.base import Embedder
from chunkweave.storage.errors import StoreError
from chunkweave.storage.evaluate import QAItem
from chunkweave.storage.pipeline.chunker import Chunker
from chunkweave.storage.reindex.follow import reachable
from chunkweave.storage.reindex.plan import ReindexPlan, make_plan
from chunkweave.storage.reindex.spec import ReindexSpec
from chunkweave.storage.values import EmbedderIdentity
from chunkweave.storage.versions import (
    REINDEX_HINT,
    IndexVersion,
    open_catalog,
    open_version,
)
from chunkweave.worker import keys
from chunkweave.worker.reindex.state import ReindexRefusedError, load_state, save_state
from chunkweave.worker.runtime import redis_client
from chunkweave.worker.settings import Settings
from chunkweave.worker.sources import fetched


def target_embedder(spec: ReindexSpec, settings: Settings) -> Embedder:
    """Build the target's embedder, with the API key of this process's settings."""
    return make_embedder(spec.embedder.model_copy(update={"api_key": settings.embedder.api_key}))


def build_spec(
    settings: Settings,
    live: IndexVersion,
    *,
    chunking: ChunkOptions,
    embedder: Embedder,
    qa: tuple[QAItem, ...] = (),
    margin: float = 0.02,
    force: bool = False,
    keep: int = 1,
    reuse: bool = True,
) -> ReindexSpec:
    """Build the spec of a reindex of ``live`` to ``chunking`` with ``embedder``."""
    same = EmbedderIdentity(embedder.name, embedder.dimension) == live.identity
    live_spec = live.spec_dict()
    live_chunking = ChunkOptions(**live_spec["chunking"]) if live_spec else settings.chunking
    return ReindexSpec(
        chunking=Chunker(chunking, embedder).opts,
        embedder=settings.embedder,
        live_collection=live.collection,
        live_ledger=live.ledger,
        live_chunking=Chunker(live_chunking, embedder).opts if same and reuse else None,
        qa=qa,
        margin=margin,
        force=force,
        keep=keep,
    )


def refuse_multi_tenant(cfg: WeaviateConfig) -> None:
    """Refuse a reindex of a multi-tenant store (:class:`ReindexRefusedError`).

    The coordinator accounts for one ledger; a switch of the alias moves every
    tenant at once, so a reindex that read one tenant's ledger would leave the
    others' documents behind in the old version. Until it walks every tenant, a
    multi-tenant store is rebuilt by re-ingesting into new collections.
    """
    if cfg.multi_tenancy:
        raise ReindexRefusedError(
            f"{cfg.collection} is multi-tenant: chunkweave reindex does not rebuild a "
            "multi-tenant store yet (a switch would move every tenant, and it accounts "
            "for one); point CHUNKWEAVE_WEAVIATE__COLLECTION and "
            "CHUNKWEAVE_WEAVIATE__LEDGER_COLLECTION at new names and re-ingest each "
            "tenant's documents instead"
        )


class SpecFactory:
    """Builds the spec against the live version (the CLI and the API pass one)."""

    def __init__(self, settings: Settings, **options: object) -> None:
        self.settings = settings
        self.options = options
        self.embedder: Embedder | None = None

    def __call__(self, live: IndexVersion) -> ReindexSpec:
        """Build the spec for ``live``."""
        self.embedder = self.embedder or make_embedder(self.settings.embedder)
        return build_spec(self.settings, live, embedder=self.embedder, **self.options)  # type: ignore[arg-type]


def rollback(settings: Settings) -> IndexVersion:
    """Point the aliases back at the previous version (refused while a reindex runs)."""
    cfg = settings.weaviate
    r = redis_client(settings)
    if r.get(keys.reindex(cfg.collection) + ":lock") is not None:
        raise ReindexRefusedError(f"a reindex of {cfg.collection} is running; rollback after it")
    with open_catalog(cfg) as catalog:
        restored = catalog.rollback()
    state = load_state(r, cfg.collection)
    if state is not None:
        save_state(
            r,
            state.model_copy(
                update={"phase": "rolled_back", "message": f"live: {restored.collection}"}
            ),
        )
    return restored


def prune(settings: Settings, keep: int) -> list[IndexVersion]:
    """Drop retired versions beyond the ``keep`` newest."""
    with open_catalog(settings.weaviate) as catalog:
        return catalog.prune(keep)


def versions(settings: Settings) -> list[IndexVersion]:
    """Every recorded version of the configured alias."""
    with open_catalog(settings.weaviate) as catalog:
        return catalog.versions()


def dry_run(settings: Settings, spec_for: SpecFactory) -> ReindexPlan:
    """Plan the reindex ``spec_for`` describes (nothing is written or locked)."""
    cfg = settings.weaviate
    refuse_multi_tenant(cfg)
    with open_catalog(cfg) as catalog:
        live = catalog.live()
        if live is None:
            raise ReindexRefusedError(f"{cfg.collection}: nothing to reindex (ingest first)")
        spec = spec_for(live)
        embedder = spec_for.embedder or target_embedder(spec, settings)
        entries = catalog.ledger_entries(live.ledger)
        store = None
        if spec.live_chunking is not None:
            store = open_version(cfg, live)
        try:
            return make_plan(
                entries,
                lambda source: fetched(source, settings),
                parse_opts=settings.parse,
                target_chunking=spec.chunking,
                embedder=embedder,
                live_store=store,
                live_chunking=spec.live_chunking,
            )
        finally:
            if store is not None:
                store.close()


def check_embedder(settings: Settings) -> None:
    """Refuse, naming ``chunkweave reindex``, an embedder that is not the live version's.

    Raises :class:`ReindexRefusedError`; nothing to check (no Weaviate URL, nothing
    stored yet) passes.
    """
    cfg = settings.weaviate
    if cfg.url is None or not reachable(cfg):
        return  # tasks report an unreachable store, as before
    try:
        with open_catalog(cfg) as catalog:
            live = catalog.live()
    except StoreError:
        return
    if live is None:
        return
    embedder = make_embedder(settings.embedder)
    mine = EmbedderIdentity(embedder.name, embedder.dimension)
    if mine != live.identity:
        raise ReindexRefusedError(
            f"{cfg.collection} ({live.collection}) holds vectors from {live.identity}, but this "
            f"worker's embedder is {mine}: {REINDEX_HINT}"
        )

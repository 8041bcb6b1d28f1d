"""``POST /reindex`` and ``GET /reindex``: a reindex started and followed over HTTP.

``POST /reindex`` with JSON ``{"strategy": ..., "max_tokens": ..., "min_tokens": ...,
"target_tokens": ..., "qa": [QA items], "margin": 0.02, "force": false, "keep": 1,
"reuse": true}`` (every field optional; chunk options default to the API's settings)
records the target, takes the one-reindex lock and sends the coordinator's first step
(``chunkweave.reindex_advance``) to the workers, which step it to the end. Answers
``202`` with the reindex state (its document jobs are ordinary jobs: ``GET /jobs/{id}``),
``409`` when a reindex runs already, nothing would change, or stored documents cannot
be rebuilt (their sources are gone, such as HTTP uploads deleted once stored: each is
named with why). ``"dry_run": true`` answers ``200`` with the plan instead (as
``chunkweave reindex --dry-run``, plus ``cannot_rebuild``: source -> why) and changes
nothing; ``"rollback": true`` points the alias back at the previous version (as
``--rollback``; no other field may be given with it). ``GET /reindex`` returns the
current or last state. Both are store-wide: they need the main token (a tenant's
token gets 403).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Response, status
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from chunkweave.chunking.models import Strategy
from chunkweave.storage.evaluate import QAItem
from chunkweave.storage.reindex.spec import MAX_QA
from chunkweave.worker.api.routes import EnqueuerDep, SettingsDep, require_main
from chunkweave.worker.settings import Settings

router = APIRouter(dependencies=[Depends(require_main)])


class ReindexRequest(BaseModel):
    """What ``POST /reindex`` accepts (unknown keys are refused)."""

    model_config = ConfigDict(extra="forbid")

    strategy: Strategy | None = None
    max_tokens: int | None = Field(default=None, gt=8)
    target_tokens: int | None = Field(default=None, gt=8)
    min_tokens: int | None = Field(default=None, ge=0)
    qa: list[QAItem] = Field(default_factory=list, max_length=MAX_QA)
    margin: float = Field(default=0.02, ge=0.0, le=1.0)
    force: bool = False
    keep: int = Field(default=1, ge=0)
    reuse: bool = True
    #: Plan only: what would be rebuilt, reused, embedded, and what cannot be rebuilt.
    dry_run: bool = False
    #: Point the alias back at the previous version instead.
    rollback: bool = False


def _start(settings: Settings, body: ReindexRequest, app: Any) -> dict[str, Any]:
    from chunkweave.worker import reindex as rx
    from chunkweave.worker.sources.rebuild import live_unrebuildable, refusal

    if body.rollback:
        if body.model_fields_set - {"rollback"}:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "rollback takes no options")
        from chunkweave.storage.errors import StoreError

        try:
            restored = rx.rollback(settings)
        except (rx.ReindexRefusedError, StoreError) as err:  # one runs; nothing to go back to
            raise HTTPException(status.HTTP_409_CONFLICT, str(err)) from err
        return {"rolled_back_to": restored.collection}

    given = {
        k: v
        for k, v in body.model_dump(
            include={"strategy", "max_tokens", "target_tokens", "min_tokens"}
        ).items()
        if v is not None
    }
    factory = rx.SpecFactory(
        settings,
        chunking=settings.chunking.model_copy(update=given),
        qa=tuple(body.qa),
        margin=body.margin,
        force=body.force,
        keep=body.keep,
        reuse=body.reuse,
    )
    try:
        gone = live_unrebuildable(settings)
        if body.dry_run:
            plan = rx.dry_run(settings, factory)
            return {**plan.model_dump(mode="json"), "cannot_rebuild": dict(gone)}
        if gone:
            raise rx.ReindexRefusedError(refusal(gone))
        state = rx.start(settings, factory)
    except rx.ReindexRefusedError as err:
        raise HTTPException(status.HTTP_409_CONFLICT, str(err)) from err
    app.send_task("chunkweave.reindex_advance", queue=settings.tasks.queue)
    return state.model_dump(mode="json")


@router.post("/reindex", status_code=status.HTTP_202_ACCEPTED)
async def post_reindex(
    body: ReindexRequest, settings: SettingsDep, enq: EnqueuerDep, response: Response
) -> dict[str, Any]:
    """Start a reindex on the workers, plan one, or roll back (see the module docstring)."""
    if body.dry_run or body.rollback:
        response.status_code = status.HTTP_200_OK  # done now, nothing left running
    return await run_in_threadpool(_start, settings, body, enq.app)


@router.get("/reindex")
async def get_reindex(settings: SettingsDep, enq: EnqueuerDep) -> dict[str, Any]:
    """Return the current or last reindex of the configured alias."""
    from chunkweave.worker.reindex import load_state

    state = await run_in_threadpool(load_state, enq.redis, settings.weaviate.collection)
    if state is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no reindex is known")
    return state.model_dump(mode="json")

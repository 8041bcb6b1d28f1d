"""``GET /healthz``: every part of the service, one overall status, no token.

Answers ``200 {"status": "ok", "parts": {...}}`` when every part is up, else ``503``
with ``"status": "unavailable"``. Each part is ``{"status": "ok" | "down" |
"restarting" | "starting"}``:

- ``redis``: a PING from this API process (1 s at most);
- ``weaviate``: its ``/v1/.well-known/ready`` (when a Weaviate is configured or found);
- under ``chunkweave serve``, the parts serve supervises as it last wrote them to
  ``supervise.health_file`` (:mod:`chunkweave.worker.supervise`): ``worker`` (with
  ``alive`` pool processes of ``expected``) and ``watcher``. A record older than
  :data:`STALE_S` seconds counts as ``down``: serve no longer updates it.

Open to anyone (load balancers), so it names states only: never an address, a path,
a port or an error text (those go to the API's log).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from chunkweave.worker.enqueue import Enqueuer
from chunkweave.worker.settings import Settings

log = logging.getLogger(__name__)
router = APIRouter()
#: Seconds after which serve's record of its parts is taken as serve gone.
STALE_S = 10.0
#: The parts serve reports; the servers are checked from here instead.
SERVE_PARTS = ("worker", "watcher")


def _state(request: Request) -> tuple[Settings, Enqueuer]:
    return request.app.state.settings, request.app.state.enqueuer


StateDep = Annotated[tuple[Settings, Enqueuer], Depends(_state)]


def _redis(enq: Enqueuer) -> str:
    import redis

    # A client of its own with short timeouts: a Redis that hangs (stopped, or something
    # else now on its port) makes this answer "down" in a second, never hang.
    url = enq.settings.redis_url.get_secret_value() if enq.settings.redis_url else ""
    client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
    try:
        client.ping()
    except Exception as err:  # noqa: BLE001 - any failure means down
        log.warning("healthz: Redis did not answer: %s", err)
        return "down"
    finally:
        client.close()
    return "ok"


def _weaviate(settings: Settings) -> str | None:
    if not settings.weaviate.url:
        return None
    from chunkweave.storage.stores import local_server_ready

    if local_server_ready(settings.weaviate.url):
        return "ok"
    log.warning("healthz: Weaviate is not ready")
    return "down"


def _served(settings: Settings) -> dict[str, dict[str, object]]:
    path = settings.supervise.health_file
    if path is None:
        return {}
    try:
        record = json.loads(path.read_text())
        at, parts = float(record["at"]), dict(record["parts"])
    except (OSError, ValueError, KeyError, TypeError):
        return {"worker": {"status": "starting"}}  # serve has not written it yet
    shown: dict[str, dict[str, object]] = {}
    for name in SERVE_PARTS:
        if isinstance(entry := parts.get(name), dict):
            shown[name] = {k: v for k, v in entry.items() if k in ("status", "alive", "expected")}
    if time.time() - at > STALE_S:
        log.warning("healthz: serve's record of its parts is %.0f s old", time.time() - at)
        shown = {name: {"status": "down"} for name in shown}
    return shown


@router.get("/healthz")
def healthz(state: StateDep) -> JSONResponse:
    """Each part's status and the overall one; 503 when any part is not ``ok``."""
    settings, enq = state
    parts: dict[str, dict[str, object]] = {"redis": {"status": _redis(enq)}}
    if (weaviate := _weaviate(settings)) is not None:
        parts["weaviate"] = {"status": weaviate}
    parts.update(_served(settings))
    ok = all(p.get("status") == "ok" for p in parts.values())
    body = {"status": "ok" if ok else "unavailable", "parts": parts}
    return JSONResponse(body, status_code=200 if ok else 503)

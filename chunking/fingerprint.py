"""The chunker fingerprint: which chunking produced a chunk.

Recorded on every chunk (``Chunk.chunker``) and in every chunk ID, so changing the
strategy, any option, the token counter or the chunking code version yields new
IDs instead of silently mixing chunkings in one index.
"""

from __future__ import annotations

import json

from chunkweave.chunking.ids import sha1_hex
from chunkweave.chunking.models import ChunkOptions

#: Bump whenever a code change alters the chunks produced for the same inputs.
CHUNKER_VERSION = "4"


def chunker_fingerprint(opts: ChunkOptions, counter_name: str) -> str:
    """``"<strategy>/v<version>/<12 hex>"``, the hex digest covering options + counter.

    ``opts`` should be resolved (see :func:`chunkweave.chunking.api.resolve_options`) so the
    fingerprint records the actual token budget.
    """
    # ``table_embed`` changes only table chunks' ``embed_text``, which their content
    # key (and so their ID) already covers: left out, so prose chunks keep their IDs.
    options = opts.model_dump(mode="json", exclude={"table_embed"})
    payload = json.dumps(
        {"options": options, "counter": counter_name},
        sort_keys=True,
        separators=(",", ":"),
    )
    return f"{opts.strategy}/v{CHUNKER_VERSION}/{sha1_hex(payload)[:12]}"

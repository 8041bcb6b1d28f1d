"""Chunk IDs and element digests for every corpus document, to show a refactor changed nothing.

``python -m bench.chunk_ids --out ids.json`` parses and chunks every PDF and DOCX of
``../shared/corpus`` and ``../shared/corpus-extra`` with the default options and the default
embedder's tokenizer, and writes per document: the chunk IDs in order, a SHA1 of the elements
and a SHA1 of the chunks (every field). ``--compare OLD.json`` then lists each document
whose IDs or digests differ from an earlier run, and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

from chunkweave.chunking import ChunkOptions, chunk_document, resolve_options
from chunkweave.chunking.models import TokenCounter
from chunkweave.parsers import parse_document
from chunkweave.parsers.errors import ParseError
from chunkweave.storage.config import EmbedderConfig
from chunkweave.storage.embedders import make_embedder

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def _digest(payload: object) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(text.encode()).hexdigest()


def document_record(
    path: Path, key: str, embedder: TokenCounter, max_tokens: int
) -> dict[str, object]:
    """Return the chunk IDs and digests of one document (or its parse error).

    The chunks name the document by ``key`` (its path below the shared folder), so the
    records do not depend on where the corpus sits.
    """
    try:
        doc = parse_document(path)
    except ParseError as err:
        return {"error": f"{type(err).__name__}: {err.reason}"}
    opts = resolve_options(ChunkOptions(), max_tokens)
    chunks = chunk_document(doc, opts, embedder, doc_id=path.name, source=key)
    return {
        "elements": _digest([e.model_dump(mode="json") for e in doc.elements]),
        "chunks": _digest([c.model_dump(mode="json") for c in chunks]),
        "ids": [c.id for c in chunks],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the records here (JSON)")
    parser.add_argument("--compare", type=Path, help="an earlier --out file to compare with")
    parser.add_argument(
        "--shared", type=Path, default=SHARED, help="the folder holding corpus/ and corpus-extra/"
    )
    args = parser.parse_args()
    embedder = make_embedder(EmbedderConfig())
    records: dict[str, object] = {}
    sets = (args.shared / "corpus", args.shared / "corpus-extra")
    files = [p for s in sets for p in sorted(s.rglob("*")) if p.suffix.lower() in {".pdf", ".docx"}]
    for i, path in enumerate(files, 1):
        start = time.perf_counter()
        key = str(path.relative_to(args.shared))
        records[key] = document_record(path, key, embedder, embedder.max_tokens)
        print(f"[{i}/{len(files)}] {key} {time.perf_counter() - start:.1f}s", file=sys.stderr)
    if args.out:
        args.out.write_text(json.dumps(records, indent=1, sort_keys=True))
    if not args.compare:
        return 0
    old = json.loads(args.compare.read_text())
    changed = sorted(k for k in old.keys() | records.keys() if old.get(k) != records.get(k))
    for key in changed:
        print(f"differs: {key}")
    print(f"{len(records)} documents, {len(changed)} differ")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())

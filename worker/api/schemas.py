"""Request and response bodies of the HTTP API, and the OpenAPI text of ``POST /jobs``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chunkweave.worker.jobs import JobState


class SourcesRequest(BaseModel):
    """Sources to ingest: files/folders the workers can read, or ``s3://`` URIs."""

    model_config = ConfigDict(extra="forbid")

    sources: list[str] = Field(min_length=1)
    force: bool = False
    webhook_url: str | None = None
    document_id: str | None = Field(
        default=None,
        description=(
            "Names the document (one source, one file): a later job with the same "
            "document_id replaces this version (unchanged chunks kept, stale ones "
            "removed); stored as doc id `doc://<document_id>`. Without it a document "
            "is identified by its path or URI, and an upload by its content."
        ),
    )
    metadata: dict[str, Any] | None = Field(
        default=None,
        description=(
            "Caller metadata for every document of the job: keys declared in "
            "CHUNKWEAVE_WEAVIATE__METADATA__FIELDS (string, number, bool, ISO date or "
            "list of strings) and the reserved `acl` (list of principals). Stored on "
            "every chunk, filterable in search; a local file's sidecar NAME.meta.json "
            "adds its own keys (these win). Unknown keys or bad values: 422."
        ),
        examples=[{"version": "3", "acl": ["team-x"]}],
    )
    tenant: str | None = Field(
        default=None,
        description=(
            "The tenant the documents go to (multi-tenancy on): 1-64 of A-Z a-z 0-9 _ -. "
            "A tenant-scoped token may name only its own (the default when it has one)."
        ),
    )


class UploadForm(BaseModel):
    """The ``multipart/form-data`` form of ``POST /jobs``: files to ingest."""

    file: list[bytes] = Field(description="One or more PDF/DOCX files.")
    webhook_url: str | None = None
    document_id: list[str] | None = Field(
        default=None,
        description=(
            "One per file, in order: names each uploaded document, so uploading a new "
            "version under the same name replaces the old one. Without it an upload "
            "is identified by its content (a new version is a new document)."
        ),
    )
    metadata: list[str] | None = Field(
        default=None,
        description=(
            "JSON objects of caller metadata (see the JSON body's `metadata`): one for "
            "every file, or one per file in order."
        ),
    )
    tenant: str | None = Field(default=None, description="The tenant the files go to.")


class JobPage(BaseModel):
    """A page of ``GET /jobs``; pass ``next_cursor`` back as ``cursor`` for the next."""

    jobs: list[JobState]
    next_cursor: float | None


class JobCreated(BaseModel):
    """The id of the job a request created."""

    job_id: str


def _binary_files(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI spells uploaded files as strings of format ``binary``."""
    schema["properties"]["file"]["items"] = {"type": "string", "format": "binary"}
    return schema


#: ``POST /jobs`` reads its body itself (JSON or multipart), so FastAPI cannot infer it.
JOBS_REQUEST_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": SourcesRequest.model_json_schema()},
            "multipart/form-data": {"schema": _binary_files(UploadForm.model_json_schema())},
        },
    }
}

"""OpenTelemetry traces of each document's way through chunkweave; nothing at all when off.

One trace per document: a ``receive`` span where a producer queues it (the HTTP API,
the watchers, ``enqueue``: :class:`chunkweave.worker.enqueue.Enqueuer`), carried in the
Celery message's headers (W3C ``traceparent``), continued by the task's span on the
worker, under which the pipeline's stages are spans of their own: ``parse``,
``chunk``, ``embed``, ``upsert``, ``prune`` and ``ledger``. Attributes are prefixed
``chunkweave.``: ``doc_id``, ``source``, ``bytes``, ``pages``, ``chunks``.

On only when the environment names an exporter as the OpenTelemetry SDK reads it:
``OTEL_TRACES_EXPORTER`` (``console``, ``otlp``, any installed exporter's name; comma
separated) or an OTLP endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``: ``otlp``); ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none`` turns it off. The SDK's other variables apply as usual
(``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_EXPORTER_OTLP_*``,
``OTEL_BSP_*``). Needs the ``otel`` extra (``pip install 'chunkweave[otel]'``).

Off, :func:`span` hands out one shared do-nothing context manager and OpenTelemetry
is never imported, so the hooks cost a dictionary look-up. Outside the four parts, like
:mod:`chunkweave.errors`, so every layer may import it; it imports none of them.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, cast

log = logging.getLogger(__name__)

#: What every span of chunkweave is recorded under (its instrumentation scope).
SCOPE = "chunkweave"
#: Prefix of the attributes chunkweave sets.
PREFIX = "chunkweave."
#: The exporter each ``OTEL_EXPORTER_OTLP_*PROTOCOL`` value means for ``otlp``.
_OTLP_ENTRY_POINTS = {"grpc": "otlp_proto_grpc", "http/protobuf": "otlp_proto_http"}

_OFF: AbstractContextManager[None] = nullcontext()
#: The process's tracer once configured (``False``: tracing is off; ``None``: not decided).
_tracer: Any = None
#: Open task spans by Celery task id: (span, context token).
_tasks: dict[str, tuple[Any, Any]] = {}


def exporter_names(env: Mapping[str, str] | None = None) -> list[str]:
    """Return the span exporters the environment configures (empty: tracing is off)."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = [n.strip() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()]
    if not names and (
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    ):
        names = ["otlp"]
    return [] if "none" in names else names


def enabled() -> bool:
    """Whether this process records spans (decided once, on first use)."""
    global _tracer
    if _tracer is None:
        names = exporter_names()
        _tracer = _configure(names) if names else False
    return _tracer is not False


def reset() -> None:
    """Forget the tracer so the next use reads the environment again (tests, forks)."""
    global _tracer
    if _tracer:
        provider = getattr(_tracer, "provider", None)
        if provider is not None:
            provider.shutdown()
    _tracer = None


def _configure(names: list[str]) -> Any:
    """Build the tracer for ``names`` (``False`` when the SDK is missing: tracing stays off)."""
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        log.warning(
            "OTEL_* variables configure tracing but the OpenTelemetry SDK is not installed "
            "(pip install 'chunkweave[otel]'): tracing is off"
        )
        return False
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):  # the application configured its own: use it
        return _Tracer(current.get_tracer(SCOPE), None)
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "chunkweave"}))
    provider = TracerProvider(resource=resource)
    for name in names:
        exporter = _exporter(name)
        # The console's lines appear as each span ends; the others go out in batches.
        processor = SimpleSpanProcessor if name == "console" else BatchSpanProcessor
        provider.add_span_processor(processor(exporter))
    return _Tracer(provider.get_tracer(SCOPE), provider)


def _exporter(name: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        # One JSON object per line on the process's own standard output (a Celery
        # worker redirects ``sys.stdout`` into its log, a line at a time).
        return ConsoleSpanExporter(
            out=sys.__stdout__ or sys.stdout,
            formatter=lambda span: span.to_json(indent=None) + os.linesep,
        )
    if name == "otlp":
        protocol = os.environ.get(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        )
        name = _OTLP_ENTRY_POINTS.get(protocol, "otlp_proto_http")
    from importlib.metadata import entry_points

    found = entry_points(group="opentelemetry_traces_exporter", name=name)
    if not found:
        raise ValueError(f"OTEL_TRACES_EXPORTER names {name!r}: no such exporter installed")
    return next(iter(found)).load()()


class _Tracer:
    """The OpenTelemetry tracer and the provider built for it (``None``: the application's)."""

    def __init__(self, tracer: Any, provider: Any) -> None:
        self.tracer = tracer
        self.provider = provider


def _attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    return {PREFIX + k: v for k, v in values.items() if v is not None}


def span(name: str, **attributes: Any) -> AbstractContextManager[None]:
    """Return a context manager recording the block as span ``name`` (a child of the current).

    ``attributes`` are set with the ``chunkweave.`` prefix (``None`` values left out).
    An exception leaving the block is recorded on the span and marks it an error. Off,
    a shared do-nothing context manager.
    """
    if not enabled():
        return _OFF
    return _tracer.tracer.start_as_current_span(name, attributes=_attributes(attributes))


def annotate(**attributes: Any) -> None:
    """Set ``attributes`` (``chunkweave.``-prefixed) on the current span, if one records."""
    if not enabled():
        return
    from opentelemetry import trace

    trace.get_current_span().set_attributes(_attributes(attributes))


@contextmanager
def _root(name: str, attributes: dict[str, Any]) -> Iterator[None]:
    from opentelemetry import context, trace

    caller = trace.get_current_span().get_span_context()
    links = [trace.Link(caller)] if caller.is_valid else []
    with _tracer.tracer.start_as_current_span(
        name,
        context=context.Context(),  # a trace of its own, linked to the caller's span
        kind=trace.SpanKind.PRODUCER,
        attributes=_attributes(attributes),
        links=links,
    ):
        yield


def receive(doc_id: str, source: str) -> AbstractContextManager[None]:
    """Return a context manager recording the ``receive`` span: the root of a document's trace.

    A task sent inside the block carries the trace in its headers (:func:`connect_celery`).
    ``bytes`` is the file's size when ``source`` is a local path.
    """
    if not enabled():
        return _OFF
    size = None
    if "://" not in source:
        try:
            size = os.stat(source).st_size
        except OSError:
            size = None
    return _root("receive", {"doc_id": doc_id, "source": source, "bytes": size})


def connect_celery() -> None:
    """Carry traces through Celery: into a message's headers when sent, out when it runs.

    Each task runs in a span named after it, the child of the span that sent it (a
    document's ``receive``, or the task that fanned it out). Nothing is connected when
    tracing is off.
    """
    if not enabled():
        return
    from celery.signals import before_task_publish, task_postrun, task_prerun

    before_task_publish.connect(_inject_headers, weak=False)
    task_prerun.connect(_task_started, weak=False)
    task_postrun.connect(_task_ended, weak=False)


def disconnect_celery() -> None:
    """Undo :func:`connect_celery` (tests that switch tracing on and off)."""
    if "celery.signals" not in sys.modules:
        return
    from celery.signals import before_task_publish, task_postrun, task_prerun

    before_task_publish.disconnect(_inject_headers)
    task_prerun.disconnect(_task_started)
    task_postrun.disconnect(_task_ended)


def _inject_headers(headers: dict[str, Any] | None = None, **_: Any) -> None:
    if not enabled():
        return
    from opentelemetry import propagate, trace

    if headers is not None and trace.get_current_span().get_span_context().is_valid:
        propagate.inject(headers)


class _RequestGetter:
    """Reads propagation fields from a Celery request (message headers become attributes).

    An OpenTelemetry ``Getter`` in all but its base class (not imported while off).
    """

    def get(self, carrier: Any, key: str) -> list[str] | None:
        value = getattr(carrier, key, None)
        if value is None and isinstance(getattr(carrier, "headers", None), dict):
            value = carrier.headers.get(key)
        return None if value is None else [str(value)]

    def keys(self, carrier: Any) -> list[str]:
        return []


def _task_started(
    task_id: str | None = None, task: Any = None, kwargs: Mapping[str, Any] | None = None, **_: Any
) -> None:
    if task_id is None or task is None or not enabled():
        return
    from opentelemetry import context, propagate, trace

    parent = propagate.extract(task.request, getter=cast(Any, _RequestGetter()))
    kwargs = kwargs or {}
    started = _tracer.tracer.start_span(
        task.name,
        context=parent,
        kind=trace.SpanKind.CONSUMER,
        attributes=_attributes({"doc_id": kwargs.get("doc_id"), "source": kwargs.get("source")}),
    )
    token = context.attach(trace.set_span_in_context(started))
    _tasks[task_id] = (started, token)


def _task_ended(task_id: str | None = None, retval: Any = None, **_: Any) -> None:
    opened = _tasks.pop(task_id or "", None)
    if opened is None:
        return
    from opentelemetry import context

    started, token = opened
    if isinstance(retval, Mapping):  # a document task's summary; pages and chunks are set
        started.set_attributes(_attributes({"status": retval.get("status")}))  # by the commit
    elif isinstance(retval, BaseException):  # a retry, or a failure the task did not record
        from opentelemetry.trace import Status, StatusCode

        started.record_exception(retval)
        started.set_status(Status(StatusCode.ERROR, type(retval).__name__))
    started.end()
    context.detach(token)
    flush()  # a pool child may be recycled without a clean exit


def flush() -> None:
    """Export the spans ended so far now (a process about to end without ``atexit``)."""
    if _tracer and _tracer.provider is not None:
        _tracer.provider.force_flush()

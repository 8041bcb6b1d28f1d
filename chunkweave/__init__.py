"""chunkweave for other applications: ``from chunkweave import enqueue``.

``enqueue(*sources, force=False, webhook_url=None)`` queues files, folders or
``s3://bucket/prefix`` sources for the worker service and returns a job id; see
:func:`chunkweave.worker.enqueue.enqueue`. Job state: ``chunkweave status JOB`` or the HTTP API.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

__all__ = ["enqueue"]

_PARTS = ("parsers", "chunking", "storage", "worker")


def _check_parts() -> None:
    """Raise ImportError unless every ``chunkweave/<part>`` is a folder.

    In the repository they are symlinks to the top-level folders; a checkout made
    without symlink support leaves each as a small text file naming its target, and
    every import of a part would then fail with a puzzling "not a package".
    """
    here = os.path.dirname(os.path.abspath(__file__))
    broken = [part for part in _PARTS if not os.path.isdir(os.path.join(here, part))]
    if broken:
        names = ", ".join(f"chunkweave/{part}" for part in broken)
        raise ImportError(
            f"{names} in {here} should be a folder (a symlink to ../<part> in the "
            "repository) but is not: this checkout was made without symlink support. "
            "Enable symlinks (`git config core.symlinks true`; on Windows also Developer "
            "Mode), delete those files and run `git checkout -- chunkweave`; or install "
            "a wheel or sdist built where symlinks work (`python -m build`): they hold "
            "real folders. `pip install .` from this checkout would leave the parts out."
        )


_check_parts()

if TYPE_CHECKING:
    from chunkweave.worker.enqueue import enqueue
else:

    def enqueue(*sources: Any, **kwargs: Any) -> str:
        """Queue sources for ingestion; see :func:`chunkweave.worker.enqueue.enqueue`."""
        # Imported on call so `import chunkweave` stays cheap (no Celery, no boto3).
        from chunkweave.worker.enqueue import enqueue as _enqueue

        return _enqueue(*sources, **kwargs)

"""Build the real Weaviate server from its Go module and cache it by version.

The server is built once with ``go install`` and cached under the user's cache
directory (outside any clone, so CI runs in fresh clones reuse it). The build is
profile-guided (``go install -pgo``) with ``weaviate.pgo`` (next to this module), a CPU profile of
chunkweave's own write-heavy workload recorded by ``bench/weaviate_profile.py``:
bench/weaviate_pgo.py measured 7-15% less server CPU per insert than a plain build
(1.12-1.22x the rate). ``CHUNKWEAVE_WEAVIATE_PGO=off`` builds (and uses) the plain
binary instead.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from platformdirs import user_cache_dir

from chunkweave.storage.server_process import LocalServiceError

#: The Weaviate version we build and test against. v1.36+ need
#: github.com/weaviate/sroar >= v0.0.18, which the Go module proxy does not serve.
PINNED_VERSION = "1.35.2"
GO_PACKAGE = "github.com/weaviate/weaviate/cmd/weaviate-server"
BINARY_NAME = "weaviate-server"
#: CPU profile for the profile-guided build (see the module docstring).
PGO_PROFILE = Path(__file__).with_name("weaviate.pgo")


class LocalWeaviateError(LocalServiceError):
    """The local Weaviate could not be built, started or reached."""


def pgo_profile(guided: bool = True) -> Path | None:
    """Return the profile the build uses (``None``: unguided, none shipped, or PGO off).

    ``CHUNKWEAVE_WEAVIATE_PGO=off`` switches it off.
    """
    if not guided or os.environ.get("CHUNKWEAVE_WEAVIATE_PGO", "").lower() in (
        "off",
        "0",
        "false",
        "no",
    ):
        return None
    return PGO_PROFILE if PGO_PROFILE.is_file() else None


def binary_path(version: str = PINNED_VERSION, *, guided: bool = True) -> Path:
    """Where the server binary for ``version`` lives (it may not exist yet).

    ``guided=False`` names the plain build even where a profile is shipped.
    """
    return _binary_for(version, pgo_profile(guided))


def _binary_for(version: str, profile: Path | None) -> Path:
    # A profile-guided build lives in its own folder named after the profile's
    # digest, so a new profile gets a new build and never a stale one.
    flavour = f"v{version}"
    if profile is not None:
        flavour += f"-pgo-{hashlib.sha256(profile.read_bytes()).hexdigest()[:12]}"
    return Path(user_cache_dir("chunkweave")) / "weaviate" / flavour / BINARY_NAME


def ensure_binary(
    version: str = PINNED_VERSION,
    *,
    guided: bool = True,
    echo: Callable[[str], None] | None = None,
) -> Path:
    """Return the cached binary for ``version``, building it first if missing."""
    path = binary_path(version, guided=guided)
    if path.is_file():
        return path
    return build(version, guided=guided, echo=echo)


def build(
    version: str = PINNED_VERSION,
    *,
    guided: bool = True,
    echo: Callable[[str], None] | None = None,
) -> Path:
    """Build the server with ``go install`` into the cache and return its path.

    Profile-guided unless ``guided`` is false (see :func:`pgo_profile`). Builds into
    a temporary ``GOBIN`` next to the final path and renames the result into place,
    so a reader never sees a half-written binary. A lock file makes concurrent
    builders wait for the first one instead of racing. ``echo`` receives progress
    lines (the Go tool's output); default: stderr.
    """
    say = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    profile = pgo_profile(guided)
    final = _binary_for(version, profile)
    final.parent.mkdir(parents=True, exist_ok=True)
    go = shutil.which("go")
    if go is None:
        raise LocalWeaviateError(
            f"cannot build Weaviate v{version}: the Go toolchain ('go') is not on PATH; "
            f"install Go, or put a weaviate-server binary at {final}, "
            "or set CHUNKWEAVE_WEAVIATE__URL to use a running server"
        )
    with open(final.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if final.is_file():  # another process built it while we waited
            return final
        gobin = Path(tempfile.mkdtemp(prefix=".build-", dir=final.parent))
        try:
            pgo = [f"-pgo={profile}"] if profile is not None else []
            how = f", profile-guided by {profile.name}" if profile is not None else ""
            say(f"building Weaviate v{version} with go install{how} (first run only; minutes)...")
            env = {**os.environ, "CGO_ENABLED": "0", "GOBIN": str(gobin)}
            cmd = [go, "install", "-v", *pgo, f"{GO_PACKAGE}@v{version}"]
            proc = subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            assert proc.stdout is not None
            tail: list[str] = []
            for line in proc.stdout:
                tail = [*tail[-19:], line.rstrip()]
                say(line.rstrip())
            if proc.wait() != 0:
                raise LocalWeaviateError(
                    f"go install of Weaviate v{version} failed (exit {proc.returncode}):\n"
                    + "\n".join(tail)
                )
            os.replace(gobin / BINARY_NAME, final)
        finally:
            shutil.rmtree(gobin, ignore_errors=True)
    say(f"built {final}")
    return final

"""An exclusive lock file, so that parallel processes (pytest-xdist workers, several ``hhe-gen``
commands) build one cache entry once (the Go peer, synthesis results, Verilator models)."""

from __future__ import annotations

import contextlib
from pathlib import Path

__all__ = ["locked"]


@contextlib.contextmanager
def locked(path):
    """Hold an exclusive POSIX lock on the file ``path`` (created with its folder) for the body.

    Where fcntl is missing (not POSIX) the body runs unlocked: at worst two processes do the same
    job.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

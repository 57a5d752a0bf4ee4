"""An exclusive lock file, so that parallel processes (pytest-xdist workers, several ``hhe-gen``
commands) build one cache entry once (the Go peer, synthesis results, Verilator models)."""

from __future__ import annotations

import contextlib
from pathlib import Path

__all__ = ["locked", "try_locked"]


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


@contextlib.contextmanager
def try_locked(path):
    """Take the lock of :func:`locked` if no other process holds it: yields True when taken (held
    for the body), False when another process holds it (nothing held)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield True
        return
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

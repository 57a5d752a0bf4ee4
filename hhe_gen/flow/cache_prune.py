"""Keeping a build cache within a size: the entries used least recently go first.

hhe-gen keeps what it builds (synthesis runs, Verilator models, whole SoCs) in caches of entries,
one folder each, under ``~/.cache/hhe-gen``.  A build holds its entry's lock file while it fills
or reads the entry, and marks the entry used (:func:`mark_used`).  A whole-SoC build with its
Verilator model is gigabytes, so the caches that hold them are pruned after each new build to
:func:`budget_bytes` (``$HHE_GEN_CACHE_MAX_GB`` per cache, default 20; a ``cache_dir`` a caller
passes instead is never pruned); ``hhe-gen cache`` shows and prunes every cache.

    entries(root) -> [CacheEntry]                         newest use first
    prune(root, lock_of, max_bytes=..., older_than=...)   -> [CacheEntry] removed

An entry whose lock another process holds is never removed (it is being built or read).

Parameters (of :func:`prune`)
-----------------------------
root : Path          the cache: every folder in it not starting with ``.`` is an entry (``locks``
                     excepted)
lock_of : callable   entry folder -> its lock file
max_bytes : int      keep the entries used last while their total stays within this
older_than : float   seconds: also remove the entries not used for longer
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.flow.filelock import try_locked
from hhe_gen.params.errors import ParameterError

__all__ = ["CacheEntry", "entries", "prune", "mark_used", "budget_bytes", "prune_to_budget", "folder_bytes",
           "sibling_lock"]

DEFAULT_BUDGET_GB = 20.0
"""Per cache, when ``$HHE_GEN_CACHE_MAX_GB`` is not set: a few whole-SoC builds."""


@dataclass(frozen=True)
class CacheEntry:
    """One entry of a cache.

    Members
    -------
    path : Path        its folder
    bytes : int        disk space it takes (allocated blocks)
    last_used : float  seconds since the epoch: the folder's modification time (:func:`mark_used`)
    """
    path: Path
    bytes: int
    last_used: float


def folder_bytes(folder: Path) -> int:
    """Disk space of ``folder`` and everything in it (allocated blocks; links not followed)."""
    total, stack = 0, [str(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
        except OSError:
            continue
    return total


def entries(root) -> list[CacheEntry]:
    """The entries of the cache ``root``, the most recently used first ([] when it does not exist)."""
    root = Path(root)
    if not root.is_dir():
        return []
    out = []
    for p in root.iterdir():
        if p.name.startswith(".") or p.name == "locks" or not p.is_dir() or p.is_symlink():
            continue
        out.append(CacheEntry(p, folder_bytes(p), p.stat().st_mtime))
    return sorted(out, key=lambda e: e.last_used, reverse=True)


def sibling_lock(folder) -> Path:
    """The lock file of an entry that the Verilator, testbench and SoC caches use: ``.<name>.lock``
    beside the entry's folder."""
    folder = Path(folder)
    return folder.parent / f".{folder.name}.lock"


def mark_used(folder) -> None:
    """Mark a cache entry used now (its folder's modification time)."""
    try:
        os.utime(folder)
    except OSError:
        pass


def prune(root, lock_of, *, max_bytes: int | None = None, older_than: float | None = None, keep=(),
          now: float | None = None) -> list[CacheEntry]:
    """Remove the entries of ``root`` over ``max_bytes`` (the least recently used first) or unused
    for ``older_than`` seconds (module docstring), except the folders in ``keep``; returns the
    entries removed."""
    if max_bytes is not None and max_bytes < 0:
        raise ParameterError("max_bytes", max_bytes, ">= 0")
    if older_than is not None and older_than < 0:
        raise ParameterError("older_than", older_than, ">= 0 seconds")
    now = time.time() if now is None else now
    keep = {Path(k).resolve() for k in ([keep] if isinstance(keep, (str, Path)) else keep)}
    removed, kept = [], 0
    for entry in entries(root):
        too_old = older_than is not None and now - entry.last_used > older_than
        too_big = max_bytes is not None and kept + entry.bytes > max_bytes
        if not (too_old or too_big) or entry.path.resolve() in keep:
            kept += entry.bytes
            continue
        with try_locked(lock_of(entry.path)) as free:
            if not free:                         # being built or read: it stays
                kept += entry.bytes
                continue
            shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry)
    return removed


def budget_bytes() -> int:
    """Bytes each pruned cache may keep: ``$HHE_GEN_CACHE_MAX_GB`` (GB, 10^9 bytes), default
    :data:`DEFAULT_BUDGET_GB`."""
    text = os.environ.get("HHE_GEN_CACHE_MAX_GB")
    try:
        gb = DEFAULT_BUDGET_GB if text is None else float(text)
    except ValueError:
        gb = -1.0
    if not gb >= 0:
        raise ParameterError("HHE_GEN_CACHE_MAX_GB", text, "a number of gigabytes >= 0")
    return int(gb * 1e9)


def prune_to_budget(root, lock_of, keep) -> list[CacheEntry]:
    """:func:`prune` ``root`` to :func:`budget_bytes` after the entry ``keep`` was built (it stays)."""
    return prune(root, lock_of, max_bytes=budget_bytes(), keep=keep)

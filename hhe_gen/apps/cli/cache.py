"""``hhe-gen cache``: what the build caches hold, and pruning them.

    hhe-gen cache [--prune] [--max-gb G] [--older-than DAYS] [--json FILE]

Lists each cache (synthesis runs, Verilator models, SoC builds: :func:`caches`) with its folder,
entries and size; ``--prune`` removes from each the entries used least recently beyond ``--max-gb``
(default ``$HHE_GEN_CACHE_MAX_GB`` or 20) and those unused for ``--older-than`` days
(:mod:`hhe_gen.flow.cache_prune`).  An entry a running build holds is never removed.  The SoC and
Verilator caches are also pruned to that budget after each new build.
"""

from __future__ import annotations

import time

from .common import write_json_output

__all__ = ["register", "caches"]


def caches() -> dict:
    """Cache name -> (folder, lock of an entry)."""
    from hhe_gen.flow.cache_prune import sibling_lock
    from hhe_gen.flow.synth_cache import cache_root as synth_root, entry_lock
    from hhe_gen.flow.verilator import cache_root as verilator_root
    from hhe_gen.soc.soc_build import soc_cache_root
    return {"synthesis": (synth_root(), entry_lock), "verilator": (verilator_root(), sibling_lock),
            "soc": (soc_cache_root(), sibling_lock)}


def register(sub) -> None:
    """Add ``cache``."""
    p = sub.add_parser("cache", help="show the build caches (synthesis, Verilator, SoC) and prune them")
    p.add_argument("--prune", action="store_true", help="remove the entries used least recently beyond --max-gb "
                   "and those older than --older-than")
    p.add_argument("--max-gb", type=float, help="gigabytes each cache keeps when pruning (default: "
                   "$HHE_GEN_CACHE_MAX_GB or 20)")
    p.add_argument("--older-than", type=float, metavar="DAYS", help="when pruning, also remove entries unused "
                   "for this many days")
    p.add_argument("--json", help="write the listing (and what was removed) as JSON")
    p.set_defaults(func=_cache)


def _cache(args) -> int:
    from hhe_gen.apps.report import console, print_table
    from hhe_gen.flow.cache_prune import budget_bytes, entries, prune
    from hhe_gen.params.errors import ParameterError
    if args.max_gb is not None and not args.max_gb >= 0:
        raise ParameterError("--max-gb", args.max_gb, "a number of gigabytes >= 0")
    if args.older_than is not None and not args.older_than >= 0:
        raise ParameterError("--older-than", args.older_than, "a number of days >= 0")
    report, rows, now = {}, [], time.time()
    for name, (root, lock_of) in caches().items():
        removed = []
        if args.prune:
            max_bytes = budget_bytes() if args.max_gb is None else int(args.max_gb * 1e9)
            removed = prune(root, lock_of, max_bytes=max_bytes,
                            older_than=None if args.older_than is None else args.older_than * 86400)
        held = entries(root)
        size = sum(e.bytes for e in held)
        oldest = f"{(now - held[-1].last_used) / 86400:.1f}" if held else "-"
        rows.append((name, str(root), str(len(held)), f"{size / 1e9:.2f}", oldest,
                     f"{len(removed)} ({sum(e.bytes for e in removed) / 1e9:.2f} GB)" if args.prune else "-"))
        report[name] = {"folder": str(root), "entries": len(held), "bytes": size,
                        "removed": [{"folder": str(e.path), "bytes": e.bytes} for e in removed]}
    print_table("hhe-gen caches", ["cache", "folder", "entries", "GB", "oldest use (days)", "removed"], rows)
    if not args.prune:
        console.print("prune with: hhe-gen cache --prune [--max-gb G] [--older-than DAYS]")
    if args.json:
        write_json_output(report, args.json)
    return 0

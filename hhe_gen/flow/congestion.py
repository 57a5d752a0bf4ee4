"""Where nextpnr's router2 finds too few wires: its congestion heatmaps summed by module.

``nextpnr-ecp5 --router2-heatmap PREFIX`` writes, after each routing iteration k,
``PREFIX_congestion_by_net_<k>.csv``: one line ``net,overuse`` per net that uses an overused
wire.  Yosys keeps the hierarchy in a flattened net's name (``hhe_accel.sampler_unit.xof.pos_LUT4_...``;
LiteX's own signals are flat: ``<top>_<soc>_ethcore_mac_...``), so summing the overuse by name
prefix says which units a design that does not route is congested in.

    by_module = congestion_by_module(read_net_heatmap(path), depth=3)
    summary = summarise_heatmaps(folder, prefix="heat")   # the last iteration with overuse

Module names: a dotted name keeps its first ``depth`` parts (the last one without Yosys' cell
suffixes, :func:`.synth_reports.without_cell_suffix`, and without a bit index); a flat name
becomes ``soc:`` and its first two words after LiteX's ``elaborate_with_firmware_`` and
``<name>soc_`` prefixes (``soc:ethcore_mac``, ``soc:builder_csr``); the slices of a LiteX memory
(``storage_10.0.1_DO_1``) are the memory's (``soc:storage_10``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from hhe_gen.flow.synth_reports import without_cell_suffix
from hhe_gen.params.errors import ParameterError

__all__ = ["HEATMAP_PREFIX", "read_net_heatmap", "module_of", "congestion_by_module", "summarise_heatmaps"]

HEATMAP_PREFIX = "heat/router2"
"""``--router2-heatmap`` prefix the SoC flow passes (relative to its work folder)."""

_SOC_PREFIX = re.compile(r"^(elaborate_with_firmware_)?([a-z0-9]+soc_)*")
_BY_NET = re.compile(r"_congestion_by_net_(\d+)\.csv$")


def read_net_heatmap(path) -> list[tuple[str, int]]:
    """``(net, overuse)`` of one ``*_congestion_by_net_<k>.csv`` (a net name may hold commas)."""
    rows = []
    for line in Path(path).read_text().splitlines():
        name, sep, count = line.rpartition(",")
        if sep and count.strip().isdigit():
            rows.append((name, int(count)))
    return rows


def module_of(net: str, depth: int = 3) -> str:
    """The module a net belongs to (module docstring)."""
    if not isinstance(depth, int) or depth < 1:
        raise ParameterError("depth", depth, "an integer >= 1 (hierarchy levels kept)")
    name = re.sub(r"\[\d+\]$", "", net.lstrip("\\"))
    parts = name.split(".")
    cut = next((i for i, part in enumerate(parts) if i and part[:1].isdigit()), len(parts))
    name = ".".join(parts[:cut])                  # a memory's slices (storage_10.0.1_DO_1): the memory
    if "." in name:
        parts = name.split(".")[:depth]
        parts[-1] = without_cell_suffix(parts[-1]) or parts[-1]
        return ".".join(parts)
    words = without_cell_suffix(_SOC_PREFIX.sub("", name)).split("_")
    return "soc:" + "_".join(w for w in words[:2] if w)


def congestion_by_module(rows, depth: int = 3) -> list[dict]:
    """Overuse summed by :func:`module_of`, the most congested first: ``module``, ``overuse``,
    ``share`` (of the total, 0..1) and ``nets``."""
    overuse, nets = defaultdict(int), defaultdict(int)
    for net, count in rows:
        key = module_of(net, depth)
        overuse[key] += count
        nets[key] += 1
    total = sum(overuse.values())
    out = [{"module": k, "overuse": v, "share": round(v / total, 4) if total else 0.0, "nets": nets[k]}
           for k, v in overuse.items()]
    return sorted(out, key=lambda d: (-d["overuse"], d["module"]))


def summarise_heatmaps(folder, prefix: str = "router2", *, depth: int = 3, top: int = 12,
                       remove: bool = False) -> dict | None:
    """The congestion of the last router2 iteration that had any, by module (``top`` modules):
    ``{"iteration": k, "overuse": total, "modules": [...]}``; None when no heatmap has overuse.
    ``remove``: delete the heatmap files afterwards (they are megabytes per iteration)."""
    folder = Path(folder)
    files = sorted(((int(m.group(1)), p) for p in folder.glob(f"{prefix}_congestion_by_net_*.csv")
                    if (m := _BY_NET.search(p.name))), reverse=True)
    summary = None
    for iteration, path in files:
        rows = read_net_heatmap(path)
        if rows:
            modules = congestion_by_module(rows, depth)
            summary = {"iteration": iteration, "overuse": sum(m["overuse"] for m in modules),
                       "modules": modules[:top]}
            break
    if remove:
        for p in folder.glob(f"{prefix}_*.csv"):
            p.unlink()
    return summary

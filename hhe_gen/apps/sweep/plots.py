"""The sweep's plots (PNG, matplotlib's Agg backend): Pareto fronts of area against speed, and the
post-route Fmax of each nextpnr option set and seed.

* ``pareto_lut_vs_time.png``: LUTs against the time of one item, cycles x clock period (us), one
  colour per device (ECP5 LUT4 and Xilinx LUT6 are not comparable, so each device has its own
  front); the Pareto-optimal points (no other point of the device has fewer LUTs and a shorter
  time) joined by a line and ringed.  Without any Fmax (a Yosys-only sweep) the x axis is the
  cycles alone.
* ``pareto_dsp_vs_throughput.png``: DSP blocks against items per second (per cycle without an
  Fmax); the front: no other point has fewer DSPs and a higher throughput.
* ``fmax_by_seed.png`` (sweeps with place and route): the distribution of the timing-closure runs,
  one panel per design (at most :data:`MAX_PANELS`): Fmax against the nextpnr seed, one line per
  option set (nextpnr set x synth set), the design's best (:func:`~.best.select_best`) starred and
  labelled.

A plot whose figures no point has is skipped, with a note saying why.
"""

from __future__ import annotations

import math
from pathlib import Path

from .best import select_best
from .records import is_number as _num

__all__ = ["pareto_front", "write_plots", "PLOT_FILES", "MAX_PANELS"]

PLOT_FILES = ("pareto_lut_vs_time.png", "pareto_dsp_vs_throughput.png", "fmax_by_seed.png")
#: designs drawn in fmax_by_seed.png (the first ones of the spec; the title says when there are more)
MAX_PANELS = 24


def pareto_front(points, x, y, *, x_larger_better=False, y_larger_better=False) -> list:
    """The points of ``points`` (dicts) that no other point dominates on keys ``x`` and ``y`` (smaller
    is better unless said otherwise; a point equal on both to an earlier one is left out), sorted by x."""
    sx = -1 if x_larger_better else 1
    sy = -1 if y_larger_better else 1
    front, best = [], None
    for p in sorted(points, key=lambda p: (sx * p[x], sy * p[y])):
        if best is None or sy * p[y] < best:
            front.append(p)
            best = sy * p[y]
    return sorted(front, key=lambda p: p[x])


def write_plots(records, out_dir) -> tuple[list[Path], list[str]]:
    """Draw the plots of the ``ok`` records into ``out_dir``.

    Returns
    -------
    (written files, notes about the plots skipped)
    """
    ok = [r for r in records if r.get("status") == "ok"]
    written, notes = [], []
    out_dir = Path(out_dir)
    timed = any(_num(r.get("time_us")) for r in ok)
    for name, x, xlabel, y, ylabel, x_larger in (
            (PLOT_FILES[0], "time_us" if timed else "cycles",
             "cycles x clock period (us)" if timed else "cycles (no Fmax: Yosys only)", "lut", "LUTs", False),
            (PLOT_FILES[1], "throughput_per_s" if timed else "per_cycle",
             "throughput (items/s)" if timed else "throughput (items per cycle; no Fmax: Yosys only)",
             "dsp", "DSP blocks", True)):
        pts = [r for r in ok if _num(r.get(x)) and _num(r.get(y))]
        if not pts:
            notes.append(f"{name} not drawn: no ok point has {x} and {y}")
            continue
        units = sorted({r.get("throughput_unit", "") for r in pts}) if "throughput" in x or x == "per_cycle" else []
        if units:
            xlabel = xlabel.replace("items", "/".join(units))
        written.append(_pareto_plot(pts, out_dir / name, x, xlabel, y, ylabel, x_larger))
    routed = [r for r in ok if _num(r.get("fmax_mhz")) and r.get("seed") is not None]
    if routed:
        written.append(_fmax_plot(routed, out_dir / PLOT_FILES[2]))
    else:
        notes.append(f"{PLOT_FILES[2]} not drawn: no point was placed and routed (place_and_route: false)")
    return written, notes


def _figure(nrows=1, ncols=1, size=(8, 5.5), squeeze=True):
    from hhe_gen.flow.extras import require
    require("plots", "drawing a plot")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(nrows, ncols, figsize=size, squeeze=squeeze)
    return plt, fig, ax


def _save(plt, fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    tmp.replace(path)          # whole or not at all
    return path


def _pareto_plot(points, path, x, xlabel, y, ylabel, x_larger_better) -> Path:
    plt, fig, ax = _figure()
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, device in enumerate(dict.fromkeys(r["device"] for r in points)):
        mine = [r for r in points if r["device"] == device]
        colour = colours[i % len(colours)]
        ax.scatter([r[x] for r in mine], [r[y] for r in mine], color=colour, alpha=0.5, s=20, label=device)
        front = pareto_front(mine, x, y, x_larger_better=x_larger_better)
        ax.plot([r[x] for r in front], [r[y] for r in front], color=colour, linewidth=1.2,
                label=f"{device} Pareto front ({len(front)})")
        ax.scatter([r[x] for r in front], [r[y] for r in front], facecolors="none", edgecolors=colour, s=90,
                   linewidths=1.5)
        for r in front:
            ax.annotate(r["design"].replace(f" {device}", ""), (r[x], r[y]), fontsize=7, xytext=(4, 4),
                        textcoords="offset points")
    if all(r[x] > 0 for r in points) and max(r[x] for r in points) > 20 * min(r[x] for r in points):
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{ylabel} against {xlabel.split(' (')[0]}: {len(points)} points")
    return _save(plt, fig, path)


def _fmax_plot(points, path) -> Path:
    """Fmax by seed, a panel per design and a line per option set (nextpnr set x synth set), the best starred."""
    designs = [d for d in select_best(points) if d["best"] is not None]
    shown = designs[:MAX_PANELS]
    ncols = min(3, len(shown))
    nrows = math.ceil(len(shown) / ncols)
    plt, fig, axes = _figure(nrows, ncols, (max(8.0, 5.2 * ncols), 1.0 + 3.8 * nrows), squeeze=False)
    seeds = sorted({r["seed"] for r in points})
    for i, entry in enumerate(shown):
        ax = axes[i // ncols][i % ncols]
        series = {}
        for r in points:
            if r["design"] == entry["design"]:
                name = " | ".join(n for n in (r.get("nextpnr_set"), r.get("synth_set")) if n) or "default"
                series.setdefault(name, []).append((r["seed"], r["fmax_mhz"]))
        for name, pts in series.items():
            pts.sort()
            ax.plot([s for s, _ in pts], [f for _, f in pts], marker="o", markersize=4, linewidth=1, label=name)
        best, fmax = entry["best"], entry["fmax"]
        ax.scatter([best["seed"]], [best["fmax_mhz"]], marker="*", s=220, color="gold", edgecolors="black",
                   zorder=5, label="best")
        ax.annotate(f"best {best['fmax_mhz']:g} MHz", (best["seed"], best["fmax_mhz"]), fontsize=7,
                    xytext=(0, 9), textcoords="offset points", ha="center")
        ax.margins(0.15, 0.12)
        ax.set_title(f"{entry['design']}: {fmax['count']} runs, median {fmax['median']:g} MHz", fontsize=9)
        ax.set_xticks(seeds)
        ax.set_xlabel("nextpnr seed", fontsize=8)
        ax.set_ylabel("Fmax (MHz, post-route)", fontsize=8)
        ax.grid(True, alpha=0.3)
        if len(series) <= 12:
            ax.legend(fontsize=6)
    for j in range(len(shown), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    more = f" (the first {len(shown)} of {len(designs)} designs)" if len(designs) > len(shown) else ""
    fig.suptitle(f"Fmax by option set and seed, best starred{more}")
    fig.tight_layout()
    return _save(plt, fig, path)

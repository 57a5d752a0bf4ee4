"""Post-route clock of every unit of the accelerator against the 100 MHz target (``hhe-gen bench fmax``).

Each case places and routes one unit on the LFE5U-85F (:func:`hhe_gen.flow.synth.synth_ecp5`: the
unit inside the timing harness, so every path is register to register; Yosys ``-nowidelut
-nodffe``, nextpnr's static placer and router2, the flow that routed the big cores) and gives one
row of the table:

* the engine's own units, taken from the accelerator users build (:data:`ACCEL`: DNA-HHE's
  N = 2^13 and 3 x 54-bit primes, 2 lanes, dual mode with Rubato 128S): the task manager, the
  buffers, the memory, sampling (SHAKE256 XOF + samplers), NTT, pointwise, codec (FFT encoder /
  decoder), network and Rubato units;
* the cores beyond them: the NTT core at P = 2 and P = 8 (54 bits, N = 2^13) and
  Rubato at every 128-bit set, 2 and 8 lanes (Par-128M: 6, since lanes divide its 36 words);
* the whole engine (``accel-*``; hours of placement at DNA-HHE size).

Every row has ``fmax_mhz`` against :data:`TARGET_MHZ` (``to_target_mhz``, ``meets_target``), the
ratio to DNA-HHE's 200 MHz on a Kintex-7 (``x_dna_hhe``), the area, and the critical path (its
length, routing share, and the first and last cells).  A unit that does not route within its
time-out has ``routed`` False and no Fmax.  The summary draws every row against the target and the
anchors (:data:`ANCHORS_MHZ`) into ``bench-results/fmax.png``.

Synthesis results are cached per netlist and options (``hhe_gen.synth``): the NTT and Rubato rows
share their runs with ``hhe-gen bench ntt`` / ``rubato``.  Measured figures: the fmax table of
docs/timing.md, generated from docs/figures/bench-snapshot.json.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hhe_gen.apps.bench import bench_case, bench_summary

__all__ = ["TARGET_MHZ", "ANCHORS_MHZ", "ACCEL", "UNITS", "UNIT_FLOW", "fmax_row", "unit_fmax", "plot_fmax"]

TARGET_MHZ = 100.0
"""hhe-gen's own target for every unit, post-route on the LFE5U-85F (no paper gives an ECP5 clock;
DNA-HHE's 200 MHz on a Kintex-7, Table II, is an anchor)."""

ANCHORS_MHZ = {"DNA-HHE (Kintex-7)": 200.0, "LiteX ECPIX-5 system clock": 75.0,
               "parametric NTT (same ECP5)": 64.4}
"""Published or default clocks the table is read against (DNA-HHE's client accelerator on a
Kintex-7, Table II; LiteX-Boards' ECPIX-5 default system clock; the public parametric NTT generator's
54-bit N = 2^13 core on the LFE5U-85F)."""

ACCEL = ("dna-hhe", 2, "Par-128S")
"""(preset, lanes, Rubato set) of the accelerator whose units are measured."""

UNITS = ("manager", "buffers_file", "memory_unit", "sampler_unit", "ntt_unit", "pointwise_unit", "codec_unit",
         "network_unit", "rubato_unit")
"""The engine's units (attributes of :class:`hhe_gen.cores.engine.engine.Engine`)."""

UNIT_FLOW = {"router": "router2", "synth_args": ("-nowidelut", "-nodffe"), "nextpnr_args": ("--placer", "static")}
"""``synth_ecp5`` options of every row."""


@lru_cache(maxsize=2)
def _engine(params: str, lanes: int, rubato: str | None):
    """The CKKS client engine of ``params`` (dual mode with ``rubato``), marked unused throughout: a row
    elaborates the unit it measures (or the whole engine)."""
    from hhe_gen.cores.unused import mark_unused
    from hhe_gen.engine.config import AcceleratorConfig
    return mark_unused(AcceleratorConfig(params, lanes, rubato=rubato).engine(), deep=True)


def _tag(params: str, lanes: int) -> str:
    return f"{params.replace('-', '_')}_p{lanes}"


def _lane_count(lanes: int) -> str:
    return f"{lanes} lane{'s' if lanes > 1 else ''}"


def fmax_row(result: dict, *, unit: str, config: str) -> dict:
    """One table row from a ``synth_ecp5`` result (a routed run has ``fmax_mhz``)."""
    fmax = result.get("fmax_mhz")
    row = {"unit": unit, "config": config, "fmax_mhz": fmax, "target_mhz": TARGET_MHZ,
           "routed": fmax is not None}
    if fmax is not None:
        row.update(to_target_mhz=round(fmax - TARGET_MHZ, 1), meets_target=fmax >= TARGET_MHZ,
                   x_dna_hhe=round(fmax / ANCHORS_MHZ["DNA-HHE (Kintex-7)"], 2))
    row.update({k: result.get(k) for k in ("LUT4", "FF", "MULT18X18D", "DP16KD")})
    path = result.get("critical_path") or {}
    if path:
        row.update(crit_ns=path.get("ns"), crit_routing_ns=path.get("routing_ns"),
                   crit_from=path.get("from"), crit_to=path.get("to"))
    row["nextpnr_s"] = result.get("nextpnr_s")
    return row


def _synth(component, name: str, timeout: float) -> dict:
    """``synth_ecp5`` with :data:`UNIT_FLOW`; a run past ``timeout`` gives a result without Fmax."""
    from hhe_gen.cores.unused import mark_unused
    from hhe_gen.flow.synth import synth_ecp5
    from hhe_gen.flow.tools import ToolError
    mark_unused(component)
    try:
        return synth_ecp5(component, name=name, timeout=timeout, **UNIT_FLOW)
    except ToolError as exc:
        if exc.returncode is not None:
            raise
        return {"fmax_mhz": None}


def _engine_unit(unit: str, params: str, lanes: int, rubato: str | None):
    from hhe_gen.params.errors import ParameterError
    engine = _engine(params, lanes, rubato)
    component = getattr(engine, unit, None) if unit in UNITS else None
    if component is None:
        raise ParameterError("unit", unit, "a unit this engine has: " +
                             ", ".join(u for u in UNITS if getattr(engine, u, None) is not None))
    config = f"{params}, {_lane_count(lanes)}" + (f", {rubato}" if rubato else "")
    label = {"manager": "task manager", "buffers_file": "buffers"}.get(unit, unit.replace("_", " "))
    return component, f"fmax_{unit}_{_tag(params, lanes)}", label, config


def _ntt_core(lanes: int):
    from hhe_gen.apps.bench.ntt import _core
    core = _core(1 << 13, lanes, 54, 3, fast=True)        # hhe-gen bench ntt's 54-bit configuration
    return (core, f"ntt_n8192_p{lanes}_l{core.butterfly_latency}_rom", "NTT core",
            f"N = 2^13, P = {lanes}, 3 x 54 bits")


def _rubato_core(params: str, lanes: int):
    from hhe_gen.cores.rubato import RubatoCore
    core = RubatoCore(params, lanes, noise=True)          # hhe-gen bench rubato's run
    return core, f"rubato_{core.params.short_name.lower()}_l{lanes}", "Rubato core", f"{params}, {lanes} lanes"


def _accel(params: str, lanes: int):
    return (_engine(params, lanes, None), f"fmax_accel_{_tag(params, lanes)}", "accelerator",
            f"{params}, {_lane_count(lanes)}")


_BUILDERS = {"unit": _engine_unit, "ntt": _ntt_core, "rubato": _rubato_core, "accel": _accel}


def unit_fmax(what: str, timeout: float = 3 * 3600, **kw) -> dict:
    """Place and route one row's design (``what``: unit, ntt, rubato or accel, with its keywords)
    and return its row (:func:`fmax_row`)."""
    component, name, unit, config = _BUILDERS[what](**kw)
    return fmax_row(_synth(component, name, timeout), unit=unit, config=config)


for _unit in UNITS:
    bench_case("fmax", f"{_unit.removesuffix('_unit').removesuffix('_file')}-{ACCEL[0]}-{ACCEL[1]}lanes",
               quick=False, what="unit", unit=_unit, params=ACCEL[0], lanes=ACCEL[1], rubato=ACCEL[2])(unit_fmax)
for _lanes in (2, 8):
    bench_case("fmax", f"ntt-n13-p{_lanes}-54b", quick=False, what="ntt", lanes=_lanes)(unit_fmax)
for _set, _many in (("Par-128S", 8), ("Par-128M", 6), ("Par-128L", 8)):     # lanes divide n (128M: n = 36)
    for _lanes in (2, _many):
        bench_case("fmax", f"rubato-{_set[4:].lower()}-l{_lanes}", quick=False, what="rubato", params=_set,
                   lanes=_lanes)(unit_fmax)
bench_case("fmax", "accel-toy-1lane", quick=False, what="accel", params="toy", lanes=1, timeout=6 * 3600)(unit_fmax)
bench_case("fmax", "accel-dna-hhe-2lanes", quick=False, what="accel", params="dna-hhe", lanes=2,
           timeout=6 * 3600)(unit_fmax)


@bench_summary("fmax")
def summary(results, out_dir) -> list:
    rows = [{**r["metrics"], "case": r["name"]} for r in results if r.get("metrics")]
    return [plot_fmax(rows, Path(out_dir) / "fmax.png")] if rows else []


def plot_fmax(rows, path) -> Path:
    """Horizontal bars: each row's post-route Fmax (a row without one: a hatched stub marked "not
    routed"), the target and the anchors as vertical lines named in the legend (PNG, Agg backend)."""
    from hhe_gen.flow.extras import require
    require("plots", "drawing a plot")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(rows)
    fig, ax = plt.subplots(figsize=(9, 0.38 * len(rows) + 1.6))
    labels = [f"{r['unit']} ({r['config']})" for r in rows]
    ys = range(len(rows))
    for y, r in zip(ys, rows):
        f = r.get("fmax_mhz")
        if f is None:
            ax.barh(y, 4, color="white", edgecolor="firebrick", hatch="//")
            ax.annotate("not routed", (5, y), va="center", fontsize=8, color="firebrick")
        else:
            ax.barh(y, f, color="seagreen" if f >= TARGET_MHZ else "darkorange")
            ax.annotate(f"{f:.1f}", (f + 1, y), va="center", fontsize=8)
    ax.axvline(TARGET_MHZ, color="black", linestyle="--", linewidth=1.2, label=f"target {TARGET_MHZ:g} MHz")
    for (name, mhz), colour in zip(ANCHORS_MHZ.items(), ("tab:blue", "tab:purple", "tab:brown")):
        ax.axvline(mhz, color=colour, linestyle=":", linewidth=1.4, label=f"{name}: {mhz:g} MHz")
    ax.legend(loc="lower right", fontsize=7, framealpha=0.9)
    ax.set_yticks(list(ys), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("Fmax, MHz (post-route, LFE5U-85F speed 8)")
    ax.set_xlim(0, max([TARGET_MHZ, *ANCHORS_MHZ.values()] + [r.get("fmax_mhz") or 0 for r in rows]) * 1.12)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title("Every unit against the 100 MHz target")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path

"""Synthesis and place-and-route measurements of Amaranth components (area, DSPs, Fmax).

This module is the front door of the synthesis flow: the two flows (``synth_ecp5``,
``synth_xilinx`` / ``synth_xilinx_any``) and their device tables live here, and the names of the
modules they are built from are re-exported, so ``from hhe_gen.flow.synth import ...`` gives the
whole public API:

* :mod:`hhe_gen.flow.timing_harness` - ``TimingHarness``, ``harness_verilog``: the component
  wrapped so that every timed path is register to register (the DUT's own figures come from
  its own module, ``total`` from the whole design);
* :mod:`hhe_gen.flow.synth_cache` - ``SynthResult``, ``cache_root``, ``FLOW_VERSION``: every run
  is cached under ``$HHE_GEN_CACHE/synth/`` by a hash of the Verilog, tool versions and options;
* :mod:`hhe_gen.flow.synth_reports` - Yosys ``stat -json`` cell counts and nextpnr-ecp5's report
  (Fmax clock, critical path).

What it measures
----------------
``synth_ecp5`` runs Yosys ``synth_ecp5`` and ``nextpnr-ecp5`` (seeded, timing-driven) and
returns the component's LUT4 / flip-flop / MULT18X18D / DP16KD / CCU2C counts and the post-route
Fmax; ``synth_xilinx`` runs Yosys ``synth_xilinx`` (the open toolchain has no place and
route for Xilinx-7 on PyPI or Debian) and returns LUT / FF / DSP48 / block-RAM / CARRY4 counts.
Progress lines (``[hhe-gen] ...``) go to standard error while the tools run.

Errors: ``ParameterError`` for an unknown device, package, family, a bad name or a component
that is not a ``wiring.Component``; ``ToolMissing`` / ``ToolError`` come from
``hhe_gen.flow.tools``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from hhe_gen.params.errors import ParameterError
from hhe_gen.flow.runner import run
from hhe_gen.flow.synth_cache import FLOW_VERSION, SynthResult, cache_root, cached_run, tools_fingerprint
from hhe_gen.flow.synth_reports import critical_path, ecp5_area, pick_clock, stat_cells, unit_cells, xilinx_area
from hhe_gen.flow.timing_harness import TimingHarness, default_name, harness_facts, harness_verilog
from hhe_gen.flow.tools import ToolError

__all__ = [
    "FLOW_VERSION", "ECP5_DEVICES", "ECP5_PACKAGES", "ECP5_BOARD_SYNTH_ARGS", "XILINX_FAMILIES",
    "TimingHarness", "SynthResult", "harness_verilog", "synth_ecp5", "synth_xilinx",
    "synth_xilinx_any", "cache_root",
]

#: nextpnr-ecp5 device options (``--<device>``).
ECP5_DEVICES = ("12k", "25k", "45k", "85k", "um-25k", "um-45k", "um-85k",
                "um5g-25k", "um5g-45k", "um5g-85k")

#: Packages nextpnr-ecp5 knows, per device size (Lattice ECP5 family data sheet).
ECP5_PACKAGES = {
    "12k": ("CABGA256", "CABGA381", "CSFBGA285", "TQFP144"),
    "25k": ("CABGA256", "CABGA381", "CSFBGA285", "TQFP144"),
    "45k": ("CABGA256", "CABGA381", "CABGA554", "CSFBGA285", "TQFP144"),
    "85k": ("CABGA381", "CABGA554", "CABGA756", "CSFBGA285"),
}

#: ``synth_ecp5`` options of what goes onto an ECP5 board: the SoC's build (``boards/build.py``) and
#: the whole accelerator's area (``hhe-gen bench accel``'s ``area`` cases), so that the figure the
#: bench gives is the logic the board gets.  LUT4s only, no PFUMX / L6MUX21 wide-LUT muxes: the big
#: cores routed only so, and on wide XOR networks (the Keccak round) ABC9's wide-LUT mapping takes
#: more LUT4s, not fewer.
ECP5_BOARD_SYNTH_ARGS = ("-nowidelut",)

#: Yosys ``synth_xilinx -family`` values supported here and their DSP / carry primitives.
XILINX_FAMILIES = {
    "xc7": ("DSP48E1", "CARRY4"),
    "xcu": ("DSP48E2", "CARRY8"),
    "xcup": ("DSP48E2", "CARRY8"),
    "xc6v": ("DSP48E1", "CARRY4"),
    "xc6s": ("DSP48A1", "CARRY4"),
}


def synth_ecp5(component, *, device: str = "85k", package: str = "CABGA381", seed: int = 1,
               freq_mhz: float = 125, name: str | None = None, router: str = "router1",
               cache: bool = True, timeout: float | None = None, fold: int | None = None,
               tie_high=("en",), synth_args: tuple = (), nextpnr_args: tuple = (),
               place_and_route: bool = True, abc9: bool = True, by_unit: bool = False) -> SynthResult:
    """Synthesize (Yosys ``synth_ecp5``) and place and route (``nextpnr-ecp5``) a component.

    Parameters
    ----------
    component : wiring.Component   wrapped in a ``TimingHarness`` (see the module docstring)
    device : str       nextpnr-ecp5 device option without dashes (``ECP5_DEVICES``)
    package : str      package (``ECP5_PACKAGES[size]``)
    seed : int         nextpnr placement seed
    freq_mhz : float   timing-driven placement/routing target (``--freq``); a design that misses
                       it is still measured (``--timing-allow-fail``)
    name : str | None  top module name (default: the class name in lower case)
    router : str       nextpnr router, "router1" (nextpnr-ecp5's default; measured here to
                       give the better Fmax on DSP designs) or "router2" (often several times
                       faster on congested, hopelessly slow designs)
    cache : bool       use and fill the result cache (a fresh run overwrites the entry)
    timeout : float | None   seconds per tool run
    fold, tie_high     see ``TimingHarness``
    synth_args : tuple of str    extra ``synth_ecp5`` options (e.g. ``("-nowidelut", "-nodffe")``)
    nextpnr_args : tuple of str  extra ``nextpnr-ecp5`` options (e.g. ``("--placer", "static")``,
                       ``("--placer-heap-beta", "0.5")``)
    place_and_route : bool       False: Yosys only (area; ``fmax_mhz``, ``critical_path`` and
                       ``nextpnr_s`` None)
    abc9 : bool        map LUTs with ABC9 (what ``synth_ecp5`` does); False maps them with the classic
                       ``abc -lut 4`` (:data:`_ECP5_CLASSIC_ABC`; LUT4 only, so the ``-nowidelut``
                       netlist): hours faster on large XOR networks (unrolled Keccak rounds)
    by_unit : bool     also the area of each submodule of the component (``units``) and of each of
                       their submodules (``parts``, keyed ``"<unit>.<part>"``): Yosys keeps the
                       hierarchy (``-noflatten``, so no optimisation across units) and maps with the
                       classic ABC (Yosys 0.70's ABC9 fails an assertion on hierarchical netlists
                       here); Yosys only

    The argument tuples, ``place_and_route``, ``abc9`` and ``by_unit`` are part of the cache key.

    Returns
    -------
    SynthResult (a dict) with the DUT's own area ``LUT4``, ``FF`` (TRELLIS_FF), ``MULT18X18D``,
    ``ALU54B``, ``DP16KD``, ``CCU2C``, ``DPR16X4`` and ``cells`` (every cell type of the DUT);
    ``fmax_mhz`` (post-route, the harness clock, from nextpnr's JSON report), ``freq_mhz``,
    ``critical_path`` (from/to cells, ns, logic_ns, routing_ns, the number of DSP / carry /
    LUT segments on it and the Python source lines of its nets), ``total`` (whole design: yosys cells plus
    nextpnr's utilisation ``TRELLIS_COMB`` / ``TRELLIS_IO``...), ``harness`` (input_bits,
    output_bits, fold, FF), ``yosys_s`` and ``nextpnr_s`` (wall seconds of the run that produced
    the result), ``target``, ``device``, ``package``, ``seed``, ``name``, ``key``, ``tools``.

    Raises
    ------
    ParameterError   unknown device or package, bad seed/frequency/name/router, not a Component
    ToolMissing, ToolError
    """
    if router not in ("router1", "router2"):
        raise ParameterError("router", router, "'router1' or 'router2'")
    for arg_name, args in (("synth_args", synth_args), ("nextpnr_args", nextpnr_args)):
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            raise ParameterError(arg_name, args, "a tuple of option strings")
    if device not in ECP5_DEVICES:
        raise ParameterError("device", device, "one of " + ", ".join(ECP5_DEVICES))
    size = device.split("-")[-1]
    if package not in ECP5_PACKAGES[size]:
        raise ParameterError("package", package,
                             f"one of {', '.join(ECP5_PACKAGES[size])} for an ECP5 {size}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ParameterError("seed", seed, "a non-negative integer")
    if not isinstance(freq_mhz, (int, float)) or isinstance(freq_mhz, bool) or \
            not 1 <= freq_mhz <= 1000:
        raise ParameterError("freq_mhz", freq_mhz, "a number in 1 .. 1000 (MHz)")
    if by_unit:
        synth_args, abc9, place_and_route = (*synth_args, "-noflatten"), False, False
    text, harness = harness_verilog(component, name=name, fold=fold, tie_high=tie_high)
    name = name if name is not None else default_name(component)
    tools = tools_fingerprint(("yosys", "nextpnr-ecp5"))
    options = {"target": "ecp5", "device": device, "package": package, "seed": seed,
               "freq_mhz": freq_mhz, "name": name, "router": router}
    if synth_args or nextpnr_args or not place_and_route:     # keeps the older runs' cache keys
        options.update(synth_args=list(synth_args), nextpnr_args=list(nextpnr_args),
                       place_and_route=place_and_route)
    if not abc9:
        options["abc9"] = False
    if by_unit:
        options["by_unit"] = True
    extra_synth = "".join(" " + a for a in synth_args)
    synth_cmd = (f"synth_ecp5 -top {name}{extra_synth} -json netlist.json\n" if abc9 else
                 _ECP5_CLASSIC_ABC.format(name=name, extra=extra_synth))

    def job(workdir: Path) -> dict:
        (workdir / "synth.ys").write_text(
            "read_verilog -sv top.v\n"
            f"hierarchy -top {name}\n"
            f"setattr -mod -set keep_hierarchy 1 {name}.dut\n"
            + synth_cmd +
            "tee -q -o stat.json stat -json\n")
        t0 = time.monotonic()
        run("yosys", ["-q", "-l", "yosys.log", "synth.ys"], cwd=workdir, timeout=timeout,
            progress=f"yosys synth_ecp5 {name}")
        yosys_s = time.monotonic() - t0
        nextpnr_s = None
        if place_and_route:
            t0 = time.monotonic()
            run("nextpnr-ecp5", [f"--{device}", "--package", package, "--seed", str(seed),
                                 "--freq", str(freq_mhz), "--timing-allow-fail", "--router", router,
                                 "--json", "netlist.json", "--report", "report.json",
                                 "-l", "nextpnr.log", "--quiet", *nextpnr_args],
                cwd=workdir, timeout=timeout,
                progress=f"nextpnr-ecp5 {name} ({device} {package}, seed {seed}, {freq_mhz} MHz)")
            nextpnr_s = round(time.monotonic() - t0, 2)
        (workdir / "netlist.json").unlink()  # large and reproducible
        return {"yosys_s": round(yosys_s, 2), "nextpnr_s": nextpnr_s,
                "harness": harness_facts(harness)}

    def summarize(workdir: Path, run: dict) -> dict:
        stat = json.loads((workdir / "stat.json").read_text())
        report = json.loads((workdir / "report.json").read_text()) if place_and_route else {}
        dut_cells, total_cells = stat_cells(stat, name)
        units = unit_cells(stat, name) if by_unit else {}
        if by_unit:                         # the DUT's module holds only the glue between its units
            dut_cells = {}
            for cells in units.values():
                for cell, count in cells.items():
                    dut_cells[cell] = dut_cells.get(cell, 0) + count
        clock = pick_clock(report.get("fmax", {}))
        used = {k: v["used"] for k, v in report.get("utilization", {}).items() if v["used"]}
        return {
            **ecp5_area(dut_cells),
            "fmax_mhz": round(report["fmax"][clock]["achieved"], 2) if clock else None,
            "freq_mhz": freq_mhz,
            "cells": dut_cells,
            "critical_path": critical_path(report, clock),
            "total": {**ecp5_area(total_cells), **used},
            "harness": run["harness"],
            "yosys_s": run["yosys_s"], "nextpnr_s": run["nextpnr_s"],
            "target": "ecp5", "device": device, "package": package, "seed": seed,
            "router": router, "name": name, "synth_args": list(synth_args),
            "nextpnr_args": list(nextpnr_args), "place_and_route": place_and_route,
            **({"units": {unit: ecp5_area(cells) for unit, cells in units.items()},
                "parts": {part: ecp5_area(cells) for part, cells in unit_cells(stat, name, 2).items() if "." in part}}
               if by_unit else {}),
        }

    return cached_run("ecp5", name, text, tools, options, cache, job, summarize)


#: ``synth_ecp5`` with the classic ABC LUT mapper (Yosys 0.70's ``synth_lattice`` always runs ABC9 in
#: ``map_luts``): the script up to ``map_luts``, ``abc -lut 4`` for that label's ``abc9 -W 300``, then
#: the rest (``help synth_lattice`` lists the labels and commands).
_ECP5_CLASSIC_ABC = """synth_ecp5 -top {name}{extra} -run :map_luts
abc -lut 4
clean
synth_ecp5 -top {name}{extra} -run map_cells: -json netlist.json
"""


#: ``synth_xilinx`` with the classic ABC LUT mapper instead of ABC9 (Yosys 0.70 has no option for
#: it): the script up to ``map_luts``, that label's commands with ``abc -luts`` for ``abc9 -luts``,
#: then ``finalize`` and ``check`` (Yosys' ``help synth_xilinx`` lists the labels and commands).
_XILINX_CLASSIC_ABC = """synth_xilinx -family {family} -top {name} -flatten -run :map_luts
opt_expr -mux_undef -noclkinv
abc -luts 2:2,3,6:5,10,20
clean
xilinx_srl -fixed -minlen 3
techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6
xilinx_dffopt
opt_lut_ins -tech xilinx
synth_xilinx -family {family} -top {name} -flatten -run finalize:check
"""


def synth_xilinx_any(component_factory, **kwargs) -> SynthResult:
    """:func:`synth_xilinx` with ABC9, and again with ``abc9=False`` if Yosys stops on its ABC9
    reintegration assertion (``count_id(wire->name) == 0``, Yosys 0.70); the result's ``abc9``
    says which flow produced it.  ``component_factory()`` builds a fresh component per attempt
    (an elaborated component cannot be converted twice)."""
    try:
        res = synth_xilinx(component_factory(), **kwargs)
        res["abc9"] = True
        return res
    except ToolError as err:
        log = Path(err.cwd) / "yosys.log" if getattr(err, "cwd", None) else None
        text = log.read_text(errors="replace")[-4000:] if log and log.exists() else str(err)
        if "count_id(wire->name) == 0" not in text:
            raise
    res = synth_xilinx(component_factory(), abc9=False, **kwargs)
    res["abc9"] = False
    return res


def synth_xilinx(component, *, family: str = "xc7", name: str | None = None,
                 cache: bool = True, timeout: float | None = None, fold: int | None = None,
                 tie_high=("en",), abc9: bool = True) -> SynthResult:
    """Synthesize a component with Yosys ``synth_xilinx -family <family>`` (no place and route).

    Parameters
    ----------
    component : wiring.Component   wrapped in a ``TimingHarness``
    family : str       ``XILINX_FAMILIES`` key (``xc7`` = 7-series: Artix/Kintex/Virtex-7)
    name, cache, timeout, fold, tie_high   as for ``synth_ecp5``
    abc9 : bool        map LUTs with ABC9 (what ``synth_xilinx`` does); False runs the script up to
                       ``map_luts``, maps with the classic ``abc -luts`` and then runs the rest of
                       ``map_luts`` and ``finalize`` as Yosys does (:data:`_XILINX_CLASSIC_ABC`): the
                       way around Yosys 0.70's ``count_id(wire->name) == 0`` assertion in ABC9's
                       reintegration, which some designs hit (:func:`synth_xilinx_any`)

    Returns
    -------
    SynthResult (a dict) with the DUT's own ``LUT`` (LUT1..LUT6), ``FF`` (FDRE/FDSE/FDCE/FDPE and
    latches), the family's DSP (``DSP48E1`` for xc7), ``RAMB18``, ``RAMB36``, the carry chain
    (``CARRY4`` for xc7), ``SRL``, ``LUTRAM``, ``MUXF``, ``cells``; ``total`` for the whole
    design, ``harness``, ``yosys_s``, ``target``, ``family``, ``name``, ``key``, ``tools``.

    Raises
    ------
    ParameterError   unknown family, bad name, not a Component
    ToolMissing, ToolError
    """
    if family not in XILINX_FAMILIES:
        raise ParameterError("family", family, "one of " + ", ".join(XILINX_FAMILIES))
    text, harness = harness_verilog(component, name=name, fold=fold, tie_high=tie_high)
    name = name if name is not None else default_name(component)
    tools = tools_fingerprint(("yosys",))
    options = {"target": "xilinx", "family": family, "name": name}
    if not abc9:
        options["abc9"] = False

    def job(workdir: Path) -> dict:
        (workdir / "synth.ys").write_text(
            "read_verilog -sv top.v\n"
            f"hierarchy -top {name}\n"
            f"setattr -mod -set keep_hierarchy 1 {name}.dut\n"
            + (f"synth_xilinx -family {family} -top {name} -flatten\n" if abc9 else _XILINX_CLASSIC_ABC.format(
                family=family, name=name))
            + "tee -q -o stat.json stat -json\n")
        t0 = time.monotonic()
        run("yosys", ["-q", "-l", "yosys.log", "synth.ys"], cwd=workdir, timeout=timeout,
            progress=f"yosys synth_xilinx -family {family} {name}")
        return {"yosys_s": round(time.monotonic() - t0, 2), "harness": harness_facts(harness)}

    def summarize(workdir: Path, run: dict) -> dict:
        stat = json.loads((workdir / "stat.json").read_text())
        dut_cells, total_cells = stat_cells(stat, name)
        return {
            **xilinx_area(dut_cells, XILINX_FAMILIES[family]),
            "cells": dut_cells,
            "total": xilinx_area(total_cells, XILINX_FAMILIES[family]),
            "harness": run["harness"],
            "yosys_s": run["yosys_s"],
            "target": "xilinx", "family": family, "name": name,
        }

    return cached_run("xilinx", name, text, tools, options, cache, job, summarize)

"""Reading the tools' reports: cell counts from Yosys ``stat -json`` (the DUT's own and the
whole design's, per target) and the post-route Fmax clock and critical path from nextpnr-ecp5's
JSON report.  Pure functions of the files, so a cached run is re-read with the current parsing.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["stat_cells", "unit_cells", "ecp5_area", "xilinx_area", "pick_clock", "critical_path",
           "without_cell_suffix"]


# ---------------------------------------------------------------------------------------------
# Yosys statistics


def stat_cells(stat: dict, name: str) -> tuple[dict, dict]:
    """(cells of the DUT module, cells of the whole design) from ``stat -json`` output."""
    modules = stat["modules"]
    dut_key = next((k for k in (f"\\{name}.dut", f"{name}.dut") if k in modules), None)
    if dut_key is None:
        raise RuntimeError(f"yosys stat has no module {name}.dut: {sorted(modules)}")
    dut = {k: v for k, v in modules[dut_key]["num_cells_by_type"].items()
           if not k.startswith("$scopeinfo")}
    total = {k: v for k, v in stat["design"]["num_cells_by_type"].items()
             if k.lstrip("\\") != f"{name}.dut" and not k.startswith("$scopeinfo")}
    return dut, total


def unit_cells(stat: dict, name: str, depth: int = 1) -> dict:
    """Cells of each submodule of the DUT with everything below it (``{unit: cells}``), from the
    ``stat -json`` of a netlist kept hierarchical (``synth_ecp5 -noflatten``): Amaranth writes one
    module per instance, named by its path (``<name>.dut.<unit>.<sub>...``), so a unit's cells are
    the sum over the modules under its path.  Cells of the DUT's own module are under ``""``.
    ``depth`` 2: the units' parts instead (``"<unit>.<part>"``; a unit's own cells under
    ``"<unit>.(own)"``)."""
    prefix = f"{name}.dut"
    units: dict[str, dict] = {}
    for key, module in stat["modules"].items():
        path = key.lstrip("\\")
        if path != prefix and not path.startswith(prefix + "."):
            continue
        names = path[len(prefix) + 1:].split(".") if path != prefix else []
        unit = ".".join(names[:depth] + (["(own)"] if 0 < len(names) < depth else []))
        cells = units.setdefault(unit, {})
        for cell, count in module["num_cells_by_type"].items():
            if not cell.startswith(("$scopeinfo", "\\")) and not cell.startswith(prefix):
                cells[cell] = cells.get(cell, 0) + count
    return units


def ecp5_area(cells: dict) -> dict:
    return {
        "LUT4": cells.get("LUT4", 0),
        "FF": cells.get("TRELLIS_FF", 0),
        "MULT18X18D": cells.get("MULT18X18D", 0),
        "ALU54B": cells.get("ALU54B", 0),
        "DP16KD": cells.get("DP16KD", 0),
        "CCU2C": cells.get("CCU2C", 0),
        "DPR16X4": cells.get("TRELLIS_DPR16X4", 0),
    }


_XILINX_FF = ("FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1",
              "LDCE", "LDPE")


def xilinx_area(cells: dict, primitives: tuple[str, str]) -> dict:
    """Xilinx area figures; ``primitives``: the family's (DSP, carry) cell names."""
    dsp, carry = primitives
    return {
        "LUT": sum(v for k, v in cells.items() if re.fullmatch(r"LUT[1-6]", k)),
        "FF": sum(cells.get(k, 0) for k in _XILINX_FF),
        dsp: cells.get(dsp, 0),
        "RAMB18": sum(v for k, v in cells.items() if k.startswith("RAMB18")),
        "RAMB36": sum(v for k, v in cells.items() if k.startswith("RAMB36")),
        carry: cells.get(carry, 0),
        "SRL": sum(v for k, v in cells.items() if k.startswith("SRL")),
        "LUTRAM": sum(v for k, v in cells.items() if re.fullmatch(r"RAM\d+[SMX].*", k)),
        "MUXF": sum(v for k, v in cells.items() if k in ("MUXF7", "MUXF8", "MUXF9")),
    }


# ---------------------------------------------------------------------------------------------
# nextpnr report


def pick_clock(fmax: dict) -> str | None:
    if not fmax:
        return None
    clocks = [k for k in fmax if "clk" in k.lower()] or list(fmax)
    return min(clocks, key=lambda k: fmax[k]["achieved"])


def _segment_kind(seg: dict) -> str:
    """What a nextpnr-ecp5 "logic" path segment goes through: "dsp", "carry" or "lut"."""
    src, dst = seg["from"].get("port", ""), seg["to"].get("port", "")
    if re.fullmatch(r"P\d+", dst) or "MULT18X18D" in seg["to"].get("cell", "")[-24:]:
        return "dsp"
    if src.startswith("FCI") or dst.startswith("FCO"):
        return "carry"
    return "lut"


_TECH_SUFFIX = re.compile(r"(_TRELLIS_|_LUT4|_CCU2C|_MULT18X18D|_ALU54B|_PFUMX|_L6MUX|\$|\[).*")


def without_cell_suffix(name: str) -> str:
    """A mapped net or cell name without what Yosys and nextpnr appended to the signal's
    (``x_d4_TRELLIS_FF_Q_12`` -> ``x_d4``, ``e_disp15_LUT4_B_Z[1]`` -> ``e_disp15``)."""
    return _TECH_SUFFIX.sub("", name)


def _signal_name(net_or_cell: str) -> str:
    """The design signal behind a nextpnr net or cell name: ``dut.x_d4_TRELLIS_FF_Q_12`` ->
    ``x_d4`` (Yosys names mapped cells and nets after the signal they drive)."""
    base = net_or_cell.replace("\\", "")
    base = base[4:] if base.startswith("dut.") else base
    return without_cell_suffix(base)


def _shorten(cell: str, limit: int = 72) -> str:
    return cell if len(cell) <= limit else "..." + cell[-(limit - 3):]


def critical_path(report: dict, clock: str | None) -> dict | None:
    """Summary of the first register-to-register critical path of ``clock``.

    ``dsp`` / ``carry`` / ``lut`` count the logic segments of each kind (a carry chain of n bits
    is about n/2 carry segments), ``sources`` are the Python lines (``file.py:line``) of the
    nets on the path and ``signals`` the design signals it starts at, goes through and ends at
    (``dut.`` removed), in path order: they locate the path in the generator's code;
    ``modules`` are the modules of the whole path's nets in path order
    (:func:`hhe_gen.flow.congestion.module_of`: a whole SoC's units).
    """
    from hhe_gen.flow.congestion import module_of
    if clock is None:
        return None
    for cp in report.get("critical_paths", []):
        if clock not in cp.get("from", "") or clock not in cp.get("to", ""):
            continue
        segs = cp.get("path", [])
        if not segs:
            continue
        logic = [s for s in segs if s.get("type") in ("clk-to-q", "logic", "setup")]
        routing = [s for s in segs if s.get("type") == "routing"]
        kinds = [_segment_kind(s) for s in segs if s.get("type") == "logic"]
        sources = list(dict.fromkeys(
            _short_source(src) for s in routing for src in s.get("sources", [])
            if ".py:" in src))
        names = [segs[0]["from"]["cell"], *(s.get("net", "") for s in routing),
                 segs[-1]["to"]["cell"]]
        signals = [n for n in dict.fromkeys(_signal_name(n) for n in names) if n]
        return {
            "from": _shorten(segs[0]["from"]["cell"]),
            "to": _shorten(segs[-1]["to"]["cell"]),
            "ns": round(sum(s["delay"] for s in segs), 3),
            "logic_ns": round(sum(s["delay"] for s in logic), 3),
            "routing_ns": round(sum(s["delay"] for s in routing), 3),
            "dsp": kinds.count("dsp"),
            "carry": kinds.count("carry"),
            "lut": kinds.count("lut"),
            "sources": sources,
            "signals": signals[:12],
            "modules": list(dict.fromkeys(module_of(_signal_name(n) or n) for n in names if n)),
        }
    return None


def _short_source(src: str) -> str:
    """``/long/path/cores/arith/barrett.py:123`` -> ``cores/arith/barrett.py:123``."""
    parts = Path(src).parts
    for anchor in ("cores", "hhe_gen", "tests", "soc", "formal"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            return "/".join(parts[i:])
    return Path(src).name

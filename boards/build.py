"""``hhe-gen soc build``: the SoC for a board, from the accelerator's parameters to a bitstream (ECP5)
or a synthesis report and scripts (Artix-7).

    report = build_board("ecpix5", preset("dna-hhe"), lanes=2, rubato=None, accel_clk_freq=60e6)
    report["clocks"], report["utilisation"], report["bitstream"], report["load"]

Steps, each shown while it runs: the accelerator is generated for the board's family; LiteX's
software and the firmware are compiled and the SoC is written out with the firmware in its ROM
(:func:`hhe_gen.soc.soc_build.elaborate_with_firmware`; kept under the SoC cache by a key over what
it is made of); then :func:`hhe_gen.flow.gateware.place_and_route_ecp5` (Yosys, nextpnr-ecp5 with
the placer and router options big designs need, ecppack) or
:func:`hhe_gen.flow.gateware.synth_xilinx_gateware` (Yosys ``synth_xilinx``).  The folder of the
build also holds ``soc.json`` and ``csr.csv``, what :class:`hhe_gen.client.Client` needs for
``backend="board"``.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.flow.synth import ECP5_BOARD_SYNTH_ARGS
from hhe_gen.flow.tools import say
from hhe_gen.params.errors import ParameterError

__all__ = ["BOARDS", "Board", "build_board", "nextpnr_options", "ECP5_NEXTPNR_ARGS", "ECP5_SYNTH_ARGS"]


@dataclass(frozen=True)
class Board:
    """A board target.

    Members
    -------
    name, module : str        ``hhe-gen soc build --board`` name; the module under ``hhe_gen.boards``
    soc_class : str           the SoC class in it
    family : str              "ecp5" (full bitstream) or "xilinx" (synthesis, scripts)
    sys_clk_freq : float      the default system clock
    fpga : str                the part
    loader : str              openFPGALoader's ``--board`` name
    capacity : dict           cells of the part (Xilinx: what the Yosys counts are set against)
    """
    name: str
    module: str
    soc_class: str
    family: str
    sys_clk_freq: float
    fpga: str
    loader: str
    capacity: dict | None = None


BOARDS = {
    "ecpix5": Board("ecpix5", "ecpix5", "HheEcpix5SoC", "ecp5", 75e6, "LFE5UM5G-85F-8BG554", "ecpix5"),
    "arty-a7": Board("arty-a7", "arty_a7", "HheArtyA7SoC", "xilinx", 100e6, "XC7A100T-1CSG324", "arty_a7_100t",
                     # Xilinx 7 Series product selection guide: XC7A100T
                     {"LUT": 63_400, "FF": 126_800, "DSP48E1": 240, "BRAM36": 135}),
}

ECP5_SYNTH_ARGS = ECP5_BOARD_SYNTH_ARGS
"""``synth_ecp5`` options for the SoC: :data:`hhe_gen.flow.synth.ECP5_BOARD_SYNTH_ARGS`."""
ECP5_NEXTPNR_ARGS = ("--placer", "static", "--router", "router2")
"""nextpnr-ecp5 options for the SoC: the static placer and router2, which routed the big cores."""


def nextpnr_options(*, placer: str | None = None, router: str | None = None) -> tuple:
    """:data:`ECP5_NEXTPNR_ARGS` with the placer and / or the router replaced."""
    options = dict(zip(ECP5_NEXTPNR_ARGS[::2], ECP5_NEXTPNR_ARGS[1::2]))
    choices = (("--placer", placer, ("heap", "static")), ("--router", router, ("router1", "router2")))
    for flag, value, allowed in choices:
        if value is not None:
            if value not in allowed:
                raise ParameterError(flag[2:], value, " or ".join(allowed))
            options[flag] = value
    return tuple(x for pair in options.items() for x in pair)


def build_board(board: str, params, lanes: int = 2, rubato: str | None = None, *, sys_clk_freq: float | None = None,
                accel_clk_freq: float | None = None, seed: int = 1, place_and_route: bool = True,
                synth_args=ECP5_SYNTH_ARGS, nextpnr_args=ECP5_NEXTPNR_ARGS, out_dir=None,
                progress: bool = True, timeout: float | None = 6 * 3600) -> dict:
    """Build the SoC for ``board`` (module docstring); returns the report (also ``report.json`` in
    the build folder and, when given, ``out_dir``).  ``timeout``: seconds per tool run (a design
    nextpnr cannot route keeps its router going: ``hhe_gen.flow.tools.ToolError`` then)."""
    import importlib

    from hhe_gen.engine.memory_map import MemoryMap
    from hhe_gen.soc.soc_build import elaborate_with_firmware, soc_folder

    if board not in BOARDS:
        raise ParameterError("board", board, "one of " + ", ".join(BOARDS))
    spec = BOARDS[board]
    sys_clk_freq = float(sys_clk_freq or spec.sys_clk_freq)
    from hhe_gen.flow.extras import require
    require("soc", f"the {board} SoC build (hhe_gen.boards)")
    module = importlib.import_module(f"hhe_gen.boards.{spec.module}")
    soc_class = getattr(module, spec.soc_class)
    t_start = time.monotonic()
    here = Path(__file__).parent
    with soc_folder(params, lanes, rubato, kind=board, options=[sys_clk_freq, accel_clk_freq], done="soc.json",
                    sources=[here / f"{spec.module}.py", here / "dram_board.py"], progress=progress,
                    tag=f"-accel{accel_clk_freq / 1e6:g}" if accel_clk_freq else "",
                    target="xilinx" if spec.family == "xilinx" else "ecp5") as build:
        folder, elaborated = build.path, build.built
        if not elaborated:
            layout = MemoryMap.for_params(params)

            def make_soc(firmware):
                return soc_class(build.manifest, build.verilog.resolve(), layout, sys_clk_freq=sys_clk_freq,
                                 accel_clk_freq=accel_clk_freq, firmware=firmware)

            def write_gateware(soc, options):
                from litex.soc.integration.builder import Builder
                Builder(soc, compile_software=False, compile_gateware=False, **options).build(run=False)

            soc, firmware_bytes = elaborate_with_firmware(folder, make_soc, write_gateware, progress=progress)
            info = {**soc.info(), "manifest": build.manifest, "params": params.name, "board": board,
                    "firmware_bytes": firmware_bytes}
            (folder / "soc.json").write_text(json.dumps(info, indent=1))
        elif progress:
            say(f"the SoC for {board} is already elaborated ({folder})")
    info = json.loads((folder / "soc.json").read_text())
    top = module.TOP
    report = {"board": board, "fpga": spec.fpga, "params": params.name, "lanes": lanes, "rubato": rubato,
              "sys_clk_mhz": sys_clk_freq / 1e6, "accel_clk_mhz": accel_clk_freq / 1e6 if accel_clk_freq else None,
              "folder": str(folder), "firmware_bytes": info.get("firmware_bytes"), "cached_elaboration": elaborated}
    if spec.family == "ecp5" and place_and_route:
        from hhe_gen.flow.gateware import place_and_route_ecp5
        r = place_and_route_ecp5(folder / "gateware", top, device=module.DEVICE, package=module.PACKAGE,
                                 speed=module.SPEED, seed=seed, synth_args=tuple(synth_args),
                                 nextpnr_args=tuple(nextpnr_args), timeout=timeout)
        report.update(fits=r["fits"], routed=r.get("routed", r["fits"]), clocks=r["clocks"], timing_met=r["met"],
                      utilisation=r["utilisation"], area=r["area"], yosys_s=r["yosys_s"], nextpnr_s=r["nextpnr_s"],
                      seed=seed, synth_args=list(synth_args), nextpnr_args=list(nextpnr_args), flow_cached=r.cached,
                      router_trace=r.get("router_trace", []), congestion=r.get("congestion"),
                      critical_paths=r.get("critical_paths", {}))
        if r.get("route_failure"):
            report.update(route_failure=r["route_failure"])
        if r["fits"] and report["routed"]:
            bit = folder / f"{top}.bit"
            shutil.copy(r["bitstream"], bit)
            report.update(bitstream=str(bit), load=f"openFPGALoader --board {spec.loader} {bit}")
    elif spec.family == "xilinx":
        from hhe_gen.flow.gateware import synth_xilinx_gateware
        r = synth_xilinx_gateware(folder / "gateware", top, timeout=timeout)
        scripts = sorted(str(p) for p in (folder / "gateware").glob(f"build_{top}.*"))
        scripts += sorted(str(p) for p in (folder / "gateware").glob(f"{top}.tcl"))
        area = dict(r["area"], BRAM36=r["area"]["RAMB36"] + r["area"]["RAMB18"] / 2)
        utilisation = {k: {"used": area[k], "available": v} for k, v in spec.capacity.items()}
        report.update(area=r["area"], utilisation=utilisation, yosys_s=r["yosys_s"], flow_cached=r.cached,
                      scripts=scripts,
                      load=f"openFPGALoader --board {spec.loader} {folder / 'gateware' / (top + '.bit')}"
                           "  (after Vivado or openXC7 made the bitstream)")
    report["seconds"] = round(time.monotonic() - t_start, 1)
    (folder / "report.json").write_text(json.dumps(report, indent=1))
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("soc.json", "csr.csv"):
            if (folder / name).exists():
                shutil.copy(folder / name, out / name)
        if report.get("bitstream"):                 # the copy is the one to load; the cache's stays named
            shutil.copy(report["bitstream"], out / f"{top}.bit")
            report.update(cached_bitstream=report["bitstream"], bitstream=str(out / f"{top}.bit"),
                          load=f"openFPGALoader --board {spec.loader} {out / f'{top}.bit'}")
        (out / "report.json").write_text(json.dumps(report, indent=1))
    return report

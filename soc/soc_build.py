"""Building an hhe-gen SoC, simulated or for a board: the accelerator generated, LiteX's software
compiled, the firmware compiled against it, and the SoC written out with the firmware in its ROM.

    gen = generate_for_soc(params, lanes, rubato, folder)            # accel/hhe_accel.v, .json
    soc = elaborate_with_firmware(folder, make_soc, write_gateware)  # two passes (below)

LiteX's ``Builder`` compiles the software (BIOS, libraries) with Debian's ``riscv64-unknown-elf-gcc``.
The firmware (``soc/firmware``) links against those libraries and the headers of the SoC it runs
on, and the SoC's ROM holds the firmware, so :func:`elaborate_with_firmware` makes the SoC twice:
first with LiteX's BIOS (``make_soc(None)``: the software tree), then with the firmware
(``make_soc(words)``), whose gateware ``write_gateware(soc, builder_options)`` writes.  Both passes
have the same CSRs, so the firmware's headers hold for the second.

Builds are kept under :func:`soc_cache_root` by a key over what they are made of (:func:`build_key`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.flow.tools import say
from hhe_gen.params.errors import ParameterError

__all__ = ["soc_cache_root", "build_key", "soc_sources", "require_riscv_gcc", "generate_for_soc", "SocFolder",
           "soc_folder", "elaborate_with_firmware", "compile_firmware", "output_to"]

SOC_SOURCES = ("accel_instance.py", "accelerator.py", "clock_crossing.py", "memory_bridge.py", "dram_bridge.py",
               "mailbox.py", "integration.py", "soc_build.py")
"""The modules whose text is part of every build's key (with the firmware's files, the
accelerator's Verilog and manifest): what the SoC is made of, not how a host talks to it."""


def soc_cache_root() -> Path:
    """Where built SoCs are kept: ``$HHE_GEN_SOC_CACHE`` or ``~/.cache/hhe-gen/soc``."""
    root = os.environ.get("HHE_GEN_SOC_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "hhe-gen" / "soc"


def soc_sources(*more: Path) -> list[Path]:
    """The files a build's key covers: :data:`SOC_SOURCES`, the firmware's files and ``more``."""
    here = Path(__file__).parent
    return [here / f for f in SOC_SOURCES] + sorted((here / "firmware").glob("*")) + list(more)


def build_key(parts) -> str:
    """A short hash of ``parts`` (bytes or anything with a ``str``)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def require_riscv_gcc() -> None:
    if shutil.which("riscv64-unknown-elf-gcc") is None:
        raise ParameterError("riscv64-unknown-elf-gcc", None,
                             "Debian's gcc-riscv64-unknown-elf on PATH (apt-get install gcc-riscv64-unknown-elf "
                             "picolibc-riscv64-unknown-elf): the SoC's software is compiled with it")


def generate_for_soc(params, lanes: int, rubato: str | None, out_dir: Path, *, progress: bool = True,
                     target: str = "ecp5") -> dict:
    """The client accelerator for the SoC (``hhe_accel.v`` and its manifest in ``out_dir``):
    ``hhe_gen.engine.generate_accel``'s answer for the configuration of these parameters, lanes,
    Rubato set and target (every other choice the configuration's default)."""
    from hhe_gen.engine.config import AcceleratorConfig
    from hhe_gen.engine.generate_accel import generate_accel
    if progress:
        say(f"generating the accelerator ({params.name}, {lanes} lanes" + (f", Rubato {rubato}" if rubato else "")
            + ") ...")
    config = AcceleratorConfig(params, lanes, rubato=rubato, target=target)
    return generate_accel(config, Path(out_dir), testbench=False, name="hhe_accel")


@dataclass(frozen=True)
class SocFolder:
    """A build folder held under its lock (:func:`soc_folder`).

    Members
    -------
    path : Path         the folder; ``accel/hhe_accel.v`` and ``accel/hhe_accel.json`` in it
    manifest : dict     the accelerator's manifest
    built : bool        the folder already holds the finished build (its ``done`` file)
    """
    path: Path
    manifest: dict
    built: bool

    @property
    def verilog(self) -> Path:
        return self.path / "accel" / "hhe_accel.v"


@contextmanager
def soc_folder(params, lanes: int, rubato: str | None, *, kind: str, options: list, sources: list[Path],
               done: str, tag: str = "", target: str = "ecp5", cache_dir=None, progress: bool = True):
    """Generate the accelerator, key the build by its Verilog and manifest, ``options`` and the text
    of :func:`soc_sources` with ``sources``, and yield its :class:`SocFolder` under the folder's
    lock: as it is when ``done`` (a path in it) exists, else emptied with the accelerator copied in.
    The folder is ``<cache>/<kind>-<preset>-p<lanes>[-<rubato>]<tag>-<key>``."""
    import json
    import tempfile

    from hhe_gen.flow.cache_prune import mark_used, prune_to_budget, sibling_lock
    from hhe_gen.flow.filelock import locked

    from .accel_instance import load_manifest

    with tempfile.TemporaryDirectory() as tmp:
        gen = generate_for_soc(params, lanes, rubato, Path(tmp) / "accel", progress=progress, target=target)
        manifest = load_manifest(gen["paths"]["manifest"])
        key = build_key([Path(gen["paths"]["verilog"]).read_text(), json.dumps(manifest, sort_keys=True, default=str),
                         lanes, rubato, target, *options] + [p.read_bytes() for p in soc_sources(*sources)])
        root = Path(cache_dir or soc_cache_root())
        folder = root / f"{kind}-{params.name}-p{lanes}{'-' + rubato if rubato else ''}{tag}-{key}"
        root.mkdir(parents=True, exist_ok=True)
        with locked(sibling_lock(folder)):
            built = (folder / done).exists()
            if built:
                mark_used(folder)
            else:
                if folder.exists():
                    shutil.rmtree(folder)
                (folder / "accel").mkdir(parents=True)
                for name in ("verilog", "manifest"):
                    shutil.copy(gen["paths"][name], folder / "accel")
            yield SocFolder(folder, manifest, built)
        if not built and cache_dir is None:      # a folder of the caller's own is never pruned
            prune_to_budget(root, sibling_lock, keep=folder)


def elaborate_with_firmware(folder: Path, make_soc, write_gateware, *, progress: bool = True):
    """The two passes (module docstring); returns ``(soc, firmware_bytes)``.  ``make_soc(firmware)``
    makes the SoC (``firmware``: the ROM's 32-bit words, or None for LiteX's BIOS);
    ``write_gateware(soc, options)`` runs LiteX's ``Builder`` on it with ``options`` (output
    folders)."""
    from hhe_gen.flow.extras import require
    require("soc", "the LiteX SoC (hhe_gen.soc)")
    from litex.soc.integration.builder import Builder
    from litex.soc.integration.common import get_mem_data

    require_riscv_gcc()
    common = dict(output_dir=str(folder), csr_csv=str(folder / "csr.csv"), csr_json=str(folder / "csr.json"))
    if progress:
        say("elaborating the SoC and compiling LiteX's libraries (riscv64-unknown-elf-gcc) ...")
    cwd = os.getcwd()
    try:
        with output_to(folder / "build.log"):
            first = make_soc(None)
            Builder(first, compile_software=True, compile_gateware=False, **common).build(run=False)
        if progress:
            say("compiling the firmware (soc/firmware) ...")
        binary = compile_firmware(folder)
        firmware = get_mem_data(str(binary), data_width=32, endianness="little")
        with output_to(folder / "build.log"):
            soc = make_soc(firmware)
            write_gateware(soc, common)
    finally:
        os.chdir(cwd)
    return soc, binary.stat().st_size


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
def output_to(path: Path):
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

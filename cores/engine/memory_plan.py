"""Block-RAM plan of an engine: which memories it holds, in DP16KD (ECP5) and BRAM36 (Xilinx 7).

Memories are counted where they are made: the engine's polynomial buffers from their sizes, every
unit's internal memories (NTT banks and twiddle tables, FFT banks and twiddle ROMs, sampler
shuffle memories) by walking the unit's elaborated fragment tree, so the plan follows the cores
as they change.  Each memory is one write port and one read port (simple dual port), mapped to the
cheapest configuration of the block (``min`` over its aspect ratios); a memory of fewer than
:data:`DISTRIBUTED_DEPTH` words is left to LUT RAM (0 blocks), as Yosys does with small ones.

This is a plan, not a synthesis result: the bench (``hhe-gen bench accel``) puts Yosys's counts
beside it.

Device budgets: :data:`DEVICES` gives the blocks of the parts the project targets; the plan
reports what is left for the rest of a SoC.
"""

from __future__ import annotations

from dataclasses import dataclass

from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

__all__ = ["DP16KD_SHAPES", "RAMB36_SHAPES", "RAMB18_SHAPES", "DISTRIBUTED_DEPTH", "DEVICES",
           "MemoryUse", "dp16kd_blocks", "bram36_blocks", "unit_memories", "MemoryPlan"]

# (depth, width) of one block in simple-dual-port use
DP16KD_SHAPES = ((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36))
RAMB36_SHAPES = ((32768, 1), (16384, 2), (8192, 4), (4096, 9), (2048, 18), (1024, 36), (512, 72))
RAMB18_SHAPES = ((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36))
DISTRIBUTED_DEPTH = 64

DEVICES = {
    "LFE5UM5G-85F": {"family": "ecp5", "blocks": 208},
    "LFE5U-85F": {"family": "ecp5", "blocks": 208},
    "LFE5U-45F": {"family": "ecp5", "blocks": 108},
    "XC7A100T": {"family": "xilinx7", "blocks": 135},
    "XC7A35T": {"family": "xilinx7", "blocks": 50},
    "XC7K325T": {"family": "xilinx7", "blocks": 445},
}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _blocks(depth: int, width: int, shapes) -> int:
    return min(_ceil(depth, d) * _ceil(width, w) for d, w in shapes)


def dp16kd_blocks(depth: int, width: int) -> int:
    """DP16KD blocks of a ``depth`` x ``width`` simple-dual-port memory (0 below the LUT-RAM depth)."""
    check_int("depth", depth, 1)
    check_int("width", width, 1)
    return 0 if depth < DISTRIBUTED_DEPTH else _blocks(depth, width, DP16KD_SHAPES)


def bram36_blocks(depth: int, width: int) -> float:
    """BRAM36 blocks (a RAMB18 counts 0.5) of a ``depth`` x ``width`` simple-dual-port memory."""
    check_int("depth", depth, 1)
    check_int("width", width, 1)
    if depth < DISTRIBUTED_DEPTH:
        return 0.0
    full = _blocks(depth, width, RAMB36_SHAPES)
    half = _blocks(depth, width, RAMB18_SHAPES) / 2
    return min(float(full), half)


@dataclass(frozen=True)
class MemoryUse:
    """One memory of the plan.

    Members
    -------
    owner : str     the unit or buffer class it belongs to
    name : str      its path inside the owner
    depth, width : int
    count : int     how many identical ones
    rom : bool      initialised and never written
    """
    owner: str
    name: str
    depth: int
    width: int
    count: int = 1
    rom: bool = False

    @property
    def bits(self) -> int:
        return self.depth * self.width * self.count

    @property
    def dp16kd(self) -> int:
        return dp16kd_blocks(self.depth, self.width) * self.count

    @property
    def bram36(self) -> float:
        return bram36_blocks(self.depth, self.width) * self.count


def unit_memories(owner: str | None, component) -> list[MemoryUse]:
    """Every memory inside ``component`` (elaborated for no platform), one :class:`MemoryUse` each;
    ``owner`` None: each memory's owner is its top-level submodule (e.g. ``buffers``, ``ntt_unit``)."""
    from amaranth.hdl import Fragment, Shape
    from amaranth.hdl._mem import MemoryInstance     # the fragment Amaranth 0.5 makes of a Memory

    found = []

    def walk(fragment, path):
        if isinstance(fragment, MemoryInstance):
            mem = fragment._data
            top, _, rest = (path or "memory").partition("/")
            found.append(MemoryUse(owner or top, path if owner else (rest or top), mem.depth,
                                   Shape.cast(mem.shape).width, rom=not fragment._write_ports))
        for sub, name, *_ in fragment.subfragments:
            walk(sub, f"{path}/{name}" if path else str(name))

    walk(Fragment.get(component, None), "")
    return found


@dataclass(frozen=True)
class MemoryPlan:
    """The block-RAM plan of an engine.

    Parameters
    ----------
    uses : tuple of MemoryUse   buffers and unit memories
    device : str                a key of :data:`DEVICES`
    reserve : int               blocks kept for the rest of the SoC (CPU caches and ROM/SRAM,
                                Ethernet buffers, DRAM controller FIFOs)

    Members
    -------
    dp16kd, bram36 : totals;  left : the device's blocks minus the plan and the reserve (in the
    device's family's unit);  fits : left >= 0
    """
    uses: tuple
    device: str = "LFE5UM5G-85F"
    reserve: int = 0

    def __post_init__(self):
        if self.device not in DEVICES:
            raise ParameterError("device", self.device, "one of " + ", ".join(DEVICES))
        check_int("reserve", self.reserve, 0)

    @property
    def dp16kd(self) -> int:
        return sum(u.dp16kd for u in self.uses)

    @property
    def bram36(self) -> float:
        return sum(u.bram36 for u in self.uses)

    @property
    def used(self) -> float:
        return self.dp16kd if DEVICES[self.device]["family"] == "ecp5" else self.bram36

    @property
    def left(self) -> float:
        return DEVICES[self.device]["blocks"] - self.used - self.reserve

    @property
    def fits(self) -> bool:
        return self.left >= 0

    def by_owner(self) -> dict:
        """Totals per owner: ``{owner: {"bits", "dp16kd", "bram36"}}``."""
        out: dict = {}
        for u in self.uses:
            row = out.setdefault(u.owner, {"bits": 0, "dp16kd": 0, "bram36": 0.0})
            row["bits"] += u.bits
            row["dp16kd"] += u.dp16kd
            row["bram36"] += u.bram36
        return out

    def rows(self) -> list[dict]:
        """One row per memory (owner, name, depth x width x count, blocks) for tables and JSON."""
        return [{"owner": u.owner, "name": u.name, "depth": u.depth, "width": u.width, "count": u.count,
                 "rom": u.rom, "bits": u.bits, "dp16kd": u.dp16kd, "bram36": u.bram36} for u in self.uses]

    def summary(self) -> dict:
        d = DEVICES[self.device]
        return {"device": self.device, "device_blocks": d["blocks"], "dp16kd": self.dp16kd,
                "bram36": self.bram36, "reserve": self.reserve, "left": self.left, "fits": self.fits,
                "by_owner": self.by_owner()}

"""Memory plan of the single-port variant (``banking="single"``): one read-or-write port per bank.

Every cycle of a stage reads 2P coefficients and (D cycles later, in place) writes 2P results,
so with one port per bank the reads of a cycle and the writes landing in it need disjoint banks:
4P banks of N/4P words (RACE's choice of four 1RW banks per butterfly, section 4.3.2,
for P lanes).  RACE reorders the outputs of four consecutive butterflies (NTT_swap4); here the
same effect comes from the bank function and the order of the cycles:

* banks: B' = B + 1 = log2(4P) bits, bank(i) = XOR of the B'-bit chunks of i, addr(i) = i >> B'
  (the dual-port plan of :mod:`hhe_gen.cores.ntt.schedule` with one more bank bit);
* a cycle still serves the coset ``base XOR span{e_g : g in G}`` (G = B consecutive positions
  containing k, the same lanes and twiddles): its B positions have distinct residues mod B', so
  its 2P indices hit 2P distinct banks, namely the banks v with bit rho of v XOR bank(base) = 0,
  rho = (G0 + B) mod B' the one residue G misses (bank(e_g) = e_(g mod B'));
* so the read set of a cycle is one of two halves of the banks, chosen by
  f(c) = bit rho of bank(base(c)), a parity of some bits of the cycle number c (mask M);
* the cycles of a stage are visited in an order c = order(c') that makes f(c) = c' mod 2: with an
  odd read-to-write depth D the writes landing in cycle c' (read in c' - D) use the other half,
  so reads and writes of one stage never meet on a bank.  order(): swap bit 0 of c' with the
  lowest bit p of M, then set bit 0 to c'_0 XOR parity(c' & M'), M' = M with bits 0 and p swapped,
  without bit 0 (a bijection, its own per-stage constants p and M');
* where two stages overlap (the reads of stage s+1 while the writes of stage s drain), the
  halves belong to different bit positions and may collide: :func:`single_port_starts` delays
  each stage to its earliest start with no read-after-write hazard and no read/write collision
  on any bank (a static table, like ``stage_starts``), about D cycles per stage.

P <= N/4 (with P = N/2 a stage is one cycle that reads every bank).
"""

from __future__ import annotations

from functools import lru_cache

from hhe_gen.cores.ntt.schedule import NttSchedule, _group_bits, run_schedule, stage_cycles
from hhe_gen.params.errors import ParameterError

__all__ = ["StageOrder", "stage_order", "single_port_schedule", "single_port_starts", "order_cycle", "run_banked"]


def _parity(x: int) -> int:
    return bin(x).count("1") & 1


class StageOrder:
    """Per-stage constants of the cycle order: k, G0, rho, the mask M of f, p and M'."""

    def __init__(self, k: int, n_log: int, lanes: int):
        b = (2 * lanes).bit_length() - 1
        bb = b + 1
        group = _group_bits(k, b)
        others = [g for g in range(n_log) if g not in group]
        self.k, self.g0 = k, group[0]
        self.rho = (self.g0 + b) % bb
        self.mask = sum(1 << i for i, pos in enumerate(others) if pos % bb == self.rho)
        if not self.mask:
            raise ParameterError("lanes", lanes, "at most N/4 with banking='single'")
        self.p = (self.mask & -self.mask).bit_length() - 1
        swapped = _swap(self.mask, self.p)
        self.mask2 = swapped & ~1


def _swap(x: int, p: int) -> int:
    if p == 0:
        return x
    b0, bp = x & 1, (x >> p) & 1
    return (x & ~1 & ~(1 << p)) | bp | (b0 << p)


def order_cycle(so: StageOrder, c: int) -> int:
    """The cycle number visited at position c of the stage."""
    d = c ^ (_parity(c & so.mask2) & 1)       # bit 0 := c_0 XOR parity(c & M')
    return _swap(d, so.p)


@lru_cache(maxsize=256)
def stage_order(k: int, n_log: int, lanes: int) -> StageOrder:
    return StageOrder(k, n_log, lanes)


@lru_cache(maxsize=32)
def single_port_schedule(n: int, lanes: int, inverse: bool = False) -> NttSchedule:
    """The schedule (an :class:`~hhe_gen.cores.ntt.schedule.NttSchedule` with B' bank bits, so
    ``run_schedule`` executes it) with every stage's cycles in :func:`order_cycle` order."""
    if not isinstance(lanes, int) or lanes > n // 4:
        raise ParameterError("lanes", lanes, f"a power of two 1 .. N/4 = {n // 4} with banking='single'")
    n_log, b = n.bit_length() - 1, (2 * lanes).bit_length() - 1
    stages, bits = [], []
    for s in range(n_log):
        k = s if inverse else n_log - 1 - s
        so = stage_order(k, n_log, lanes)
        cycles, group = stage_cycles(n, lanes, k, b, order=lambda cc, so=so: order_cycle(so, cc))
        stages.append(cycles)
        bits.append((k, group))
    return NttSchedule(n_log, lanes, b + 1, inverse, tuple(stages), tuple(bits))


@lru_cache(maxsize=32)
def _starts(n: int, lanes: int, inverse: bool, depth: int):
    sched = single_port_schedule(n, lanes, inverse)
    ready, writes, starts, t = {}, {}, [], 0
    banks_of = [[frozenset(sched.bank(i) for sl in cyc for i in (sl.lo, sl.hi)) for cyc in stage]
                for stage in sched.stages]
    for s, stage in enumerate(sched.stages):
        start = t
        for c, cycle in enumerate(stage):
            for sl in cycle:
                start = max(start, ready.get(sl.lo, 0) - c, ready.get(sl.hi, 0) - c)
        while any(writes.get(start + c, frozenset()) & banks_of[s][c] for c in range(len(stage))):
            start += 1
        for c, cycle in enumerate(stage):
            w = start + c + depth
            if writes.get(w, frozenset()) & banks_of[s][c]:
                raise AssertionError("two write sets in one cycle")      # cannot happen: one stage per cycle
            writes[w] = writes.get(w, frozenset()) | banks_of[s][c]
            for sl in cycle:
                ready[sl.lo] = ready[sl.hi] = w + 1          # single port: readable the cycle after
        starts.append(start)
        t = start + len(stage)
    return tuple(starts), max(ready.values())


def single_port_starts(n: int, lanes: int, inverse: bool, depth: int) -> tuple[tuple[int, ...], int]:
    """(start cycle of every stage, transform cycles) of the single-port plan at read-to-write
    depth ``depth`` (odd): every read after the write it needs (the cycle after: no port does both
    in one cycle), no bank read and written in one cycle; transform cycles = the cycle after the
    last write (when the unload may read)."""
    if depth % 2 == 0:
        raise ParameterError("depth", depth, "odd (the single-port order alternates bank halves)")
    return _starts(n, lanes, bool(inverse), depth)


def run_banked(schedule: NttSchedule, a, q: int) -> list[int]:
    """Execute a single-port schedule (4P banks) with the model's butterflies, checking that each
    cycle's accesses hit distinct banks: :func:`hhe_gen.cores.ntt.schedule.run_schedule`, which
    sizes the memory by the schedule's ``bank_bits``."""
    return run_schedule(schedule, a, q)

"""Conflict-free memory schedule of the iterative P-lane NTT/INTT (the plan cores/ntt follows).

N = 2^n coefficients live in 2P banks (B = log2(2P) bits of bank index), each N/2P words deep:

    bank(i) = XOR of the B-bit chunks of i        addr(i) = i >> B

(i = chunk_0 + chunk_1 * 2^B + ...; the top chunk zero-extended).  (bank, addr) is a bijection: addr
fixes every chunk but chunk_0, and bank then fixes chunk_0.

Stage s uses butterfly bit k (forward Cooley-Tukey: k = n-1-s, pairs (j, j + 2^k); inverse
Gentleman-Sande: k = s).  One cycle serves the 2P indices of a coset  base XOR span{e_g : g in G}
where G is B consecutive bit positions containing k:  G = {k-B+1 .. k} when k >= B-1, else
{0 .. B-1}.  Because bank() maps e_g to e_(g mod B) and the B positions of G have distinct residues
mod B, the 2P indices of a cycle fall in 2P distinct banks (one access per bank per cycle: one
read port and, ``latency`` cycles later, one write port, in place).  Lane l takes the pair whose
lower index has the bits G minus {k} equal to l.

Twiddle of the pair with lower index j: index t = (N >> (k+1)) + (j >> (k+1)) into psi_brv
(forward) or psi_inv_brv (inverse) of :class:`~hhe_gen.models.ntt.NttTables` (the inverse's last
stage uses the merged ``last_inv``).  When k >= B-1 every lane of a cycle uses the same twiddle (a
broadcast); otherwise the cycle needs 2^(B-1-k) consecutive indices, which a twiddle ROM banked P
ways by t mod P serves without conflict.

Cycles: N/2P per stage, n stages: exactly the butterfly bound (N/2) log2(N) / P.  With a butterfly
pipeline of ``latency`` cycles (read to write), a stage may start before the previous one has
written everything, as long as every read comes after the write it needs: :func:`stage_starts`
computes the earliest start of each stage (static, so the controller stores it), and the total is
the bound + latency - 1 (or a few cycles more) for every N >= 2^10 and P <= 32 (the first cycles of a stage only need the
first cycles of the previous one in this order).
"""

from dataclasses import dataclass

from hhe_gen.params.errors import ParameterError

__all__ = ["Slot", "NttSchedule", "ntt_schedule", "run_schedule", "stage_starts", "stage_cycles"]


@dataclass(frozen=True)
class Slot:
    """One lane in one cycle: butterfly on (lo, hi = lo + 2^k) with twiddle index ``tw``."""
    lane: int
    lo: int
    hi: int
    tw: int


@dataclass(frozen=True)
class NttSchedule:
    """The schedule of one transform.

    Members
    -------
    n_log, lanes : log2(N) and P.
    bank_bits : B = log2(2P).
    inverse : False for the forward CT NTT, True for the inverse GS NTT.
    stages : stages[s][c] = the P slots of cycle c of stage s.
    stage_bits : stage_bits[s] = (k, G) for stage s.
    """
    n_log: int
    lanes: int
    bank_bits: int
    inverse: bool
    stages: tuple
    stage_bits: tuple

    def bank(self, i: int) -> int:
        b, mask, out = self.bank_bits, (1 << self.bank_bits) - 1, 0
        while i:
            out ^= i & mask
            i >>= b
        return out

    def addr(self, i: int) -> int:
        return i >> self.bank_bits

    @property
    def cycles(self) -> int:
        return sum(len(s) for s in self.stages)


def _group_bits(k: int, b: int) -> tuple[int, ...]:
    return tuple(range(k - b + 1, k + 1)) if k >= b - 1 else tuple(range(b))


def _deposit(value: int, positions) -> int:
    """Scatter the low bits of ``value`` into the given bit positions (in order)."""
    out = 0
    for idx, pos in enumerate(positions):
        out |= ((value >> idx) & 1) << pos
    return out


def ntt_schedule(n: int, lanes: int, inverse: bool = False) -> NttSchedule:
    """Build the schedule for N = ``n`` points and P = ``lanes`` butterfly units."""
    if not isinstance(n, int) or n < 8 or n & (n - 1) or n > 1 << 16:
        raise ParameterError("N", n, "a power of two 2^3 .. 2^16")
    if not isinstance(lanes, int) or lanes < 1 or lanes & (lanes - 1) or lanes > n // 2:
        raise ParameterError("lanes", lanes, f"a power of two 1 .. N/2 = {n // 2}")
    n_log, b = n.bit_length() - 1, (2 * lanes).bit_length() - 1
    stages, bits = [], []
    for s in range(n_log):
        k = s if inverse else n_log - 1 - s
        cycles, group = stage_cycles(n, lanes, k, b)
        stages.append(cycles)
        bits.append((k, group))
    return NttSchedule(n_log, lanes, b, inverse, tuple(stages), tuple(bits))


def stage_cycles(n: int, lanes: int, k: int, b: int, order=None) -> tuple[tuple, tuple[int, ...]]:
    """The cycles of the stage on butterfly bit ``k`` (coset bits ``b``), and its group G.

    Cycle c serves the coset numbered ``order(c)`` (default: c): its bits are deposited in the
    positions outside G, the lane number in G minus {k}.  Another order (a permutation of the
    cycle numbers, e.g. the single-port plan's) gives the same pairs in other cycles."""
    n_log = n.bit_length() - 1
    group = _group_bits(k, b)
    others = [g for g in range(n_log) if g not in group]
    lane_bits = [g for g in group if g != k]
    cycles = []
    for c in range(n // (2 * lanes)):
        base = _deposit(c if order is None else order(c), others)
        slots = []
        for lane in range(lanes):
            lo = base | _deposit(lane, lane_bits)
            slots.append(Slot(lane, lo, lo | (1 << k), (n >> (k + 1)) + (lo >> (k + 1))))
        cycles.append(tuple(slots))
    return tuple(cycles), group


def run_schedule(schedule: NttSchedule, a, q: int) -> list[int]:
    """Execute the schedule on banked memory with the model's butterflies (a check that the plan
    computes exactly :func:`~hhe_gen.models.ntt.ntt` / ``intt``): reads and writes go through
    (bank, addr), and every cycle's accesses must hit distinct banks.  The memory has
    2^bank_bits banks (2P for this module's plan; schedules with more banks, like the single-port
    plan of ``hhe_gen.cores.ntt.single_port``, run here too)."""
    from hhe_gen.models.ntt import ntt_tables
    n = 1 << schedule.n_log
    t = ntt_tables(n, q)
    banks = [[0] * (n >> schedule.bank_bits) for _ in range(1 << schedule.bank_bits)]
    for i, x in enumerate(a):
        banks[schedule.bank(i)][schedule.addr(i)] = x
    last_stage = schedule.n_log - 1
    for s, stage in enumerate(schedule.stages):
        for cycle in stage:
            used = [schedule.bank(i) for slot in cycle for i in (slot.lo, slot.hi)]
            if len(set(used)) != len(used):
                raise AssertionError(f"bank conflict at stage {s}: banks {used}")
            for slot in cycle:
                u = banks[schedule.bank(slot.lo)][schedule.addr(slot.lo)]
                v = banks[schedule.bank(slot.hi)][schedule.addr(slot.hi)]
                if not schedule.inverse:
                    wv = v * t.psi_brv[slot.tw] % q
                    x, y = (u + wv) % q, (u - wv) % q
                elif s == last_stage:
                    x, y = (u + v) * t.n_inv % q, (u - v) * t.last_inv % q
                else:
                    x, y = (u + v) % q, (u - v) * t.psi_inv_brv[slot.tw] % q
                banks[schedule.bank(slot.lo)][schedule.addr(slot.lo)] = x
                banks[schedule.bank(slot.hi)][schedule.addr(slot.hi)] = y
    return [banks[schedule.bank(i)][schedule.addr(i)] for i in range(n)]


def stage_starts(schedule: NttSchedule, latency: int, write_first: bool = True) -> tuple[list[int], int]:
    """Earliest start cycle of every stage when results are written ``latency`` cycles after their
    reads, and the cycle at which the last result is written (the transform's total cycle count).
    ``write_first``: a read in the same cycle as the write sees the written value (banks whose
    read port is transparent for their write port); False: a read comes at least one cycle after
    the write it needs (banks without that bypass)."""
    if not isinstance(latency, int) or latency < 1:
        raise ParameterError("latency", latency, "an integer >= 1 (butterfly pipeline depth)")
    gap = 0 if write_first else 1
    ready, starts, t = {}, [], 0
    for stage in schedule.stages:
        start = t
        for c, cycle in enumerate(stage):
            for slot in cycle:
                for word in (slot.lo, slot.hi):
                    if word in ready:
                        start = max(start, ready[word] + gap - c)
        for c, cycle in enumerate(stage):
            for slot in cycle:
                ready[slot.lo] = ready[slot.hi] = start + c + latency
        starts.append(start)
        t = start + len(stage)
    return starts, max(ready.values())

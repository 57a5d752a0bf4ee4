"""The memory plan of the iterative special FFT / IFFT (what :class:`.iterative.IterativeFft` builds,
in pure Python, checked against :mod:`hhe_gen.models.fft` by :func:`run_plan`).

The n = N/2 complex slots live in 2P banks, B = log2(2P) bank bits, n/2P words each, indexed
exactly like the NTT's (:mod:`hhe_gen.cores.ntt.schedule`): bank(i) = XOR of the B-bit chunks
of i, addr(i) = i >> B.  Position i is the model's array index x[i] (after the input bit
reversal for the FFT).

Stages (the model's loops, block length L = 2^(k+1), butterfly bit k, pairs (lo, lo + 2^k)):

* IFFT (:func:`~hhe_gen.models.fft.special_ifft_fixed`): k = log2(n)-1 down to 0, Gentleman-Sande
  halving butterflies - the NTT schedule's *forward* bit order, so
  ``ntt_schedule(n, P, inverse=False)`` gives the (conflict-free) pairs of every cycle;
* FFT (:func:`~hhe_gen.models.fft.special_fft_fixed`): k = 0 up to log2(n)-1, Cooley-Tukey
  butterflies - ``ntt_schedule(n, P, inverse=True)``.

Only the pairs of the NTT schedule are reused; the twiddles differ.  The model's twiddle of a pair
depends on j = lo mod 2^k (the position inside the block): IFFT root[(4L - (5^j mod 4L)) * n/L],
FFT root[(5^j mod 4L) * n/L], both from :func:`~hhe_gen.models.fft.twiddle_table`.  In the
schedule's cycle c of a stage with k >= B-1, lane l's pair has
j = (c mod 2^(k-B+1)) + l * 2^(k-B+1) (bits 0..k-B of lo are the low bits of c, bits k-B+1..k-1
are the lane number); for k < B-1, j = l mod 2^k whatever the cycle.  So lane l owns a twiddle
ROM with, per stage, 2^(k-B+1) entries (one for k < B-1), read at address
``tw_offset[s] + (c & tw_mask[s])``: n/P + B - 2 entries per lane, n + P(B-2) in total (about
twice the n/2 distinct roots of a shared ROM, and no crossbar).

One ROM for both directions (:func:`check_shared_twiddles`, the core's ``inverse="both"``): for
the same butterfly bit k both plans have the same coset bits G, the same cycles (pairs), the same
lane_j and the same ``tw_mask``; only the stage order is reversed (IFFT k = log2(n)-1 .. 0, FFT
k = 0 .. log2(n)-1).  The IFFT twiddle root[(4L - (5^j mod 4L)) n/L] is the complex conjugate of
the FFT's root[(5^j mod 4L) n/L] (the root table is exactly conjugate-symmetric and the
quantisation is odd), so the FFT plan's ROMs, addressed by k (``tw_offset_k``), serve both: the
IFFT negates the imaginary part of what it reads.  That holds in the fixed-point table unless a
component saturates (quantize(1 - eps) = max_int but quantize(-(1 - eps)) = min_int): formats with
frac_bits = width - 1 fail it at large n, which :func:`check_shared_twiddles` reports.

I/O order: P consecutive values per beat.  The IFFT loads slots in natural order (position i) and
streams w = bit_reverse(x) out (beat b, lane l reads position bitrev(bP + l)); the FFT loads w into
position bitrev(i) and streams the slots out in natural order.  The P positions of one beat fall in
P distinct banks (they differ in log2(P) consecutive bits, natural or reversed, and B > log2(P)).
"""

from __future__ import annotations

import functools

from hhe_gen.models import fft as fftm
from hhe_gen.cores.ntt.schedule import ntt_schedule, stage_starts
from hhe_gen.params import checks
from hhe_gen.params.errors import ParameterError

__all__ = ["MIN_SLOTS", "MAX_SLOTS", "FftPlan", "fft_plan", "run_plan", "bit_reverse", "check_shared_twiddles"]

MIN_SLOTS = 1 << 3          # N = 2^4
MAX_SLOTS = 1 << 15         # N = 2^16


def bit_reverse(i: int, bits: int) -> int:
    return int(format(i, f"0{bits}b")[::-1], 2) if bits else 0


def check_slots(n, name="n"):
    if isinstance(n, bool) or not isinstance(n, int) or n < MIN_SLOTS or n > MAX_SLOTS or n & (n - 1):
        raise ParameterError(name, n, "a power of two 2^3 .. 2^15 slots (N = 2^4 .. 2^16)")
    return n


def check_lanes(lanes, n, name="lanes"):
    return checks.check_lanes(lanes, n // 4, of=f"n/4 = {n // 4} (n = {n} slots)", name=name)


class FftPlan:
    """Static plan of one transform (n slots, P lanes, direction, read-to-write delay).

    Members
    -------
    n, n_log, lanes, lane_bits (log2 P), bank_bits (B), banks (2P), depth (n/2P), inverse
    stage_k : tuple       butterfly bit k of every stage
    stage_cycles : int    n/(2P) cycles per stage
    starts : tuple        issue cycle of every stage (:func:`stage_starts` with ``delay``,
                          ``write_first=False``: a read a cycle after the write it needs, so the
                          banks need no bypass)
    compute_cycles : int  cycle (from the first issue) of the last write, so the stored result
                          can be read from the next cycle on
    tw_offset, tw_mask : per stage, the twiddle ROM addressing (module docstring)
    tw_offset_k, tw_mask_k : the same indexed by the butterfly bit k (tw_offset_k[stage_k[s]] ==
                          tw_offset[s])
    """

    def __init__(self, n: int, lanes: int, inverse: bool, delay: int):
        self.n = check_slots(n)
        self.lanes = check_lanes(lanes, n)
        if not isinstance(inverse, bool):
            raise ParameterError("inverse", inverse, "True (IFFT) or False (FFT)")
        self.inverse = inverse
        self.n_log = n.bit_length() - 1
        self.lane_bits = lanes.bit_length() - 1
        self.bank_bits = self.lane_bits + 1
        self.banks = 2 * lanes
        self.depth = n // self.banks
        self.delay = delay
        sched = _schedule(n, lanes, not inverse)
        self.schedule = sched
        self.stage_k = tuple(k for k, _ in sched.stage_bits)
        self.stage_groups = tuple(tuple(g) for _, g in sched.stage_bits)
        self.stage_cycles = n // (2 * lanes)
        starts, total = _starts(n, lanes, not inverse, delay)
        self.starts, self.compute_cycles = tuple(starts), total
        b = self.bank_bits
        offs, masks, off = [], [], 0
        for k in self.stage_k:
            size = 1 << (k - b + 1) if k >= b - 1 else 1
            offs.append(off)
            masks.append(size - 1)
            off += size
        self.tw_offset, self.tw_mask, self.tw_depth = tuple(offs), tuple(masks), off
        by_k = sorted(zip(self.stage_k, offs, masks))
        self.tw_offset_k = tuple(o for _, o, _ in by_k)
        self.tw_mask_k = tuple(mk for _, _, mk in by_k)

    # -- addressing ----------------------------------------------------------------------------
    def bank(self, i: int) -> int:
        return self.schedule.bank(i)

    def addr(self, i: int) -> int:
        return i >> self.bank_bits

    def load_position(self, i: int) -> int:
        """Where input value i (i-th of the stream) is stored."""
        return i if self.inverse else bit_reverse(i, self.n_log)

    def unload_position(self, i: int) -> int:
        """Which position the i-th output value is read from."""
        return bit_reverse(i, self.n_log) if self.inverse else i

    def lane_j(self, s: int, c: int, lane: int) -> int:
        """j = lo mod 2^k of lane ``lane`` in cycle c of stage s."""
        k, b = self.stage_k[s], self.bank_bits
        if k >= b - 1:
            return (c & ((1 << (k - b + 1)) - 1)) | (lane << (k - b + 1))
        return lane & ((1 << k) - 1)

    def twiddle_index(self, k: int, j: int) -> int:
        """Index into :func:`~hhe_gen.models.fft.twiddle_table` of the pair at bit k, offset j."""
        half, mask, gap, lenq = fftm._stage_params(self.n, k + 1)
        rot = _rotation(self.n)[j]
        return ((lenq - (rot & mask)) << gap) if self.inverse else ((rot & mask) << gap)

    def twiddle_rom(self, lane: int) -> list[int]:
        """Twiddle indices of lane ``lane``'s ROM, address by address."""
        out = []
        for s, k in enumerate(self.stage_k):
            for a in range(self.tw_mask[s] + 1):
                out.append(self.twiddle_index(k, self.lane_j(s, a, lane)))
        return out


@functools.lru_cache(maxsize=32)
def _schedule(n, lanes, inverse):
    return ntt_schedule(n, lanes, inverse=inverse)


@functools.lru_cache(maxsize=64)
def _starts(n, lanes, inverse, delay):
    return stage_starts(_schedule(n, lanes, inverse), delay, write_first=False)


@functools.lru_cache(maxsize=32)
def _rotation(n):
    return fftm.rotation_group(n)


def fft_plan(n: int, lanes: int, inverse: bool, delay: int) -> FftPlan:
    return FftPlan(n, lanes, inverse, delay)


def check_shared_twiddles(inv_plan: FftPlan, fwd_plan: FftPlan, fmt: fftm.FixedPointFormat) -> None:
    """Check that one set of twiddle ROMs (``fwd_plan``'s layout, addressed by bit k) serves both
    directions: for every stage bit k, lane and cycle c the two plans have the same pairs (coset
    bits), lane_j and ``tw_mask``, and the IFFT's twiddle is exactly (re, -im) of the FFT's, with -im
    a ``fmt.width``-bit value.  Raises ParameterError naming ``fmt`` when the quantised table breaks
    the identity (a saturated component, e.g. frac_bits = width - 1 at large n)."""
    if not (inv_plan.inverse and not fwd_plan.inverse and inv_plan.n == fwd_plan.n
            and inv_plan.lanes == fwd_plan.lanes):
        raise ParameterError("plans", (inv_plan, fwd_plan), "an IFFT and an FFT plan of the same n and P")
    table = fftm.twiddle_table(inv_plan.n, fmt)
    fwd_stage = {k: s for s, k in enumerate(fwd_plan.stage_k)}
    for si, k in enumerate(inv_plan.stage_k):
        sf = fwd_stage[k]
        if inv_plan.stage_groups[si] != fwd_plan.stage_groups[sf] or inv_plan.tw_mask[si] != fwd_plan.tw_mask[sf]:
            raise AssertionError(f"stage bit {k}: the plans' coset bits or twiddle masks differ")
        for lane in range(inv_plan.lanes):
            for c in range(inv_plan.tw_mask[si] + 1):
                j = inv_plan.lane_j(si, c, lane)
                if j != fwd_plan.lane_j(sf, c, lane):
                    raise AssertionError(f"stage bit {k}, lane {lane}, cycle {c}: lane_j differs")
                re_i, im_i = table[inv_plan.twiddle_index(k, j)]
                re_f, im_f = table[fwd_plan.twiddle_index(k, j)]
                if (re_i, im_i) != (re_f, -im_f) or not fmt.min_int <= -im_f <= fmt.max_int:
                    raise ParameterError(
                        "fmt", fmt, f"a format whose IFFT twiddles are the exact conjugates of the FFT's "
                        f"(n = {inv_plan.n}, bit {k}, j = {j}: {(re_i, im_i)} against {(re_f, im_f)}; a "
                        f"saturated component - use frac_bits <= width - 2)")


def run_plan(plan: FftPlan, values, fmt: fftm.FixedPointFormat,
             shared_with: FftPlan | None = None) -> list[tuple[int, int]]:
    """Execute the plan on banked memory with the model's butterflies: load in stream order,
    every stage cycle by cycle (each lane's pair from the schedule, its twiddle from its own ROM at
    ``tw_offset[s] + (c & tw_mask[s])``; every cycle's accesses in distinct banks), unload in stream
    order.  Equal to special_ifft_fixed / special_fft_fixed (tests).

    ``shared_with``: the FFT plan of the same n and P whose ROMs serve both directions (the core's
    ``inverse="both"``): the twiddle is read from its layout at ``tw_offset_k[k] + (c & tw_mask_k[k])``
    and conjugated (imaginary part negated, wrapped to ``fmt.width`` bits) when ``plan`` is an IFFT."""
    n, p = plan.n, plan.lanes
    if len(values) != n:
        raise ParameterError("values", f"<{len(values)} values>", f"exactly n = {n}")
    table = fftm.twiddle_table(n, fmt)
    rom_plan = plan if shared_with is None else shared_with
    roms = [[table[t] for t in rom_plan.twiddle_rom(lane)] for lane in range(p)]
    if shared_with is not None:
        if shared_with.inverse or shared_with.n != n or shared_with.lanes != p:
            raise ParameterError("shared_with", shared_with, f"an FFT plan (inverse False) of n = {n}, P = {p}")
        if plan.inverse:
            roms = [[(re, fmt.wrap(-im)) for re, im in rom] for rom in roms]
    banks = [[None] * plan.depth for _ in range(plan.banks)]
    for beat in range(n // p):
        idx = [plan.load_position(beat * p + lane) for lane in range(p)]
        assert len({plan.bank(i) for i in idx}) == p, "load bank conflict"
        for lane, i in enumerate(idx):
            banks[plan.bank(i)][plan.addr(i)] = values[beat * p + lane]
    bf = fftm.butterfly_gs_fixed if plan.inverse else fftm.butterfly_ct_fixed
    for s, stage in enumerate(plan.schedule.stages):
        for c, cycle in enumerate(stage):
            used = [plan.bank(i) for sl in cycle for i in (sl.lo, sl.hi)]
            assert len(set(used)) == len(used), "stage bank conflict"
            for sl in cycle:
                assert sl.lo % (1 << plan.stage_k[s]) == plan.lane_j(s, c, sl.lane)
                k = plan.stage_k[s]
                if shared_with is None:
                    tw = roms[sl.lane][plan.tw_offset[s] + (c & plan.tw_mask[s])]
                else:
                    tw = roms[sl.lane][shared_with.tw_offset_k[k] + (c & shared_with.tw_mask_k[k])]
                a = banks[plan.bank(sl.lo)][plan.addr(sl.lo)]
                b = banks[plan.bank(sl.hi)][plan.addr(sl.hi)]
                x, y = bf(a, b, tw, fmt)
                banks[plan.bank(sl.lo)][plan.addr(sl.lo)] = x
                banks[plan.bank(sl.hi)][plan.addr(sl.hi)] = y
    out = []
    for beat in range(n // p):
        idx = [plan.unload_position(beat * p + lane) for lane in range(p)]
        assert len({plan.bank(i) for i in idx}) == p, "unload bank conflict"
        out.extend(banks[plan.bank(i)][plan.addr(i)] for i in idx)
    return out

"""Static plan of the pipelined NTT (:class:`~.pipelined.PipelinedNtt`): which stage does what to
which index bit, where every index bit travels (lane or time), the twiddle ROMs and the cycle
formulas.

Index layout
------------
A polynomial of N = 2^n coefficients passes as N/P beats of P lanes.  At every point of the
pipeline each of the n bits of a coefficient's index j (its position in the model's list, which
the in-place algorithm keeps for the whole transform) sits either in a lane bit or in a bit of the
beat counter c (0 .. N/P - 1, the beat's position in its polynomial): ``Layout(lane_bits,
time_bits)``, ``lane_bits[i]`` = the index bit carried by lane-number bit i, ``time_bits[i]`` = the
index bit carried by beat-counter bit i.  Input: the natural layout (lane bits = index bits
0 .. log2 P - 1, time bits = the others), i.e. beat b holds list positions b*P .. b*P + P - 1.

Stages (forward: butterfly bits k = n-1 .. 0, inverse: k = 0 .. n-1, the model's order)
-------------------------------------------------------------------------------------------
* ``temporal`` (SDF): k is time bit p: each lane pairs beats 2^p apart (a feedback delay line of
  d = 2^p beats, one butterfly per lane, busy half the time).
* ``spatial``: k is lane bit l: P/2 butterflies on the lane pairs differing in bit l (no delay).
* ``commutator`` (MDC): exchanges lane bit l and time bit p (delay 2^p on one lane of each pair
  before a switch and 2^p on the other after it); an MDC runs one before every butterfly bit
  that sits in the time bits, so all its butterflies are spatial (P/2 per stage, never idle).

The SDF keeps the natural layout throughout (its output is exactly the model's list order); the
MDC ends in a permuted layout (:func:`output_positions`, :func:`to_model_order`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from hhe_gen.models.ntt import ntt_tables

__all__ = ["ARCHS", "Layout", "Stage", "plan_stages", "output_positions", "to_model_order",
           "from_model_order", "twiddle_table", "stage_latency"]

ARCHS = ("sdf", "mdc")


@dataclass(frozen=True)
class Layout:
    lane_bits: tuple[int, ...]
    time_bits: tuple[int, ...]

    def index(self, beat: int, lane: int) -> int:
        """The index j carried by ``lane`` of beat ``beat``."""
        j = 0
        for i, b in enumerate(self.lane_bits):
            j |= ((lane >> i) & 1) << b
        for i, b in enumerate(self.time_bits):
            j |= ((beat >> i) & 1) << b
        return j


def natural_layout(n_log: int, lanes_log: int) -> Layout:
    return Layout(tuple(range(lanes_log)), tuple(range(lanes_log, n_log)))


@dataclass(frozen=True)
class Stage:
    """One stage of the pipeline.

    Members
    -------
    kind : "temporal" | "spatial" | "commutator"
    k : the butterfly's index bit (commutator: the index bit it moves into the lanes)
    lane_pos : spatial / commutator: the lane-number bit (pairs = lanes differing in it)
    time_pos : temporal / commutator: the beat-counter bit (distance / delay 2^time_pos beats)
    layout : the index layout at the stage's input (the output's, for butterflies)
    """
    kind: str
    k: int
    lane_pos: int
    time_pos: int
    layout: Layout


@lru_cache(maxsize=256)
def plan_stages(n_log: int, lanes_log: int, arch: str, inverse: bool) -> tuple[tuple[Stage, ...], Layout]:
    """The stages in pipeline order and the output layout."""
    lay = natural_layout(n_log, lanes_log)
    order = range(n_log) if inverse else range(n_log - 1, -1, -1)
    stages = []
    prev = None
    for k in order:
        if k in lay.time_bits and arch == "mdc":
            p = lay.time_bits.index(k)
            l = lay.lane_bits.index(prev) if prev is not None else lanes_log - 1
            stages.append(Stage("commutator", k, l, p, lay))
            lanes, times = list(lay.lane_bits), list(lay.time_bits)
            lanes[l], times[p] = times[p], lanes[l]
            lay = Layout(tuple(lanes), tuple(times))
        if k in lay.lane_bits:
            stages.append(Stage("spatial", k, lay.lane_bits.index(k), -1, lay))
        else:
            stages.append(Stage("temporal", k, -1, lay.time_bits.index(k), lay))
        prev = k
    return tuple(stages), lay


def output_positions(n_log: int, lanes_log: int, arch: str, inverse: bool) -> list[int]:
    """out[s] = the model-list position of stream element s (s = beat * P + lane) at the output."""
    _, lay = plan_stages(n_log, lanes_log, arch, inverse)
    P = 1 << lanes_log
    return [lay.index(s >> lanes_log, s & (P - 1)) for s in range(1 << n_log)]


def to_model_order(stream, n_log: int, lanes_log: int, arch: str, inverse: bool) -> list[int]:
    """Host-side permutation: the output stream (beat-major, lane-minor) -> the model's list."""
    pos = output_positions(n_log, lanes_log, arch, inverse)
    out = [None] * len(pos)
    for s, j in enumerate(pos):
        out[j] = stream[s]
    return out


def from_model_order(values, n_log: int, lanes_log: int, arch: str, inverse: bool) -> list[int]:
    """The inverse of :func:`to_model_order` (the stream order of a model-ordered list)."""
    pos = output_positions(n_log, lanes_log, arch, inverse)
    return [values[j] for j in pos]


def twiddle_table(stage: Stage, n: int, moduli, factors, inverse: bool, fixed_lanes: int):
    """ROM contents of one butterfly of ``stage`` whose lane bits are ``fixed_lanes`` (the lane
    number of its lower input): address = (the beat-counter bits that carry index bits above k,
    in counter order) | sel << (their count); word = psi_brv[2^s + (j >> (k+1))] (forward, stage
    s = n-1-k) or psi_inv_brv[N/2^(k+1) + (j >> (k+1))] (inverse), times the reducer's factor.
    Returns (contents, list of the counter bits that form the address)."""
    lay, k = stage.layout, stage.k
    n_log = n.bit_length() - 1
    rel = [i for i, b in enumerate(lay.time_bits) if b > k]
    j_lane = 0
    for i, b in enumerate(lay.lane_bits):
        j_lane |= ((fixed_lanes >> i) & 1) << b
    words = []
    for q, f in zip(moduli, factors):
        t = ntt_tables(n, q)
        for a in range(1 << len(rel)):
            j = j_lane
            for r, i in enumerate(rel):
                j |= ((a >> r) & 1) << lay.time_bits[i]
            i_bf = j >> (k + 1)
            if inverse:
                w = t.psi_inv_brv[(n >> (k + 1)) + i_bf]
            else:
                w = t.psi_brv[(1 << (n_log - 1 - k)) + i_bf]
            words.append(w * f % q)
    return words, rel


def stage_latency(stage: Stage, L: int, lanes_log: int) -> int:
    """Cycles (enabled) from a beat entering the stage to the same index position leaving it:
    temporal d + L + 1 (d = 2^time_pos), spatial L + 1, commutator 2^time_pos."""
    if stage.kind == "temporal":
        return (1 << stage.time_pos) + L + 1
    if stage.kind == "spatial":
        return L + 1
    return 1 << stage.time_pos

"""A Keccak-f[1600] round a few planes at a time: the narrow datapath of the XOF.

FIPS 202's round maps the state A to A' plane by plane: output plane y' (lanes (x', y'), x' = 0..4)
is chi (and, for lane (0, 0), iota) of the five lanes B[x'][y'] = rot(A[x][y] ^ D[x], r[x][y]) with
(x, y) = ((x' + 3y') mod 5, x') (pi's inverse: pi moves lane (x, y) to (y, 2x + 3y)), where
D[x] = C[x-1] ^ rot(C[x+1], 1) and C[x] is column x's parity.  Every input lane feeds exactly one
output plane, so the five output planes can be formed in turn from the same A, ``p`` per cycle:
:class:`KeccakPlanes` is that network for the output planes of one *group* g (planes
g*p .. g*p + p - 1, the last group may be shorter), ``G = ceil(5 / p)`` groups per round.

What it costs against the whole round (:func:`~.permutation.keccak_round_hw`): theta's column
parities once (they read all of A), then per output plane slot a G:1 choice of five rotated lanes
and five rotated D words (the rotations are wiring; which ones depends on the group), one XOR and
chi; the caller keeps the planes of the groups before the last in a register and writes the new
state when the last group is formed (:class:`~.xof.ShakeXof` with ``planes_per_cycle``).

Parameters
----------
planes_per_cycle : int      p, one of :data:`PLANES_PER_CYCLE` (5: the whole round)

Members
-------
i_state : In(1600)          A, the state before the round (lane x + 5y in bits 64(x+5y) ..)
group : In(range(G))        which output planes (absent when G = 1)
rc : In(64)                 iota's round constant (XORed into lane (0, 0) in group 0)
o_planes : Out(320 * p)     output plane g*p + s in bits 320s .. 320s + 319 (lane x' of it in
                            bits 320s + 64x' ..); a slot past plane 4 (the last group of
                            p = 2, 3) carries no plane: the caller ignores it

Latency: combinational.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.keccak import RHO_OFFSETS
from hhe_gen.params.errors import ParameterError

from .permutation import LANE_BITS, STATE_BITS, _rotl, state_lanes

__all__ = ["PLANES_PER_CYCLE", "PLANE_BITS", "check_planes_per_cycle", "plane_groups", "KeccakPlanes"]

#: Allowed ``planes_per_cycle`` values: 1, 2, 3 planes of a round per cycle, or 5 (a whole round).
PLANES_PER_CYCLE: tuple[int, ...] = (1, 2, 3, 5)
PLANE_BITS = 5 * LANE_BITS


def check_planes_per_cycle(planes_per_cycle) -> int:
    """Validate ``planes_per_cycle`` and return it (raises ParameterError otherwise)."""
    if isinstance(planes_per_cycle, bool) or planes_per_cycle not in PLANES_PER_CYCLE:
        raise ParameterError("planes_per_cycle", planes_per_cycle,
                             "one of 1, 2, 3 (planes of a Keccak round per cycle) or 5 (a whole round)")
    return int(planes_per_cycle)


def plane_groups(planes_per_cycle: int) -> int:
    """G = ceil(5 / p): cycles per round with p planes per cycle."""
    p = check_planes_per_cycle(planes_per_cycle)
    return -(-5 // p)


class KeccakPlanes(wiring.Component):
    """The output planes of one group of a Keccak round (see the module docstring)."""

    # FIPS 202's rotations (from the model); a test may substitute a broken table
    _rho_offsets = RHO_OFFSETS

    @quiet_on_error
    def __init__(self, planes_per_cycle: int):
        self.planes_per_cycle = p = check_planes_per_cycle(planes_per_cycle)
        self.groups = plane_groups(p)
        members = {"i_state": In(STATE_BITS), "rc": In(LANE_BITS), "o_planes": Out(PLANE_BITS * p)}
        if self.groups > 1:
            members["group"] = In(range(self.groups))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        p, groups = self.planes_per_cycle, self.groups
        a = state_lanes(self.i_state)                     # a[x + 5y]
        rho = self._rho_offsets
        # theta: column parities C[x], D[x] = C[x-1] ^ rot(C[x+1], 1), once for the whole state
        col = [a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] for x in range(5)]
        d = []
        for x in range(5):
            dx = Signal(LANE_BITS, name=f"d{x}")
            m.d.comb += dx.eq(col[(x + 4) % 5] ^ _rotl(col[(x + 1) % 5], 1))
            d.append(dx)
        group = self.group if groups > 1 else Const(0, 1)
        planes = []
        for s in range(p):
            # output plane y' = g*p + s for the groups g that have it
            ys = [g * p + s for g in range(groups) if g * p + s < 5]
            b = []
            for xo in range(5):
                lane_of = [((xo + 3 * y) % 5) + 5 * xo for y in ys]     # input lane (x, y = x')
                lanes = [_rotl(a[i], rho[i]) for i in lane_of]
                ds = [_rotl(d[i % 5], rho[i]) for i in lane_of]
                cands = [la ^ ld for la, ld in zip(lanes, ds)]
                bx = Signal(LANE_BITS, name=f"b{s}_{xo}")
                m.d.comb += bx.eq(cands[0] if len(ys) == 1 else Array(cands)[group])
                b.append(bx)
            out = []
            for xo in range(5):
                v = b[xo] ^ (~b[(xo + 1) % 5] & b[(xo + 2) % 5])
                if s == 0 and xo == 0:                  # lane (0, 0): plane 0 is group 0's slot 0
                    v = v ^ (self.rc & (group == 0).replicate(LANE_BITS))
                out.append(v)
            planes.append(Cat(*out))
        m.d.comb += self.o_planes.eq(Cat(*planes))
        return m

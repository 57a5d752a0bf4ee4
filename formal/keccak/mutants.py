"""Deliberately broken Keccak cores: each proof of this package must refute one of them.

Registered with ``expect="FAIL"`` in :mod:`.proofs` (and used by the tests): a proof that passed
on one of these would be unable to find that kind of bug.
"""

from amaranth import Mux

from hhe_gen.cores.keccak.permutation import RHO_OFFSETS, ROUND_CONSTANTS, KeccakRounds
from hhe_gen.cores.keccak.xof import Phase, ShakeXof

__all__ = ["WrongRotationRounds", "WrongConstantRounds", "DirtyRestartXof", "EarlyOutputXof",
           "UnstableOutputXof"]


class WrongRotationRounds(KeccakRounds):
    """rho rotates lane (2, 1) by one bit too many."""
    _rho_offsets = tuple((r + 1) % 64 if i == 7 else r for i, r in enumerate(RHO_OFFSETS))


class WrongConstantRounds(KeccakRounds):
    """The iota constant of round 23 has bit 31 flipped."""
    _round_constants = tuple(c ^ (1 << 31) if i == 23 else c
                             for i, c in enumerate(ROUND_CONSTANTS))


class DirtyRestartXof(ShakeXof):
    """A restart resets the control but keeps the state register."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.abort):
            m.d.sync += self.state.eq(self.state)
        return m


class EarlyOutputXof(ShakeXof):
    """Offers output already in the last cycle of the permutation after the padding."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        early = (self.phase == Phase.PERM_SQUEEZE) & (self.step == self.perm_cycles - 1)
        m.d.comb += self.o_stream.valid.eq(
            Mux(self.abort, 0, early | (self.phase == Phase.SQUEEZE)))
        return m


class UnstableOutputXof(ShakeXof):
    """Goes back to the block's first beat when the consumer does not take the offered one."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If((self.phase == Phase.SQUEEZE) & ~self.o_stream.ready & ~self.abort &
                  (self.pos != 0)):
            m.d.sync += self.pos.eq(0)
        return m

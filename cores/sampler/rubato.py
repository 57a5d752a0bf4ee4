"""Rubato's round-constant and noise samplers (``docs/rubato.md`` sections 3 and 4)."""

from __future__ import annotations

from hhe_gen.cores.unused import validating
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import RubatoParams

from .gaussian import GaussianCDT
from .uniform import UniformModQ

__all__ = ["RubatoRoundConstants", "RubatoNoise"]


def _check_params(params) -> RubatoParams:
    if not isinstance(params, RubatoParams):
        raise ParameterError("params", params, "a RubatoParams (hhe_gen.params.rubato_params(name))")
    return params


class RubatoRoundConstants(UniformModQ):
    """Rubato's round constants: 4-byte little-endian words, masked to ``q_bits``, rejected if
    ``>= q`` (docs/rubato.md §3), bit-exact with :func:`hhe_gen.models.sampler.rubato_round_constants`.

    Feed it the XOF stream of ``nonce LE64 || counter LE64`` (a fresh SHAKE256 per block); the
    first ``(r+1)*n`` values are ``rc[0][0..n-1], rc[1][0..n-1], ...``.  A :class:`UniformModQ`
    with ``word_bytes = 4`` (which is also the model's ``ceil(q_bits/8)`` for the 25/26-bit q).

    Parameters
    ----------
    params : RubatoParams
    in_bytes : int   W, XOF bytes per beat

    Members, throughput and latency: as :class:`UniformModQ` (one 4-byte candidate per
    ``max(1, 4/W)`` cycles, acceptance q/2^q_bits = 0.982 or 0.992).
    """

    def __init__(self, params, *, in_bytes: int = 1):
        with validating(self):
            self.params = _check_params(params)
        super().__init__(params.q, in_bytes=in_bytes, word_bytes=4)
        assert self.value_bits == params.q_bits

    @property
    def count(self) -> int:
        """(r+1)*n: the constants one keystream block needs."""
        return self.params.round_constant_count


class RubatoNoise(GaussianCDT):
    """Rubato's noise (docs/rubato.md §4): 32-bit little-endian words, ``b = w & 1``, ``u = w >> 1``,
    ``|e| = #{k : T[k] < u}`` over the table exactly as given (the Par-128M/L defect included),
    ``e = -|e|`` if b.  Bit-exact with :func:`hhe_gen.models.sampler.rubato_noise_from_words`.

    Feed it the XOF stream of ``nonce || counter || seed || 0^8``; the first n values are the
    block's noise (only the first l are added).  A :class:`GaussianCDT` with the 31-bit table.

    Parameters
    ----------
    params : RubatoParams
    in_bytes : int       W, XOF bytes per beat
    comparators : int    table entries compared per cycle (default: all)
    moduli : sequence    optional residue outputs (e.g. ``(params.q,)``)
    table : sequence     override of ``params.cdf_table`` (e.g. a corrected table)

    Members, throughput and latency: as :class:`GaussianCDT` with 4 bytes per sample.
    """

    def __init__(self, params, *, in_bytes: int = 1, comparators: int | None = None, moduli=None,
                 table=None):
        with validating(self):
            self.params = _check_params(params)
        super().__init__(bits=31, table=params.cdf_table if table is None else table, in_bytes=in_bytes,
                         comparators=comparators, moduli=moduli)

"""Keccak-f[1600] and the SHAKE128/SHAKE256 streaming XOF (installed as ``hhe_gen.cores.keccak``).

Components
----------
:class:`KeccakF1600`
    iterative permutation, ``rounds_per_cycle`` in 1, 2, 3, 4, 6, 8, 12, 24; a stream of 1600-bit
    states in and out; latency and initiation interval ``24 / rounds_per_cycle`` cycles.
:class:`KeccakRounds`, :func:`keccak_round_hw`
    the combinational round network the other two are built from.
:class:`KeccakPlanes`
    a round's output planes p at a time (p = 1, 2, 3): the XOF's narrow datapath
    (``ShakeXof(planes_per_cycle=p)``, ``24 * ceil(5/p)`` cycles per permutation).
:class:`ShakeXof`
    SHAKE128 / SHAKE256 sponge: absorbs a byte stream of any length (padding done in hardware),
    squeezes for as long as the consumer takes beats, restarts per message.

Byte-stream contract (shared with the samplers in ``hhe_gen.cores.sampler``)
----------------------------------------------------------------------------
A byte stream of W bytes per beat (W in {1, 2, 4, 8}) is ``stream.Signature(unsigned(8*W))``
(:func:`byte_stream_signature`), little-endian: the first byte of the stream is in bits 0..7 of
the first beat, byte ``j`` of a beat in bits ``8j .. 8j+7``.  ``ShakeXof.o_stream`` is exactly
that: each beat is the next W bytes of SHAKE's output, for as long as the consumer takes beats.

The XOF's absorb side (``ShakeXof.i_stream``) carries :func:`absorb_layout` payloads: the same W
little-endian data bytes plus ``last`` (this beat ends the message) and ``nbytes`` (how many of
the low bytes of a ``last`` beat are message bytes, 0..W; every other beat carries W bytes).

State encoding: a 1600-bit value whose byte ``b`` (bits ``8b .. 8b+7``) is byte ``b`` of FIPS
202's state string, i.e. lane ``x + 5*y`` in bits ``64*(x+5y) .. +63``; the golden model
:mod:`hhe_gen.models.keccak` uses the same lanes.
"""

from .permutation import (LANE_BITS, ROUNDS_PER_CYCLE, STATE_BITS, KeccakF1600, KeccakRounds,
                          check_rounds_per_cycle, keccak_round_hw, state_lanes)
from .planes import PLANES_PER_CYCLE, KeccakPlanes, check_planes_per_cycle
from .xof import (BEAT_BYTES, RATES, VARIANTS, Phase, ShakeXof, absorb_layout,
                  byte_stream_signature, pad_cycles, permutation_cycles,
                  squeeze_bytes_per_cycle)

__all__ = [
    "KeccakF1600", "KeccakRounds", "keccak_round_hw", "state_lanes", "check_rounds_per_cycle",
    "ROUNDS_PER_CYCLE", "STATE_BITS", "LANE_BITS", "KeccakPlanes", "PLANES_PER_CYCLE", "check_planes_per_cycle",
    "ShakeXof", "Phase", "absorb_layout", "byte_stream_signature", "pad_cycles", "permutation_cycles", "squeeze_bytes_per_cycle",
    "BEAT_BYTES", "RATES", "VARIANTS",
]

"""On-chip samplers fed by the XOF byte stream (installed as ``hhe_gen.cores.sampler``).

Every sampler is a stream component: ``i_stream`` takes the XOF's bytes (W bytes per beat,
little-endian, :func:`byte_stream`), ``o_stream`` gives samples, bit-exact with
:mod:`hhe_gen.models.sampler` (same values, same bytes consumed per value), and ``clear``
restarts it for a new XOF message.

=============================  ==========================  =====================================
core                           model                       bytes per sample
=============================  ==========================  =====================================
:class:`UniformModQ`           ``uniform_mod_q``           ceil(bitlen(q)/8) / accept rate
:class:`GaussianCDT`           ``gaussian_cdt``            (bits+1)/8 (8 by default)
:class:`RubatoRoundConstants`  ``rubato_round_constants``  4 / accept rate
:class:`RubatoNoise`           ``rubato_noise``            4
:class:`TernaryUniform`        ``ternary_uniform``         1/3 on average
:class:`TernaryHamming`        ``ternary_hamming``         ceil(h/8) + k * candidates per vector
:class:`Residues`              ``to_residues``             (a stage after any of them)
=============================  ==========================  =====================================

Seeding (:mod:`.seeding`): :class:`SeedMessage` holds the write-only 256-bit seed and emits the XOF
messages (``seeded_xof``'s 41 bytes, Rubato's 16- and 32-byte inputs) for the XOF's absorb side;
:class:`SeededSampler` chains seed -> SHAKE256 (:class:`hhe_gen.cores.keccak.ShakeXof`) -> a
sampler, with no port that carries the seed.
"""

from .bytes import ByteGatherer, byte_stream
from .gaussian import CDTScan, GaussianCDT
from .residues import Residues, residue_layout
from .rubato import RubatoNoise, RubatoRoundConstants
from .seeding import MessageKind, SeededSampler, SeedMessage, command_layout, message_bytes
from .ternary import HammingShuffle, PiecePairSelector, PieceSelector, TernaryHamming, TernaryUniform
from .uniform import RejectionFilter, UniformModQ

__all__ = ["ByteGatherer", "byte_stream", "CDTScan", "GaussianCDT", "Residues", "residue_layout",
           "RubatoNoise", "RubatoRoundConstants", "RejectionFilter", "UniformModQ", "HammingShuffle",
           "PieceSelector", "PiecePairSelector", "TernaryHamming", "TernaryUniform", "MessageKind",
           "SeededSampler", "SeedMessage", "command_layout", "message_bytes"]

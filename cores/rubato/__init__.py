"""The Rubato keystream core (installed as ``hhe_gen.cores.rubato``).

=================================  =====================================================
:class:`RubatoCore`                key + (nonce, counter) -> l keystream words (+ noise)
:class:`RubatoDatapath`            the n-word state and its four layers, ``lanes`` wide
:class:`RoundKeySchedule`          XOF words -> round constants -> key[i]*rc -> round-key banks
:mod:`.multiplier`                 Barrett modmul or the multi-field Butterfly's Z_t mode
:mod:`.schedule`                   the layer sequence and the exact cycle formula
:mod:`.lanes`                      shift-and-add Z_q helpers (linear layers, small reduction)
:mod:`.simulate`                   driving the core in Amaranth's simulator (tests, KAT on RTL)
=================================  =====================================================

Specification: ``shared/kat/rubato/SPEC.md``; golden model :mod:`hhe_gen.models.rubato`; the
core equals it word for word and layer for layer (``hhe_gen.kat_rtl`` runs every KAT vector).

Design notes
------------
* **Schedule.** One phase per layer (ARK, MixColumns, MixRows, Feistel, in the reference loop's
  order), ``lanes`` words per cycle, ``n/lanes + depth + 1`` cycles per phase.  The round keys
  ``key[i]*rc[j][i]`` are computed as the round constants arrive from the XOF (one multiplier,
  one constant per cycle) into a banked memory, so the XOF and the key multiplications overlap
  the layers; an ARK(j) phase waits only if round j's constants are not all in yet.
* **Linear layers.** MixColumns and MixRows multiply by the circulant's constants (<= 6): a
  shift-and-add sum of v taps, reduced by a quotient estimate from the bits above ``q_bits``
  (Rubato's q are just below a power of two) and one conditional subtraction.  The state is a
  rotating register, so every tap is a fixed wire (MixRows: a 2:1 choice at the row wrap).
* **Multipliers.** Feistel's squares use one ``modmul("barrett")`` per lane (latency 3, 26-bit);
  the multi-field :class:`~hhe_gen.cores.arith.Butterfly` in its Z_t mode contains that same
  Barrett reducer plus add/sub stages, so on its own it is strictly larger; it pays off only
  when one unit is shared with the CKKS NTT/FFT (its DSP tiles are shared across fields), which
  is a system-level choice outside this core.  ``multiplier="barrett"`` is the only option here.
* **Constant time.** No control decision depends on the key, the state or the noise.  The only
  data-dependent timing is the XOF's rejection of round-constant candidates (words >= q after
  masking): which words are rejected is a public function of (nonce, counter), and it only
  delays the start of an ARK phase (:func:`~.schedule.cycles_per_block` gives the exact count
  for a given rejection pattern; the tests assert it).
* **Key and seed** are write-only: a memory (key) and a register (seed) with no path to any
  output except through the keystream itself.
* **Messages.** ``c = round(Delta*m) + z mod t`` is left to software (one modular addition per
  word; :func:`hhe_gen.models.rubato.encrypt`): the core outputs ``z`` or ``z + e``.
* **XOF.** SHAKE256 only (the KATs' AES-128-CTR alternative is not built).
"""

from .core import RubatoCore, command_layout
from .datapath import Layer, RubatoDatapath
from .round_keys import RoundKeySchedule
from .schedule import cycles_per_block, phases

__all__ = ["RubatoCore", "RubatoDatapath", "RoundKeySchedule", "Layer", "command_layout", "cycles_per_block", "phases"]

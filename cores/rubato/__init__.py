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

Specification: ``docs/rubato.md``; golden model :mod:`hhe_gen.models.rubato`; the
core equals it word for word and layer for layer (``hhe_gen.host.kat_rtl`` runs every KAT vector).

Design notes
------------
* **Schedule.** One phase per layer (ARK, MixColumns, MixRows, Feistel, in the reference loop's
  order), ``lanes`` words per cycle, ``n/lanes + depth + 1`` cycles per phase.  The round keys
  ``key[i]*rc[j][i]`` are computed as the round constants arrive from the XOF (one multiplier,
  one constant per cycle) into a banked memory, so the XOF and the key multiplications overlap
  the layers; an ARK(j) phase waits only if round j's constants are not all in yet.
  DNA-HHE's "two MACs per cycle" Feistel is the 2-lane case: each lane does one
  multiply-accumulate ``x[i] + x[i-1]^2`` per cycle (pipelined, initiation interval 1), so a
  Feistel phase is ``n/2 + depth + 1`` cycles; more lanes do more MACs per cycle.
* **Linear layers.** MixColumns and MixRows multiply by the circulant's constants (<= 6): a
  shift-and-add sum of v taps, reduced by a quotient estimate from the bits above ``q_bits``
  (Rubato's q are just below a power of two) and its conditional subtractions: sum, estimate and
  corrections are one pipeline stage each.  The state is a rotating register, so every tap is a
  fixed wire (MixRows: a 2:1 choice at the row wrap).
* **Multipliers.** ``multiplier="barrett"`` (default): one ``modmul("barrett")`` per lane for
  Feistel's squares (latency 3, 26-bit) plus a modular addition of x[i] in the datapath, a
  register apart (the squarer's last correction and the addition in one cycle were the core's
  critical path), and one for the round keys.  ``multiplier="butterfly"``: the multi-field
  :class:`~hhe_gen.cores.arith.Butterfly` with only its Z_t field (``zt=dict(kind="barrett",
  moduli=[q])``, add_latency 0, same latency), op "mac" in the Feistel (``x[i] + x[i-1]^2`` in
  the unit; word 0 squares 0) and "mul" for the round keys (:mod:`.multiplier`).  Both are
  bit-exact (KAT vectors with traces).  Barrett is the smaller of the two on ECP5 and Xilinx 7 for
  the same DSPs (``hhe-gen bench rubato`` case ``128s-l2-multipliers``: the rubato-multipliers
  table of docs/figures.md) and stays the default: with one field the Butterfly's DSP tiles are exactly the Barrett reducer's
  (nothing to share), and its generic parts - the c operand's own delay line, the post-stage
  ModAdd/ModSub with their prime-select logic, the op multiplexers - cost more than the
  datapath's one conditional-subtract adder and x[i] delay they replace.  The Butterfly pays
  off only when one unit is shared with the CKKS NTT/FFT, a system-level choice outside this
  core.
* **Constant time.** No control decision depends on the key, the state or the noise.  The only
  data-dependent timing is the XOF's rejection of round-constant candidates (words >= q after
  masking): which words are rejected is a public function of (nonce, counter), and it only
  delays the start of an ARK phase (:func:`~.schedule.cycles_per_block` gives the exact count
  for a given rejection pattern; the tests assert it).
* **Key and seed** are write-only: a memory (key) and a register (seed) with no path to any
  output except through the keystream itself.
* **Messages.** ``c = round(Delta*m) + z mod t`` is left to software (one modular addition per
  word; :func:`hhe_gen.models.rubato.encrypt`): the core outputs ``z`` or ``z + e``.
* **XOF.** SHAKE256 only (the KATs' AES-128-CTR alternative is not built).  One XOF serves
  both streams (``shared_xof=True``, the default): the round constants' message at the command,
  then, once the last constant is taken, the noise message.  The Keccak round is the part of the
  core that decides whether it routes on an ECP5 (every state bit drives LUTs all over the
  1600-bit state); with two of them Par-128S at 2 lanes did not route, and even one needs
  ``synth_ecp5 -nowidelut -nodffe`` and nextpnr's static placer (measurements in
  :mod:`hhe_gen.apps.bench.rubato`).  The price: with many lanes the output may wait for the
  noise (:func:`~.schedule.cycles_per_block`, ``shared_noise``); 1 and 2 lanes never do.
  ``xof="external"``: the XOF is outside the core (the engine's one XOF for its samplers and
  Rubato, :class:`hhe_gen.cores.keccak.shared.SharedXof`), reached through the ``xof`` port.
"""

from .core import RubatoCore, command_layout
from .datapath import Layer, RubatoDatapath
from .round_keys import RoundKeySchedule
from .schedule import cycles_per_block, phases

__all__ = ["RubatoCore", "RubatoDatapath", "RoundKeySchedule", "Layer", "command_layout", "cycles_per_block", "phases"]

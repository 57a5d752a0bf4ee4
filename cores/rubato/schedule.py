"""The layer schedule of :class:`~.core.RubatoCore` and its exact cycle formula (pure Python).

A keystream block is a fixed sequence of *phases*, one per layer, in the reference loop's time
order (docs/rubato.md §2)::

    ARK(0) MC MR F  ARK(1) MC MR F  ...  ARK(r-1) MC MR F   MC MR ARK(r)

Each phase streams the n state words through the lanes (``n / lanes`` issue cycles after the
start cycle), waits for the pipeline (``depth`` cycles) and commits the new state in the cycle the
next phase can start: ``n/lanes + depth + 1`` cycles per phase.
An ARK(j) phase starts only when all n round keys of round j are in the round-key memory; that is
the one wait that depends on anything but the parameters, and it depends only on *which XOF
words were rejected* (public: a function of nonce and counter, never of the key or the state).

The XOF side (SHAKE256, 4-byte beats, one candidate word per cycle): candidate word ``w`` (0-based,
34 per 136-byte block) leaves the rejection filter ``xof_first + w + perm * (w // 34)`` cycles
after the command, ``perm = 24 / rounds_per_cycle``; its round key is written ``mul_latency + 1``
cycles later and visible to the controller one cycle after that.
"""

from __future__ import annotations

from dataclasses import dataclass

from hhe_gen.cores.keccak.xof import pad_cycles

__all__ = ["Phase", "phases", "WORDS_PER_BLOCK", "xof_first_word", "noise_first_word",
           "cycles_per_block", "candidate_positions", "block_positions"]

WORDS_PER_BLOCK = 136 // 4      # SHAKE256 rate / 4-byte candidates: words never straddle blocks
ARK, MC, MR, FEISTEL = "ARK", "MixColumns", "MixRows", "Feistel"


@dataclass(frozen=True)
class Phase:
    """One layer: ``kind`` (ARK, MixColumns, MixRows, Feistel), ``round_key`` (j for ARK(j), else
    None), ``step`` (the KAT trace step index it belongs to) and ``field`` (the trace field name
    of the state after it, e.g. "after_MixRows")."""

    kind: str
    round_key: int | None
    step: int
    field: str


def phases(rounds: int) -> list[Phase]:
    """The phases of one block for r = ``rounds``: 4r + 3 of them."""
    out = []
    for j in range(rounds):
        out += [Phase(ARK, j, j, "after_ARK"), Phase(MC, None, j, "after_MixColumns"),
                Phase(MR, None, j, "after_MixRows"), Phase(FEISTEL, None, j, "after_Feistel")]
    out += [Phase(MC, None, rounds, "after_MixColumns"), Phase(MR, None, rounds, "after_MixRows"),
            Phase(ARK, rounds, rounds, "after_ARK")]
    return out


def xof_first_word(rounds_per_cycle: int = 1, beat_bytes: int = 4, ring: bool = False) -> int:
    """Cycles from the command to the first candidate word at the rejection filter's output.

    The message (16 bytes = 16 / W beats of the XOF's W = ``beat_bytes``) is taken from cycle 2
    after the command on (the message builder takes the command in cycle 0 and emits from cycle 1,
    the XOF's restart takes one cycle), then padding (1; a ``ring`` XOF's:
    :func:`~hhe_gen.cores.keccak.xof.pad_cycles`) and a permutation (perm), the first output
    beat, the byte gatherer (1) and the filter register (1).  An 8-byte XOF's beats reach the
    filter as two 4-byte words, one per cycle (the core's downsizer, no register).
    """
    perm = 24 // rounds_per_cycle
    return 16 // beat_bytes + 2 + perm + 2 + pad_cycles(16, 256, beat_bytes, ring) - 1


def candidate_positions(q: int, q_bits: int, words, count: int) -> list[int]:
    """Indices (into the candidate stream ``words``) of the accepted words 0..count-1.

    ``words`` are the 32-bit little-endian words of the XOF stream (an independent source, e.g.
    hashlib.shake_256); a word is accepted if ``word & (2^q_bits - 1) < q``.
    """
    mask = (1 << q_bits) - 1
    out = []
    for i, w in enumerate(words):
        if len(out) == count:
            break
        if w & mask < q:
            out.append(i)
    if len(out) < count:
        raise ValueError("not enough candidate words")
    return out


def block_positions(params, nonce: int, counter: int) -> list[int]:
    """The candidate positions of one block's accepted round constants (what
    :func:`cycles_per_block` takes): the 32-bit words of SHAKE256(nonce LE64 || counter LE64)
    through :func:`candidate_positions`."""
    import hashlib
    import struct

    count = params.round_constant_count
    words = 2 * count + 64                    # acceptance is above 0.98 for every set
    stream = hashlib.shake_256(nonce.to_bytes(8, "little") + counter.to_bytes(8, "little")).digest(4 * words)
    return candidate_positions(params.q, params.q_bits, struct.unpack(f"<{words}I", stream), count)


def noise_first_word(rounds_per_cycle: int = 1, beat_bytes: int = 4, ring: bool = False) -> int:
    """With a shared XOF: cycles from the one in which the last round constant is taken to the
    first cycle noise word 0 can be loaded into the output register: 1 (the controller sees the
    count and starts the noise message) + :func:`xof_first_word` (restart, message, padding,
    permutation, first word) + 16 / W (the noise message is 32 bytes, 16 more than the round
    constants', W = ``beat_bytes`` per beat) + 4 (the noise sampler's gatherer and CDT register, the FIFO's write-to-read
    latency, less the round-constant filter register counted in ``xof_first_word``), and with a
    ``ring`` XOF the 32-byte message's padding instead of the 16-byte one's.
    Measured in simulation for every set; the tests assert the whole formula."""
    pad_difference = pad_cycles(32, 256, beat_bytes, ring) - pad_cycles(16, 256, beat_bytes, ring)
    return 1 + xof_first_word(rounds_per_cycle, beat_bytes, ring) + 16 // beat_bytes + 4 + pad_difference


def cycles_per_block(n: int, l: int, rounds: int, lanes: int, depth: int, mul_latency: int,
                     accepted_positions=None, *, rounds_per_cycle: int = 1,
                     shared_noise: bool = False, xof_beat_bytes: int = 4, xof_ring: bool = False) -> int:
    """Cycles from the command's acceptance to the cycle the last keystream word is taken (an
    always-ready consumer).

    Parameters
    ----------
    n, l, rounds : the parameter set's state size, output length and r
    lanes : words per cycle through the datapath
    depth : the datapath pipeline depth (:attr:`RubatoCore.depth`)
    mul_latency : the round-key multiplier's latency
    accepted_positions : candidate-word index of every accepted round constant, in order
        (``(r+1)*n`` of them, :func:`candidate_positions`); None = no rejection (0, 1, 2, ...)
    rounds_per_cycle : the XOF's Keccak rounds per cycle
    xof_beat_bytes : the XOF's bytes per beat (4: the core's own; 8: an external XOF's)
    xof_ring : the XOF's slots are a ring (``ShakeXof(ring=True)``: its padding takes longer)
    shared_noise : the block adds noise and the core has one XOF for both streams
        (``RubatoCore(shared_xof=True)``, the default): the noise message starts only after the
        last round constant is taken, so the output may wait for the noise words

    The formula: with ``ready(j)`` the cycle the last round key of round j is visible,
    ``ready(j) = xof_first + w + perm*(w // 34) + mul_latency + 2`` for ``w`` the candidate index
    of the (j+1)*n-th accepted constant, phase p starts at ``start(p) = max(end(p-1),
    ready(j))`` for ARK(j) and ``end(p-1)`` otherwise (``end(-1) = 1``), ``end(p) = start(p) +
    n/lanes + depth + 1`` (the next phase may start in the cycle the previous one commits, which
    is ``end(p)``), and the output register loads word k in cycle ``end(last) + 1 + k``, so the
    last word is taken in cycle ``end(last) + 1 + l``.

    With ``shared_noise``, noise word k is loadable from cycle ``t_rc + noise_first + k +
    perm*(k // 34)`` (``t_rc = xof_first + w + perm*(w // 34)`` for ``w`` the candidate index of
    the last constant, ``noise_first`` = :func:`noise_first_word`), so word k is loaded in
    ``load(k) = max(load(k-1) + 1, that)`` with ``load(-1) = end(last)``, and the last word is
    taken in cycle ``load(l-1) + 1``.  This is later than without noise only when the layers
    finish before the noise arrives (many lanes); it still depends only on the rejection pattern.
    """
    perm = 24 // rounds_per_cycle
    total = (rounds + 1) * n
    if accepted_positions is None:
        accepted_positions = list(range(total))
    first = xof_first_word(rounds_per_cycle, xof_beat_bytes, xof_ring)

    def ready(j):
        w = accepted_positions[(j + 1) * n - 1]
        return first + w + perm * (w // WORDS_PER_BLOCK) + mul_latency + 2

    t = 1
    for ph in phases(rounds):
        if ph.kind == ARK:
            t = max(t, ready(ph.round_key))
        t += n // lanes + depth + 1
    if not shared_noise:
        return t + 1 + l
    w = accepted_positions[total - 1]
    t_rc = first + w + perm * (w // WORDS_PER_BLOCK)
    noise_first = noise_first_word(rounds_per_cycle, xof_beat_bytes, xof_ring)
    load = t
    for k in range(l):
        load = max(load + 1, t_rc + noise_first + k + perm * (k // WORDS_PER_BLOCK))
    return load + 1

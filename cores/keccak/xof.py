"""SHAKE128 / SHAKE256 as a streaming extendable-output function (FIPS 202 sections 4 and 6.2).

See :class:`ShakeXof`.  The byte-stream conventions are in :mod:`hhe_gen.cores.keccak`.
"""

from __future__ import annotations

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.keccak import ROUND_CONSTANTS
from hhe_gen.params.errors import ParameterError

from .permutation import LANE_BITS, NUM_ROUNDS, STATE_BITS, KeccakRounds, check_rounds_per_cycle
from .planes import PLANE_BITS, KeccakPlanes, check_planes_per_cycle, plane_groups

__all__ = ["BEAT_BYTES", "VARIANTS", "RATES", "Phase", "absorb_layout", "byte_stream_signature",
           "pad_cycles", "permutation_cycles", "squeeze_bytes_per_cycle", "ShakeXof"]

#: Allowed byte-stream widths W (bytes per beat); each divides both rates (136 and 168).
BEAT_BYTES: tuple[int, ...] = (1, 2, 4, 8)
#: ``variant`` values: a fixed SHAKE128 / SHAKE256, or "both" (chosen per message by a port).
VARIANTS = (128, 256, "both")
#: Rate in bytes of each SHAKE variant.
RATES = {128: 168, 256: 136}


def check_beat_bytes(beat_bytes) -> int:
    if isinstance(beat_bytes, bool) or beat_bytes not in BEAT_BYTES:
        raise ParameterError("beat_bytes", beat_bytes, "one of 1, 2, 4, 8 (bytes per stream beat)")
    return int(beat_bytes)


def byte_stream_signature(beat_bytes: int) -> stream.Signature:
    """The byte stream of ``beat_bytes`` bytes per beat: ``stream.Signature(unsigned(8*W))``,
    little-endian (the stream's first byte in bits 0..7 of the first beat)."""
    return stream.Signature(8 * check_beat_bytes(beat_bytes))


def absorb_layout(beat_bytes: int) -> data.StructLayout:
    """Payload of the XOF's absorb stream: W message bytes, ``last`` and ``nbytes``.

    Fields
    ------
    data : unsigned(8*W)        message bytes, little-endian (first byte in bits 0..7)
    last : unsigned(1)          this beat ends the message
    nbytes : range(W + 1)       valid bytes of a ``last`` beat, 0..W (the low ones); ignored
                                (all W valid) when ``last`` is 0; values above W count as W
    """
    w = check_beat_bytes(beat_bytes)
    return data.StructLayout({"data": 8 * w, "last": 1, "nbytes": range(w + 1)})


def permutation_cycles(rounds_per_cycle: int = 1, planes_per_cycle: int = 5) -> int:
    """Cycles of one Keccak-f[1600] in :class:`ShakeXof`: ``24/k`` with whole rounds
    (``planes_per_cycle`` 5), ``24 * ceil(5/p)`` with p planes per cycle (then k must be 1)."""
    k = check_rounds_per_cycle(rounds_per_cycle)
    p = check_planes_per_cycle(planes_per_cycle)
    if p == 5:
        return NUM_ROUNDS // k
    if k != 1:
        raise ParameterError("rounds_per_cycle", k, f"1 with planes_per_cycle={p} (a round takes several cycles)")
    return NUM_ROUNDS * plane_groups(p)


def pad_cycles(message_bytes: int, variant: int = 256, beat_bytes: int = 8, ring: bool = False) -> int:
    """Cycles of :class:`ShakeXof`'s PAD phase after a message of ``message_bytes`` in W-byte beats
    (the last one partial or, for a multiple of W, full): 1; with ``ring``, the turns to the
    block's end, ``max(1, R/W - 1 - j)`` for a last beat in slot j, and 1 when that beat filled
    the block (PAD then follows the block's permutation)."""
    if variant not in RATES:
        raise ParameterError("variant", variant, "128 or 256")
    w = check_beat_bytes(beat_bytes)
    if not ring:
        return 1
    slots = RATES[variant] // w
    beats = max(1, -(-message_bytes // w))
    j = (beats - 1) % slots
    if message_bytes == beats * w and j == slots - 1:
        return 1
    return max(1, slots - 1 - j)


def squeeze_bytes_per_cycle(variant: int, beat_bytes: int, rounds_per_cycle: int, planes_per_cycle: int = 5) -> float:
    """Steady-state squeeze (and long-message absorb) rate of :class:`ShakeXof`, bytes per cycle:
    ``R / (R/W + n)`` (R/W beats at one per cycle, then a permutation of n cycles,
    :func:`permutation_cycles`)."""
    if variant not in RATES:
        raise ParameterError("variant", variant, "128 or 256")
    w = check_beat_bytes(beat_bytes)
    n = permutation_cycles(rounds_per_cycle, planes_per_cycle)
    return RATES[variant] / (RATES[variant] // w + n)


class Phase(enum.Enum, shape=3):
    """Control state of :class:`ShakeXof`."""
    ABSORB = 0        #: taking message beats (i_stream.ready = 1)
    PERM_ABSORB = 1   #: permuting a full block, then back to ABSORB
    PERM_PAD = 2      #: permuting a full block ended by the last beat, then PAD
    PAD = 3           #: one cycle: XOR 0x1F after the message and 0x80 into the block's last byte
    PERM_SQUEEZE = 4  #: permuting, then SQUEEZE
    SQUEEZE = 5       #: offering output beats (o_stream.valid = 1)


class ShakeXof(wiring.Component):
    """SHAKE128 / SHAKE256 sponge: absorb a byte stream of any length, squeeze without end.

    Operation: the message arrives as W-byte beats on ``i_stream`` (the last one flagged, with
    its number of valid bytes; an empty message is one ``last`` beat with ``nbytes = 0``).  Each
    beat is XORed straight into the state register at its position in the current block; a full
    block is permuted (n cycles, input not ready meanwhile; n = 24/k with whole rounds).  After
    the last beat the core XORs the SHAKE padding (0x1F after the message, 0x80 into the last
    byte of the block) in one cycle, permutes, and then offers the output on ``o_stream`` for as
    long as the consumer takes beats, permuting again after every ``rate`` bytes.  ``o_stream.valid`` is never high before
    the last beat has been absorbed, padded and permuted.

    ``abort`` starts a new message at any time (while absorbing, permuting or squeezing): in the
    cycle it is high, ``i_stream.ready`` and ``o_stream.valid`` are low and nothing is
    transferred; in the next cycle the state register is zero, the block position and round
    counter are zero and the core absorbs, exactly as after reset.  (An abort restarts the sponge: it is
    the one case where ``o_stream.valid`` falls without a transfer.)

    Parameters
    ----------
    variant : 128, 256 or "both"
        SHAKE128, SHAKE256, or both chosen per message by the ``shake256`` port.
    beat_bytes : int
        W, bytes per beat of both streams: 1, 2, 4 or 8.
    rounds_per_cycle : int
        k: 1, 2, 3, 4, 6, 8, 12 or 24 Keccak rounds per clock (see :class:`KeccakF1600`).
    planes_per_cycle : int
        p: 5 (whole rounds, k per clock), or 1, 2, 3 planes of a round per clock
        (:class:`~.planes.KeccakPlanes`, k = 1): a round takes G = ceil(5/p) cycles, the planes of
        its first G - 1 groups wait in a register of 320 (5 - p_last) bits (p_last = 5 - (G-1)p,
        the planes of the last group) and the state takes the new one with the last group.
    ring : bool
        False: each beat is XORed into its slot of the rate and the output beat is read from its
        slot (an R/W:1 choice per state bit and per output bit).  True (SHAKE128 or SHAKE256
        only): the rate's R/W slots are a ring that turns one slot per beat, in and out: a beat
        enters at the last slot XORed with the word leaving slot 0 (slot 0 always holds the block
        slot the next beat belongs to), the output beat is slot 0; so no state bit chooses among
        slots.  After the message the
        ring turns on with the padding until the block is aligned again (see the latency).

    Members
    -------
    i_stream : In(stream.Signature(absorb_layout(W)))
        message beats (fields ``data``, ``last``, ``nbytes``).
    o_stream : Out(stream.Signature(unsigned(8*W)))
        the SHAKE output, W bytes per beat, little-endian (the byte-stream contract).
    abort : In(1)
        one-cycle strobe: abandon the current message and start a new one.
    shake256 : In(1)   (only with ``variant="both"``)
        1 for SHAKE256, 0 for SHAKE128; sampled with the first beat of each message and kept
        until the next abort.

    Attributes
    ----------
    perm_cycles : int   n = 24/k (whole rounds) or 24 G (planes), cycles per permutation
    slots : int         beats per block of the largest rate the core handles (R/W)

    Observation members (not ports; for tests and formal harnesses): ``state`` (the 1600-bit
    register, byte b in bits 8b..8b+7), ``phase`` (:class:`Phase`), ``pos`` (beat slot in the
    block), ``step`` (cycle of the permutation), ``first`` (no beat taken yet in this message),
    ``is256`` (the message's variant, "both" only), ``pad_pending`` (ring: the 0x1F still to
    go in; the ring's slot 0 holds block slot ``pos``); with planes also ``group`` (the round's group
    of planes) and ``rnd`` (the round), ``rnd * G + group == step``.

    Latency and throughput (cycles; n the permutation's cycles; R = rate; a full-rate producer
    and an always-ready consumer; none of them depends on the data):

    - absorbing: 1 cycle per beat, plus n cycles after each beat that completes a block
      (input not ready meanwhile);
    - from the cycle the last beat is taken to the first output beat: ``n + 2`` cycles
      (PAD, n permutation cycles, then output), or ``2n + 2`` if that beat completed a block;
      with ``ring``, PAD takes ``max(1, R/W - 1 - j)`` cycles for a last beat in slot j (the
      ring turns to the block's end), so ``n + 1 + max(1, R/W - 1 - j)`` (still ``2n + 2`` if
      that beat completed a block);
    - squeezing: R/W beats at one per cycle, then n cycles of permutation: ``R / (R/W + n)``
      bytes per cycle;
    - abort: 1 cycle (ready again in the next cycle).
    """

    @quiet_on_error
    def __init__(self, variant=256, *, beat_bytes: int = 8, rounds_per_cycle: int = 1, planes_per_cycle: int = 5,
                 ring: bool = False):
        if isinstance(variant, bool) or variant not in VARIANTS:
            raise ParameterError("variant", variant, "128, 256 or 'both' (runtime port shake256)")
        if not isinstance(ring, bool):
            raise ParameterError("ring", ring, "True or False")
        if ring and variant == "both":
            raise ParameterError("variant", variant, "128 or 256 with ring=True (one rate per ring)")
        self.variant = variant
        self.ring = ring
        self.beat_bytes = w = check_beat_bytes(beat_bytes)
        self.rounds_per_cycle = check_rounds_per_cycle(rounds_per_cycle)
        self.planes_per_cycle = check_planes_per_cycle(planes_per_cycle)
        self.perm_cycles = permutation_cycles(self.rounds_per_cycle, self.planes_per_cycle)
        self.groups = plane_groups(self.planes_per_cycle)
        members = {
            "i_stream": In(stream.Signature(absorb_layout(w))),
            "o_stream": Out(byte_stream_signature(w)),
            "abort": In(1),
        }
        if variant == "both":
            members["shake256"] = In(1)
        super().__init__(members)
        max_rate = RATES[128] if variant == "both" else RATES[variant]
        self.slots = max_rate // w
        self.state = Signal(STATE_BITS)
        self.phase = Signal(Phase)
        self.pos = Signal(range(self.slots))
        # (at least one bit each: a zero-width register exports as "[-1:0]" in Verilog)
        self.step = Signal(range(max(self.perm_cycles, 2)))
        self.first = Signal(init=1)
        self.npad = Signal(range(max(w, 2)))
        self.pad_pending = Signal()     # ring: the 0x1F byte is still to go in (a full last beat)
        self.is256 = Signal(init=1 if variant == 256 else 0)
        if self.groups > 1:
            self.group = Signal(range(self.groups))
            self.rnd = Signal(range(NUM_ROUNDS))

    def squeeze_bytes_per_cycle(self, variant: int) -> float:
        """Steady-state squeeze throughput R / (R/W + n) in bytes per cycle."""
        return squeeze_bytes_per_cycle(variant, self.beat_bytes, self.rounds_per_cycle, self.planes_per_cycle)

    def elaborate(self, platform):
        m = Module()
        w = self.beat_bytes
        n = self.perm_cycles
        state, phase, pos, step = self.state, self.phase, self.pos, self.step
        i_s, o_s = self.i_stream, self.o_stream
        restart = self.abort

        round_done, new_state = self._permutation(m)

        # The message's variant: fixed, or the port's value with the first beat, then latched.
        if self.variant == "both":
            cur256 = Signal()
            m.d.comb += cur256.eq(Mux(self.first, self.shake256, self.is256))
            last_slot = Mux(cur256, RATES[256] // w - 1, RATES[128] // w - 1)
            last_slot_latched = Mux(self.is256, RATES[256] // w - 1, RATES[128] // w - 1)
        else:
            cur256 = Const(self.variant == 256)
            last_slot = last_slot_latched = RATES[self.variant] // w - 1

        absorbing = phase == Phase.ABSORB
        padding = phase == Phase.PAD
        permuting = (phase == Phase.PERM_ABSORB) | (phase == Phase.PERM_PAD) | \
                    (phase == Phase.PERM_SQUEEZE)
        m.d.comb += [
            i_s.ready.eq(absorbing & ~restart),
            o_s.valid.eq((phase == Phase.SQUEEZE) & ~restart),
            o_s.payload.eq(state[:8 * w] if self.ring else
                           Array(state.word_select(i, 8 * w) for i in range(self.slots))[pos]),
        ]
        take_in = i_s.valid & i_s.ready
        take_out = o_s.valid & o_s.ready

        full = ~i_s.payload.last | (i_s.payload.nbytes >= w)
        if self.ring:
            turned, aligned_pad = self._ring_turn(m, full, take_in, padding)
        else:
            # The W bytes XORed into slot `pos`: message bytes (beyond nbytes of a last beat: zero),
            # or in PAD the 0x1F domain/padding byte at lane npad.
            beat_val = Signal(8 * w)
            for j in range(w):
                keep = full | (i_s.payload.nbytes > j)
                byte = i_s.payload.data[8 * j:8 * j + 8]
                m.d.comb += beat_val[8 * j:8 * j + 8].eq(
                    Mux(padding, Mux(self.npad == j, 0x1F, 0), Mux(keep, byte, 0)))
            xor_en = Signal()
            m.d.comb += xor_en.eq(take_in | padding)
            words = []
            for i in range(self.slots):
                hit = xor_en & (pos == i)
                words.append(Mux(hit, beat_val, 0))
            xor_vec = Cat(*words)  # the low slots*W bytes of the state
            # 0x80 into the last byte of the block, in PAD.
            pad_end = Signal(STATE_BITS)
            if self.variant == "both":
                m.d.comb += [
                    pad_end[8 * (RATES[256] - 1) + 7].eq(padding & self.is256),
                    pad_end[8 * (RATES[128] - 1) + 7].eq(padding & ~self.is256),
                ]
            else:
                m.d.comb += pad_end[8 * (RATES[self.variant] - 1) + 7].eq(padding)

        with m.If(restart):
            m.d.sync += [
                state.eq(0), phase.eq(Phase.ABSORB), pos.eq(0), step.eq(0),
                self.first.eq(1), self.npad.eq(0), self.pad_pending.eq(0),
            ]
            if self.groups > 1:
                m.d.sync += [self.group.eq(0), self.rnd.eq(0)]
            if self.variant == "both":
                m.d.sync += self.is256.eq(0)
        with m.Elif(permuting):
            with m.If(round_done):
                m.d.sync += state.eq(new_state)
            if self.groups > 1:
                with m.If(self.group == self.groups - 1):
                    m.d.sync += [self.group.eq(0), self.rnd.eq(Mux(self.rnd == NUM_ROUNDS - 1, 0, self.rnd + 1))]
                with m.Else():
                    m.d.sync += self.group.eq(self.group + 1)
            with m.If(step == n - 1):
                m.d.sync += step.eq(0)
                with m.Switch(phase):
                    with m.Case(Phase.PERM_ABSORB):
                        m.d.sync += phase.eq(Phase.ABSORB)
                    with m.Case(Phase.PERM_PAD):
                        m.d.sync += phase.eq(Phase.PAD)
                    with m.Default():
                        m.d.sync += phase.eq(Phase.SQUEEZE)
            with m.Else():
                m.d.sync += step.eq(step + 1)
        with m.Elif(take_in):
            m.d.sync += [state.eq(turned if self.ring else state ^ xor_vec), self.first.eq(0)]
            if self.variant == "both":
                with m.If(self.first):
                    m.d.sync += self.is256.eq(self.shake256)
            with m.If(full):
                with m.If(pos == last_slot):
                    m.d.sync += [
                        pos.eq(0),
                        phase.eq(Mux(i_s.payload.last, Phase.PERM_PAD, Phase.PERM_ABSORB)),
                    ]
                with m.Else():
                    m.d.sync += pos.eq(pos + 1)
                    with m.If(i_s.payload.last):
                        m.d.sync += phase.eq(Phase.PAD)
                with m.If(i_s.payload.last):
                    m.d.sync += self.npad.eq(0) if not self.ring else self.pad_pending.eq(1)
            with m.Else():
                if self.ring:       # a partial last beat: its 0x1F went in with it
                    m.d.sync += [pos.eq(Mux(pos == last_slot, 0, pos + 1)), phase.eq(Phase.PAD)]
                else:               # a partial last beat: the pad byte goes into the same slot
                    m.d.sync += [self.npad.eq(i_s.payload.nbytes), phase.eq(Phase.PAD)]
        with m.Elif(padding):
            if self.ring:
                # the ring turns to the block's end, or, aligned, the pending pad bytes go in place
                m.d.sync += self.pad_pending.eq(0)
                with m.If(pos == 0):
                    m.d.sync += [state.eq(state ^ aligned_pad), phase.eq(Phase.PERM_SQUEEZE)]
                with m.Else():
                    m.d.sync += state.eq(turned)
                    with m.If(pos == last_slot):
                        m.d.sync += [pos.eq(0), phase.eq(Phase.PERM_SQUEEZE)]
                    with m.Else():
                        m.d.sync += pos.eq(pos + 1)
            else:
                m.d.sync += [state.eq(state ^ xor_vec ^ pad_end), pos.eq(0),
                             phase.eq(Phase.PERM_SQUEEZE)]
        with m.Elif(take_out):
            if self.ring:
                m.d.sync += state.eq(turned)
            with m.If(pos == last_slot_latched):
                m.d.sync += [pos.eq(0), phase.eq(Phase.PERM_SQUEEZE)]
            with m.Else():
                m.d.sync += pos.eq(pos + 1)
        return m

    def _ring_turn(self, m, full, take_in, padding):
        """``ring``: (the state with the rate's slots turned by one, the word entering the last slot
        being slot 0's XOR the beat (absorbing: the message bytes, a partial last beat with its
        0x1F and, in the block's last slot, the 0x80; in PAD: the pending 0x1F and, in the last
        slot, the 0x80; squeezing: nothing), what PAD at slot 0 XORs in without a turn (aligned:
        after a block the message filled; the pending 0x1F into byte 0, the 0x80 into byte R-1))."""
        w, slots, i_s, state = self.beat_bytes, self.slots, self.i_stream, self.state
        last_slot = slots - 1
        pend = self.pad_pending
        beat = Signal(8 * w)
        for j in range(w):
            keep = full | (i_s.payload.nbytes > j)
            pad = (~full & (i_s.payload.nbytes == j)).replicate(5)
            byte = Mux(keep, i_s.payload.data[8 * j:8 * j + 8], Cat(pad, Const(0, 3)))
            if j == w - 1:
                byte = byte ^ Cat(Const(0, 7), ~full & (self.pos == last_slot))
            m.d.comb += beat[8 * j:8 * j + 8].eq(byte)
        pad_beat = Signal(8 * w)
        m.d.comb += [pad_beat[:5].eq(pend.replicate(5)), pad_beat[-1].eq(self.pos == last_slot)]
        enter = Signal(8 * w)
        m.d.comb += enter.eq(Mux(take_in, beat, 0) | Mux(padding, pad_beat, 0))
        rate = 8 * w * slots
        turned = Signal(STATE_BITS)
        m.d.comb += turned.eq(Cat(state[8 * w:rate], state[:8 * w] ^ enter, state[rate:]))
        aligned_pad = Signal(STATE_BITS)
        m.d.comb += [aligned_pad[:5].eq(pend.replicate(5)), aligned_pad[rate - 1].eq(pend)]
        return turned, aligned_pad

    def _permutation(self, m):
        """The permutation's datapath on ``self.state``: (the cycle that ends a round, the state
        after it).  Whole rounds: k rounds of :class:`KeccakRounds` every cycle.  Planes:
        :class:`KeccakPlanes` on the group's planes; the first G - 1 groups' planes go to the
        ``held`` register, the last group's join them into the new state."""
        if self.groups == 1:
            m.submodules.rounds = rounds = KeccakRounds(self.rounds_per_cycle)
            m.d.comb += rounds.i_state.eq(self.state)
            if self.perm_cycles > 1:
                m.d.comb += rounds.step.eq(self.step)
            return Const(1), rounds.o_state
        p, groups = self.planes_per_cycle, self.groups
        m.submodules.planes = planes = KeccakPlanes(p)
        rc = Signal(LANE_BITS)
        m.d.comb += [planes.i_state.eq(self.state), planes.group.eq(self.group),
                     rc.eq(Array(Const(c, LANE_BITS) for c in ROUND_CONSTANTS)[self.rnd]), planes.rc.eq(rc)]
        last = 5 - (groups - 1) * p                     # planes of the last group
        held = Signal(PLANE_BITS * (5 - last))
        for g in range(groups - 1):
            with m.If(self.group == g):
                m.d.sync += held.word_select(g, PLANE_BITS * p).eq(planes.o_planes)
        done = Signal()
        m.d.comb += done.eq(self.group == groups - 1)
        return done, Cat(held, planes.o_planes[:PLANE_BITS * last])

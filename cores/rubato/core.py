"""The Rubato keystream core: (key, nonce, counter) -> l words of Z_q, optionally plus noise."""

from __future__ import annotations

from typing import NamedTuple

from amaranth.hdl import Module, Mux, ResetInserter, Signal, signed
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import mark_unused
from hhe_gen.params.errors import ParameterError

from .datapath import Layer, RubatoDatapath, check_lanes, check_params
from .round_keys import RoundKeySchedule
from .schedule import ARK, FEISTEL, MC, MR, cycles_per_block, phases

__all__ = ["RubatoCore", "CoreState", "command_layout"]

_LAYER = {ARK: Layer.ARK, MC: Layer.MIX_COLUMNS, MR: Layer.MIX_ROWS, FEISTEL: Layer.FEISTEL}
BEAT_BYTES = 4


def command_layout(noise: bool) -> data.StructLayout:
    """A block command: the 64-bit nonce and counter, and (with noise hardware) the noise flag."""
    fields = {"nonce": 64, "counter": 64}
    if noise:
        fields["noise"] = 1
    return data.StructLayout(fields)


class CoreState(enum.Enum, shape=2):
    """The core's control state: waiting for a command, running the phases, waiting for the
    last commit, sending the words."""
    IDLE = 0
    RUN = 1
    DRAIN = 2
    OUT = 3


class _XofEnds(NamedTuple):
    i_stream: object    # the absorb stream (driven)
    o_stream: object    # 4-byte words (taken)
    abort: object       # the restart strobe (driven)


def _xof_ends(m, port, beat_bytes: int) -> _XofEnds:
    """An external XOF's ``port`` (:func:`~hhe_gen.cores.keccak.shared.xof_client_signature`) seen
    as the core's own XOF: its squeeze stream as 4-byte words (an 8-byte beat as its low, then its
    high half, one per cycle, no register; a restart starts at a low half)."""
    words = stream.Signature(8 * BEAT_BYTES).create()
    sq = port.squeeze
    if beat_bytes == BEAT_BYTES:
        m.d.comb += [words.valid.eq(sq.valid), words.payload.eq(sq.payload), sq.ready.eq(words.ready)]
    else:
        high = Signal(name="xof_high_half")
        m.d.comb += [words.valid.eq(sq.valid), words.payload.eq(Mux(high, sq.payload[32:], sq.payload[:32])),
                     sq.ready.eq(words.ready & high)]
        with m.If(port.restart):
            m.d.sync += high.eq(0)
        with m.Elif(words.valid & words.ready):
            m.d.sync += high.eq(~high)
    return _XofEnds(port.absorb, words, port.restart)


class RubatoCore(wiring.Component):
    """One Rubato keystream block per command, bit-exact with :func:`hhe_gen.models.rubato.keystream`.

    Inside: SHAKE256 of ``nonce LE64 || counter LE64`` (:class:`~hhe_gen.cores.keccak.ShakeXof`,
    4-byte beats) -> :class:`~.round_keys.RoundKeySchedule` (RubatoRoundConstants -> one modular
    multiplier ``rk = key[i] * rc`` -> a round-key memory of ``lanes`` banks; with an external
    multiplier the constants themselves, ARK forming ``x + key*rc`` on it); the layers run on
    :class:`~.datapath.RubatoDatapath` (``lanes`` words per cycle: ARK, MixColumns, MixRows by
    shift-and-add, Feistel with one squarer per lane), in the reference loop's order
    (:func:`~.schedule.phases`), then the first l words leave on ``o_stream``.  With ``noise``, a
    second SHAKE256 message, ``nonce || counter || seed LE64 || 0^8``, feeds
    :class:`~hhe_gen.cores.sampler.RubatoNoise` into an l-word FIFO, and a command with
    ``noise = 1`` gets ``(z + e) mod q``.  By default (``shared_xof``) the same XOF computes it
    after the round constants (restarted once the last constant is taken): one Keccak-f[1600]
    instead of two.  The Keccak round is the one part of the core that is hard to route (every
    state bit feeds bits all over the 1600-bit state through theta and rho/pi), and a second copy
    doubled that: Par-128S at 2 lanes did not route on an ECP5-85F with two.

    Parameters
    ----------
    params : RubatoParams or set name ("Par-128S", "128s", ...)
    lanes : int            words per cycle in the layers, a divisor of n (2 = DNA-HHE-like,
                           n = fully parallel)
    noise : bool           build the noise path (the ``seed_*`` ports and the command's
                           ``noise`` flag)
    multiplier : str       "barrett" (cores/arith modmul) or "butterfly" (the multi-field
                           Butterfly's Z_t mode: op "mac" in the Feistel, "mul" for the round
                           keys); see :mod:`.multiplier`
    mul_latency : int or None  latency of every modular multiplier (None: the minimum, 3)
                           ``multiplier="external"``: the Feistel squarers are lanes 0 .. L-1 of a
                           butterfly array outside (the engine's crypto unit; ``lanes_port``, its
                           Z_t field), ``mul_latency`` its latency; ARK is a MAC there too
                           (x + key*rc: the round-key memory holds the constants, no multiplier
                           of the core's own)
    shared_xof : bool      (noise only) one XOF for the round constants and then the noise
                           (True, default) or one XOF each (False: ~7k LUT4 and 1.6k FF more on
                           ECP5, and the noise never delays the output)
    xof_rounds_per_cycle : int  Keccak rounds per cycle of the XOF(s) (1, 2, 3, 4, 6, 8, 12, 24)
    xof : str              "own" (the core's SHAKE256) or "external": the core's messages go to,
                           and its words come from, an XOF outside (the engine's one XOF,
                           :class:`~hhe_gen.cores.keccak.shared.SharedXof`) through the member
                           ``xof``, as with the shared XOF (round constants, then the noise); a
                           command is taken only while the XOF is granted to the core
    xof_beat_bytes : int   ("external") the outside XOF's bytes per beat, 4 or 8 (an 8-byte beat
                           reaches the samplers as two 4-byte words, one per cycle)
    xof_ring : bool        ("external") the outside XOF is a ring one (``ShakeXof(ring=True)``;
                           the cycle formula counts its padding)

    Members
    -------
    key_we, key_addr, key_data : In   write key word ``key_addr`` (0..n-1, a value in [0, q)).
                           The key lives in a memory with no read port outside the core: it
                           cannot be read back.  Write it only while no block is in flight.
    seed_we, seed_addr, seed_data : In   (noise only) the 64-bit noise seed as two 32-bit words
                           (word 0 = the low half), write-only likewise.
    xof : Out(xof_client_signature(xof_beat_bytes))   ("external" only) the core's port on the
                           outside XOF: ``req`` while a command waits or a block runs
    i_stream : In(stream.Signature(command_layout(noise)))   one command per block
    o_stream : Out(stream.Signature(unsigned(q_bits)))       l words per block, in order

    Observation (not ports; tests and :mod:`hhe_gen.host.kat_rtl`): ``datapath`` (its ``state`` /
    ``next_state`` / ``commit``), ``commit_phase`` (index into :func:`~.schedule.phases` of the
    phase committing), ``state`` (``CoreState``: IDLE, RUN, DRAIN, OUT), ``out_count`` (words
    loaded into the output register in this block), ``rk_count`` (round keys written),
    ``xof_words`` (candidate words the rejection filter took up to the last round constant: the
    KAT field ``rc_xof_words_read``).

    Timing (no cycle depends on the key, the state or the noise; an always-ready consumer):
    :func:`~.schedule.cycles_per_block` from the command's acceptance to the last word taken.
    The only input to it that is not a parameter is the positions of the rejected round-constant
    candidates, a public function of (nonce, counter); an ARK(j) phase waits until the round keys
    of round j are all written.  The next command is accepted once the last word has been loaded
    into the output register.  With separate XOFs the noise path finishes long before the output
    starts; with the shared XOF the noise words arrive ``noise_first_word + k`` cycles after the
    last round constant was taken (:func:`~.schedule.noise_first_word`), which delays the output
    only when the layers are faster than that (many lanes: Par-128S at 16 lanes 231 instead of
    229 cycles for the benchmark block; 1, 2 lanes unchanged); :meth:`cycles_per_block` with
    ``noise=True`` counts it.
    """

    def __init__(self, params, lanes: int = 2, *, noise: bool = True, multiplier: str = "barrett",
                 mul_latency=None, xof_rounds_per_cycle: int = 1, shared_xof: bool = True, xof: str = "own",
                 xof_beat_bytes: int = 8, xof_ring: bool = False):
        try:
            p = self.params = check_params(params)
            self.lanes = check_lanes(lanes, p.n)
            if noise not in (True, False):
                raise ParameterError("noise", noise, "True or False")
            from hhe_gen.cores.keccak.permutation import check_rounds_per_cycle
            check_rounds_per_cycle(xof_rounds_per_cycle)
            self.datapath = RubatoDatapath(p, lanes, multiplier=multiplier, mul_latency=mul_latency)
            external = multiplier == "external"     # the squarers and ARK on an array outside
            self.round_keys = RoundKeySchedule(p, lanes, multiplier="none" if external else multiplier,
                                               mul_latency=None if external else mul_latency, in_bytes=BEAT_BYTES)
            from hhe_gen.cores.keccak import ShakeXof
            from hhe_gen.cores.sampler import RubatoNoise, SeedMessage
            if not isinstance(shared_xof, bool):
                raise ParameterError("shared_xof", shared_xof, "True or False")
            if xof not in ("own", "external"):
                raise ParameterError("xof", xof, "'own' or 'external'")
            self.xof_beat_bytes = BEAT_BYTES
            if xof == "external":
                if xof_beat_bytes not in (BEAT_BYTES, 2 * BEAT_BYTES):
                    raise ParameterError("xof_beat_bytes", xof_beat_bytes, f"{BEAT_BYTES} or {2 * BEAT_BYTES}")
                self.xof_beat_bytes = xof_beat_bytes
                shared_xof = True
            if not isinstance(xof_ring, bool) or (xof_ring and xof != "external"):
                raise ParameterError("xof_ring", xof_ring, "False, or True with xof='external'")
            self.xof_ring = xof_ring
            self._rc_msg = SeedMessage(self.xof_beat_bytes)
            self._rc_xof = None if xof == "external" else \
                ShakeXof(256, beat_bytes=BEAT_BYTES, rounds_per_cycle=xof_rounds_per_cycle)
            if noise:
                if not shared_xof:
                    self._nz_msg = SeedMessage(BEAT_BYTES)
                    self._nz_xof = ShakeXof(256, beat_bytes=BEAT_BYTES, rounds_per_cycle=xof_rounds_per_cycle)
                self._nz = RubatoNoise(p, in_bytes=BEAT_BYTES)
        except ParameterError:
            mark_unused(self, deep=True)
            raise
        self.noise = noise
        self.shared_xof = bool(noise and shared_xof)
        self.external_xof = xof == "external"
        self.xof_rounds_per_cycle = xof_rounds_per_cycle
        self.mul_latency = self.round_keys.mul_latency
        self.depth = self.datapath.depth
        self.phases = phases(p.rounds)
        members = {"key_we": In(1), "key_addr": In(range(p.n)), "key_data": In(p.q_bits),
                   "i_stream": In(stream.Signature(command_layout(noise))),
                   "o_stream": Out(stream.Signature(p.q_bits))}
        if noise:
            members.update({"seed_we": In(1), "seed_addr": In(range(2)), "seed_data": In(32)})
        if multiplier == "external":
            members["lanes_port"] = self.datapath.signature.members["lanes_port"]
        if self.external_xof:
            from hhe_gen.cores.keccak.shared import xof_client_signature
            members["xof"] = Out(xof_client_signature(self.xof_beat_bytes))
        super().__init__(members)
        self.commit_phase = Signal(range(len(self.phases)))
        self.rk_count = self.round_keys.rk_count
        self.xof_words = self.round_keys.xof_words
        self.state = Signal(CoreState)
        self.out_count = Signal(range(p.l))

    def cycles_per_block(self, accepted_positions=None, noise: bool = False) -> int:
        """:func:`~.schedule.cycles_per_block` for this core (see there); ``noise``: the block's
        command has ``noise = 1`` (matters only with the shared XOF)."""
        p = self.params
        return cycles_per_block(p.n, p.l, p.rounds, self.lanes, self.depth, self.mul_latency,
                                accepted_positions, rounds_per_cycle=self.xof_rounds_per_cycle,
                                shared_noise=bool(noise) and self.shared_xof, xof_beat_bytes=self.xof_beat_bytes,
                                xof_ring=self.xof_ring)

    def elaborate(self, platform):
        m = Module()
        p, L = self.params, self.lanes
        n, q, w = p.n, p.q, p.q_bits
        S = n // L
        total = p.round_constant_count
        m.submodules.datapath = dp = self.datapath
        if dp.mul_kind == "external":
            wiring.connect(m, dp.lanes_port, wiring.flipped(self.lanes_port))
        state = self.state
        cmd = Signal(command_layout(self.noise))

        # -- command and XOF messages ------------------------------------------------------------
        from hhe_gen.cores.sampler import MessageKind
        m.submodules.rc_msg = rc_msg = self._rc_msg
        m.submodules.round_keys = rks = self.round_keys
        all_ready = rc_msg.i_stream.ready & (state == CoreState.IDLE)
        if self.external_xof:
            rc_xof = _xof_ends(m, self.xof, self.xof_beat_bytes)
            m.d.comb += self.xof.req.eq((state != CoreState.IDLE) | self.i_stream.valid)
            all_ready = all_ready & self.xof.grant
        else:
            m.submodules.rc_xof = rc_xof = self._rc_xof
        if self.noise:
            m.submodules.nz = nz = self._nz
            if not self.shared_xof:
                m.submodules.nz_msg = nz_msg = self._nz_msg
                m.submodules.nz_xof = nz_xof = self._nz_xof
                all_ready = all_ready & nz_msg.i_stream.ready
        start = Signal()
        m.d.comb += [self.i_stream.ready.eq(all_ready), start.eq(self.i_stream.valid & all_ready)]
        with m.If(start):
            m.d.sync += cmd.eq(self.i_stream.payload)

        def message(msg, xof, valid, kind, nonce, counter):
            m.d.comb += [msg.i_stream.valid.eq(valid), msg.i_stream.payload.kind.eq(kind),
                         msg.i_stream.payload.nonce.eq(nonce), msg.i_stream.payload.counter.eq(counter),
                         xof.i_stream.valid.eq(msg.o_stream.valid),
                         xof.i_stream.payload.data.eq(msg.o_stream.payload.data),
                         xof.i_stream.payload.last.eq(msg.o_stream.payload.last),
                         xof.i_stream.payload.nbytes.eq(msg.o_stream.payload.nbytes),
                         msg.o_stream.ready.eq(xof.i_stream.ready), xof.abort.eq(valid)]

        payload = self.i_stream.payload
        if not self.shared_xof:
            message(rc_msg, rc_xof, start, MessageKind.RUBATO_RC, payload.nonce, payload.counter)
            m.d.comb += rks.abort.eq(start)
            wiring.connect(m, rc_xof.o_stream, rks.i_stream)
        if self.noise and not self.shared_xof:
            message(nz_msg, nz_xof, start, MessageKind.RUBATO_NOISE, payload.nonce, payload.counter)
            m.d.comb += [nz_msg.seed_we.eq(self.seed_we), nz_msg.seed_addr.eq(self.seed_addr),
                         nz_msg.seed_data.eq(self.seed_data), nz.abort.eq(start)]
            wiring.connect(m, nz_xof.o_stream, nz.i_stream)
        if self.shared_xof:
            # One XOF for both streams: the round constants' message at the command; once the
            # last constant is taken (a public moment: it depends only on which candidates were
            # rejected), the noise message restarts the same XOF and its output goes to the
            # noise sampler.  A block without noise never starts the second message.
            noise_start = Signal()            # the noise message starts (restarts the XOF)
            to_noise = Signal()               # the XOF's output belongs to the noise sampler
            noise_done = Signal()             # this block's noise message was started
            m.d.comb += noise_start.eq((state != CoreState.IDLE) & cmd.noise & ~noise_done &
                                       (rks.rc_count == total) & rc_msg.i_stream.ready)
            message(rc_msg, rc_xof, start | noise_start,
                    Mux(start, MessageKind.RUBATO_RC, MessageKind.RUBATO_NOISE),
                    Mux(start, payload.nonce, cmd.nonce), Mux(start, payload.counter, cmd.counter))
            m.d.comb += [rc_msg.seed_we.eq(self.seed_we), rc_msg.seed_addr.eq(self.seed_addr),
                         rc_msg.seed_data.eq(self.seed_data),
                         rks.abort.eq(start), nz.abort.eq(start | noise_start),
                         rks.i_stream.payload.eq(rc_xof.o_stream.payload),
                         nz.i_stream.payload.eq(rc_xof.o_stream.payload),
                         rks.i_stream.valid.eq(rc_xof.o_stream.valid & ~to_noise),
                         nz.i_stream.valid.eq(rc_xof.o_stream.valid & to_noise),
                         rc_xof.o_stream.ready.eq(Mux(to_noise, nz.i_stream.ready, rks.i_stream.ready))]
            with m.If(start):
                m.d.sync += [to_noise.eq(0), noise_done.eq(0)]
            with m.Elif(noise_start):
                m.d.sync += [to_noise.eq(1), noise_done.eq(1)]
        if self.noise:
            fifo = SyncFIFOBuffered(width=len(nz.o_stream.payload), depth=p.l)
            m.submodules.noise_fifo = ResetInserter(start)(fifo)
            nz_count = Signal(range(p.l + 1))
            want = (nz_count < p.l) & ~start
            m.d.comb += [fifo.w_data.eq(nz.o_stream.payload),
                         fifo.w_en.eq(nz.o_stream.valid & want),
                         nz.o_stream.ready.eq(fifo.w_rdy & want)]
            with m.If(start):
                m.d.sync += nz_count.eq(0)
            with m.Elif(nz.o_stream.valid & nz.o_stream.ready):
                m.d.sync += nz_count.eq(nz_count + 1)

        # -- round keys ---------------------------------------------------------------------------
        m.d.comb += [rks.key_we.eq(self.key_we), rks.key_addr.eq(self.key_addr), rks.key_data.eq(self.key_data)]
        m.d.comb += [dp.rk[a].eq(rks.rk[a]) for a in range(L)]

        # -- the phase sequence ---------------------------------------------------------------
        ph = Signal(range(len(self.phases)))
        go = Signal()
        rk_base = Signal.like(rks.rk_addr)
        cur_layer = Signal(Layer)
        needed = Signal(range(total + 1))
        base = Signal.like(rks.rk_addr)
        with m.Switch(ph):
            for i, phase in enumerate(self.phases):
                with m.Case(i):
                    m.d.comb += cur_layer.eq(_LAYER[phase.kind])
                    if phase.kind == ARK:
                        m.d.comb += [needed.eq((phase.round_key + 1) * n), base.eq(phase.round_key * S)]
        if dp.mul_kind == "external":       # the constants and key words of the next cycle's issue
            m.d.comb += [rks.rk_addr.eq(Mux(go & dp.ready, base, rk_base) + dp.fetch), rks.key_rd.eq(dp.fetch)]
            m.d.comb += [dp.key[a].eq(rks.key[a]) for a in range(L)]
        else:
            m.d.comb += rks.rk_addr.eq(rk_base + dp.step)
        m.d.comb += dp.layer.eq(cur_layer)
        m.d.comb += [go.eq((state == CoreState.RUN) & (self.rk_count >= needed)),
                     dp.go.eq(go), dp.init.eq(start)]
        with m.If(go & dp.ready):
            m.d.sync += [ph.eq(ph + 1), rk_base.eq(base), self.commit_phase.eq(ph)]
            with m.If(ph == len(self.phases) - 1):
                m.d.sync += state.eq(CoreState.DRAIN)
        with m.If(start):
            m.d.sync += [state.eq(CoreState.RUN), ph.eq(0)]
        with m.If((state == CoreState.DRAIN) & dp.commit):
            m.d.sync += state.eq(CoreState.OUT)

        # -- output -----------------------------------------------------------------------------
        sub = Signal(range(max(2, L)))
        out_count = self.out_count
        o_valid, o_data = Signal(), Signal(w)
        m.d.comb += [self.o_stream.valid.eq(o_valid), self.o_stream.payload.eq(o_data)]
        word = Signal(w)
        with m.Switch(sub):
            for a in range(L):
                with m.Case(a):
                    m.d.comb += word.eq(dp.head[a])
        can_load = (state == CoreState.OUT) & (~o_valid | self.o_stream.ready)
        value = Signal(w)
        if self.noise:
            use_noise = cmd.noise
            e = fifo.r_data.as_signed()
            t = Signal(signed(w + 2))
            m.d.comb += [t.eq(word + e),
                         value.eq(Mux(use_noise, Mux(t < 0, t + q, Mux(t >= q, t - q, t)), word))]
            load = can_load & (~use_noise | fifo.r_rdy)
            m.d.comb += fifo.r_en.eq(load & use_noise)
        else:
            m.d.comb += value.eq(word)
            load = can_load
        with m.If(self.o_stream.ready):
            m.d.sync += o_valid.eq(0)
        with m.If(load):
            m.d.sync += [o_valid.eq(1), o_data.eq(value), out_count.eq(out_count + 1)]
            if L > 1:
                m.d.sync += sub.eq(Mux(sub == L - 1, 0, sub + 1))
                m.d.comb += dp.rotate.eq(sub == L - 1)
            else:
                m.d.comb += dp.rotate.eq(1)
            with m.If(out_count == p.l - 1):
                m.d.sync += [state.eq(CoreState.IDLE), out_count.eq(0), sub.eq(0)]
        return m

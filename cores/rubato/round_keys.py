"""The round-key path of the Rubato core: XOF words -> round constants -> ``key[i] * rc`` -> banks."""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import mark_unused
from hhe_gen.params.errors import ParameterError

from .datapath import check_lanes, check_params
from .multiplier import make_multiplier

__all__ = ["RoundKeySchedule"]


class RoundKeySchedule(wiring.Component):
    """``rk[j][i] = key[i] * rc[j][i] mod q`` for one block, written as the constants arrive.

    The XOF stream (4-byte beats) enters :class:`~hhe_gen.cores.sampler.RubatoRoundConstants`
    (4-byte candidates masked to ``q_bits``, rejected if ``>= q``); accepted constant number
    ``k`` (0-based, ``k < (r+1)*n``) is multiplied by key word ``k mod n`` (one modular
    multiplier, one constant per cycle) and written to bank ``k mod L`` at address ``k div L``
    of ``L = lanes`` round-key memories, so the datapath reads the L round keys of a group of L
    state words in one cycle.  After ``(r+1)*n`` constants the sampler is no longer taken from.

    Parameters
    ----------
    params : RubatoParams or set name
    lanes : int                 L, a divisor of n
    multiplier : str            "barrett" or "butterfly" (:func:`~.multiplier.make_multiplier`, op "mul"),
                                or "none" (no multiplier: see above)
    mul_latency : int or None   the multiplier's latency (None = its minimum; "none": 0)
    in_bytes : int              XOF bytes per beat (4: one candidate word per beat)

    Members
    -------
    abort : In(1)               a new block: counters to 0, the sampler cleared (the XOF restarts)
    i_stream : In(byte_stream(in_bytes))   the XOF output
    key_we, key_addr, key_data : In   write key word ``key_addr`` (a value in [0, q)); only while
                                no constant is being multiplied (between blocks)
    rk_addr : In(range((r+1)*n/L))    read address of every bank
    rk : Out(ArrayLayout(q_bits, L))  the banks' data at ``rk_addr`` of the previous cycle
    key_rd : In(range(n/L)), key : Out(ArrayLayout(q_bits, L))   ("none" only) the key banks'
                                data at ``key_rd`` of the previous cycle
    rk_count : Out(range((r+1)*n + 1))   round keys (constants with "none") written since ``clear``
    xof_words : Out(16)         candidate words the rejection filter took up to (not after) the
                                last constant (the KAT field ``rc_xof_words_read``)

    Observation (formal harness): ``rc`` (the sampler), ``multiplier``, ``key_memory``,
    ``rc_count`` (constants taken), ``key_index``, ``bank``, ``addr`` (where constant
    ``rc_count`` goes), ``mul_valid``/``mul_rc``/``mul_bank``/``mul_addr`` (the multiplier's
    operand stage), ``pipeline`` ((valid, bank, addr) of every multiplier stage),
    ``write_en``/``write_bank``/``write_addr``/``write_data`` (the bank write).

    Latency: constant k taken in cycle c is written in cycle ``c + 1 + mul_latency`` ("none": 0) and counted
    in ``rk_count`` from the cycle after; nothing depends on the key or the constants' values.
    """

    def __init__(self, params, lanes: int = 2, *, multiplier: str = "barrett", mul_latency=None,
                 in_bytes: int = 4):
        from hhe_gen.cores.sampler import RubatoRoundConstants
        from hhe_gen.cores.sampler.bytes import byte_stream

        try:
            p = self.params = check_params(params)
            self.lanes = check_lanes(lanes, p.n)
            if multiplier == "none":
                if mul_latency not in (None, 0):
                    raise ParameterError("mul_latency", mul_latency, "None or 0 with multiplier='none'")
                self.multiplier = None
            else:
                self.multiplier = make_multiplier(multiplier, p.q, mul_latency)
            self.rc = RubatoRoundConstants(p, in_bytes=in_bytes)
        except ParameterError:
            mark_unused(self, deep=True)
            raise
        self.mul_latency = 0 if self.multiplier is None else self.multiplier.latency
        self.total = p.round_constant_count
        self.depth = (p.rounds + 1) * (p.n // self.lanes)
        w = p.q_bits
        key_rd = {} if self.multiplier is not None else {
            "key_rd": In(range(max(2, p.n // self.lanes))), "key": Out(data.ArrayLayout(w, self.lanes))}
        super().__init__({
            "abort": In(1), "i_stream": In(byte_stream(in_bytes)),
            "key_we": In(1), "key_addr": In(range(p.n)), "key_data": In(w), **key_rd,
            "rk_addr": In(range(self.depth)), "rk": Out(data.ArrayLayout(w, self.lanes)),
            "rk_count": Out(range(self.total + 1)), "xof_words": Out(16),
        })
        # the key: one memory read in the constants' order, or ("none") L banks read by key_rd
        self.key_memory = Memory(shape=w, depth=p.n, init=[]) if self.multiplier is not None else None
        self.key_banks = [] if self.multiplier is not None else \
            [Memory(shape=w, depth=p.n // self.lanes, init=[]) for _ in range(self.lanes)]
        self.rc_count = Signal(range(self.total + 1))
        self.key_index = Signal(range(p.n))
        self.bank = Signal(range(max(2, self.lanes)))
        self.addr = Signal(range(self.depth))
        self.mul_valid, self.mul_rc = Signal(), Signal(w)
        self.mul_bank, self.mul_addr = Signal.like(self.bank), Signal.like(self.addr)
        self.write_en, self.write_data = Signal(), Signal(w)
        self.write_bank, self.write_addr = Signal.like(self.bank), Signal.like(self.addr)
        self.pipeline = [(Signal(name=f"rkv{k}"), Signal.like(self.bank, name=f"rkb{k}"),
                          Signal.like(self.addr, name=f"rka{k}")) for k in range(self.mul_latency)]

    def elaborate(self, platform):
        m = Module()
        p, L = self.params, self.lanes
        n, w, total = p.n, p.q_bits, self.total
        clear = self.abort
        m.submodules.rc = rc = self.rc
        wiring.connect(m, wiring.flipped(self.i_stream), rc.i_stream)
        m.d.comb += rc.abort.eq(clear)

        if not hasattr(self, "_key_ports"):       # once: a second elaboration (a memory plan, then the
            self._key_ports = [(mem.write_port(), mem.read_port())      # Verilog) reuses them
                               for mem in ([self.key_memory] if self.key_memory is not None else self.key_banks)]
        if self.key_memory is not None:
            m.submodules.key = self.key_memory
            key_w, key_r = self._key_ports[0]
            m.d.comb += [key_w.en.eq(self.key_we), key_w.addr.eq(self.key_addr), key_w.data.eq(self.key_data)]
        else:                   # word i in bank i mod L at i div L
            key_bank = Array(Const(i % L, range(max(2, L))) for i in range(n))[self.key_addr]
            key_row = Array(Const(i // L, range(max(2, n // L))) for i in range(n))[self.key_addr]
            for a, (mem, (wp, rp)) in enumerate(zip(self.key_banks, self._key_ports)):
                m.submodules[f"key_bank{a}"] = mem
                m.d.comb += [wp.en.eq(self.key_we & (key_bank == a)), wp.addr.eq(key_row), wp.data.eq(self.key_data),
                             rp.addr.eq(self.key_rd), self.key[a].eq(rp.data)]

        rc_count, key_index, bank, addr = self.rc_count, self.key_index, self.bank, self.addr
        take = rc.o_stream.valid & rc.o_stream.ready
        m.d.comb += rc.o_stream.ready.eq((rc_count < total) & ~clear)
        with m.If(clear):
            m.d.sync += [rc_count.eq(0), key_index.eq(0), bank.eq(0), addr.eq(0), self.xof_words.eq(0)]
        with m.Else():
            # candidate words the rejection filter took up to (not after) the last constant:
            # the model's rc_xof_words_read (the filter may take more while it looks for a
            # value nobody will take; those are not counted)
            candidate = rc._filter.i_stream
            counting = (rc_count < total) & ~(take & (rc_count == total - 1))
            with m.If(candidate.valid & candidate.ready & counting):
                m.d.sync += self.xof_words.eq(self.xof_words + 1)
            with m.If(take):
                m.d.sync += [rc_count.eq(rc_count + 1),
                             key_index.eq(Mux(key_index == n - 1, 0, key_index + 1))]
                if L > 1:
                    m.d.sync += bank.eq(Mux(bank == L - 1, 0, bank + 1))
                    with m.If(bank == L - 1):
                        m.d.sync += addr.eq(addr + 1)
                else:
                    m.d.sync += addr.eq(addr + 1)

        # the multiplier's operand stage: the key word (a synchronous read) and the constant
        m.d.sync += [self.mul_rc.eq(rc.o_stream.payload), self.mul_valid.eq(take & ~clear),
                     self.mul_bank.eq(bank), self.mul_addr.eq(addr)]
        if self.multiplier is not None:
            m.submodules.rk_mul = mul = self.multiplier
            m.d.comb += [key_r.addr.eq(key_index), mul.a.eq(key_r.data), mul.b.eq(self.mul_rc), mul.en.eq(1),
                         self.write_data.eq(mul.p[:w])]
        else:
            m.d.comb += self.write_data.eq(self.mul_rc)
        wv, wb, wa = self.mul_valid, self.mul_bank, self.mul_addr
        for nv, nb, na in self.pipeline:
            m.d.sync += [nv.eq(wv & ~clear), nb.eq(wb), na.eq(wa)]
            wv, wb, wa = nv, nb, na
        m.d.comb += [self.write_en.eq(wv), self.write_bank.eq(wb), self.write_addr.eq(wa)]
        with m.If(clear):
            m.d.sync += self.rk_count.eq(0)
        with m.Elif(wv):
            m.d.sync += self.rk_count.eq(self.rk_count + 1)

        for a in range(L):
            mem = Memory(shape=w, depth=self.depth, init=[])
            m.submodules[f"rk_bank{a}"] = mem
            wp, rp = mem.write_port(), mem.read_port()
            m.d.comb += [wp.en.eq(wv & (wb == a)), wp.addr.eq(wa), wp.data.eq(self.write_data),
                         rp.addr.eq(self.rk_addr), self.rk[a].eq(rp.data)]
        return m

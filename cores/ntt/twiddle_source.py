"""The iterative NTT's twiddle sources (:mod:`.iterative`): per lane, the twiddle of the cycle's
butterfly, from a banked ROM (:func:`rom_twiddles`) or formed on the fly (:func:`otf_twiddles`).

``twiddles="rom"``: P ROM banks per :func:`~.plan.twiddle_rom` (2N words per prime; the indices
t of a cycle's lanes are one aligned block, so each ROM bank serves at most one distinct index per
cycle).  A ROM bank larger than ``ROM_PIECE_WORDS`` (1024 words: one 1024 x 18 block RAM per 18
bits on ECP5 and 7-series, no multiplexer inside) is built from pieces of that depth, each read
into a register next to its block RAM, then one registered piece multiplexer: X = 2 (an unpieced
ROM leaves the multiplexer Yosys builds behind the block RAMs on the critical path: the
earlier-designs table of docs/figures.md).

``twiddles="otf"``: on the fly, each lane forms psi^e (e = brv(t), or 2N - brv(t) for the
inverse) as hi[e >> h] * lo[e mod 2^h] with one more modular multiplier of the butterfly's kind
(its minimum latency X) from two small tables (:func:`~.plan.otf_tables`, 2^(n+1-h) + 2^h words
per prime per lane, N = 2^13: 256 instead of 16384); the operands wait X cycles in registers, so
D grows by X.  Not the brief's "seed per stage and repeated multiplication": in this schedule the
twiddle index of a lane runs through bit-reversed exponents and, in the low stages, changes every
cycle, which a multiply-by-a-ratio loop of latency X cannot follow; the two-table product has no
loop.

The table contents are computed by the caller (:class:`~.iterative.IterativeNtt`); each function
adds its memories (submodules ``twiddle_rom<lane>[_<piece>]`` / ``twiddle_hi<lane>``,
``twiddle_lo<lane>``, ``twiddle_mul<lane>``) and logic to the module ``m`` it is given.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Mux, Signal
from amaranth.lib import memory

from .crossbar import delay

__all__ = ["rom_twiddles", "otf_twiddles"]


def rom_twiddles(m, rom, rom_addr, piece_words: int, pieces: int, width: int) -> list:
    """Per lane, the ROM word at ``rom_addr`` (read in cycle x+1: valid in x+2, or in x+2+X from
    registered pieces when ``pieces`` > 1).

    ``rom`` : the lanes' ROM banks (lists of words); ``piece_words`` : the depth of a piece."""
    rom_words = []          # per lane: the word read (cycle x+2, or x+2+X from pieces)
    pw = piece_words
    if pieces > 1:          # the piece index, aligned with the pieces' registers
        which = delay(m, rom_addr[pw.bit_length() - 1:], 2, "tw_piece_sel")
    for lane in range(len(rom)):
        if pieces == 1:
            mem = memory.Memory(shape=width, depth=len(rom[lane]), init=rom[lane])
            m.submodules[f"twiddle_rom{lane}"] = mem
            rp = mem.read_port()
            m.d.comb += [rp.addr.eq(rom_addr), rp.en.eq(1)]
            rom_words.append(rp.data)
            continue
        piece_q = []
        for i in range(pieces):
            words = rom[lane][i * pw:(i + 1) * pw]
            mem = memory.Memory(shape=width, depth=len(words), init=words)
            m.submodules[f"twiddle_rom{lane}_{i}"] = mem
            rp = mem.read_port()
            m.d.comb += [rp.addr.eq(rom_addr[:pw.bit_length() - 1]), rp.en.eq(1)]
            q = Signal(width, name=f"tw_piece{lane}_{i}")
            m.d.sync += q.eq(rp.data)
            piece_q.append(q)
        word = Signal(width, name=f"tw_word{lane}")
        m.d.sync += word.eq(Array(piece_q)[which])
        rom_words.append(word)
    return rom_words


def otf_twiddles(m, n_log: int, lanes: int, tables, tw_idx, inverse, sel, nsel: int, width: int,
                 multiplier) -> list:
    """Per lane, psi^e (e = brv(t), inverse 2N - brv(t)) = hi[e >> h] * lo[e mod 2^h], valid X
    cycles (the multiplier's latency) after the stage-2 operands.

    ``tables`` : (hi, lo) of :func:`~.plan.otf_tables` (``nsel`` primes, one after the other);
    ``tw_idx`` : per lane, the twiddle index t (the read decoder's, cycle x); ``multiplier()`` : a
    fresh modular multiplier (``a``, ``b``, ``sel``, ``en`` -> ``p``)."""
    n = 1 << n_log
    h = (n_log + 1) // 2
    hi_t, lo_t = tables
    tw_lane = []
    for lane in range(lanes):
        e = Signal(n_log + 1, name=f"tw_e{lane}")
        brv = Cat(*reversed([tw_idx[lane][i] for i in range(n_log)]))
        m.d.sync += e.eq(Mux(inverse, (2 * n - brv)[:n_log + 1], brv))
        ports = []
        for tag, table, addr in (("hi", hi_t, e[h:]), ("lo", lo_t, e[:h])):
            mem = memory.Memory(shape=width, depth=len(table), init=table)
            m.submodules[f"twiddle_{tag}{lane}"] = mem
            rp = mem.read_port()
            m.d.comb += [rp.addr.eq(addr + sel * (len(table) // nsel)), rp.en.eq(1)]
            ports.append(rp)
        mul = multiplier()
        m.submodules[f"twiddle_mul{lane}"] = mul
        m.d.comb += [mul.a.eq(ports[0].data), mul.b.eq(ports[1].data), mul.en.eq(1)]
        if nsel > 1:
            m.d.comb += mul.sel.eq(sel)
        tw_lane.append(mul.p[:width])
    return tw_lane

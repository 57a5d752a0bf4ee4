"""Netlist pieces of the iterative NTT's crossbars (:mod:`.iterative`): the XOR network on the bank
index, the static per-k selection (the read side's operands, the write side's slots), and register
delay chains.

Slot j of a cycle's coset sits in bank bb XOR rotl(j, G0 mod B') (bb = bank(base) changes every
cycle, the rotation and the slot's lane only with the stage), so each crossbar between the 2^B'
banks and the 2P operands is split into an XOR network on bb (:func:`xor_network`: B' levels of
2:1 multiplexers, word j <-> word j XOR 2^i at level i: 2^B' B' multiplexers per bit instead of
2^B' full 2^B':1 multiplexers) and a static permutation per butterfly bit k
(:func:`static_select`: per operand a multiplexer over the few distinct sources it has across the
stages, select = k), with a pipeline register between the two.  Array-indexed 16:1 multiplexers
(a kpos multiplexer per slot re-expanded inside every bank's multiplexer) took most of the core's
LUTs at N = 2^13, P = 8 (the earlier-designs table of docs/figures.md).

Each function adds its logic to the module ``m`` it is given (no submodule: the names and the
netlist are those of the core's own module).
"""

from __future__ import annotations

from amaranth.hdl import Mux, Signal

from .plan import lane_lo_slot, rotl, rotr

__all__ = ["delay_chain", "delay", "xor_network", "static_select", "read_operand", "write_slots"]


def delay_chain(m, sig, cycles, name):
    """[sig, sig delayed 1, .., sig delayed ``cycles``] (registers ``<name>_d1`` ..)."""
    chain = [sig]
    for i in range(cycles):
        r = Signal.like(sig, name=f"{name}_d{i + 1}") if isinstance(sig, Signal) else \
            Signal(len(sig), name=f"{name}_d{i + 1}")
        m.d.sync += r.eq(chain[-1])
        chain.append(r)
    return chain


def delay(m, sig, cycles, name):
    """``sig`` delayed ``cycles`` cycles (the last register of :func:`delay_chain`)."""
    return delay_chain(m, sig, cycles, name)[-1]


def xor_network(m, words, select, width, name):
    """out[j] = words[j ^ select] (``select`` B' bits): B' levels of 2:1 multiplexers, level i
    swapping the words j and j ^ 2^i when bit i of ``select`` is set (words of ``width`` bits)."""
    for i in range(len(select)):
        level = []
        for j, word in enumerate(words):
            s = Signal(width, name=f"{name}{i}_{j}")
            m.d.comb += s.eq(Mux(select[i], words[j ^ (1 << i)], word))
            level.append(s)
        words = level
    return words


def static_select(m, k, sources, width, name):
    """A word chosen by the butterfly bit k among ``sources[kk]`` (one per k; None: don't
    care): one multiplexer input per distinct source, the most frequent one the default."""
    groups = {}
    for kk, src in enumerate(sources):
        if src is not None:
            groups.setdefault(id(src), (src, []))[1].append(kk)
    order = sorted(groups.values(), key=lambda g: -len(g[1]))
    out = Signal(width, name=name)
    if not order:                              # never used (single-port: some banks)
        return out
    if len(order) == 1:
        m.d.comb += out.eq(order[0][0])
        return out
    with m.Switch(k):
        for src, ks in order[1:]:
            with m.Case(*ks):
                m.d.comb += out.eq(src)
        with m.Default():
            m.d.comb += out.eq(order[0][0])
    return out


def read_operand(m, k, zr, plans, lane: int, hi: int, bank_bits: int, width: int):
    """Read crossbar, stage 2: lane l's lo / hi operand is slot lane_lo_slot(l, kpos) (| 2^kpos),
    in ``zr`` (the registered XOR network output) at rotl(slot, G0 mod B') - a static choice per k
    (``plans``: the :func:`~.plan.k_plan` of every k)."""
    BB = bank_bits
    return static_select(m, k, [zr[rotl(lane_lo_slot(lane, kp.kpos) | (hi << kp.kpos), kp.g0 % BB, BB)]
                                for kp in plans], width, f"{'hi' if hi else 'lo'}_op{lane}")


def write_slots(m, k, xs, ys, plans, coset_bits: int, bank_bits: int, width: int) -> list:
    """Write crossbar, stage 1: the lanes' results (``xs``, ``ys``) in bank order up to the XOR:
    v[rotl(slot, G0 mod B')] = slot's result (slot j: lane j without bit kpos, its x if bit kpos is
    0, else its y), a static choice per k, registered (``wvr<j>``)."""
    B, BB = coset_bits, bank_bits
    v = []
    for j in range(1 << BB):
        sources = []
        for kp in plans:
            slot = rotr(j, kp.g0 % BB, BB)
            if slot >> B:                          # single-port: no slot in this bank half
                sources.append(None)
                continue
            lane = (slot & ((1 << kp.kpos) - 1)) | ((slot >> (kp.kpos + 1)) << kp.kpos)
            sources.append(ys[lane] if (slot >> kp.kpos) & 1 else xs[lane])
        vj = static_select(m, k, sources, width, f"wv{j}")
        r = Signal(width, name=f"wvr{j}")
        m.d.sync += r.eq(vj)
        v.append(r)
    return v

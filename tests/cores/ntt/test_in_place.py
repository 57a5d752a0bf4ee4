"""IterativeNtt with memory="external": the transform in place in banks held outside the core.

A rig holds two polynomials as 2P banks each, not transparent (a read in the cycle of a write to
the same word returns the old word: the core must never need it; the layout of cores/ntt/bank_port.py:
word i in bank bank(i) at address i >> B, filled and read back in Python through that layout,
not through the core), serves the core's first-stage reads from the source polynomial and
everything else from the destination.  Checked against hhe_gen.models.ntt: forward and inverse,
in place and from one polynomial into the other, lifted signed inputs, both primes, random and
boundary residues (0, q-1); exact cycles against command_cycles (T + 2 in both directions: the
inverse's N^-1 is in its halving butterflies, no pass of its own; nothing data dependent); bad
parameters."""

import random

import pytest
from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.sim import Simulator

from hhe_gen.cores.ntt import IterativeNtt
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.primes import abc_fhe_primes, dna_hhe_primes, ntt_primes


def bank_index(i, n_log, b):
    out = 0
    for lo in range(0, n_log, b):
        out ^= (i >> lo) & ((1 << b) - 1)
    return out


class Rig(wiring.Component):
    """Two polynomials as 2P banks each (reads not transparent), on the core's bank port: 0 the source and 1
    the destination, or (``same``) polynomial ``which`` both."""

    def __init__(self, core, init):
        self.core, self.init = core, init
        self.banks = 1 << core.bank_bits
        self.mems = [[memory.Memory(shape=core.bank_width, depth=core.n >> core.bank_bits, init=init[p][b])
                      for b in range(self.banks)] for p in range(2)]
        super().__init__({"same": wiring.In(1), "which": wiring.In(1)})

    def elaborate(self, platform):
        m = Module()
        core = self.core
        m.submodules.core = core
        port = core.bank_port
        first_q = Signal()
        m.d.sync += first_q.eq(port.first)
        for b in range(self.banks):
            data = []
            for p in range(2):
                mem = self.mems[p][b]
                m.submodules[f"p{p}b{b}"] = mem
                wp = mem.write_port()
                rp = mem.read_port()
                writes = ~self.same | (self.which == p) if p else self.same & ~self.which
                m.d.comb += [rp.addr.eq(port.raddr[b]), rp.en.eq(port.ren), wp.addr.eq(port.waddr[b]),
                             wp.data.eq(port.wdata[b]), wp.en.eq(port.wen[b] & writes)]
                data.append(rp.data)
            m.d.comb += port.rdata[b].eq(Mux(self.same, Mux(self.which, data[1], data[0]),
                                             Mux(first_q, data[0], data[1])))
        return m


def layout(words, n, bank_bits, width):
    """Bank contents of a polynomial: word i in bank(i) at address i >> B."""
    out = [[0] * (n >> bank_bits) for _ in range(1 << bank_bits)]
    for i, w in enumerate(words):
        out[bank_index(i, n.bit_length() - 1, bank_bits)][i >> bank_bits] = w % (1 << width)
    return out


def run(core, src, jobs):
    """Run ``jobs`` ((inverse, sel, lift, place) each; place "0->1": from polynomial 0 into 1, "0" or
    "1": in place there) one after another; return, per job, the polynomial it wrote and the cycles
    from its command's acceptance to the next command's."""
    n, bb = core.n, core.bank_bits
    n_log = n.bit_length() - 1
    rig = Rig(core, [layout(src, n, bb, core.bank_width), [[0] * (n >> bb)] * (1 << bb)])
    results = []

    async def bench(ctx):
        for inverse, sel, lift, place in jobs:
            ctx.set(rig.same, place != "0->1")
            ctx.set(rig.which, place == "1")
            ctx.set(core.cmd.payload.inverse, inverse)
            ctx.set(core.cmd.payload.sel, sel)
            ctx.set(core.cmd.payload.lift, lift)
            ctx.set(core.cmd.valid, 1)
            await ctx.tick().until(core.cmd.ready)
            ctx.set(core.cmd.valid, 0)
            cycles = 1
            while not (await ctx.tick().sample(core.done))[-1]:
                cycles += 1
            mems = rig.mems[0 if place == "0" else 1]
            words = [ctx.get(mems[bank_index(i, n_log, bb)].data[i >> bb]) for i in range(n)]
            results.append((words, cycles + 1))

    sim = Simulator(rig)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return results


@pytest.mark.parametrize("n,lanes,bits,twiddles", [(16, 1, 20, "rom"), (32, 2, 30, "otf"), (64, 4, 20, "rom"),
                                                   (64, 8, 30, "rom"), (256, 2, 20, "otf")])
def test_in_place_bit_exact_and_cycles(n, lanes, bits, twiddles):
    qs = ntt_primes(n, bits, 2)
    core = IterativeNtt(n, lanes, qs, twiddles=twiddles, memory="external")
    rng = random.Random(n + lanes)
    q0, q1 = qs
    x = [rng.choice([0, 1, q1 - 1]) if rng.random() < 0.3 else rng.randrange(q1) for _ in range(n)]
    # forward from 0 into 1, then the inverse in place in 1 (the destination is its own source)
    res = run(core, x, [(0, 1, 0, "0->1"), (1, 1, 0, "1")])
    assert res[0][0] == ntt(x, q1)
    assert res[1][0] == x
    assert [c for _, c in res] == [core.command_cycles(False), core.command_cycles(True)]
    assert core.command_cycles(False) == core.transform_cycles(False) + 2
    assert core.command_cycles(True) == core.transform_cycles(True) + 2
    # in place in the source, with prime 0; all-(q-1) and all-zero
    for poly in ([q0 - 1] * n, [0] * n):
        fwd = run(core, poly, [(0, 0, 0, "0"), (1, 0, 0, "0")])
        assert fwd[0][0] == ntt(poly, q0) and fwd[1][0] == poly


@pytest.mark.parametrize("bank_width", [None, 36])
def test_lift_signed_inputs(bank_width):
    n, lanes = 64, 2
    qs = ntt_primes(n, 30, 2)
    core = IterativeNtt(n, lanes, qs, memory="external", bank_width=bank_width)
    width = core.bank_width
    rng = random.Random(7)
    small = [rng.randint(-40, 40) for _ in range(n)] 
    # the extremes a word of ``width`` bits holds that are also below q in magnitude
    small[:3] = [-min(1 << (width - 1), qs[0] - 1), min((1 << (width - 1)) - 1, qs[0] - 1), -1]
    out = run(core, small, [(0, 0, 1, "0->1")])[0][0]
    assert out == ntt([v % qs[0] for v in small], qs[0])
    # with lift, non-negative words stay as they are
    plain = list(range(n))
    assert run(core, plain, [(0, 1, 1, "0")])[0][0] == ntt(plain, qs[1])


@pytest.mark.parametrize("kind", ["special-barrett", "ntt-montgomery"])
def test_reducer_kinds(kind):
    """The client's special-prime Barrett, and a Montgomery kind (twiddles times R; the inverse's
    halvings do not depend on the reducer)."""
    n, lanes = 64, 2
    if kind == "special-barrett":
        qs, extra = [p.q for p in dna_hhe_primes(54, n, count=3)], {"k": 54}
    else:
        qs, extra = [p.q for p in abc_fhe_primes(n, 29)][:2], {}
    core = IterativeNtt(n, lanes, qs, kind=kind, memory="external", **extra)
    rng = random.Random(kind)
    sel = len(qs) - 1
    x = [rng.randrange(qs[sel]) for _ in range(n)]
    res = run(core, x, [(1, sel, 0, "0->1"), (0, sel, 0, "1")])
    assert res[0][0] == intt(x, qs[sel])
    assert res[1][0] == x


@pytest.mark.parametrize("kw,name", [({"banking": "single"}, "banking"), ({"memory": "shared"}, "memory"),
                                     ({"bank_width": 10}, "bank_width"), ({"bank_width": 65}, "bank_width")])
def test_bad_parameters(kw, name):
    args = dict(memory="external") | kw
    with pytest.raises(ParameterError, match=f"'{name}'"):
        IterativeNtt(64, 2, ntt_primes(64, 20, 1), **args)

"""The Rubato datapath (:class:`hhe_gen.cores.rubato.RubatoDatapath`) equals the specification
layer by layer, at a small modulus.

Harness: the real generator at the reduced parameter set "v = 4 (n = 16), q = a 5..7-bit prime"
(a :class:`~hhe_gen.params.rubato.RubatoParams` with only q changed; every other dimension is
the real Par-80S/128S one), ``lanes`` words per cycle.  The harness loads the initial state
(1..16), runs ARK with 16 free round-key words (``AnyConst``, each assumed < q, so the state
after it is an arbitrary vector of residues), then MixColumns, MixRows, Feistel, and asserts
after every commit that the committed state equals the specification evaluated on the same free
words: ``(x + rk) mod q``, ``sum_k c_k x[(i+k) mod v][col] mod q``, ``sum_k c_k x[row][(j+k) mod
v] mod q``, ``x[i] + x[i-1]^2 mod q`` (written from docs/rubato.md §2 as plain Amaranth ``%``
expressions, not with the datapath's shift-and-add helpers).  Bounded model check over the
whole sequence (every phase commits within it, asserted too).  Covers: every commit is reached.
"""

from __future__ import annotations

import dataclasses

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume, Cover, Signal

from hhe_gen.params.rubato import rubato_params

from ..common.sby import formal_module

__all__ = ["small_params", "DatapathHarness", "SEQUENCE"]

SEQUENCE = ("ARK", "MIX_COLUMNS", "MIX_ROWS", "FEISTEL")


def small_params(q: int = 31):
    """Par-80S (v = 4, n = 16) with the modulus replaced by the small prime ``q``; q > n = 16,
    since the initial state (1, ..., n) must be canonical residues (true for the real sets)."""
    if q <= 16:
        raise ValueError(f"q = {q}: the harness needs a prime q > n = 16")
    return dataclasses.replace(rubato_params("Par-80S"), name=f"test-q{q}", q=q, q_bits=q.bit_length())


def spec_layer(kind: str, x, rk, p):
    """The specification of one layer on a list of Amaranth values (docs/rubato.md §2)."""
    v, n, q, c = p.v, p.n, p.q, p.circulant
    if kind == "ARK":
        return [(x[i] + rk[i]) % q for i in range(n)]
    if kind == "MIX_COLUMNS":
        return [sum(c[k] * x[((i + k) % v) * v + col] for k in range(v)) % q
                for i in range(v) for col in range(v)]
    if kind == "MIX_ROWS":
        return [sum(c[k] * x[row * v + (j + k) % v] for k in range(v)) % q
                for row in range(v) for j in range(v)]
    return [x[0]] + [(x[i] + x[i - 1] * x[i - 1]) % q for i in range(1, n)]


class DatapathHarness:
    """Init, ARK (free round keys), MixColumns, MixRows, Feistel; every commit checked.

    ``layers``: a prefix of :data:`SEQUENCE` (the quick proof stops before the Feistel squarers,
    which dominate the solver time).  ``mutate``: a layer name whose expected value is replaced by another layer's (a mutant
    specification that must be refuted).
    """

    def __init__(self, q: int = 31, lanes: int = 4, mutate: str | None = None, layers=SEQUENCE):
        from hhe_gen.cores.rubato import RubatoDatapath

        self.sequence = tuple(layers)
        assert self.sequence == SEQUENCE[:len(self.sequence)], "a prefix of SEQUENCE"

        self.params = small_params(q)
        self.dut = RubatoDatapath(self.params, lanes)
        self.mutate = mutate

    @property
    def depth(self) -> int:
        """BMC depth: init, then 4 phases of ``phase_cycles`` each, plus 3 cycles of slack."""
        return 2 + len(self.sequence) * self.dut.phase_cycles + 3

    def build(self):
        """The harness module (built on :func:`formal_module`)."""
        from hhe_gen.cores.rubato import Layer

        m, _ = formal_module()
        m.submodules.dut = dut = self.dut
        p, L = self.params, self.dut.lanes
        q, w, n = p.q, p.q_bits, p.n
        rk = [Signal(w, name=f"rk{i}") for i in range(n)]
        for r in rk:
            m.d.comb += [r.eq(AnyConst(w)), Assume(r < q)]

        # the sequence: cycle 0 init; then go for each layer when ready
        started = Signal()
        index = Signal(range(len(self.sequence) + 1))
        m.d.comb += dut.init.eq(~started)
        m.d.sync += started.eq(1)
        with m.Switch(index):
            for i, name in enumerate(self.sequence):
                with m.Case(i):
                    m.d.comb += dut.layer.eq(Layer[name])
        m.d.comb += dut.go.eq(started & (index < len(self.sequence)))
        with m.If(dut.go & dut.ready):
            m.d.sync += index.eq(index + 1)
        # round keys of the words issued in the previous cycle
        prev_step = Signal.like(dut.step)
        m.d.sync += prev_step.eq(dut.step)
        with m.Switch(prev_step):
            for s in range(n // L):
                with m.Case(s):
                    m.d.comb += [dut.rk[a].eq(rk[s * L + a]) for a in range(L)]

        # the expected states
        expected, x = [], [i + 1 for i in range(n)]
        for name in self.sequence:
            kind = name
            if self.mutate == name:
                kind = {"ARK": "MIX_ROWS", "MIX_COLUMNS": "MIX_ROWS", "MIX_ROWS": "MIX_COLUMNS",
                        "FEISTEL": "ARK"}[name]
            x = self._settle(m, spec_layer(kind, x, rk, p), name, w)
            expected.append(x)
        commits = Signal(range(len(self.sequence) + 1))
        with m.If(dut.commit):
            m.d.sync += commits.eq(commits + 1)
            with m.Switch(commits):
                for i, exp in enumerate(expected):
                    with m.Case(i):
                        m.d.comb += [Assert(dut.next_state[k] == exp[k]) for k in range(n)]
                        m.d.comb += Cover(commits == i)
        # every phase commits within the bound
        cycle = Signal(range(self.depth + 2))
        m.d.sync += cycle.eq(cycle + 1)
        with m.If(cycle == self.depth - 1):
            m.d.comb += Assert(commits == len(self.sequence))
        return m

    @staticmethod
    def _settle(m, values, name, w):
        out = []
        for i, v in enumerate(values):
            s = Signal(w, name=f"exp_{name.lower()}{i}")
            m.d.comb += s.eq(v)
            out.append(s)
        return out

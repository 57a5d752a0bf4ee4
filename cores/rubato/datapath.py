"""The Rubato state and its layers: n words, ``lanes`` words per cycle (see :class:`RubatoDatapath`)."""

from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith.butterfly import OP_CODES, ButterflyPlan
from hhe_gen.cores.arith.butterfly_array import butterfly_lanes_signature
from hhe_gen.cores.unused import mark_unused
from hhe_gen.params import checks
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import RubatoParams, rubato_params

from .lanes import estimate_width, mod_add, quotient_estimate, reduce_corrected, sum_bound, weighted_sum
from .multiplier import MULTIPLIERS, make_multiplier

__all__ = ["Layer", "RubatoDatapath", "check_lanes", "check_params", "make_multiplier",
           "MULTIPLIERS"]

class Layer(enum.Enum, shape=2):
    """The layer a phase of :class:`RubatoDatapath` computes."""
    ARK = 0
    MIX_COLUMNS = 1
    MIX_ROWS = 2
    FEISTEL = 3


def check_params(params) -> RubatoParams:
    if isinstance(params, RubatoParams):
        return params
    if isinstance(params, str):
        return rubato_params(params)
    raise ParameterError("params", params, "a RubatoParams or a set name such as 'Par-128S'")


def check_lanes(lanes, n: int) -> int:
    """Lanes must divide n (every phase streams n/lanes groups)."""
    return checks.check_divisor("lanes", lanes, n, f"n = {n}")


class RubatoDatapath(wiring.Component):
    """The n-word Rubato state with ARK, MixColumns, MixRows and Feistel, ``lanes`` words a cycle.

    The state is a rotating register: during a phase's issue cycles it rotates by ``lanes``
    words per cycle, so lane a always reads the word at position a and its neighbours at fixed
    offsets (MixColumns: +k*v mod n; MixRows: +k or +k-v, depending on the column; Feistel: -1).
    After n/lanes rotations it is aligned again.  The results enter a second n-word register
    (``next_state``, a shift register) and are committed to ``state`` in one cycle.

    Parameters
    ----------
    params : RubatoParams or set name
    lanes : int                 L, a divisor of n (n = fully parallel)
    multiplier : str            the Feistel squarers, one per lane: "barrett" (cores/arith
                                ``modmul``, then a modular addition here) or "butterfly" (the
                                multi-field Butterfly's Z_t field in op "mac": x[i] + x[i-1]^2 in
                                the unit; word 0 squares 0) or "external": the same "mac" on the
                                ``lanes_port``, lanes 0 .. L-1 of a butterfly array outside with a
                                Z_t field of t (the engine's crypto unit), which then also runs
                                ARK as x[i] + key[i]*rc[i] ("mac" with the ``key`` and ``rk``
                                members: the round constants, not the round keys)
    mul_latency : int or None   the squarers' latency (None = minimum; "external": the array's,
                                required)

    Members
    -------
    init : In(1)          load the initial state (1, 2, ..., n) (only while ``ready``)
    go : In(1)            start a phase computing ``layer`` (taken when ``ready``)
    layer : In(Layer)
    ready : Out(1)        a phase may start (idle, or the commit cycle of the previous phase)
    issue : Out(1)        an issue cycle: words step*L .. step*L+L-1 enter the lanes
    step : Out(range(n/L))
    rk : In(ArrayLayout(q_bits, L))   ARK only: the round keys of the words issued in the
                          previous cycle (a synchronous memory read addressed by ``step``);
                          "external": the round constants of the words issued in this cycle (a
                          read addressed by ``fetch`` the cycle before)
    key : In(ArrayLayout(q_bits, L))  "external" only: the key words issued in this cycle (as ``rk``)
    fetch : Out(range(n/L))   "external" only: the step issued in the next cycle (0 in a ``go``
                          cycle that starts a phase), the address of the reads of ``rk`` and ``key``
    commit : Out(1)       the cycle ``state <= next_state``
    rotate : In(1)        (idle only) rotate the state by L words: ``head`` shows the next group
    head : Out(ArrayLayout(q_bits, L))   state words 0..L-1
    lanes_port : Out(butterfly lanes of ``lanes_plan``)   "external" only: op mac, field Z_t

    Observation (not ports): ``state``, ``next_state`` (lists of n Signals; aligned, word i at
    index i, while idle and in the commit cycle), ``depth``.

    Latency: a phase is ``n/L + depth + 1`` cycles from ``go`` to the next possible ``go``,
    ``depth = max(3, feistel_latency)``: the linear layers' sum, its quotient estimate and its
    corrections are a register each (3); the Feistel word is ``mul_latency + 2`` cycles behind its
    issue with the "barrett" squarer (the square is registered before the modular addition of
    ``x[i]``) and ``mul_latency + 1`` with the "butterfly" unit (which adds ``x[i]`` itself) and
    "external" (where the ARK word is the same MAC's, its operands read a cycle ahead).
    Nothing depends on data.
    """

    def __init__(self, params, lanes: int = 2, *, multiplier: str = "barrett", mul_latency=None):
        try:
            p = self.params = check_params(params)
            self.lanes = check_lanes(lanes, p.n)
            self.mul_kind = multiplier
            if multiplier == "external":
                if mul_latency is None:
                    raise ParameterError("mul_latency", mul_latency, "the butterfly array's latency with "
                                         "multiplier='external'")
                self.lanes_plan = ButterflyPlan(zt=dict(kind="barrett", moduli=[p.q]), latency=mul_latency)
                self._muls = []
            else:
                self._muls = [make_multiplier(multiplier, p.q, mul_latency, mac=True) for _ in range(self.lanes)]
        except ParameterError:
            mark_unused(self, deep=True)
            raise
        self.steps = p.n // self.lanes
        self.mul_latency = self.lanes_plan.latency if multiplier == "external" else self._muls[0].latency
        self.feistel_latency = self.mul_latency + (2 if multiplier == "barrett" else 1)
        self.depth = max(3, self.feistel_latency)
        w = p.q_bits
        external = {}
        if multiplier == "external":
            external["lanes_port"] = Out(butterfly_lanes_signature(self.lanes_plan, self.lanes))
            external["key"] = In(data.ArrayLayout(w, self.lanes))
            external["fetch"] = Out(range(max(2, self.steps)))
        super().__init__({
            "init": In(1), "go": In(1), "layer": In(Layer), "ready": Out(1),
            "issue": Out(1), "step": Out(range(max(2, self.steps))),
            "rk": In(data.ArrayLayout(w, self.lanes)),
            "commit": Out(1), "rotate": In(1), "head": Out(data.ArrayLayout(w, self.lanes)),
            **external,
        })
        self.state = [Signal(w, name=f"x{i}") for i in range(p.n)]
        self.next_state = [Signal(w, name=f"y{i}") for i in range(p.n)]

    @property
    def phase_cycles(self) -> int:
        """Cycles per phase (go to the next go)."""
        return self.steps + self.depth + 1

    def elaborate(self, platform):
        m = Module()
        p, L, S, D = self.params, self.lanes, self.steps, self.depth
        n, v, q, w = p.n, p.v, p.q, p.q_bits
        c = p.circulant
        x, y = self.state, self.next_state

        busy = Signal()
        count = Signal(range(S + D + 1))
        layer = Signal(Layer)
        last = busy & (count == S + D)
        issue = busy & (count < S)
        step = Signal(range(max(2, S)))
        m.d.comb += [self.ready.eq(~busy | last), self.issue.eq(issue), self.commit.eq(last),
                     step.eq(count[:len(step)] if S > 1 else 0), self.step.eq(step)]
        with m.If(busy):
            m.d.sync += count.eq(count + 1)
        with m.If(last):
            m.d.sync += busy.eq(0)
        with m.If(self.go & self.ready):
            m.d.sync += [busy.eq(1), count.eq(0), layer.eq(self.layer)]
        if self.mul_kind == "external":
            m.d.comb += self.fetch.eq(Mux(self.go & self.ready, 0, step + 1))

        # state: init, rotate (issue or explicit), commit
        with m.If(last):
            m.d.sync += [xi.eq(yi) for xi, yi in zip(x, y)]
        with m.Elif(issue | (~busy & self.rotate)):
            m.d.sync += [x[i].eq(x[(i + L) % n]) for i in range(n)]
        with m.Elif(~busy & self.init):
            m.d.sync += [x[i].eq(i + 1) for i in range(n)]
        m.d.comb += [self.head[a].eq(x[a]) for a in range(L)]

        def delay(sig, cycles, name):
            for k in range(cycles):
                r = Signal(sig.shape(), name=f"{name}_d{k}")
                m.d.sync += r.eq(sig)
                sig = r
            return sig

        results = []
        if self.mul_kind == "external":
            port = self.lanes_port
            m.d.comb += port.op.eq(OP_CODES["mac"])
            muls = [SimpleNamespace(a=port.a[a], b=port.b[a], c=port.c[a], en=Signal(name=f"en{a}"), p=port.x[a])
                    for a in range(L)]
        else:
            muls = self._muls
            for a, mul in enumerate(muls):
                m.submodules[f"square{a}"] = mul
        for a in range(L):
            mul = muls[a]
            # MixColumns / MixRows taps; the MixRows wrap pattern depends on the column of word
            # step*L + a, a constant table indexed by step.
            taps = []
            for k in range(v):
                mc = x[(a + k * v) % n]
                wraps = [((s * L + a) % v) + k >= v for s in range(S)]
                mr_in, mr_wrap = x[(a + k) % n], x[(a + k - v) % n]
                if all(wraps):
                    mr = mr_wrap
                elif not any(wraps):
                    mr = mr_in
                else:
                    bits = Const(sum(1 << s for s, f in enumerate(wraps) if f), S)
                    mr = Mux(bits.bit_select(step, 1), mr_wrap, mr_in)
                taps.append(Mux(layer == Layer.MIX_COLUMNS, mc, mr))
            bound = sum_bound(c, q)
            lin_sum = Signal(range(bound + 1), name=f"lin_sum{a}")
            m.d.sync += lin_sum.eq(weighted_sum(taps, c))
            lin_est = Signal(estimate_width(bound, q), name=f"lin_est{a}")
            m.d.sync += lin_est.eq(quotient_estimate(lin_sum, bound, q))
            lin = Signal(w, name=f"lin{a}")
            m.d.sync += lin.eq(reduce_corrected(m, lin_est, bound, q, f"lin{a}_red"))

            if self.mul_kind != "external":     # ARK by a modular addition (external: on the MAC below)
                self_1 = Signal(w, name=f"self{a}_1")
                m.d.sync += self_1.eq(x[a])
                ark = Signal(w, name=f"ark{a}")
                m.d.sync += ark.eq(mod_add(self_1, self.rk[a], q))

            # Feistel: y = x[i] + x[i-1]^2, y[0] = x[0]
            prev = x[(a - 1) % n]
            fei = Signal(w, name=f"feistel{a}")
            if self.mul_kind in ("butterfly", "external"):
                # x[i] + x[i-1]^2 as the unit's c + a*b; word 0: x[0] + 0^2
                first = Signal(name=f"first{a}")
                m.d.comb += first.eq((step == 0) if a == 0 else 0)
                square_in = Mux(first, 0, prev) if a == 0 else prev
                ops = (square_in, square_in)
                if self.mul_kind == "external":     # ARK: x[i] + key[i]*rc[i], the same MAC
                    is_ark = layer == Layer.ARK
                    ops = (Mux(is_ark, self.key[a], square_in), Mux(is_ark, self.rk[a], square_in))
                m.d.comb += [mul.a.eq(ops[0]), mul.b.eq(ops[1]), mul.c.eq(x[a]), mul.en.eq(1)]
                m.d.sync += fei.eq(mul.p[:w])
            else:
                m.d.comb += [mul.a.eq(prev), mul.b.eq(prev), mul.en.eq(1)]
                first = Signal(name=f"first{a}")
                m.d.comb += first.eq((step == 0) if a == 0 else 0)
                square = Signal(w, name=f"square{a}_p")
                m.d.sync += square.eq(mul.p[:w])
                self_m = delay(x[a], self.mul_latency + 1, f"fself{a}")
                first_m = delay(first, self.mul_latency + 1, f"ffirst{a}")
                m.d.sync += fei.eq(Mux(first_m, self_m, mod_add(self_m, square, q)))

            lin_d = delay(lin, D - 3, f"lin{a}")
            fei_d = delay(fei, D - self.feistel_latency, f"fei{a}")
            ark_d = fei_d if self.mul_kind == "external" else delay(ark, D - 2, f"ark{a}")
            res = Signal(w, name=f"result{a}")
            with m.Switch(layer):
                with m.Case(Layer.ARK):
                    m.d.comb += res.eq(ark_d)
                with m.Case(Layer.MIX_COLUMNS, Layer.MIX_ROWS):
                    m.d.comb += res.eq(lin_d)
                with m.Case(Layer.FEISTEL):
                    m.d.comb += res.eq(fei_d)
            results.append(res)
        valid = delay(issue, D, "valid")
        with m.If(valid):
            m.d.sync += [y[i].eq(y[i + L]) for i in range(n - L)]
            m.d.sync += [y[n - L + a].eq(results[a]) for a in range(L)]
        return m

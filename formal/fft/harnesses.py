"""SymbiYosys harnesses of the FFT cores (``hhe_gen.cores.fft``).

What is proven, at which size:

* **Complex butterfly == its model** (:func:`butterfly_equivalence`): the real
  :class:`hhe_gen.cores.arith.Butterfly` generator with a complex field of W = 8 bits (F = 5; each
  rounding mode), op ct (the FFT's) and op gs (the IFFT's halving butterfly), for every operand
  pair (a, b) of 8-bit complex numbers and each twiddle the n = 8 transform uses (a constant per
  run: with a free twiddle the bit-level check did not finish in 10 minutes - multiplier
  identities are hard for SAT), against an independent Amaranth expression of
  :func:`hhe_gen.models.fft.butterfly_ct_fixed` / ``butterfly_gs_fixed`` (the complex product in
  complex_mul_3mult's form - equal to the exact 4-multiplier product for all integers by the z3
  proof :func:`z3_three_mult` - the model's round_shift written as quotient/remainder, wrap to W
  bits), both outputs x and y at once.  BMC, operands in the first cycle, one checked step
  (:func:`~hhe_gen.formal.common.contract.pipeline_contract` with ``issue="first"``); about a
  minute per twiddle (slow set).  FixedPointFormat has no widths below 8.
* **Stream rules of IterativeFft** (:func:`fft_stream`): inputs free under the stream rules
  (assumed), output ``valid`` held and ``payload`` stable until taken (asserted), at most n/P
  beats in flight, no output without an item in flight, and the in-flight counter asserted equal
  to the core's own bookkeeping (beats taken in LOAD, + n/P in COMPUTE, + n/P minus the beats
  read plus the ones held on the read ports and in the output register in UNLOAD) so k-induction closes; at n = 8 slots, P = 1 and 2, W = 8.
  Covers: an output transfer, back-pressure, a full core, a transfer after back-pressure.
* **Constant time** (:func:`fft_timing`): two copies of the core fed different data with the same
  handshakes have identical ``i_stream.ready`` / ``o_stream.valid`` in every cycle (k-induction;
  the control has no data input, the proof checks that no data reaches it).
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Cat, Const, Cover, Fragment, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.models.fft import FixedPointFormat
from hhe_gen.flow.proof import ProofResult

from ..common.contract import pipeline_contract
from ..common.sby import find_signal, formal_module, run_harness
from ..common.stream import stream_harness

__all__ = ["ButterflyOp", "butterfly_spec", "butterfly_equivalence", "fft_stream", "fft_timing"]


class ButterflyOp(wiring.Component):
    """One op of the complex Butterfly as a raw unit: ports a, b, w, en; output ``xy`` = Cat(x, y)
    (2 x 2W bits); ``latency`` = the butterfly's."""

    def __init__(self, fmt: FixedPointFormat, op: str, unit=None, twiddle=None):
        from hhe_gen.cores.arith import Butterfly
        self.fmt, self.op, self.twiddle = fmt, op, twiddle
        self.unit = unit if unit is not None else Butterfly(complex=fmt)
        self.latency = self.unit.latency
        cw = 2 * fmt.width
        super().__init__({"a": In(cw), "b": In(cw), "w": In(cw), "en": In(1), "xy": Out(2 * cw)})

    def elaborate(self, platform):
        from hhe_gen.cores.arith.butterfly import OP_CODES
        m = Module()
        m.submodules.unit = u = self.unit
        cw = 2 * self.fmt.width
        w = self.w if self.twiddle is None else self.twiddle
        m.d.comb += [u.op.eq(OP_CODES[self.op]), u.a.eq(self.a), u.b.eq(self.b), u.w.eq(w), u.c.eq(0),
                     u.en.eq(self.en), self.xy.eq(Cat(u.x[:cw], u.y[:cw]))]
        return m


def _round_shift(x, s, rounding):
    """The model's FixedPointFormat.round_shift, written as quotient and remainder."""
    if rounding == "half-up":
        return (x + (1 << (s - 1))) >> s
    if rounding == "truncate":
        return x >> s
    q = x >> s
    rem = x - (q << s)                      # 0 <= rem < 2^s
    half = 1 << (s - 1)
    up = (rem > half) | ((rem == half) & q[0])
    return q + up


def butterfly_spec(fmt: FixedPointFormat, op: str, exact: bool = False, twiddle=None):
    """spec(m, ops) for pipeline_contract: Cat(x, y) of the model's butterfly on ops a, b, w.
    ``exact``: the complex product with four multipliers (the model's complex_mul_exact) instead of
    complex_mul_3mult (equal for all integers: :func:`z3_three_mult`; the bit-level solver proves
    the RTL against the 3-multiplier form far faster than against the 4-multiplier one)."""
    w_, f, r = fmt.width, fmt.frac_bits, fmt.rounding

    def part(v, k):
        return v[k * w_:(k + 1) * w_].as_signed()

    def wrap(v):
        return v.as_unsigned()[:w_]

    def product(x, t):
        """Exact complex product (complex_mul_3mult: k1 = c(a+b), k2 = a(d-c), k3 = b(c+d),
        re = k1 - k3, im = k1 + k2; or the 4-multiplier form), one rounding shift by F per
        component, wrapped."""
        a_, b_, c_, d_ = part(x, 0), part(x, 1), part(t, 0), part(t, 1)
        if exact:
            re, im = a_ * c_ - b_ * d_, a_ * d_ + b_ * c_
        else:
            k1, k2, k3 = c_ * (a_ + b_), a_ * (d_ - c_), b_ * (c_ + d_)
            re, im = k1 - k3, k1 + k2
        return Cat(wrap(_round_shift(re, f, r)), wrap(_round_shift(im, f, r)))

    def spec(m, ops):
        a, b = ops["a"], ops["b"]
        t = ops["w"] if twiddle is None else Const(twiddle, 2 * w_)
        if op == "ct":
            v = Signal(2 * w_, name="spec_v")
            m.d.comb += v.eq(product(b, t))
            x = Cat(wrap(part(a, 0) + part(v, 0)), wrap(part(a, 1) + part(v, 1)))
            y = Cat(wrap(part(a, 0) - part(v, 0)), wrap(part(a, 1) - part(v, 1)))
        else:
            x = Cat(*(wrap(_round_shift(part(a, k) + part(b, k), 1, r)) for k in range(2)))
            h = Signal(2 * w_, name="spec_h")
            m.d.comb += h.eq(Cat(*(wrap(_round_shift(part(a, k) - part(b, k), 1, r)) for k in range(2))))
            y = product(h, t)
        return Cat(x, y)
    return spec


def _result(run, note=""):
    detail = note if run.passed else run.summary()
    return ProofResult(run.status, depth=run.depth, detail=detail, workdir=str(run.workdir))


def z3_three_mult(ctx=None) -> ProofResult:
    """complex_mul_3mult == complex_mul_exact for all integers (z3, unbounded integer arithmetic)."""
    import z3
    a, b, c, d = z3.Ints("a b c d")
    k1, k2, k3 = c * (a + b), a * (d - c), b * (c + d)
    s = z3.Solver()
    s.add(z3.Or(k1 - k3 != a * c - b * d, k1 + k2 != a * d + b * c))
    res = s.check()
    if res == z3.unsat:
        return ProofResult("PASS", detail="no integers a, b, c, d with a different product")
    return ProofResult("FAIL" if res == z3.sat else "UNKNOWN", detail=str(s.model() if res == z3.sat else res))


def butterfly_equivalence(ctx, width: int, op: str, rounding: str = "half-up", issue: str = "first",
                          spec_fmt: FixedPointFormat | None = None, exact: bool = False,
                          twiddle_n: int | None = None) -> ProofResult:
    """The Butterfly (complex, W = ``width``, F = W - 3) == the model's butterfly (module docstring).
    ``spec_fmt`` checks against another format's model (a mutant)."""
    fmt = FixedPointFormat(width, width - 3, rounding)
    if twiddle_n is not None:
        # every twiddle the FFT of n slots uses, each as a constant (one BMC run each)
        from hhe_gen.cores.arith.butterfly import pack_complex
        from hhe_gen.cores.fft import FftPlan
        from hhe_gen.models.fft import twiddle_table
        table = twiddle_table(twiddle_n, fmt)
        plan = FftPlan(twiddle_n, 1, op == "gs", 7)
        used = sorted({pack_complex(table[t], fmt) for t in plan.twiddle_rom(0)})
        runs = []
        for i, tw in enumerate(used):
            dut = ButterflyOp(fmt, op, twiddle=tw)
            harness = pipeline_contract(dut, butterfly_spec(spec_fmt or fmt, op, exact, twiddle=tw),
                                        operands=["a", "b"], output="xy", stalls=False, issue="first",
                                        covers=False)
            run = run_harness(harness, ctx.workdir / f"t{i}", f"bf_{op}_{width}", mode="bmc",
                              depth=dut.latency + 1, timeout=ctx.timeout)
            if not run.passed:
                return ProofResult(run.status, depth=run.depth, checks=i + 1,
                                   detail=f"twiddle {tw:#x}: {run.summary()}", workdir=str(run.workdir))
            runs.append(run)
        return ProofResult("PASS", depth=runs[0].depth, checks=len(runs),
                           detail=f"{len(runs)} twiddles of n = {twiddle_n}, latency {runs[0].depth - 1}")
    dut = ButterflyOp(fmt, op)
    spec = butterfly_spec(spec_fmt or fmt, op, exact)
    if issue == "first":
        harness = pipeline_contract(dut, spec, operands=["a", "b", "w"], output="xy", stalls=False,
                                    issue="first", covers=False)
        depth = dut.latency + 1
    else:
        harness = pipeline_contract(dut, spec, operands=["a", "b", "w"], output="xy", stalls=True)
        depth = 2 * dut.latency + 3
    run = run_harness(harness, ctx.workdir, f"bf_{op}_{width}", mode="bmc", depth=depth, timeout=ctx.timeout)
    return _result(run, f"latency {dut.latency}, {fmt.width}/{fmt.frac_bits} {rounding}")


def _fft(n, lanes, width, inverse):
    from hhe_gen.cores.fft import IterativeFft
    return IterativeFft(n, lanes, FixedPointFormat(width, width - 3), inverse=inverse)


def fft_occupancy(dut, path=(), seen=None):
    """The core's own count of beats it holds (module docstring), from its elaborated fragment
    (``path``: submodule names down to the core, when it is wrapped; ``seen`` gets the fragment)."""
    beats = dut.n // dut.lanes

    def occ(frag):
        if seen is not None:
            seen["frag"] = frag
        phase = find_signal(frag, "phase", path=path)
        in_beat = find_signal(frag, "in_beat", path=path)
        out_beat = find_signal(frag, "out_beat", path=path)
        o_valid = find_signal(frag, "o_valid", path=path)
        held = o_valid.as_unsigned()
        if dut.output_register:                    # the beat in the output register
            held = held + find_signal(frag, "r_valid", path=path).as_unsigned()
        # in_beat is 0 outside LOAD in every reachable state; counting it in every phase states that
        return Value.cast(in_beat + (phase == 1).as_unsigned() * beats
                          + (phase == 2).as_unsigned() * (beats - out_beat + held))[:16]
    return occ


class GlitchingOutput(wiring.Component):
    """Mutant: the core with bit 0 of its output payload flipped while the output is stalled."""

    def __init__(self, core):
        self.core, self.n, self.lanes = core, core.n, core.lanes
        self.output_register = core.output_register
        self.cycles = core.cycles
        super().__init__({"i_stream": In(core.i_stream.signature.flip()),
                          "o_stream": Out(core.o_stream.signature)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = c = self.core
        wiring.connect(m, wiring.flipped(self.i_stream), c.i_stream)
        stalled = Signal()
        m.d.sync += stalled.eq(c.o_stream.valid & ~self.o_stream.ready)
        m.d.comb += [self.o_stream.valid.eq(c.o_stream.valid), c.o_stream.ready.eq(self.o_stream.ready),
                     self.o_stream.payload.eq(Value.cast(c.o_stream.payload) ^ stalled)]
        return m


def fft_stream(ctx, n: int, lanes: int, inverse: bool, mode: str = "prove", depth: int | None = None,
               mutant: bool = False) -> ProofResult:
    dut = _fft(n, lanes, 8, inverse)
    path = ()
    if mutant:
        dut, path = GlitchingOutput(dut), ("core",)
    seen = {}
    harness = stream_harness(dut, capacity=n // lanes, occupancy=fft_occupancy(dut, path, seen))
    # invariants of the core's control (true in every reachable state; stated so induction closes)
    sig = lambda name: find_signal(seen["frag"], name, path=path)          # noqa: E731
    core = dut.core if mutant else dut
    harness.d.comb += [Assert(sig("phase") <= 2, "phase in range"),
                       Assert((sig("phase") == 0) | (sig("in_beat") == 0), "in_beat is 0 outside LOAD"),
                       Assert(sig("out_beat") <= core.unload_beats, "out_beat in range"),
                       Assert((sig("phase") == 2) | ~sig("o_valid"), "o_valid only in UNLOAD")]
    if core.output_register:
        harness.d.comb += [Assert((sig("phase") == 2) | ~sig("r_valid"), "r_valid only in UNLOAD"),
                           Assert((sig("out_beat") != 0) | ~sig("o_valid"), "o_valid after a read"),
                           Assert((sig("out_beat") > 1) | ~sig("r_valid"), "r_valid after two reads")]
    if depth is None:
        depth = dut.cycles() + 4 if mode in ("cover", "bmc") else 6
    run = run_harness(harness, ctx.workdir, f"fft_stream_{mode}", mode=mode, depth=depth, timeout=ctx.timeout)
    return _result(run, f"n = {n}, P = {lanes}, {'IFFT' if inverse else 'FFT'}, W = 8, cycles() = {dut.cycles()}")


def fft_timing(ctx, n: int, lanes: int, inverse: bool, depth: int = 4) -> ProofResult:
    """Miter: two cores, same valid/ready, independent payloads; ready and valid always equal."""
    m, _ = formal_module()
    a = _fft(n, lanes, 8, inverse)
    b = _fft(n, lanes, 8, inverse)
    fa, fb = Fragment.get(a, None), Fragment.get(b, None)
    m.submodules.a, m.submodules.b = fa, fb
    valid, ready = Signal(), Signal()
    m.d.comb += [valid.eq(AnySeq(1)), ready.eq(AnySeq(1))]
    for d in (a, b):
        pl = Value.cast(d.i_stream.payload)
        m.d.comb += [d.i_stream.valid.eq(valid), d.o_stream.ready.eq(ready), pl.eq(AnySeq(len(pl)))]
    m.d.comb += [Assert(a.i_stream.ready == b.i_stream.ready, "i_stream.ready differs"),
                 Assert(a.o_stream.valid == b.o_stream.valid, "o_stream.valid differs")]
    # tie the control state of the copies (the induction hypothesis needs it stated)
    for name in ("phase", "in_beat", "t", "stage", "cyc", "out_beat", "o_valid", "r_valid"):
        m.d.comb += Assert(find_signal(fa, name) == find_signal(fb, name), f"{name} differs")
    m.d.comb += Cover(a.o_stream.valid & ready)
    run = run_harness(m, ctx.workdir, "fft_timing", mode="prove", depth=depth, timeout=ctx.timeout)
    return _result(run, f"n = {n}, P = {lanes}, {'IFFT' if inverse else 'FFT'}, W = 8")

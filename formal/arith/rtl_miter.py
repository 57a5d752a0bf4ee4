"""A miter between two reducers: Barrett against word Montgomery
(:func:`miter_barrett_montgomery`); see :mod:`hhe_gen.formal.arith.rtl`.
"""

from __future__ import annotations

from amaranth.asserts import AnyConst
from amaranth.hdl import Assume, Mux, Signal

from hhe_gen.flow.proof import ProofResult, proof

from ..common.sby import run_harness
from .rtl_common import GROUP, make_unit, prime_table, proof_result, skip_without_cores, small_primes


def miter_barrett_montgomery(ctx, bits: int = 8, moduli=None) -> ProofResult:
    """Miter: ``BarrettMul(a, b) == WordMontgomeryMul(a, b*R mod q)`` for all a, b < q and both
    primes of the table (word Montgomery with 4-bit words, R = 2^(4*words)).

    The Montgomery operand b*R mod q comes from a certificate (free b_m < q and k with
    b*R == k*q + b_m), so the solver needs no divider; each unit's result is captured at its own
    latency and the two are compared.  No specification of a*b mod q is involved: the two
    generators check each other.  ``moduli`` builds the Montgomery unit for other primes (a
    mutant).
    """
    if (skip := skip_without_cores()) is not None:
        return skip
    from amaranth.hdl import Assert, Fragment

    from ..common.sby import formal_module
    qs = small_primes("montgomery", bits)
    barrett = make_unit("barrett", bits, moduli=qs)
    mont = make_unit("montgomery", bits, moduli=qs if moduli is None else moduli)
    radix = mont.models[0].montgomery_radix
    width = barrett.width
    m, _ = formal_module()
    m.submodules.barrett = Fragment.get(barrett, None)
    m.submodules.mont = Fragment.get(mont, None)
    last = max(barrett.latency, mont.latency)
    t = Signal(range(last + 2), name="h_t")
    with m.If(t <= last):
        m.d.sync += t.eq(t + 1)
    a, b, sel = (Signal(width, name="op_a"), Signal(width, name="op_b"),
                 Signal(barrett.sel.shape(), name="op_sel"))
    bm, k = Signal(width, name="cert_bm"), Signal(width + radix.bit_length(), name="cert_k")
    m.d.comb += [a.eq(AnyConst(width)), b.eq(AnyConst(width)), sel.eq(AnyConst(sel.shape())),
                 bm.eq(AnyConst(width)), k.eq(AnyConst(len(k)))]
    q = prime_table(qs, sel, width)
    m.d.comb += Assume((sel < len(qs)) & (a < q) & (b < q) & (bm < q))
    m.d.comb += Assume(b * radix == k * q + bm, "certificate b_m = b*R mod q")
    for unit, opb in ((barrett, b), (mont, bm)):
        m.d.comb += [unit.a.eq(a), unit.b.eq(opb), unit.sel.eq(sel), unit.en.eq(1)]
    results = []
    for name, unit in (("barrett", barrett), ("mont", mont)):
        reg = Signal(width, name=f"h_{name}_p")
        with m.If(t == unit.latency):
            m.d.sync += reg.eq(unit.p)
        now = Signal(width, name=f"h_{name}_now")
        m.d.comb += now.eq(Mux(t == unit.latency, unit.p, reg))
        results.append(now)
    with m.If(t == last):
        m.d.comb += Assert(results[0] == results[1], "Barrett and Montgomery disagree")
    run = run_harness(m, ctx.workdir, f"miter_{bits}", mode="bmc", depth=last + 1, timeout=ctx.timeout)
    return proof_result(run, f"latencies {barrett.latency} / {mont.latency}, primes {list(qs)}")


MITER_BITS = 7
proof(GROUP, f"miter-barrett-montgomery-{MITER_BITS}", engine="sby-bmc", quick=False, bits=MITER_BITS,
      what="miter: Barrett(a, b) == word Montgomery(a, b*R mod q) for all a, b < q, both primes",
      size=f"{MITER_BITS}-bit primes (q = 1 mod 16), 4-bit words, two-prime table")(miter_barrett_montgomery)
proof(GROUP, f"mutant-miter-barrett-montgomery-{MITER_BITS}", engine="sby-bmc", quick=False, expect="FAIL",
      bits=MITER_BITS, moduli=small_primes("montgomery", MITER_BITS)[::-1],
      what="MUTANT: the Montgomery side's prime table swapped", size=f"{MITER_BITS}-bit primes")(
    miter_barrett_montgomery)

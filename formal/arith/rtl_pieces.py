"""Pieces of the full-width reducers, as relations between a unit's internal values
(:func:`probe_relation`, :func:`piece`, table ``PIECES``); see :mod:`hhe_gen.formal.arith.rtl`.
"""

from __future__ import annotations

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assume, Const, Mux, Signal

from hhe_gen.flow.proof import ProofResult, proof

from ..common.sby import run_harness
from .rtl_common import GROUP, arith_cores, operands_below_q, proof_result, skip_without_cores


def probe_relation(ctx, dut, names, relation, *, assumption=None, label: str = "piece",
                   operand_moduli=None) -> ProofResult:
    """A relation between internal values (probes) of a full-width unit, for every input.

    The unit gets its operands (a, b < q, any prime) in the first cycle and ``en`` = 1; each
    probe ``name`` (signal, stage) is captured when the operands' wave passes its stage, and at
    the latest of those stages ``relation(values, sel)`` is asserted (``assumption(values, sel)``
    assumed - a bound proven elsewhere, e.g. r0 < 3q by z3).  BMC of depth max stage + 1.  The
    relation is independent of the unit's product, so the solver need not reason about the wide
    multiplier in front of it.
    """
    from amaranth.asserts import AnySeq
    from amaranth.hdl import Assert, Fragment

    from ..common.sby import formal_module
    frag = Fragment.get(dut, None)
    probes = {n: dut.probes[n] for n in names}
    last = max(stage for _, stage in probes.values())
    m, _ = formal_module()
    m.submodules.dut = frag
    first = Signal(init=1, name="h_first")
    t = Signal(range(last + 2), name="h_t")
    m.d.sync += first.eq(0)
    with m.If(t <= last):
        m.d.sync += t.eq(t + 1)
    ops = {}
    for n in ("a", "b", "sel"):
        if hasattr(dut, n):
            port = getattr(dut, n)
            ops[n] = Signal(port.shape(), name=f"op_{n}")
            m.d.comb += [ops[n].eq(AnyConst(port.shape())),
                         port.eq(Mux(first, ops[n], AnySeq(port.shape())))]
    moduli = dut.moduli if operand_moduli is None else operand_moduli
    m.d.comb += [dut.en.eq(1), Assume(operands_below_q(moduli, dut.width)(ops))]
    values = {}
    for n, (sig, stage) in probes.items():
        reg = Signal(sig.shape(), name=f"h_{n}_reg")
        with m.If(t == stage):
            m.d.sync += reg.eq(sig)
        now = Signal(sig.shape(), name=f"h_{n}")
        m.d.comb += now.eq(Mux(t == stage, sig, reg))
        values[n] = now
    sel = ops.get("sel", Const(0, 1))
    with m.If(t == last):
        if assumption is not None:
            m.d.comb += Assume(assumption(values, sel), "bound proven elsewhere")
        m.d.comb += Assert(relation(values, sel), f"{label} relation")
    run = run_harness(m, ctx.workdir, label, mode="bmc", depth=last + 1, timeout=ctx.timeout)
    stages = ", ".join(f"{n}@{s}" for n, (_, s) in probes.items())
    return proof_result(run, f"probes {stages}, latency {dut.latency}")


def _per_prime(moduli, sel, fn):
    """fn(q) for the selected prime (an Array over the per-prime expressions)."""
    vals = [fn(q) for q in moduli]
    return vals[0] if len(vals) == 1 else Array(vals)[sel]


def _wide_unit(kind: str, k: int, negated: bool = False):
    arith = arith_cores()
    from hhe_gen.formal.arith.primes import abc_set, dna_set
    if kind == "special-barrett":
        qs = [p.q for p in dna_set(k, quick=True) if p.log_n == 13][:2]
        return arith.SpecialBarrettMul(qs, k, 13)
    if kind == "ntt-montgomery":
        qs = [p.q for p in abc_set(k, quick=True) if p.log_n == 13][:2]
        return arith.NttMontgomeryMul(qs, 13, k, negated=negated)
    if kind == "barrett":
        from hhe_gen.formal.arith.primes import ntt_set
        return arith.BarrettMul(ntt_set(k, quick=True)[:2], k)
    raise ValueError(kind)


def piece(ctx, kind: str, k: int, which: str, negated: bool = False, mutate=None) -> ProofResult:
    """One full-width piece (see the table ``PIECES``); ``mutate`` = "q" checks against the
    wrong primes (a mutant)."""
    if (skip := skip_without_cores()) is not None:
        return skip
    dut = _wide_unit(kind, k, negated)
    qs = dut.moduli
    spec_qs = qs if mutate is None else tuple(q + 2 * (2 << 13) for q in qs)

    if which == "corrections":          # any Barrett: r0 in [0, 3q) (z3) -> r = r0 mod q
        names = ("r0", "r")

        def rel(v, s):
            return _per_prime(spec_qs, s, lambda q: (v["r"] < q) & (
                (v["r0"] == v["r"]) | (v["r0"] == v["r"] + q) | (v["r0"] == v["r"] + 2 * q)))

        def assume(v, s):
            return v["r0"] < _per_prime(spec_qs, s, lambda q: Const(3 * q, k + 2))
    elif which == "qinv":               # ABC-FHE: m = t_lo * q^-1 (or -q^-1) mod R
        r = dut.r_bits
        names = ("t_lo", "m")
        if negated:
            rel = lambda v, s: _per_prime(spec_qs, s, lambda q: (v["m"] * q + v["t_lo"])[:r] == 0)  # noqa: E731
        else:
            rel = lambda v, s: _per_prime(spec_qs, s, lambda q: (v["m"] * q)[:r] == v["t_lo"])     # noqa: E731
        assume = None
    elif which == "difference":         # ABC-FHE: d = x - m*q (negated: x + m*q), exact
        names = ("x", "m", "d")
        sg = 1 if negated else -1
        rel = lambda v, s: v["d"].as_unsigned() == _per_prime(                                     # noqa: E731
            spec_qs, s, lambda q: (v["x"] + sg * v["m"] * q)[:len(v["d"])])
        assume = None
    else:
        raise ValueError(which)
    return probe_relation(ctx, dut, names, rel, assumption=assume, label=f"{kind}_{k}_{which}")


PIECES = [
    # kind, which, what
    ("special-barrett", "corrections",
     "the two constant-time corrections: r0 in [0, 3q) (z3) gives r = r0 mod q"),
    ("barrett", "corrections",
     "generic Barrett corrections: r0 in [0, 3q) (z3) gives r = r0 mod q"),
    ("ntt-montgomery", "qinv",
     "ABC-FHE shift-add QInv: m*q = t_lo mod R (m = t_lo*q^-1 mod R) for every t_lo"),
    ("ntt-montgomery", "difference",
     "ABC-FHE shift-add q network in carry-save form: d == x - m*q (negated: x + m*q), exact"),
]


for _kind, _which, _what in PIECES:
    for _k, _quick in ((36, True), (54, False), (64, False)):
        if _kind == "ntt-montgomery" and _k > 36:      # 54 bits: QInv ran > 1200 s under load
            continue
        _neg = (False, True) if _kind == "ntt-montgomery" else (False,)
        for _n in _neg:
            _suffix = "-negated" if _n else ""
            proof(GROUP, f"rtl-piece-{_kind}-{_which}{_suffix}-{_k}", engine="sby-bmc",
                  quick=_quick and not _n, kind=_kind, k=_k, which=_which, negated=_n,
                  what=_what, size=f"{_k}-bit primes of the real form (N = 2^13), two per table, "
                                   "the full-width unit")(piece)
    proof(GROUP, f"mutant-rtl-piece-{_kind}-{_which}-36", engine="sby-bmc", expect="FAIL",
          quick=False, kind=_kind, k=36, which=_which, mutate="q",
          what=f"MUTANT: the {_which} relation checked against the wrong primes",
          size="36-bit primes")(piece)

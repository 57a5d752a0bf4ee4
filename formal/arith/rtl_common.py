"""What the RTL harnesses of :mod:`hhe_gen.formal.arith.rtl` share: the small primes of each
reducer's form and the units built for them, the certificate specifications of a modular product,
the operand assumption, and the step from a SymbiYosys run to a ``ProofResult``.
"""

from __future__ import annotations

import functools

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assume, Const, Mux, Signal

from hhe_gen.params import dna_hhe_primes, is_prime
from hhe_gen.flow.proof import ProofResult

GROUP = "arith"
KINDS = ("barrett", "montgomery", "special-barrett", "ntt-montgomery")


def arith_cores():
    """The arithmetic cores, or None while they do not exist (the proofs then SKIP)."""
    try:
        from hhe_gen.cores import arith
    except ImportError:
        return None
    return arith


# -- small primes of each form -----------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def small_primes(kind: str, bits: int, count: int = 2) -> tuple:
    """``count`` primes of exactly ``bits`` bits of the form ``kind`` needs, largest first.

    barrett: any primes; montgomery: q = 1 (mod 16) (word_bits = 4); special-barrett: DNA-HHE
    primes at k = bits (>= 16) for N = 16; ntt-montgomery: q = 2^(bits-1) + kk*32 + 1, kk a
    signed sum of at most three powers of two (N = 16).
    """
    from hhe_gen.models.modarith import signed_digits
    if kind == "special-barrett":
        return tuple(p.q for p in dna_hhe_primes(bits, 16, 10, count=count))
    out = []
    if kind == "ntt-montgomery":
        e = bits - 1
        cands = sorted(((1 << e) + kk * 32 + 1 for kk in range(1, 1 << (e - 5))
                        if len(signed_digits(kk)) <= 3), reverse=True)
    else:
        step = 16 if kind == "montgomery" else 2
        top = (1 << bits) - 1
        first = top - (top - 1) % step if step == 16 else top
        cands = range(first, 1 << (bits - 1), -step)
    for q in cands:
        if q.bit_length() == bits and is_prime(q):
            out.append(q)
            if len(out) == count:
                break
    return tuple(out)


def make_unit(kind: str, bits: int, latency=None, *, count: int = 2, moduli=None, **kw):
    """A reducer of ``kind`` for small primes of ``bits`` bits (port width max(16, bits)).

    ``moduli`` overrides the primes (mutants: a unit built for other primes than the spec's).
    """
    arith = arith_cores()
    qs = small_primes(kind, bits, count) if moduli is None else tuple(moduli)
    width = max(16, bits)
    if kind == "barrett":
        return arith.BarrettMul(qs, width, latency, **kw)
    if kind == "montgomery":
        return arith.WordMontgomeryMul(qs, width, 4, latency, **kw)
    if kind == "special-barrett":
        return arith.SpecialBarrettMul(qs, bits, 4, latency, **kw)
    if kind == "ntt-montgomery":
        return arith.NttMontgomeryMul(qs, 4, width, latency, r_bits=kw.pop("r_bits", bits), **kw)
    raise ValueError(kind)


# -- specifications ----------------------------------------------------------------------------------
def prime_table(values, sel, width):
    if len(values) == 1:
        return Const(values[0], width)
    return Array(Const(v, width) for v in values)[sel]


def operands_below_q(moduli, width):
    """Assumption on the tracked operands: sel < len(moduli), a < q[sel], b < q[sel]."""
    def assume(ops):
        sel = ops.get("sel", 0)
        q = prime_table(moduli, sel, width)
        cond = (ops["a"] < q) & (ops["b"] < q)
        return cond & (sel < len(moduli)) if "sel" in ops else cond
    return assume


def modmul_spec(moduli, *, radix: int = 1, bits: int | None = None, width: int):
    """The independent specification of a modular multiplier, as a certificate.

    Barrett (``radix`` 1): AnyConst k, r with ``a*b == k*q + r`` and ``r < q``: r = a*b mod q.
    Montgomery (radix R = 2^s): AnyConst M < R, c in {0, 1}, r < q with
    ``a*b + M*q == (r + c*q)*R``: then r*R = a*b (mod q), so r = a*b*R^-1 mod q (M is the
    Montgomery quotient -a*b*q^-1 mod R and c says whether (a*b + M*q)/R was >= q; the unit may
    compute M differently - word by word, or as +q^-1 - the certificate only fixes r).  Per
    prime an ``Assume`` guarded by ``sel``; r is the expected output.
    """
    bits = max(q.bit_length() for q in moduli) if bits is None else bits

    def spec(m, ops):
        a, b = ops["a"][:bits], ops["b"][:bits]
        x = a * b
        sel = ops.get("sel", 0)
        r = Signal(width, name="cert_r")
        m.d.comb += r.eq(AnyConst(width))
        if radix == 1:
            k = Signal(bits + 1, name="cert_k")
            m.d.comb += k.eq(AnyConst(bits + 1))
        else:
            k = Signal(radix.bit_length() - 1, name="cert_m")
            c = Signal(name="cert_c")
            m.d.comb += [k.eq(AnyConst(len(k))), c.eq(AnyConst(1))]
        for i, q in enumerate(moduli):
            if radix == 1:
                cond = (x == k * q + r) & (r < q)
            else:
                cond = (x + k * q == (r + Mux(c, q, 0)) * radix) & (r < q)
            m.d.comb += Assume(cond if len(moduli) == 1 else (sel != i) | cond,
                               f"certificate for prime {i}")
        return r
    return spec


def unit_spec(dut, moduli=None):
    moduli = dut.moduli if moduli is None else moduli
    radix = dut.models[0].montgomery_radix
    return modmul_spec(moduli, radix=radix, width=dut.width)


def proof_result(run, note="") -> ProofResult:
    detail = note if run.passed else run.summary()
    return ProofResult(run.status, depth=run.depth, detail=detail, workdir=str(run.workdir))


def skip_without_cores():
    if arith_cores() is None:
        return ProofResult("SKIP", detail="hhe_gen.cores.arith is not available")
    return None

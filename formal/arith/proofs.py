"""The proofs of ``hhe-gen prove arith`` (registered with :func:`hhe_gen.flow.proof.proof`).

z3 (integer arithmetic, full widths 36/44/54/61/64; statements in ``formal/arith/bounds.py``):
parametric statements with q symbolic (every prime of a form at once) and per-prime statements
with the operands symbolic for the prime sets of ``formal/arith/primes.py``.  Mutants
(``expect="FAIL"``) show that each kind of statement can fail.

The RTL proofs (SymbiYosys) of the hardware in ``cores/arith`` are registered by
``formal/arith/rtl.py`` (imported at the end of this module).
"""

from __future__ import annotations

from hhe_gen.flow.proof import ProofResult, proof

from . import bounds
from .primes import WIDTHS, abc_set, dna_set, ntt_set

GROUP = "arith"
_W = ", ".join(map(str, WIDTHS))


def _collect(outcomes, note: str = "") -> ProofResult:
    """PASS if every outcome passed; otherwise the first failing one's verdict and text."""
    n = 0
    for out in outcomes:
        n += 1
        if not out.passed:
            return ProofResult(out.status, checks=n, detail=str(out))
    return ProofResult("PASS", checks=n, detail=note or f"{n} z3 queries")


def _ks(quick):
    return WIDTHS if quick else range(16, 65)


# -- Barrett ---------------------------------------------------------------------------------------
@proof(GROUP, "z3-barrett-symbolic", engine="z3",
       what="Barrett: Q-2 <= q_est <= Q for every q in (2^(k-1), 2^k) and x < 2^2k "
            "(r0 in [0, 3q): two corrections suffice)",
       size="q symbolic; k = 36,44,54,61,64 (quick) / every k 16..64")
def _barrett_symbolic(ctx):
    return _collect(bounds.barrett_quotient_symbolic(k) for k in _ks(ctx.quick))


@proof(GROUP, "z3-barrett-primes", engine="z3",
       what="Barrett per prime: Q-2 <= q_est <= Q and r0 < 2^(k+2) for all x <= (q-1)^2; also "
            "counts the primes where one correction is provably enough",
       size=f"w = {_W}: ntt primes (24/width) and DNA-HHE primes (N=2^13, 2^16)")
def _barrett_primes(ctx):
    qs = [q for w in WIDTHS for q in ntt_set(w, ctx.quick)] + \
         [p.q for w in WIDTHS for p in dna_set(w, ctx.quick)]
    one = sum(bounds.barrett_quotient(q, corrections=1).passed for q in qs)
    result = _collect(bounds.barrett_quotient(q) for q in qs)
    if result.status == "PASS":
        result.detail = (f"{len(qs)} primes; one correction provably enough for {one} of them "
                         f"(the hardware keeps two)")
    return result


@proof(GROUP, "z3-r0-low-bits", engine="z3",
       what="r0 = x - q_est*q from the low k+2 bits of x and q_est*q is exact when r0 in [0, 3q)",
       size="q, x, qq symbolic; k = 36,44,54,61,64 (quick) / every k 16..64")
def _r0_low_bits(ctx):
    return _collect(bounds.low_bits_difference(k) for k in _ks(ctx.quick))


# -- DNA-HHE special-prime Barrett ------------------------------------------------------------------
def _log_ns(quick):
    return (13, 16) if quick else range(3, 18)


@proof(GROUP, "z3-special-mu-symbolic", engine="z3",
       what="DNA-HHE eq. 3: floor(2^2k/q) = 2^k + Delta - 1, Delta = 2N*bnd + floor(c^2/q) "
            "(= 2N*bnd when c^2 < q) for q = 2^k - 2N*bnd + 1",
       size="bnd symbolic (< 2^10); k = widths x log N = 13, 16 (quick) / k 16..64 x log N 3..17")
def _special_mu_symbolic(ctx):
    return _collect(bounds.special_mu_symbolic(k, log_n)
                    for k in _ks(ctx.quick) for log_n in _log_ns(ctx.quick))


@proof(GROUP, "z3-special-qproduct-symbolic", engine="z3",
       what="DNA-HHE: (q_est<<k) - ((q_est*bnd)<<(logN+1)) + q_est = q_est*q",
       size="q_est, bnd symbolic; k = widths x log N = 13, 16 (quick) / k 16..64 x log N 3..17")
def _special_q_symbolic(ctx):
    return _collect(bounds.special_q_product_symbolic(k, log_n)
                    for k in _ks(ctx.quick) for log_n in _log_ns(ctx.quick))


@proof(GROUP, "z3-special-primes", engine="z3",
       what="DNA-HHE per prime: the shift-add mu product = x_hi*floor(2^2k/q), mu = 2^k+Delta-1 "
            "from the table's delta_hi, shift-add q product = q_est*q",
       size=f"k = {_W}: every DNA-HHE prime with bnd < 2^10, N = 2^13 and 2^16 (quick: 4 each)")
def _special_primes(ctx):
    def gen():
        for w in WIDTHS:
            for p in dna_set(w, ctx.quick):
                yield bounds.special_mu(p.q, p.k, p.log_n)
                yield bounds.special_q_product(p.q, p.k, p.log_n)
    return _collect(gen())


# -- Montgomery ------------------------------------------------------------------------------------
@proof(GROUP, "z3-montgomery-symbolic", engine="z3",
       what="Montgomery before the final subtraction: x + m*q = t*R gives 0 <= t < 2q, "
            "x - m*q = t*R gives -q < t < q (one correction), every q < R",
       size="q, x, m symbolic; r = widths (quick) / every r 16..64, both forms")
def _montgomery_symbolic(ctx):
    return _collect(bounds.montgomery_symbolic(r, neg) for r in _ks(ctx.quick)
                    for neg in (False, True))


@proof(GROUP, "z3-qinv-series", engine="z3",
       what="ABC-FHE QInv: (1+x)*sum_{i<T}(-x)^i = 1 mod 2^r for every q = 1 + 2^v*y, "
            "T = ceil(r/v) (and -1 for the negated form)",
       size="y symbolic; r = widths, v = 14..17 (quick) / v = 4..r")
def _qinv_series(ctx):
    return _collect(bounds.qinv_series(v, r, negated=neg) for r in WIDTHS
                    for v in (range(14, 18) if ctx.quick else range(4, r + 1))
                    for neg in (False, True))


@proof(GROUP, "z3-ntt-montgomery-primes", engine="z3",
       what="ABC-FHE per prime: QInv*q = +-1 mod R from the shift-add digits, m*q from the q "
            "network, R | d, t in (-q, q) / [0, 2q) for all x <= (q-1)^2",
       size=f"w = {_W}: ABC-FHE primes, N = 2^13 and 2^16 (64 per set; quick: 4); "
            "R = 2^w and 2^64, paper and negated form")
def _ntt_montgomery_primes(ctx):
    def gen():
        for w in WIDTHS:
            for p in abc_set(w, ctx.quick):
                yield bounds.ntt_montgomery(p.q, p.log_n, w)
                yield bounds.ntt_montgomery(p.q, p.log_n, w, negated=True)
                if w != 64:
                    yield bounds.ntt_montgomery(p.q, p.log_n, w, r_bits=64)
    return _collect(gen())


@proof(GROUP, "z3-word-montgomery-primes", engine="z3",
       what="word-level Montgomery per prime and word: t' = (t>>w) + m*q_hi + carry equals "
            "(t + m*q)/2^w, per-word bound B_i, t_i < 2^(2*width), t_L < 2q",
       size=f"w = {_W}: ntt primes with word 14 and 17, DNA-HHE primes with word logN+1")
def _word_montgomery_primes(ctx):
    def gen():
        for w in WIDTHS:
            for q in ntt_set(w, ctx.quick):
                for word in (14, 17):
                    yield bounds.word_montgomery(q, w, word)
            for p in dna_set(w, ctx.quick):
                yield bounds.word_montgomery(p.q, w, p.log_n + 1)
    return _collect(gen())


@proof(GROUP, "z3-word-montgomery-symbolic", engine="z3",
       what="word-level Montgomery step invariant t_i*2^(w*i) = x + M_i*q, 0 <= M_i < 2^(w*i), "
            "t_L < 2q, every q = q_hi*2^w + 1 < 2^width",
       size="q_hi, x, t symbolic; width = widths, word 14, 17 (quick) / word 8..18")
def _word_montgomery_symbolic(ctx):
    return _collect(bounds.word_montgomery_symbolic(w, word) for w in WIDTHS
                    for word in ((14, 17) if ctx.quick else range(8, 19)))


# -- mutants: each kind of statement can fail ------------------------------------------------------
def _first_ntt54():
    return ntt_set(54, True)[0]


@proof(GROUP, "mutant-z3-barrett-mu-plus-one", engine="z3", expect="FAIL",
       what="MUTANT: Barrett with mu + 1 (q_est can exceed Q)", size="one 54-bit ntt prime")
def _mutant_mu(ctx):
    q = _first_ntt54()
    return _collect([bounds.barrett_quotient(q, mu=(1 << 108) // q + 1)])


@proof(GROUP, "mutant-z3-special-delta-shift", engine="z3", expect="FAIL",
       what="MUTANT: special Barrett table with delta_shift off by one", size="one 54-bit DNA prime")
def _mutant_special(ctx):
    p = dna_set(54, True)[0]
    from hhe_gen.models.modarith import SpecialPrimeBarrett
    s = SpecialPrimeBarrett(p.q, p.k, p.log_n).delta_shift
    return _collect([bounds.special_mu(p.q, p.k, p.log_n, delta_shift=s - 1)])


@proof(GROUP, "mutant-z3-qinv-short-series", engine="z3", expect="FAIL",
       what="MUTANT: ABC-FHE QInv series one term short (the paper's eq. 11 at r > 2v)",
       size="v = 14, r = 54, T = 3 instead of 4")
def _mutant_qinv(ctx):
    return _collect([bounds.qinv_series(14, 54, terms=3)])


@proof(GROUP, "mutant-z3-ntt-montgomery-q-network", engine="z3", expect="FAIL",
       what="MUTANT: ABC-FHE q shift-add network missing its +1 term", size="one 54-bit ABC prime")
def _mutant_q_network(ctx):
    from hhe_gen.models.modarith import NttFriendlyMontgomery
    p = abc_set(54, True)[0]
    model = NttFriendlyMontgomery(p.q, p.log_n, 54)
    terms = tuple(t for t in model.q_terms if t != (1, 0))
    return _collect([bounds.ntt_montgomery(p.q, p.log_n, 54, q_terms=terms)])


@proof(GROUP, "mutant-z3-word-montgomery-carry", engine="z3", expect="FAIL",
       what="MUTANT: word-level Montgomery carry taken from lo[w-1] only (misses small lo)",
       size="one 54-bit ntt prime, w = 17")
def _mutant_word(ctx):
    return _collect([bounds.word_montgomery(_first_ntt54(), 54, 17, carry_from_lo_only=True)])


# the RTL proofs register themselves on import (they skip when the cores are not there yet)
from . import rtl  # noqa: E402,F401

"""z3 bound proofs (formal/arith/bounds.py): they pass for the real constants, fail for mutated
ones, and agree with brute force at sizes small enough to enumerate."""

import random

import pytest

from hhe_gen.formal.arith import bounds
from hhe_gen.formal.arith.primes import WIDTHS, abc_set, dna_set, ntt_set
from hhe_gen.models.modarith import (BarrettReducer, NttFriendlyMontgomery, SpecialPrimeBarrett,
                                     WordMontgomeryReducer)
from hhe_gen.params import is_prime


def _barrett_error(q, x, k=None, mu=None):
    """Q - q_est computed directly (the independent reference)."""
    k = q.bit_length() if k is None else k
    mu = (1 << (2 * k)) // q if mu is None else mu
    return x // q - (((x >> (k - 1)) * mu) >> (k + 1))


@pytest.mark.parametrize("q", [131, 157, 193, 229, 241, 251, 1031, 1531, 2029])
def test_barrett_concrete_agrees_with_enumeration(q):
    errors = {_barrett_error(q, x) for x in range((q - 1) ** 2 + 1)}
    assert min(errors) >= 0 and max(errors) <= 2          # the documented bound
    assert bounds.barrett_quotient(q).passed
    # one correction: z3 proves it exactly when no x needs two
    assert bounds.barrett_quotient(q, corrections=1).passed == (max(errors) <= 1)
    # a constant that is one too large lets q_est exceed Q; z3 must say so with a witness
    bad = bounds.barrett_quotient(q, mu=(1 << (2 * q.bit_length())) // q + 1)
    witness = bad.counterexample.get("x")
    if any(_barrett_error(q, x, mu=(1 << (2 * q.bit_length())) // q + 1) < 0
           for x in range((q - 1) ** 2 + 1)):
        assert bad.status == "FAIL" and "q_est <= Q" in bad.failed
        assert _barrett_error(q, witness, mu=(1 << (2 * q.bit_length())) // q + 1) < 0
    else:
        assert bad.passed


def test_barrett_symbolic_agrees_with_enumeration_at_k6():
    k = 6
    worst = max(_barrett_error(q, x) for q in range(33, 64) for x in range(1 << (2 * k)))
    assert worst == 2
    assert bounds.barrett_quotient_symbolic(k).passed
    assert bounds.barrett_quotient_symbolic(k, corrections=1).status == "FAIL"


@pytest.mark.parametrize("w", WIDTHS)
def test_barrett_symbolic_full_widths(w):
    assert bounds.barrett_quotient_symbolic(w).passed


def test_barrett_model_errors_stay_within_the_proven_bound():
    rng = random.Random(3)
    for w in WIDTHS:
        for q in ntt_set(w, quick=True):
            red = BarrettReducer(q, w)
            for _ in range(50):
                a, b = rng.randrange(q), rng.randrange(q)
                t = red.trace(a, b)
                assert 0 <= a * b // q - t["q_est"] <= 2 and t["r0"] < 1 << (red.k + 2)


def test_low_bits_difference():
    assert bounds.low_bits_difference(54).passed
    # k+1 bits are not enough for a value in [0, 3q) with q close to 2^k
    assert bounds.low_bits_difference(54, bits=55).status == "FAIL"


@pytest.mark.parametrize("w", WIDTHS)
def test_special_barrett_every_quick_prime(w):
    for p in dna_set(w, quick=True):
        model = SpecialPrimeBarrett(p.q, p.k, p.log_n)
        assert bounds.special_mu(p.q, p.k, p.log_n).passed
        assert bounds.special_q_product(p.q, p.k, p.log_n).passed
        # mutated tables fail
        assert bounds.special_mu(p.q, p.k, p.log_n, delta_hi=model.delta_hi + 1).status == "FAIL"
        assert bounds.special_q_product(p.q, p.k, p.log_n, bnd=p.bnd + 1).status == "FAIL"
    assert bounds.special_mu_symbolic(w, 13).passed and bounds.special_mu_symbolic(w, 16).passed
    assert bounds.special_q_product_symbolic(w, 13).passed


def test_special_mu_symbolic_agrees_with_enumeration_small_k():
    # k = 16, N = 2^3: enumerate every bnd and compare Delta with the closed form
    k, log_n = 16, 3
    two_n = 2 << log_n
    for bnd in range(1, 1 << 10):
        q = (1 << k) - two_n * bnd + 1
        if q <= 1 << (k - 1):
            break
        c = two_n * bnd - 1
        assert (1 << (2 * k)) // q == (1 << k) + two_n * bnd + c * c // q - 1
    assert bounds.special_mu_symbolic(k, log_n).passed


def test_montgomery_symbolic():
    for r in (16, 36, 64):
        assert bounds.montgomery_symbolic(r, negated=False).passed
        assert bounds.montgomery_symbolic(r, negated=True).passed


@pytest.mark.parametrize("w", [36, 54, 64])
def test_ntt_montgomery_quick_primes_and_mutants(w):
    for p in abc_set(w, quick=True):
        assert bounds.ntt_montgomery(p.q, p.log_n, w).passed
        assert bounds.ntt_montgomery(p.q, p.log_n, w, negated=True).passed
    p = abc_set(w, quick=True)[0]
    model = NttFriendlyMontgomery(p.q, p.log_n, w)
    # a QInv network without its largest digit is not an inverse; z3 says which part breaks
    out = bounds.ntt_montgomery(p.q, p.log_n, w, qinv_terms=model.qinv_terms[:-1])
    assert out.status == "FAIL" and "QInv*q = 1 mod R" in out.failed


def test_ntt_montgomery_model_values_within_proven_range():
    rng = random.Random(5)
    for p in abc_set(54, quick=True):
        model = NttFriendlyMontgomery(p.q, p.log_n, 54)
        for _ in range(100):
            t = model.trace(rng.randrange(p.q), rng.randrange(p.q))
            assert -p.q < t["t"] < p.q and t["d"] % (1 << 54) == 0


def test_qinv_series_exact_term_count():
    # T = ceil(r/v) terms are needed and enough (checked against the integers for small y)
    for v, r in ((14, 28), (14, 29), (14, 54), (17, 36), (9, 64)):
        t = -(-r // v)
        assert bounds.qinv_series(v, r).passed
        assert bounds.qinv_series(v, r, negated=True).passed
        assert bounds.qinv_series(v, r, terms=t - 1).status == "FAIL"
        for y in (1, 3, 12345):
            x = (1 << v) * y
            series = sum((-x) ** i for i in range(t))
            assert (1 + x) * series % (1 << r) == 1


@pytest.mark.parametrize("w", [36, 54, 64])
def test_word_montgomery(w):
    for q in ntt_set(w, quick=True):
        for word in (14, 17):
            assert bounds.word_montgomery(q, w, word).passed
    q = ntt_set(w, quick=True)[0]
    assert bounds.word_montgomery(q, w, 17, carry_from_lo_only=True).status == "FAIL"
    assert bounds.word_montgomery_symbolic(w, 17).passed


def test_word_montgomery_model_within_proven_bounds():
    q = ntt_set(54, quick=True)[0]
    model = WordMontgomeryReducer(q, 54, 17)
    bound, bounds_list = (q - 1) ** 2, []
    for _ in range(model.words):
        bound = (bound + ((1 << 17) - 1) * q) >> 17
        bounds_list.append(bound)
    rng = random.Random(7)
    for _ in range(200):
        t = model.trace(rng.randrange(q), rng.randrange(q))
        for i, b in enumerate(bounds_list):
            assert t[f"t{i + 1}"] <= b


def test_prime_sets_are_of_their_forms():
    for w in WIDTHS:
        for q in ntt_set(w, quick=True):
            assert is_prime(q) and q.bit_length() == w and q % (1 << 17) == 1
        for p in dna_set(w, quick=True):
            assert is_prime(p.q) and p.q == (1 << w) - (2 << p.log_n) * p.bnd + 1
        for p in abc_set(w, quick=True):
            assert is_prime(p.q) and p.q.bit_length() == w
            assert p.q == (1 << p.exponent) + p.kk * (2 << p.log_n) + 1

"""Parameter validation, prime search and presets."""

import dataclasses
import math
import random

import pytest

from hhe_gen.params import (CKKSParams, ParameterError, RingParams, abc_fhe_primes,
                            dna_hhe_mu_claim_holds, dna_hhe_primes, is_prime, ntt_primes, preset,
                            preset_names, primitive_root)
from hhe_gen.params.primes import prime_factors


def _trial_division_is_prime(n):
    if n < 2:
        return False
    return all(n % d for d in range(2, math.isqrt(n) + 1))


def test_is_prime_matches_trial_division():
    for n in list(range(0, 5000)) + [random.Random(1).randrange(10**6, 10**7) for _ in range(300)]:
        assert is_prime(n) == _trial_division_is_prime(n), n


def test_is_prime_known_values():
    assert is_prime(2**61 - 1) and is_prime(2**31 - 1)
    assert not is_prime(2**64 - 1) and not is_prime(3215031751)   # strong pseudoprime to 2,3,5,7
    assert not is_prime((2**32 + 15) * (2**31 - 1))


@pytest.mark.parametrize("n,bits", [(8, 20), (1 << 13, 54), (1 << 16, 36), (1 << 12, 61), (1 << 13, 64)])
def test_ntt_primes_form(n, bits):
    primes = ntt_primes(n, bits, 4)
    assert len(set(primes)) == 4 and primes == sorted(primes, reverse=True)
    for q in primes:
        assert q % (2 * n) == 1 and q.bit_length() == bits
        # Fermat + Miller-Rabin agree; a second witness set, independent of is_prime's
        assert all(pow(a, q - 1, q) == 1 for a in (43, 47, 53, 59, 61))


def test_primitive_root_is_generator():
    for q in ntt_primes(1 << 10, 40, 3) + [65929217, 33292289]:
        g = primitive_root(q)
        fs = prime_factors(q - 1)
        assert math.prod(f ** _mult(q - 1, f) for f in fs) == q - 1
        assert all(pow(g, (q - 1) // f, q) != 1 for f in fs)
        assert all(any(pow(h, (q - 1) // f, q) == 1 for f in fs) for h in range(2, g))


def _mult(m, f):
    k = 0
    while m % f == 0:
        m //= f
        k += 1
    return k


def test_dna_hhe_primes_and_mu_claim_k54_n8192():
    """DNA-HHE section III-B: with k = 54 and a 10-bit bnd there are 49 primes, and for each
    mu = floor(2^2k / q) = 2^k + Delta - 1 with Delta a 24-bit number {Delta', 12'b0}."""
    n, k = 8192, 54
    primes = dna_hhe_primes(k, n)
    assert len(primes) == 49
    for p in primes:
        assert p.q == 2**k - 2 * n * p.bnd + 1 and 1 <= p.bnd < 1024 and _trial_free(p.q)
        mu = (1 << (2 * k)) // p.q                   # computed here, not taken from the object
        delta = mu - 2**k + 1
        assert delta == p.delta and delta < 2**24 and delta % 2**12 == 0
        assert dna_hhe_mu_claim_holds(p)
    bnds = {p.bnd for p in primes}
    assert all(not is_prime(2**k - 2 * n * b + 1) for b in range(1, 1024) if b not in bnds)


def _trial_free(q):
    return all(q % d for d in range(2, 2000)) and pow(3, q - 1, q) == 1


def test_dna_hhe_mu_claim_detects_a_wrong_delta():
    p = dna_hhe_primes(54, 8192, count=1)[0]
    assert not dna_hhe_mu_claim_holds(dataclasses.replace(p, delta=p.delta + 1))


def test_abc_fhe_primes_form():
    primes = abc_fhe_primes(1 << 16, 35)
    assert len(primes) > 100
    for p in primes[:200]:
        kk = sum(s * 2**e for s, e in p.kk_terms)
        assert kk == p.kk and 1 <= len(p.kk_terms) <= 3
        assert p.q == 2**35 + kk * 2**17 + 1 and p.q % 2**17 == 1 and is_prime(p.q)


@pytest.mark.parametrize("bad,match", [
    (dict(n=1000), "'N' = 1000.*power of two"),
    (dict(n=4), "'N' = 4.*2\\^3 .. 2\\^16"),
    (dict(n=1 << 17), "'N' = 131072"),
    (dict(moduli=(101,)), "1 \\(mod 2N = 16\\)"),
    (dict(moduli=(17 * 113,)), "composite"),
    (dict(moduli=(2**65 + 1,)), "at most 64 bits"),
    (dict(moduli=(17, 17)), "repeated"),
])
def test_ring_rejects_bad_parameters(bad, match):
    args = dict(n=8, moduli=(17,))
    args.update(bad)
    with pytest.raises(ParameterError, match=match):
        RingParams(**args)


def test_ckks_rejects_bad_scale_and_level():
    ring = RingParams(16, tuple(ntt_primes(16, 30, 2)))
    with pytest.raises(ParameterError, match="'log_scale' = 0"):
        CKKSParams(ring, 0)
    with pytest.raises(ParameterError, match="below the bit length of Q"):
        CKKSParams(ring, 60)
    p = CKKSParams(ring, 20)
    with pytest.raises(ParameterError, match="'level' = 2.*0 .. 1"):
        p.check_level(2)


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ParameterError) as info:
        preset("dna-hhe-9000")
    assert "'preset'" in str(info.value) and "dna-hhe" in str(info.value) and "abc-fhe" in str(info.value)


@pytest.mark.parametrize("name", preset_names())
def test_presets_are_valid(name):
    p = preset(name)
    assert p.name == name
    assert all(q % (2 * p.n) == 1 for q in p.moduli)


def test_presets_match_the_papers():
    dna = preset("dna-hhe")
    assert dna.n == 2**13 and [q.bit_length() for q in dna.moduli] == [54] * 3 and dna.log_scale == 50
    assert all((2**54 + 1 - q) % (2 * dna.n) == 0 and (2**54 + 1 - q) // (2 * dna.n) < 1024 for q in dna.moduli)
    abc = preset("abc-fhe")
    assert abc.n == 2**16 and len(abc.moduli) == 24 and {q.bit_length() for q in abc.moduli} == {36}
    flex = preset("flexible-218")
    assert sum(q.bit_length() for q in flex.moduli + flex.special_moduli) == 218
    for ln, count in zip(range(12, 17), (1, 2, 4, 7, 10)):
        kv = preset(f"kv260-n{ln}")
        assert kv.n == 2**ln and [q.bit_length() for q in kv.moduli] == [61] * count
    for ln, logq in ((10, 27), (11, 30), (12, 90), (13, 180), (14, 390)):
        race = preset(f"race-n{ln}")
        assert race.n == 2**ln and sum(q.bit_length() for q in race.moduli) == logq


def test_interchange_round_trip():
    p = preset("dna-hhe")
    again = CKKSParams.from_interchange(p.interchange())
    assert again.moduli == p.moduli and again.log_scale == p.log_scale and again.n == p.n
    with pytest.raises(ParameterError, match="'LogN'"):
        CKKSParams.from_interchange({"LogN": 20, "Q": [17], "LogDefaultScale": 3})

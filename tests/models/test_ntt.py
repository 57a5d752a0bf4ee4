"""The NTT model against naive evaluation and schoolbook negacyclic products."""

import random

import pytest

from hhe_gen.models.ntt import (bit_reverse, evaluate_at, intt, negacyclic_multiply, ntt,
                                ntt_stages, ntt_tables)
from hhe_gen.params import ParameterError, dna_hhe_primes, ntt_primes


def _schoolbook_negacyclic(a, b, q):
    n = len(a)
    out = [0] * n
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            k = i + j
            if k < n:
                out[k] += x * y
            else:
                out[k - n] -= x * y
    return [c % q for c in out]


CASES = [(8, q) for q in ntt_primes(8, 17, 2)] + [(64, ntt_primes(64, 54, 1)[0]),
                                                    (256, ntt_primes(256, 61, 1)[0]),
                                                    (1024, ntt_primes(1024, 36, 1)[0]),
                                                    (512, 2**64 - 2**32 + 1)]


@pytest.mark.parametrize("n,q", CASES)
def test_forward_is_evaluation_in_bit_reversed_order(n, q):
    rng = random.Random(n ^ q)
    t = ntt_tables(n, q)
    assert pow(t.psi, n, q) == q - 1                      # primitive 2N-th root
    log_n = n.bit_length() - 1
    for a in ([rng.randrange(q) for _ in range(n)], [q - 1] * n, [0] * (n - 1) + [1], [1] + [0] * (n - 1)):
        got = ntt(a, q)
        want = [evaluate_at(a, pow(t.psi, 2 * bit_reverse(j, log_n) + 1, q), q) for j in range(n)]
        assert got == want
        assert intt(got, q) == a


@pytest.mark.parametrize("n,q", CASES[:4])
def test_product_matches_schoolbook(n, q):
    rng = random.Random(q)
    a = [rng.randrange(q) for _ in range(n)]
    b = [rng.randrange(q) for _ in range(n)]
    assert negacyclic_multiply(a, b, q) == _schoolbook_negacyclic(a, b, q)


def test_dna_hhe_primes_and_big_n_round_trip():
    n = 1 << 13
    for p in dna_hhe_primes(54, n, count=3):
        a = [random.Random(p.q).randrange(p.q) for _ in range(n)]
        assert intt(ntt(a, p.q), p.q) == a


@pytest.mark.parametrize("inverse", [False, True])
def test_stage_trace_reproduces_the_transform(inverse):
    n, q = 32, ntt_primes(32, 40, 1)[0]
    a = [random.Random(5).randrange(q) for _ in range(n)]
    stages = list(ntt_stages(a, q, inverse))
    assert len(stages) == 5 and all(len(s) == n // 2 for s in stages)
    out = list(a)
    for stage in stages:
        pairs = {j for b in stage for j in b[:2]}
        assert pairs == set(range(n))                      # every index exactly once per stage
        for j, k, _w, _u, _v, oj, ok in stage:
            out[j], out[k] = oj, ok
    assert out == (intt(a, q) if inverse else ntt(a, q))


def test_bad_inputs():
    q = ntt_primes(16, 20, 1)[0]
    with pytest.raises(ParameterError, match="'N' = 17.*power of two"):
        ntt([0] * 16 + [1], q)
    with pytest.raises(ParameterError, match=r"'a\[3\]'"):
        ntt([0, 0, 0, q] + [0] * 12, q)
    with pytest.raises(ParameterError, match="mod 2N"):
        ntt([0] * 16, 17)                                  # 17 = 1 mod 16 but not mod 32

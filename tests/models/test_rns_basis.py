"""RNS basis conversions (hhe_gen.models.rns_basis) against exact big-integer arithmetic.

Each function is checked against the integer it stands for: the CRT value of the input, computed
here with Python integers, extended, decomposed or divided the textbook way.  The one place where
Lattigo is not exact (a double-precision overflow estimate next to a prime above 2^53) has its own
test with a hand-computed answer.
"""

import math
import random

import pytest

from hhe_gen.models.rns_basis import (decompose, div_round_by_last, extension_overflow, gadget_groups,
                                      mod_down, mod_up_centered, mod_up_exact)
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.primes import ntt_primes

N = 16
Q = ntt_primes(N, 40, 4)
P = ntt_primes(N, 45, 2, exclude=Q)


def _rows(x, moduli):
    return [[v % m for v in x] for m in moduli]


def _crt(rows, moduli):
    big = math.prod(moduli)
    total = [0] * len(rows[0])
    for row, m in zip(rows, moduli):
        w = big // m * pow(big // m, -1, m)
        total = [(t + w * r) % big for t, r in zip(total, row)]
    return total


def _values(big, rng, count=N):
    """Random values at least big * 2^-30 away from 0 and from big (where the estimate is exact)."""
    margin = big >> 30
    return [rng.randrange(margin, big - margin) for _ in range(count)]


def _near_wrap(big):
    """Values next to 0 and to big, where Lattigo's double-precision estimate may be off by one."""
    return [0, 1, 2, big - 1, big - 2, big - 3] + [big >> 1] * (N - 6)


def test_extension_is_exact_away_from_the_wrap():
    rng = random.Random(1)
    x = _values(math.prod(Q), rng)
    assert mod_up_exact(_rows(x, Q), Q, P + [Q[0]]) == _rows(x, P + [Q[0]])


def test_extension_next_to_the_wrap_is_off_by_at_most_one_multiple_of_q():
    big = math.prod(Q)
    x = _near_wrap(big)
    got = mod_up_exact(_rows(x, Q), Q, P)
    for k, v in enumerate(x):
        candidates = [[(v + d * big) % p for p in P] for d in (-1, 0, 1)]
        assert [row[k] for row in got] in candidates
    # the exact answer where the estimate cannot be wrong (a quotient far from an integer)
    assert [row[-1] for row in got] == [(big >> 1) % p for p in P]


def test_centred_extension_takes_the_representative_around_zero():
    rng = random.Random(2)
    big = math.prod(Q)
    half = big >> 1
    x = [(v + half) % big for v in _values(big, rng)]       # shifted values away from the wrap
    centred = [v - big if v >= big - half else v for v in x]      # in [-floor(Q/2), Q - floor(Q/2))
    assert mod_up_centered(_rows(x, Q), Q, P) == _rows(centred, P)


def test_overflow_estimate_is_lattigos_double_precision_one():
    # 2^61 - 1: float(2^61 - 2) rounds to 2^61 (the spacing there is 256), so the quotient is
    # exactly 1.0 and v = 1 where the exact floor is 0; the extension is then off by one multiple.
    p = (1 << 61) - 1
    assert extension_overflow([p - 1], [p]) == 1
    assert extension_overflow([p - 1000], [p]) == 0
    q = Q[0]
    assert mod_up_exact([[p - 1]], [p], [q]) == [[(p - 1 - p) % q]]
    # below 2^53 every quotient is exact: no such error
    small = Q[0]
    assert extension_overflow([small - 1], [small]) == 0


@pytest.mark.parametrize("level, p_count, expected", [
    (2, 1, [[0], [1], [2]]),
    (3, 2, [[0, 1], [2, 3]]),
    (4, 2, [[0, 1], [2, 3], [4]]),
    (5, 3, [[0, 1, 2], [3, 4, 5]]),
    (0, 3, [[0]]),
])
def test_gadget_groups(level, p_count, expected):
    assert [list(g) for g in gadget_groups(level, p_count)] == expected


@pytest.mark.parametrize("q_count, p_count", [(4, 1), (4, 2), (3, 2), (4, 3)])
def test_decomposition_recombines_to_the_input(q_count, p_count):
    qs, ps = Q[:q_count], (P + ntt_primes(N, 47, 1, exclude=Q + P))[:p_count]
    rng = random.Random(q_count * 10 + p_count)
    big = math.prod(qs)
    x = _values(big, rng)
    x[:4] = [0, 1, big - 1, big >> 1]
    digits = decompose(_rows(x, qs), qs, ps)
    groups = gadget_groups(q_count - 1, len(ps))
    assert len(digits) == len(groups)
    recombined = [0] * N
    for digit, group in zip(digits, groups):
        own = math.prod(qs[i] for i in group)
        value = [v - math.prod(qs + ps) if v > math.prod(qs + ps) // 2 else v for v in _crt(digit, qs + ps)]
        assert all(-own // 2 - 1 <= v <= own // 2 for v in value), "a digit is not centred"
        assert [v % own for v in value] == [v % own for v in x]
        recombined = [r + v * (big // own) * pow(big // own, -1, own) for r, v in zip(recombined, value)]
    assert [r % big for r in recombined] == x


def test_single_prime_digit_threshold_is_floor_half():
    q = Q[0]
    half = q >> 1
    x = [half - 1, half, 0, q - 1] + [0] * (N - 4)
    (digit,) = decompose([x], [q], P[:1])
    assert [c if c <= P[0] // 2 else c - P[0] for c in digit[1][:4]] == [half - 1, half - q, 0, -1]


def test_division_by_p_rounds_to_nearest():
    rng = random.Random(3)
    qs, ps = Q, P
    big_p, big = math.prod(ps), math.prod(qs + ps)
    half = big_p >> 1
    x = [big_p * k + r for k, r in zip(_values(big // big_p, rng), _values(big_p, rng))]
    x[:3] = [0, big_p, big_p * 7]
    rounded = []
    for v in x:
        r = (v + half) % big_p - half          # the centred residue in [-floor(P/2), P - floor(P/2))
        rounded.append((v - r) // big_p)
    assert mod_down(_rows(x, qs + ps), qs, ps) == _rows(rounded, qs)
    # a residue of exactly floor(P/2) sits on the estimate's wrap: rounded up or down
    tie = [big_p * 7 + half] * N
    got = mod_down(_rows(tie, qs + ps), qs, ps)
    assert [row[0] for row in got] in ([7 % q for q in qs], [8 % q for q in qs])


def test_division_by_the_last_prime_rounds_to_nearest():
    rng = random.Random(4)
    q_last = Q[-1]
    h = (q_last - 1) >> 1
    big = math.prod(Q)
    x = [0, q_last * 5 + h, q_last * 5 + h + 1, q_last - 1, big - 1, q_last * 3 + h - 1]
    x += [rng.randrange(big) for _ in range(N - len(x))]
    expected = []
    for v in x:
        t = (v + h) % q_last - h
        expected.append((v - t) // q_last)
    assert div_round_by_last(_rows(x, Q), Q) == _rows(expected, Q[:-1])
    # the result is x / q_L rounded: never more than 1/2 away (below the wrap of the smaller modulus)
    got = _crt(div_round_by_last(_rows(x, Q), Q), Q[:-1])
    for v, g in zip(x, got):
        if v < big - q_last:
            assert abs(g * q_last - v) <= q_last // 2


def test_bad_input_names_the_parameter():
    with pytest.raises(ParameterError, match="rows"):
        mod_up_exact([[0] * N], Q[:2], P)
    with pytest.raises(ParameterError, match=r"rows\[0\]"):
        mod_down([[Q[0]] * N] + [[0] * N] * 5, Q, P)
    with pytest.raises(ParameterError, match="rows"):
        div_round_by_last([[0] * N], Q[:1])
    with pytest.raises(ParameterError, match="p_count"):
        gadget_groups(3, 0)
    with pytest.raises(ParameterError, match="level_q"):
        gadget_groups(-1, 1)

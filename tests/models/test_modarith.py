"""Golden models of the modular reducers against plain Python big-integer arithmetic.

References: (a*b) % q, a*b*pow(R, -1, q) % q, pow(q, -1, R), exact rational arithmetic
(fractions) for DNA-HHE's eq. 4-5.  Primes come from hhe_gen.params.primes where its search
covers the case, else from small searches written here (the primality test is the only shared
piece, and it is itself tested elsewhere; every prime used is also re-checked with a Fermat test
to several bases here).
"""

import math
import random
from fractions import Fraction

import pytest

from hhe_gen.models import modarith as ma
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.primes import dna_hhe_primes, is_prime

WIDTHS = (16, 24, 32, 36, 44, 54, 61, 64)
RNG_SEED = 20240611
RANDOM_PAIRS = 250


def _probably_prime(q):
    return all(pow(b, q - 1, q) == 1 for b in (2, 3, 5, 7, 11, 13))


def _largest_prime_below(limit, step=2, residue=1):
    """Largest prime q < limit with q = residue (mod step)."""
    q = limit - 1
    q -= (q - residue) % step
    while not is_prime(q):
        q -= step
    assert _probably_prime(q)
    return q


def _smallest_prime_above(low):
    q = low + 1 if low % 2 == 0 else low + 2
    while not is_prime(q):
        q += 2
    return q


def _abc_prime(width, log_n, negative=False):
    """A prime q = 2^e + kk*2N + 1 < 2^width with kk = +-2^a +-2^b +- 2^c (found here)."""
    e = width - 1
    top = e - log_n - 2
    sign = -1 if negative else 1
    for a in range(top, 1, -1):
        for b in range(a - 1, 0, -1):
            for sb in (1, -1):
                for c in range(b - 1, -1, -1):
                    for sc in (1, -1):
                        kk = sign * ((1 << a) + sb * (1 << b) + sc * (1 << c))
                        q = (1 << e) + kk * (2 << log_n) + 1
                        if q < 1 << width and is_prime(q):
                            assert _probably_prime(q)
                            return q
    raise AssertionError("no ABC-FHE prime found")


def _operands(q, width, rng, count=RANDOM_PAIRS):
    """Corner operands and random pairs in [0, q)."""
    corners = {0, 1, 2, q - 1, q - 2, q // 2, (q + 1) // 2}
    for v in ((1 << (width - 1)) - 1, 1 << (width - 1), (1 << (width - 1)) + 1, (1 << width) - 1):
        corners.add(v % q)
    corners = sorted(corners)
    pairs = [(a, b) for a in corners for b in corners]
    pairs += [(rng.randrange(q), rng.randrange(q)) for _ in range(count)]
    # products close to q^2 and to the Barrett worst case
    pairs += [(q - 1 - rng.randrange(16), q - 1 - rng.randrange(16)) for _ in range(16)]
    return pairs


# -- primes for each reducer and width -------------------------------------------------------------
def _barrett_primes(width):
    return [_largest_prime_below(1 << width), _smallest_prime_above(1 << (width - 1)),
            _largest_prime_below(1 << (width - 5))]


def _word_bits(width):
    return min(17, width // 2)


def _montgomery_primes(width):
    wb = _word_bits(width)
    return [(_largest_prime_below(1 << width, 1 << wb, 1), wb)]


def _special_cases(width):
    log_n = min(13, width // 2 - 5)
    return [(p.q, width, log_n) for p in dna_hhe_primes(width, 1 << log_n, count=2)]


def _abc_log_n(width):
    return min(16, width // 2 - 4)


# -- add / sub / neg -------------------------------------------------------------------------------
@pytest.mark.parametrize("width", WIDTHS)
def test_add_sub_neg(width):
    rng = random.Random(RNG_SEED + width)
    q = _largest_prime_below(1 << width)
    for a, b in _operands(q, width, rng):
        t = ma.mod_add_trace(a, b, q)
        assert t["result"] == ma.mod_add(a, b, q) == (a + b) % q
        assert 0 <= t["sum"] < 2 * q and -q <= t["diff"] < q
        assert t["borrow"] == (1 if a + b < q else 0)
        s = ma.mod_sub_trace(a, b, q)
        assert s["result"] == ma.mod_sub(a, b, q) == (a - b) % q
        assert s["borrow"] == (1 if a < b else 0) and 0 < s["alt"] < 2 * q
        assert ma.mod_neg(a, q) == (-a) % q
    assert ma.mod_neg(0, q) == 0


def test_add_rejects_unreduced_operand():
    with pytest.raises(ParameterError) as e:
        ma.mod_add(97, 1, 97)
    assert e.value.name == "a"
    with pytest.raises(ParameterError) as e:
        ma.mod_sub(1, -1, 97)
    assert e.value.name == "b"


# -- generic Barrett -------------------------------------------------------------------------------
@pytest.mark.parametrize("width", WIDTHS)
def test_barrett(width):
    rng = random.Random(RNG_SEED + 100 + width)
    for q in _barrett_primes(width):
        red = ma.BarrettReducer(q, width)
        k = q.bit_length()
        assert red.k == k and red.montgomery_radix == 1
        mu = red.constants()["mu"]
        assert mu * q <= 1 << (2 * k) < (mu + 1) * q and mu.bit_length() == k + 1
        for a, b in _operands(q, width, rng):
            t = red.trace(a, b)
            assert red.mul(a, b) == t["r"] == a * b % q
            x = a * b
            assert t["x"] == x < 1 << (2 * k)
            assert t["x_hi"] < 1 << (k + 1)
            assert t["p"] < 1 << (2 * k + 2)
            assert x // q - 2 <= t["q_est"] <= x // q
            assert t["qq"] == t["q_est"] * q <= x
            assert 0 <= t["r0"] < 3 * q and t["r0"] < 1 << (k + 2)
            assert 0 <= t["r1"] < 2 * q and 0 <= t["r"] < q


@pytest.mark.parametrize("width", WIDTHS)
def test_barrett_scaled_to_a_wider_k(width):
    """A modulus narrower than the design's k (an RNS basis with a wider P): the reduction by
    q_scaled = q * 2^shift of a * (b << shift) gives (a*b mod q) << shift, every bound of the
    k-bit Barrett holding for q_scaled (checked here against exact integer arithmetic)."""
    rng = random.Random(RNG_SEED + 200 + width)
    for q in _barrett_primes(width):
        for k in sorted({q.bit_length() + 1, width}):
            if k > width or k == q.bit_length():
                continue
            red = ma.BarrettReducer(q, width, k=k)
            s = k - q.bit_length()
            qs = q << s
            assert red.shift == s and red.q_scaled == qs and 1 << (k - 1) < qs < 1 << k
            assert red.mu == (1 << (2 * k)) // qs and red.mu.bit_length() == k + 1
            for a, b in _operands(q, width, rng, count=200):
                t = red.trace(a, b)
                assert red.mul(a, b) == t["r"] == a * b % q
                assert t["b_s"] == b * 2 ** s and t["x"] == a * b * 2 ** s < 1 << (2 * k)
                assert t["x"] // qs - 2 <= t["q_est"] <= t["x"] // qs
                assert 0 <= t["r0"] < 3 * qs and t["r0"] < 1 << (k + 2)
                assert t["r_s"] == (a * b % q) * 2 ** s


def test_barrett_k_is_checked():
    q = _largest_prime_below(1 << 20)
    assert ma.BarrettReducer(q, 32).k == 20 and ma.BarrettReducer(q, 32, k=20).shift == 0
    for k in (19, 33, 20.0, True):
        with pytest.raises(ParameterError) as e:
            ma.BarrettReducer(q, 32, k=k)
        assert e.value.name == "k" and "[20, 32]" in str(e.value)


def test_barrett_second_correction_is_needed():
    """The docstring claims r0 can reach [2q, 3q) (so two corrections): find such a product."""
    q = 62989                                   # a 16-bit prime where it happens often
    assert is_prime(q)
    red = ma.BarrettReducer(q, 16)
    rng = random.Random(11)
    hits = [t for t in (red.trace(rng.randrange(q), rng.randrange(q)) for _ in range(5000))
            if t["r0"] >= 2 * q]
    assert hits, "no product needed the second correction"
    for t in hits:
        assert t["r0"] < 3 * q and t["r"] == t["x"] % q


# -- word-level Montgomery -------------------------------------------------------------------------
@pytest.mark.parametrize("width", WIDTHS)
def test_word_montgomery(width):
    rng = random.Random(RNG_SEED + 200 + width)
    for q, wb in _montgomery_primes(width):
        red = ma.WordMontgomeryReducer(q, width, wb)
        words = math.ceil(width / wb)
        big_r = 2 ** (wb * words)
        assert red.montgomery_radix == big_r and red.words == words
        r_inv = pow(big_r, -1, q)
        for a, b in _operands(q, width, rng):
            t = red.trace(a, b)
            assert red.mul(a, b) == t["r"] == a * b * r_inv % q
            x = a * b
            for i in range(words):
                ti, tn = t[f"t{i}"], t[f"t{i + 1}"]
                assert t[f"lo{i}"] == ti % 2 ** wb
                assert (t[f"lo{i}"] + t[f"m{i}"]) % 2 ** wb == 0 and t[f"m{i}"] < 2 ** wb
                assert t[f"carry{i}"] in (0, 1)
                assert tn * 2 ** wb == ti + t[f"m{i}"] * q           # exact division step
                assert tn * 2 ** (wb * (i + 1)) < x + q * 2 ** (wb * (i + 1))
                assert (tn * 2 ** (wb * (i + 1)) - x) % q == 0
            assert t[f"t{words}"] < 2 * q and 0 <= t["r"] < q
        for a in (0, 1, q - 1, rng.randrange(q)):
            assert red.to_mont(a) == a * big_r % q
            assert red.from_mont(red.to_mont(a)) == a


def test_word_montgomery_word_not_dividing_width():
    q = _largest_prime_below(1 << 54, 1 << 14, 1)
    red = ma.WordMontgomeryReducer(q, 54, 14)          # 4 words, R = 2^56
    assert red.montgomery_radix == 2 ** 56
    rng = random.Random(5)
    for _ in range(200):
        a, b = rng.randrange(q), rng.randrange(q)
        assert red.mul(a, b) == a * b * pow(2 ** 56, -1, q) % q


def test_word_montgomery_requires_ntt_friendly_prime():
    q = _largest_prime_below(1 << 32, 1 << 12, 1)      # 1 mod 2^12
    if q % (1 << 13) == 1:
        q = _largest_prime_below(q, 1 << 13, 1 + (1 << 12))
    with pytest.raises(ParameterError) as e:
        ma.WordMontgomeryReducer(q, 32, 13)
    assert e.value.name == "q" and "mod 2^13" in str(e.value)
    with pytest.raises(ParameterError) as e:
        ma.WordMontgomeryReducer(q, 32, 32)
    assert e.value.name == "word_bits"


# -- DNA-HHE special-prime Barrett ------------------------------------------------------------------
@pytest.mark.parametrize("width", WIDTHS)
def test_special_prime_barrett(width):
    rng = random.Random(RNG_SEED + 300 + width)
    cases = _special_cases(width)
    assert cases, f"no DNA-HHE prime at k = {width}"
    for q, k, log_n in cases:
        red = ma.SpecialPrimeBarrett(q, k, log_n)
        two_n = 2 ** (log_n + 1)
        assert q == 2 ** k - two_n * red.bnd + 1 and 1 <= red.bnd < 2 ** 10
        mu = 2 ** (2 * k) // q
        assert red.mu == mu == 2 ** k + red.delta - 1
        assert red.delta == red.delta_hi * 2 ** red.delta_shift
        for a, b in _operands(q, width, rng):
            t = red.trace(a, b)
            assert red.mul(a, b) == t["r"] == a * b % q
            x = a * b
            assert t["x_hi"] == x >> (k - 1) < 2 ** (k + 1)
            assert t["pd"] < 2 ** (k + 1 + red.delta_hi.bit_length())
            assert t["p"] == t["x_hi"] * mu
            assert x // q - 2 <= t["q_est"] <= x // q
            assert t["pb"] == t["q_est"] * red.bnd < 2 ** (k + 1 + 10)
            assert t["qq"] == t["q_est"] * q
            assert 0 <= t["r0"] < 3 * q and 0 <= t["r1"] < 2 * q and 0 <= t["r"] < q


@pytest.mark.parametrize("k,log_n", [(54, 13), (54, 16), (54, 11), (36, 13), (20, 10), (16, 5)])
def test_dna_hhe_mu_claim(k, log_n):
    """mu = floor(2^2k / q) = 2^k + Delta - 1 with delta_1 < Delta < delta_2 (eq. 4-5), and
    Delta = 2N*bnd exactly when (2N*bnd - 1)^2 < q."""
    primes = dna_hhe_primes(k, 1 << log_n, count=4)
    assert primes
    for p in primes:
        red = ma.SpecialPrimeBarrett(p.q, k, log_n)
        q, d = p.q, red.delta
        assert q * (2 ** k + d - 1) < 2 ** (2 * k) < q * (2 ** k + d)          # eq. 4
        two_n_bnd = 2 ** (log_n + 1) * red.bnd
        delta1 = Fraction((two_n_bnd - 1) * 2 ** k, q)
        delta2 = Fraction(two_n_bnd * (2 ** k - 1) + 1, q)
        assert delta1 < d < delta2 and delta1 + 1 == delta2                      # eq. 5
        if (two_n_bnd - 1) ** 2 < q:
            assert d == two_n_bnd and red.delta_hi == red.bnd
        else:
            assert d > two_n_bnd


def test_dna_hhe_delta_is_24_bits_with_12_zero_bits_at_k54():
    for p in dna_hhe_primes(54, 1 << 13, count=20):
        red = ma.SpecialPrimeBarrett(p.q, 54, 13, delta_shift=12)
        assert red.delta.bit_length() <= 24 and red.delta_hi < 2 ** 12
        assert red.delta_hi * 2 ** 12 == red.delta


def test_special_barrett_small_k_correction_term():
    """At k = 16 with large 2N*bnd the closed form's correction floor(c^2/q) is non-zero; the model
    must still be exact."""
    found = 0
    for p in dna_hhe_primes(16, 1 << 6, count=40):
        red = ma.SpecialPrimeBarrett(p.q, 16, 6)
        c = 2 ** 7 * red.bnd - 1
        assert red.delta == 2 ** 7 * red.bnd + c * c // p.q
        if c * c >= p.q:
            found += 1
            for a in range(0, p.q, 97):
                for b in (1, p.q - 1, a // 2 + 3):
                    b %= p.q
                    assert red.mul(a, b) == a * b % p.q
    assert found


def test_special_barrett_rejects_bad_form():
    q = dna_hhe_primes(54, 1 << 13, count=1)[0].q
    with pytest.raises(ParameterError) as e:
        ma.SpecialPrimeBarrett(q + 2, 54, 13)
    assert e.value.name == "q"
    with pytest.raises(ParameterError) as e:
        ma.SpecialPrimeBarrett(q, 54, 12) if (2 ** 54 + 1 - q) % 2 ** 14 else ma.SpecialPrimeBarrett(q, 54, 15)
    assert e.value.name == "q"
    big = [p for p in dna_hhe_primes(54, 1 << 3, bnd_bits=12) if p.bnd >= 2 ** 10][0]
    with pytest.raises(ParameterError) as e:
        ma.SpecialPrimeBarrett(big.q, 54, 3)
    assert e.value.name == "q" and "bnd" in str(e.value)
    assert ma.SpecialPrimeBarrett(big.q, 54, 3, bnd_bits=12).bnd == big.bnd
    with pytest.raises(ParameterError) as e:
        ma.SpecialPrimeBarrett(q, 54, 13, delta_shift=40)
    assert e.value.name == "delta_shift"
    with pytest.raises(ParameterError) as e:
        ma.SpecialPrimeBarrett(q, 54, 0)
    assert e.value.name == "log_n"


# -- ABC-FHE NTT-friendly Montgomery ---------------------------------------------------------------
def _series_terms_by_search(q, r):
    t = 1
    while ((q - 1) ** t) % 2 ** r:
        t += 1
    return t


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("negated", [False, True])
def test_ntt_friendly_montgomery(width, negated):
    rng = random.Random(RNG_SEED + 400 + width)
    log_n = _abc_log_n(width)
    for neg_kk in (False, True):
        q = _abc_prime(width, log_n, negative=neg_kk)
        for r_bits in (None, q.bit_length()):
            red = ma.NttFriendlyMontgomery(q, log_n, width, r_bits=r_bits, negated=negated)
            r = width if r_bits is None else r_bits
            big_r = 2 ** r
            assert red.montgomery_radix == big_r
            inv = pow(q, -1, big_r)
            assert red.qinv == ((-inv) % big_r if negated else inv)
            assert sum(s * 2 ** p for s, p in red.qinv_terms) % big_r == red.qinv
            assert all(p < r for _, p in red.qinv_terms)
            assert sum(s * 2 ** p for s, p in red.q_terms) == q
            assert q == 2 ** red.e + red.kk * 2 ** (log_n + 1) + 1
            assert sum(s * 2 ** p for s, p in red.kk_terms) == red.kk and len(red.kk_terms) <= 3
            assert red.series_terms == _series_terms_by_search(q, r)
            r_inv = pow(big_r, -1, q)
            for a, b in _operands(q, width, rng, count=120):
                t = red.trace(a, b)
                assert red.mul(a, b) == t["r"] == a * b * r_inv % q
                x = a * b
                assert t["t_lo"] == x % big_r
                assert t["m"] == t["t_lo"] * red.qinv % big_r
                assert t["mq"] == t["m"] * q < big_r * q
                assert t["d"] % big_r == 0
                if negated:
                    assert 0 <= t["t"] < 2 * q
                else:
                    assert -q < t["t"] < q
                assert 0 <= t["r"] < q
            a = rng.randrange(q)
            assert red.to_mont(a) == a * big_r % q and red.from_mont(red.to_mont(a)) == a


@pytest.mark.parametrize("log_n,r,expected", [(16, 32, 2), (16, 34, 2), (16, 36, 3), (13, 28, 2),
                                              (13, 36, 3), (13, 42, 3), (13, 54, 4), (13, 64, 5)])
def test_qinv_series_length_examples(log_n, r, expected):
    """The docstring's table: T = ceil(r / v) with v = log_n + 1 for odd kk."""
    width = max(r, 24) if r <= 64 else 64
    q = None
    for e_bits in range(min(width, r) - 1, log_n + 3, -1):
        for kk in range(1, 400, 2):
            for cand in ((1 << e_bits) + kk * (2 << log_n) + 1, (1 << e_bits) - kk * (2 << log_n) + 1):
                if cand < 1 << min(width, r) and len(ma.signed_digits(kk)) <= 3 and is_prime(cand):
                    q = cand
                    break
            if q:
                break
        if q:
            break
    red = ma.NttFriendlyMontgomery(q, log_n, width, r_bits=r)
    assert red.kk % 2 == 1
    assert red.series_terms == expected == _series_terms_by_search(q, r)


def test_ntt_friendly_rejects_dense_prime():
    q = _largest_prime_below(1 << 36, 1 << 17, 1)
    dense = None
    while dense is None:
        try:
            ma.NttFriendlyMontgomery(q, 16, 36)
        except ParameterError as e:
            dense = e
        else:
            q = _largest_prime_below(q, 1 << 17, 1)
    assert dense.name == "q" and "powers of two" in str(dense)
    with pytest.raises(ParameterError) as e:
        ma.NttFriendlyMontgomery(_abc_prime(36, 16), 16, 36, r_bits=20)
    assert e.value.name == "r_bits"


def test_signed_digits():
    rng = random.Random(3)
    for x in [0, 1, -1, 3, 7, -7, 2 ** 63 - 1] + [rng.randrange(-2 ** 70, 2 ** 70) for _ in range(200)]:
        d = ma.signed_digits(x)
        assert sum(s * 2 ** p for s, p in d) == x
        shifts = [p for _, p in d]
        assert all(b - a >= 2 for a, b in zip(shifts, shifts[1:]))   # non-adjacent


# -- validation and factory ------------------------------------------------------------------------
@pytest.mark.parametrize("width", [15, 65, 0, "32", 32.0])
def test_bad_width(width):
    with pytest.raises(ParameterError) as e:
        ma.BarrettReducer(65521, width)
    assert e.value.name == "width"


@pytest.mark.parametrize("q", [65536, 1, 2 ** 16 + 1, -7])
def test_bad_modulus(q):
    with pytest.raises(ParameterError) as e:
        ma.BarrettReducer(q, 16)
    assert e.value.name == "q" and str(q) in str(e.value)


def test_factory():
    q = _largest_prime_below(1 << 32, 1 << 16, 1)
    rng = random.Random(9)
    a, b = rng.randrange(q), rng.randrange(q)
    bar = ma.reducer_for("barrett", q, 32)
    mont = ma.reducer_for("montgomery", q, 32, word_bits=16)
    assert isinstance(bar, ma.BarrettReducer) and isinstance(mont, ma.WordMontgomeryReducer)
    for red in (bar, mont):
        assert red.mul(a, b) == a * b * pow(red.montgomery_radix, -1, q) % q
    sp = dna_hhe_primes(32, 1 << 11, count=1)[0]
    spb = ma.reducer_for("special-barrett", sp.q, 32, log_n=11)
    assert isinstance(spb, ma.SpecialPrimeBarrett) and spb.k == 32
    abc = _abc_prime(32, 12)
    nm = ma.reducer_for("ntt-montgomery", abc, 32, log_n=12)
    assert isinstance(nm, ma.NttFriendlyMontgomery)
    with pytest.raises(ParameterError) as e:
        ma.reducer_for("karatsuba", q, 32)
    assert e.value.name == "reducer" and "barrett" in str(e.value) and "ntt-montgomery" in str(e.value)
    with pytest.raises(ParameterError) as e:
        ma.reducer_for("montgomery", q, 32)
    assert e.value.name == "word_bits"


def test_reducers_are_frozen_and_constants_are_ints():
    q = _largest_prime_below(1 << 32, 1 << 16, 1)
    for red in (ma.BarrettReducer(q, 32), ma.WordMontgomeryReducer(q, 32, 16)):
        with pytest.raises(Exception):
            red.q = 5
        assert all(isinstance(v, int) for v in red.constants().values())

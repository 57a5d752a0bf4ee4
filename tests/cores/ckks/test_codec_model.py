"""hhe_gen.models.ckks_fixed (the exact-integer golden model of the CKKS encoder/decoder cores)
against hhe_gen.models.ckks's encode/decode with a fixed-point format (which use Fractions and
floats), and the fixed-point path against the float64 (Lattigo-equivalent) encoding."""

import cmath
import math
import random

import pytest

from hhe_gen.models import ckks
from hhe_gen.models import ckks_fixed as cf
from hhe_gen.models import fft as fftm
from hhe_gen.params import CKKSParams, ParameterError, RingParams, ntt_primes
from hhe_gen.params.presets import preset


def unit_disc(n, seed, real=False):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        r, a = math.sqrt(rng.random()), rng.random() * 2 * math.pi
        z = cmath.rect(r, a)
        out.append(complex(z.real, 0.0) if real else z)
    return out


def params(log_n, bits, count, log_scale):
    n = 1 << log_n
    return CKKSParams(RingParams(n, tuple(ntt_primes(n, bits, count))), log_scale)


CASES = [  # (log N, prime bits, primes, log_scale, fmt)
    (4, 40, 2, 20, fftm.FixedPointFormat(24, 21)),            # log_scale < F: rounding shift
    (5, 50, 3, 30, fftm.FixedPointFormat(29, 26)),            # log_scale > F: left shift
    (6, 36, 1, 26, fftm.FixedPointFormat(29, 26)),            # equal
    (8, 60, 2, 40, fftm.FixedPointFormat(32, 29, "half-even")),
    (10, 54, 3, 50, fftm.FixedPointFormat(29, 26)),
]


@pytest.mark.parametrize("log_n,bits,count,log_scale,fmt", CASES)
def test_encode_decode_equal_ckks_model(log_n, bits, count, log_scale, fmt):
    p = params(log_n, bits, count, log_scale)
    for seed, real in ((1, False), (2, True)):
        slots = unit_disc(p.slots, seed, real)
        pt = ckks.encode(p, slots, fmt=fmt)
        rows = cf.encode_slots(slots, fmt, log_scale, p.moduli)
        assert rows == pt.rows
        # decoding from the first prime: the model's decode of a one-row plaintext
        one = ckks.Plaintext([pt.rows[0]], pt.scale)
        assert cf.decode_slots(pt.rows[0], p.moduli[0], fmt, log_scale) == ckks.decode(p, one, fmt=fmt)


def test_rounding_corners():
    fmt = fftm.FixedPointFormat(16, 12)
    for v in range(-70, 70):
        for ls in (1, 5, 11, 12, 13, 20):
            exact = v * 2 ** ls / 2 ** 12
            want = math.floor(abs(exact) + 0.5) * (1 if v >= 0 else -1)
            assert cf.scale_up(v, fmt, ls) == want
    for c in list(range(-300, 300)) + [2 ** 40, -2 ** 40]:
        for ls in (3, 8, 12, 20):
            exact = c * 2 ** 12 / 2 ** ls
            want = math.floor(abs(exact) + 0.5) * (1 if c >= 0 else -1)
            assert cf.scale_down(c, fmt, ls) == max(fmt.min_int, min(fmt.max_int, want))
    assert cf.centre(0, 97) == 0 and cf.centre(48, 97) == 48 and cf.centre(49, 97) == -48


def test_fixed_vs_float_encoding():
    """The fixed-point encoder's coefficients are within the expected distance of Lattigo's float64
    encoding, and decoding them with the float FFT recovers the slots to ~F-5 bits."""
    p = preset("dna-hhe")
    fmt = fftm.FixedPointFormat(29, 26)
    slots = unit_disc(p.slots, 3)
    rows = cf.encode_slots(slots, fmt, p.log_scale, p.moduli[:1])
    ref = ckks.encode(p, slots, level=0)
    m_fixed = [cf.centre(r, p.moduli[0]) for r in rows[0]]
    m_float = [cf.centre(r, p.moduli[0]) for r in ref.rows[0]]
    worst = max(abs(a - b) for a, b in zip(m_fixed, m_float)) / p.scale
    assert worst < 2 ** -17
    got = ckks.decode(p, ckks.Plaintext(rows, p.scale))
    mean, _ = cf.precision_bits(slots, got)
    assert mean >= 20


def test_bad_parameters():
    fmt = fftm.FixedPointFormat(29, 26)
    q = ntt_primes(1 << 10, 54, 1)[0]
    with pytest.raises(ParameterError, match="'N'"):
        cf.check_codec_params(8, fmt, 40, [q])
    with pytest.raises(ParameterError, match="'N'"):
        cf.check_codec_params(1 << 17, fmt, 40, [q])
    with pytest.raises(ParameterError, match="frac_bits"):
        cf.check_codec_params(1 << 13, fftm.FixedPointFormat(16, 12), 40, [q])
    with pytest.raises(ParameterError, match="log_scale"):
        cf.check_codec_params(1 << 10, fmt, 52, [q])             # 2^(2+52) >= q (54 bits)
    assert cf.check_codec_params(1 << 10, fmt, 51, [q]) == (q,)
    with pytest.raises(ParameterError, match="moduli"):
        cf.check_codec_params(1 << 10, fmt, 20, [4])
    with pytest.raises(ParameterError, match="row"):
        cf.decode_fixed([q] * 16, q, fmt, 20)


def _brute_crt(residues, moduli):
    """The unique x in (-Q/2, Q/2] with x = r_i mod q_i, by stepping through x = r_0 + q_0 * k
    (independent of any CRT formula; small moduli only)."""
    big_q = math.prod(moduli)
    step, x = moduli[-1], residues[-1]             # the largest modulus steps
    while any(x % q != r for q, r in zip(moduli, residues)):
        x += step
    return x - big_q if x > big_q // 2 else x


@pytest.mark.parametrize("moduli", [(97,), (97, 101), (3, 5, 7), (17, 19, 23, 257), (15, 7, 11, 13, 17)])
def test_crt_centre_exhaustive_small(moduli):
    rng = random.Random(sum(moduli))
    big_q = math.prod(moduli)
    xs = list(range(-40, 41)) + [big_q // 2, -(big_q // 2), big_q // 2 - 1] + \
        [rng.randrange(-(big_q // 2), big_q // 2 + 1) for _ in range(100)]
    for x in xs:
        res = [x % q for q in moduli]
        assert cf.crt_centre(res, moduli) == _brute_crt(res, moduli) == x


@pytest.mark.parametrize("count,bits", [(1, 61), (2, 30), (3, 54), (4, 61), (8, 40)])
def test_crt_centre_big(count, bits):
    """Against hhe_gen.models.ckks.crt_centered and the defining congruences."""
    moduli = ntt_primes(1 << 10, bits, count)
    big_q = math.prod(moduli)
    rng = random.Random(count)
    cols = [[rng.randrange(q) for q in moduli] for _ in range(300)]
    cols += [[q - 1 for q in moduli], [0] * count, [(big_q // 2) % q for q in moduli],
             [(big_q // 2 + 1) % q for q in moduli]]
    got = [cf.crt_centre(c, moduli) for c in cols]
    assert got == ckks.crt_centered([list(r) for r in zip(*cols)], moduli)
    assert all(-big_q < 2 * x <= big_q and all(x % q == r for q, r in zip(moduli, c)) for x, c in zip(got, cols))


@pytest.mark.parametrize("log_n,bits,count,log_scale,fmt", [
    (4, 20, 2, 30, fftm.FixedPointFormat(29, 26)),
    (6, 30, 3, 45, fftm.FixedPointFormat(32, 29, "half-even")),
    (8, 36, 2, 50, fftm.FixedPointFormat(29, 26)),
])
def test_decode_several_primes_equals_ckks_model(log_n, bits, count, log_scale, fmt):
    """decode_fixed over L primes = hhe_gen.models.ckks.decode (big-integer CRT, float scaling) of
    a plaintext whose coefficients exceed the first prime (|m| < 2^53: exact floats)."""
    p = params(log_n, bits, count, log_scale)
    rng = random.Random(log_n)
    top = fmt.width - 1 - fmt.frac_bits + log_scale
    assert 1 << top > p.moduli[0]
    for bound in (1 << (top - 2), 1 << (top + 1)):          # inside the format / saturating
        m = [rng.randint(-bound, bound) for _ in range(p.n)]
        rows = [[x % q for x in m] for q in p.moduli]
        want = ckks.decode(p, ckks.Plaintext(rows, 1 << log_scale), fmt=fmt)
        assert cf.decode_slots(rows, list(p.moduli), fmt, log_scale) == want
        assert max(abs(x) for x in m) > p.moduli[0] // 2      # the first prime alone would not do


def test_decoder_parameters():
    fmt = fftm.FixedPointFormat(29, 26)
    qs = ntt_primes(1 << 10, 20, 3)
    assert cf.check_decoder_params(1 << 10, fmt, 55, qs) == tuple(qs)      # 2^57 < Q (60 bits)
    with pytest.raises(ParameterError, match="log_scale"):
        cf.check_decoder_params(1 << 10, fmt, 58, qs)
    with pytest.raises(ParameterError, match="moduli"):
        cf.check_decoder_params(1 << 10, fmt, 20, [qs[0], qs[0]])
    with pytest.raises(ParameterError, match="moduli"):
        cf.check_decoder_params(1 << 10, fmt, 20, [15, 21])
    with pytest.raises(ParameterError, match="moduli"):
        cf.check_decoder_params(1 << 10, fmt, 20, ntt_primes(1 << 10, 40, 9))
    with pytest.raises(ParameterError, match="rows"):
        cf.decode_fixed([[0] * 16], qs[:2], fmt, 20)

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

"""The CKKS encoder / decoder cores against hhe_gen.models.ckks_fixed, bit for bit (which
test_codec_model.py ties to hhe_gen.models.ckks): N = 16, 32, 64, 256, several P, one to three
primes (the decoder one to four, through its CRT), Delta below / equal to / above 2^F, random and
corner inputs (saturating decoder inputs, wrapping IFFT inputs), random valid gaps and back-pressure, exact cycle counts."""

import cmath
import math
import random

import pytest

from hhe_gen.cores.arith.butterfly import pack_complex, unpack_complex
from hhe_gen.cores.ckks import Decoder, Encoder
from hhe_gen.models import ckks_fixed
from hhe_gen.models import fft as fftm
from hhe_gen.params import ParameterError, ntt_primes
from hhe_gen.sim.stream import run_stream

FMT = fftm.FixedPointFormat(29, 26)


def fixed_slots(n, fmt, seed, corners=False):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if corners and rng.random() < 0.3:
            out.append((rng.choice([fmt.max_int, fmt.min_int, 0, -1]), rng.choice([fmt.max_int, fmt.min_int, 1])))
        else:
            out.append(fftm.quantize_complex(cmath.rect(math.sqrt(rng.random()), rng.random() * 2 * math.pi), fmt))
    return out


def slot_beats(slots, lanes, fmt):
    return [[pack_complex(slots[b * lanes + l], fmt) for l in range(lanes)] for b in range(len(slots) // lanes)]


ENC_CASES = [  # N, P, prime bits, primes, log_scale, fmt
    (16, 1, 40, 1, 20, FMT),
    (16, 2, 40, 2, 26, FMT),
    (32, 2, 50, 3, 40, FMT),
    (64, 4, 36, 2, 10, fftm.FixedPointFormat(24, 20, "half-even")),
    (256, 4, 54, 3, 50, FMT),
]


@pytest.mark.parametrize("n_ring,lanes,bits,count,log_scale,fmt", ENC_CASES)
def test_encoder(n_ring, lanes, bits, count, log_scale, fmt):
    qs = ntt_primes(n_ring, bits, count)
    enc = Encoder(n_ring, lanes, fmt, log_scale, qs)
    vectors = [fixed_slots(n_ring // 2, fmt, 1), fixed_slots(n_ring // 2, fmt, 2, corners=True)]
    inputs = [b for v in vectors for b in slot_beats(v, lanes, fmt)]
    per = count * n_ring // lanes
    r = run_stream(enc, inputs, 2 * per, gaps=None if n_ring > 64 else n_ring)
    got = [x for b in r.outputs for x in b]
    for i, v in enumerate(vectors):
        assert got[i * count * n_ring:(i + 1) * count * n_ring] == [x for row in enc.model(v) for x in row]
    if n_ring > 64:       # full rate: exact cycles
        nb = n_ring // 2 // lanes
        assert r.out_cycles[0] == r.in_cycles[nb - 1] + enc.ifft.compute_cycles + 4
        assert r.out_cycles[per - 1] - r.in_cycles[0] + 1 == enc.cycles()
        assert r.out_cycles[:per] == list(range(r.out_cycles[0], r.out_cycles[0] + per))


def test_encoder_zero_coefficients_give_residue_zero():
    """All-zero slots (every m_k = 0) and a single real slot (m_k = 0 for the imaginary half):
    a zero coefficient is residue 0, not q (the residue step's ``m < 0`` boundary)."""
    n_ring, lanes, fmt = 16, 2, FMT
    qs = ntt_primes(n_ring, 40, 2)
    enc = Encoder(n_ring, lanes, fmt, 20, qs)
    one = [(fmt.max_int, 0)] + [(0, 0)] * (n_ring // 2 - 1)
    vectors = [[(0, 0)] * (n_ring // 2), one]
    inputs = [b for v in vectors for b in slot_beats(v, lanes, fmt)]
    per = len(qs) * n_ring // lanes
    got = [x for b in run_stream(enc, inputs, 2 * per).outputs for x in b]
    assert got[:per * lanes] == [0] * (len(qs) * n_ring)
    want = [x for row in enc.model(one) for x in row]
    assert got[per * lanes:] == want and 0 in want


DEC_CASES = [  # N, P, prime bits, primes, log_scale, fmt
    (16, 1, 40, 1, 20, FMT),
    (32, 2, 50, 1, 30, FMT),
    (64, 4, 36, 1, 30, fftm.FixedPointFormat(24, 20, "half-even")),
    (64, 2, 30, 1, 26, FMT),
    (256, 4, 54, 1, 50, FMT),
    (16, 1, 20, 2, 30, FMT),                  # CRT: |m| up to 2^33 > q_0 = 2^20
    (32, 2, 30, 3, 50, FMT),
    (64, 4, 61, 4, 60, FMT),
    (256, 2, 30, 2, 45, fftm.FixedPointFormat(24, 20, "half-even")),
]


def decoder_rows(moduli, n_ring, fmt, log_scale, seed):
    """Residue rows of an encoded vector, of random integers around the saturation bound
    2^(W-1-F+log_scale), and of random / corner residues (which mostly saturate)."""
    w = fftm.special_ifft_fixed(fixed_slots(n_ring // 2, fmt, seed), fmt)          # the encoder's m
    m_enc = [ckks_fixed.scale_up(z[0], fmt, log_scale) for z in w] + [ckks_fixed.scale_up(z[1], fmt, log_scale)
                                                                        for z in w]
    rng = random.Random(seed)
    top = fmt.width - 1 - fmt.frac_bits + log_scale
    big_q = 1
    for q in moduli:
        big_q *= q
    bound = min(1 << (top + 1), big_q // 2)
    near = [rng.randint(-bound, bound) for _ in range(n_ring)]
    rows = [[x % q for q in moduli] for x in m_enc] , [[x % q for q in moduli] for x in near]
    corners = [0, 1, big_q - 1, big_q // 2, big_q // 2 + 1, big_q // 2 - 1]
    wild = [[(rng.choice(corners) if rng.random() < 0.3 else rng.randrange(big_q)) % q for q in moduli]
            for _ in range(n_ring)]
    return [[list(col) for col in zip(*v)] for v in (*rows, wild)]


@pytest.mark.parametrize("n_ring,lanes,bits,count,log_scale,fmt", DEC_CASES)
def test_decoder(n_ring, lanes, bits, count, log_scale, fmt):
    qs = ntt_primes(n_ring, bits, count)
    dec = Decoder(n_ring, lanes, fmt, log_scale, qs if count > 1 else qs[0])
    vectors = decoder_rows(qs, n_ring, fmt, log_scale, n_ring + count)
    inputs = [beat for rows in vectors for beat in dec.pack(rows)]
    per = n_ring // 2 // lanes
    r = run_stream(dec, inputs, len(vectors) * per, gaps=None if n_ring > 64 else n_ring + 1)
    got = [unpack_complex(x, fmt) for b in r.outputs for x in b]
    for i, rows in enumerate(vectors):
        assert got[i * n_ring // 2:(i + 1) * n_ring // 2] == dec.model(rows)
    assert dec.crt.latency == (0 if count == 1 else 6)
    if n_ring > 64:
        nb = n_ring // lanes
        assert r.out_cycles[0] == r.in_cycles[nb - 1] + dec.crt.latency + dec.fft.compute_cycles + 4
        assert r.out_cycles[per - 1] - r.in_cycles[0] + 1 == dec.cycles()


def test_bad_parameters():
    q = ntt_primes(1 << 10, 54, 1)[0]
    with pytest.raises(ParameterError, match="'N'"):
        Encoder(8, 1, FMT, 20, [q])
    with pytest.raises(ParameterError, match="'N'"):
        Decoder(1 << 17, 1, FMT, 20, q)
    with pytest.raises(ParameterError, match="frac_bits"):       # too few fraction bits for N
        Encoder(1 << 10, 1, fftm.FixedPointFormat(12, 9), 20, [q])
    with pytest.raises(ParameterError, match="log_scale"):       # scale too large for the primes
        Encoder(1 << 10, 1, FMT, 52, [q])
    with pytest.raises(ParameterError, match="log_scale"):
        Decoder(1 << 10, 1, FMT, 0, q)
    with pytest.raises(ParameterError, match="moduli"):          # not coprime
        Decoder(1 << 10, 1, FMT, 20, [q, q])
    with pytest.raises(ParameterError, match="moduli"):
        Decoder(1 << 10, 1, FMT, 20, ntt_primes(1 << 10, 40, 9))
    with pytest.raises(ParameterError, match="moduli"):
        Decoder(1 << 10, 1, FMT, 20, [])
    with pytest.raises(ParameterError, match="log_scale"):       # 2^(2+45) >= Q = two 20-bit primes
        Decoder(1 << 10, 1, FMT, 45, ntt_primes(1 << 10, 20, 2))
    assert len(ckks_fixed.check_decoder_params(1 << 10, FMT, 37, ntt_primes(1 << 10, 20, 2))) == 2
    with pytest.raises(ParameterError, match="lanes"):
        Encoder(16, 4, FMT, 20, [q])
    with pytest.raises(ParameterError, match="moduli"):
        Encoder(16, 1, FMT, 20, [q] * 129)


@pytest.mark.slow
def test_encoder_decoder_n2048():
    n_ring, lanes = 2048, 4
    qs = ntt_primes(n_ring, 54, 2)
    enc = Encoder(n_ring, lanes, FMT, 50, qs)
    slots = fixed_slots(n_ring // 2, FMT, 11)
    r = run_stream(enc, slot_beats(slots, lanes, FMT), 2 * n_ring // lanes)
    rows = enc.model(slots)
    assert [x for b in r.outputs for x in b] == [x for row in rows for x in row]
    assert r.out_cycles[-1] - r.in_cycles[0] + 1 == enc.cycles()
    for moduli, got_rows in ((qs[0], rows[0]), (qs, rows)):
        dec = Decoder(n_ring, lanes, FMT, 50, moduli)
        r = run_stream(dec, dec.pack(got_rows), n_ring // 2 // lanes)
        assert [unpack_complex(x, FMT) for b in r.outputs for x in b] == dec.model(got_rows)
        assert r.out_cycles[-1] - r.in_cycles[0] + 1 == dec.cycles()

"""The CKKS encoder / decoder cores against hhe_gen.models.ckks_fixed, bit for bit (which
test_codec_model.py ties to hhe_gen.models.ckks): N = 16, 32, 64, 256, several P, one to three
primes, Delta below / equal to / above 2^F, random and corner inputs (saturating decoder inputs,
wrapping IFFT inputs), random valid gaps and back-pressure, exact cycle counts."""

import cmath
import math
import random

import pytest

from hhe_gen.cores.arith.butterfly import pack_complex, unpack_complex
from hhe_gen.cores.ckks import Decoder, Encoder
from hhe_gen.models import ckks_fixed
from hhe_gen.models import fft as fftm
from hhe_gen.params import ParameterError, ntt_primes
from hhe_gen.testing import run_stream

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
        assert r.out_cycles[0] == r.in_cycles[nb - 1] + enc.ifft.compute_cycles + 3
        assert r.out_cycles[per - 1] - r.in_cycles[0] + 1 == enc.cycles()
        assert r.out_cycles[:per] == list(range(r.out_cycles[0], r.out_cycles[0] + per))


DEC_CASES = [  # N, P, prime bits, log_scale, fmt
    (16, 1, 40, 20, FMT),
    (32, 2, 50, 30, FMT),
    (64, 4, 36, 30, fftm.FixedPointFormat(24, 20, "half-even")),
    (64, 2, 30, 26, FMT),
    (256, 4, 54, 50, FMT),
]


@pytest.mark.parametrize("n_ring,lanes,bits,log_scale,fmt", DEC_CASES)
def test_decoder(n_ring, lanes, bits, log_scale, fmt):
    q = ntt_primes(n_ring, bits, 1)[0]
    dec = Decoder(n_ring, lanes, fmt, log_scale, q)
    enc_rows = ckks_fixed.encode_fixed(fixed_slots(n_ring // 2, fmt, 3), fmt, log_scale, [q])[0]
    rng = random.Random(n_ring)
    corners = [0, 1, q - 1, q // 2, q // 2 + 1, q // 2 - 1]
    wild = [rng.choice(corners) if rng.random() < 0.3 else rng.randrange(q) for _ in range(n_ring)]
    rows = [enc_rows, wild]
    inputs = [row[b * lanes:(b + 1) * lanes] for row in rows for b in range(n_ring // lanes)]
    per = n_ring // 2 // lanes
    r = run_stream(dec, inputs, 2 * per, gaps=None if n_ring > 64 else n_ring + 1)
    got = [unpack_complex(x, fmt) for b in r.outputs for x in b]
    for i, row in enumerate(rows):
        assert got[i * n_ring // 2:(i + 1) * n_ring // 2] == dec.model(row)
    if n_ring > 64:
        nb = n_ring // lanes
        assert r.out_cycles[0] == r.in_cycles[nb - 1] + dec.fft.compute_cycles + 3
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
    with pytest.raises(ParameterError, match="modulus"):
        Decoder(1 << 10, 1, FMT, 20, [q, q])
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
    dec = Decoder(n_ring, lanes, FMT, 50, qs[0])
    r = run_stream(dec, [rows[0][b * lanes:(b + 1) * lanes] for b in range(n_ring // lanes)], n_ring // 2 // lanes)
    assert [unpack_complex(x, FMT) for b in r.outputs for x in b] == dec.model(rows[0])
    assert r.out_cycles[-1] - r.in_cycles[0] + 1 == dec.cycles()

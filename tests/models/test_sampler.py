"""Samplers: exact stream usage against re-implementations over hashlib bytes, and statistics
on 10^5 samples with fixed thresholds that a wrong distribution fails."""

import hashlib
import math

import numpy as np
import pytest

from hhe_gen.models import sampler
from hhe_gen.models.sampler import (Domain, gaussian_bound, gaussian_cdt, gaussian_cdt_sample,
                                    gaussian_cdt_table, seeded_xof, ternary_hamming,
                                    ternary_uniform, to_residues, uniform_mod_q)
from hhe_gen.params.errors import ParameterError

SEED = bytes(range(32))
SAMPLES = 100_000


def _stream(domain, nonce=0, seed=SEED):
    """The byte stream seeded_xof must produce, built from hashlib (independent of the model)."""
    message = seed + bytes([domain]) + nonce.to_bytes(8, "little")
    return hashlib.shake_256(message)


def _chi_square(observed, expected):
    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(expected, dtype=float)
    return float(((observed - expected) ** 2 / expected).sum())


# ------------------------------------------------------------------------------------------
# seeded XOF
# ------------------------------------------------------------------------------------------

def test_seeded_xof_absorbs_seed_domain_nonce():
    for domain in Domain:
        for nonce in (0, 1, 2**64 - 1):
            assert seeded_xof(SEED, domain, nonce).squeeze(300) == _stream(domain, nonce).digest(300)


def test_seeded_xof_determinism_and_separation():
    a = seeded_xof(SEED, Domain.SECRET).squeeze(64)
    assert a == seeded_xof(SEED, Domain.SECRET).squeeze(64)
    assert a != seeded_xof(SEED, Domain.EPHEMERAL).squeeze(64)
    assert a != seeded_xof(SEED, Domain.SECRET, 1).squeeze(64)
    assert a != seeded_xof(bytes(32), Domain.SECRET).squeeze(64)
    assert len({int(d) for d in Domain}) == len(Domain)


@pytest.mark.parametrize("seed,domain,nonce", [
    (bytes(31), 1, 0), (bytes(33), 1, 0), ("x" * 32, 1, 0),
    (bytes(32), 256, 0), (bytes(32), -1, 0), (bytes(32), 1, -1), (bytes(32), 1, 2**64),
])
def test_seeded_xof_bad_parameters(seed, domain, nonce):
    with pytest.raises(ParameterError):
        seeded_xof(seed, domain, nonce)


# ------------------------------------------------------------------------------------------
# uniform mod q
# ------------------------------------------------------------------------------------------

def _reference_uniform(stream_bytes, q, count):
    nbytes = -(-q.bit_length() // 8)
    out, pos = [], 0
    while len(out) < count:
        word = int.from_bytes(stream_bytes[pos:pos + nbytes], "little") % (1 << q.bit_length())
        pos += nbytes
        if word < q:
            out.append(word)
    return out, pos


@pytest.mark.parametrize("q", [2, 3, 257, 12289, 65929217, 2**31 - 1, 1152921504606748673])
def test_uniform_mod_q_exact_stream_usage(q):
    xof = seeded_xof(SEED, Domain.UNIFORM_A)
    got = uniform_mod_q(xof, q, 500)
    raw = _stream(Domain.UNIFORM_A).digest(20000)
    expected, used = _reference_uniform(raw, q, 500)
    assert got == expected
    assert xof.squeeze(16) == raw[used:used + 16]  # the stream position is exact too


def test_uniform_mod_q_chi_square():
    q = 12289  # 14 bits: acceptance 0.75; reducing instead of rejecting would skew [0, 4095)
    values = np.array(uniform_mod_q(seeded_xof(SEED, Domain.UNIFORM_A, 7), q, SAMPLES))
    assert values.min() >= 0 and values.max() < q
    buckets = 64
    counts = np.bincount(values * buckets // q, minlength=buckets)
    edges = [-(-(b * q) // buckets) for b in range(buckets + 1)]  # first value of each bucket
    expected = np.array([edges[b + 1] - edges[b] for b in range(buckets)]) * SAMPLES / q
    assert _chi_square(counts, expected) < 120  # df 63: 99.99% point is about 115


def test_uniform_chi_square_catches_a_biased_sampler():
    q = 12289
    raw = np.frombuffer(_stream(5, 9).digest(2 * SAMPLES), dtype="<u2").astype(np.int64)
    biased = (raw & 0x3FFF) % q  # reduction instead of rejection
    counts = np.bincount(biased * 64 // q, minlength=64)
    edges = [-(-(b * q) // 64) for b in range(65)]
    expected = np.array([edges[b + 1] - edges[b] for b in range(64)]) * SAMPLES / q
    assert _chi_square(counts, expected) > 120


# ------------------------------------------------------------------------------------------
# ternary
# ------------------------------------------------------------------------------------------

def test_ternary_uniform_exact_stream_usage():
    xof = seeded_xof(SEED, Domain.SECRET)
    got = ternary_uniform(xof, 1000)
    raw = _stream(Domain.SECRET).digest(2000)
    expected, pos = [], 0
    while len(expected) < 1000:
        byte = raw[pos]
        pos += 1
        for piece in (byte & 3, (byte >> 2) & 3, (byte >> 4) & 3, byte >> 6):
            if piece != 3 and len(expected) < 1000:
                expected.append({0: 0, 1: 1, 2: -1}[piece])
    assert got == expected
    assert xof.squeeze(8) == raw[pos:pos + 8]


def test_ternary_uniform_frequencies():
    values = np.array(ternary_uniform(seeded_xof(SEED, Domain.SECRET, 3), SAMPLES))
    counts = [(values == v).sum() for v in (-1, 0, 1)]
    assert sum(counts) == SAMPLES
    assert _chi_square(counts, [SAMPLES / 3] * 3) < 20  # df 2: 99.99% point is 18.4


def _reference_hamming(raw, count, h):
    signs = [1 - 2 * ((raw[t >> 3] >> (t & 7)) & 1) for t in range(h)]
    pos = (h + 7) // 8
    width = max(1, math.ceil((count - 1).bit_length() / 8))
    vec = [0] * count
    for t in range(h):
        i = count - h + t
        while True:
            j = int.from_bytes(raw[pos:pos + width], "little") % (2 ** i.bit_length())
            pos += width
            if j <= i:
                break
        vec[i], vec[j] = vec[j], signs[t]
    return vec


@pytest.mark.parametrize("count,h", [(1, 0), (1, 1), (16, 3), (16, 16), (300, 64), (4096, 192)])
def test_ternary_hamming_weight_and_exactness(count, h):
    got = ternary_hamming(seeded_xof(SEED, Domain.SECRET, count), count, h)
    assert len(got) == count
    assert sum(1 for v in got if v) == h
    assert set(got) <= {-1, 0, 1}
    assert got == _reference_hamming(_stream(Domain.SECRET, count).digest(40000), count, h)


def test_ternary_hamming_positions_and_signs_uniform():
    count, h, draws = 16, 4, 6000
    xof = seeded_xof(SEED, Domain.SECRET, 99)
    hits = np.zeros(count)
    plus = 0
    for _ in range(draws):
        vec = np.array(ternary_hamming(xof, count, h))
        hits += vec != 0
        plus += (vec == 1).sum()
    assert _chi_square(hits, [draws * h / count] * count) < 45  # df 15: 99.99% point is 42.3
    assert abs(plus - draws * h / 2) < 4.5 * math.sqrt(draws * h / 4)


@pytest.mark.parametrize("count,h", [(16, 17), (16, -1), (0, 0), (16, 2.0)])
def test_ternary_hamming_bad_parameters(count, h):
    with pytest.raises(ParameterError):
        ternary_hamming(seeded_xof(SEED, 1), count, h)


# ------------------------------------------------------------------------------------------
# discrete Gaussian (CDT)
# ------------------------------------------------------------------------------------------

def _gaussian_probabilities(sigma, bound):
    """Exact-enough discrete Gaussian on -bound..bound, computed here in float64."""
    weights = {x: math.exp(-x * x / (2 * sigma * sigma)) for x in range(-bound, bound + 1)}
    total = math.fsum(weights.values())
    return {x: w / total for x, w in weights.items()}


def test_gaussian_bound_and_table_against_float_formula():
    assert gaussian_bound(3.2, 6) == 20
    assert gaussian_bound(3.19, 6) == 20 and gaussian_bound(3.0, 6) == 18
    table = gaussian_cdt_table(3.2, 6, 63)
    assert len(table) == 20
    assert all(a < b for a, b in zip(table, table[1:]))
    probs = _gaussian_probabilities(3.2, 20)
    for k, entry in enumerate(table):
        cdf = math.fsum(probs[x] for x in range(-k, k + 1))
        assert abs((entry + 1) / 2**63 - cdf) < 1e-14


def test_gaussian_sample_scans_the_whole_table():
    class CountingTable(list):
        reads = 0

        def __iter__(self):
            for item in super().__iter__():
                CountingTable.reads += 1
                yield item

    table = CountingTable(gaussian_cdt_table())
    for word in (0, 1, 2**64 - 1, 2**63, 12345):
        CountingTable.reads = 0
        gaussian_cdt_sample(word, table)
        assert CountingTable.reads == len(table)
    assert gaussian_cdt_sample(0, table) == 0 and gaussian_cdt_sample(1, table) == 0
    assert gaussian_cdt_sample(2**64 - 2, table) == 20 and gaussian_cdt_sample(2**64 - 1, table) == -20


def test_gaussian_exact_stream_usage():
    xof = seeded_xof(SEED, Domain.ERROR0)
    got = gaussian_cdt(xof, 300)
    raw = _stream(Domain.ERROR0).digest(8 * 300 + 8)
    table = gaussian_cdt_table()
    expected = []
    for i in range(300):
        word = int.from_bytes(raw[8 * i:8 * i + 8], "little")
        magnitude = sum(1 for t in table if (word >> 1) > t)
        expected.append(-magnitude if word % 2 else magnitude)
    assert got == expected
    assert xof.squeeze(8) == raw[2400:2408]


def _gaussian_chi_square(values, sigma=3.2, bound=20, cut=12):
    probs = _gaussian_probabilities(sigma, bound)
    observed = [(values < -cut).sum()] + [(values == x).sum() for x in range(-cut, cut + 1)] \
        + [(values > cut).sum()]
    expected = [sum(probs[x] for x in range(-bound, -cut))] + [probs[x] for x in range(-cut, cut + 1)] \
        + [sum(probs[x] for x in range(cut + 1, bound + 1))]
    return _chi_square(observed, np.array(expected) * len(values))


@pytest.fixture(scope="module")
def gaussian_samples():
    return np.array(gaussian_cdt(seeded_xof(SEED, Domain.ERROR1, 5), SAMPLES))


def test_gaussian_moments(gaussian_samples):
    values = gaussian_samples
    assert np.abs(values).max() <= 20
    probs = _gaussian_probabilities(3.2, 20)
    variance = math.fsum(p * x * x for x, p in probs.items())
    assert abs(values.mean()) < 0.05  # standard error 0.01
    assert abs(values.var() / variance - 1) < 0.02  # standard error about 0.45%


def test_gaussian_chi_square(gaussian_samples):
    assert _gaussian_chi_square(gaussian_samples) < 70  # df 26: 99.99% point is about 59


def test_gaussian_chi_square_catches_a_wrong_sigma():
    wrong = np.array(gaussian_cdt(seeded_xof(SEED, Domain.ERROR1, 6), SAMPLES // 2, sigma=3.35))
    assert _gaussian_chi_square(wrong) > 70


def test_gaussian_symmetry(gaussian_samples):
    pos = np.array([(gaussian_samples == k).sum() for k in range(1, 8)])
    neg = np.array([(gaussian_samples == -k).sum() for k in range(1, 8)])
    assert _chi_square(pos, (pos + neg) / 2) + _chi_square(neg, (pos + neg) / 2) < 35


@pytest.mark.parametrize("kwargs", [dict(bits=62), dict(bits=255), dict(sigma=0), dict(sigma=-1.0),
                                    dict(bound_sigmas=0), dict(sigma="abc"), dict(bits=7, sigma=3.2)])
def test_gaussian_bad_parameters(kwargs):
    with pytest.raises(ParameterError):
        gaussian_cdt_table(**kwargs)


def test_gaussian_determinism():
    a = gaussian_cdt(seeded_xof(SEED, Domain.ERROR0, 1), 200)
    assert a == gaussian_cdt(seeded_xof(SEED, Domain.ERROR0, 1), 200)
    assert a != gaussian_cdt(seeded_xof(SEED, Domain.ERROR0, 2), 200)


# ------------------------------------------------------------------------------------------
# residues, parameter checks
# ------------------------------------------------------------------------------------------

def test_to_residues():
    assert to_residues([-1, 0, 1, -20, 20], 97) == [96, 0, 1, 77, 20]
    q = 1152921504606748673
    assert to_residues([-3], q) == [q - 3]
    with pytest.raises(ParameterError):
        to_residues([1], 1)


@pytest.mark.parametrize("call", [
    lambda x: uniform_mod_q(x, 1, 5), lambda x: uniform_mod_q(x, 17, -1),
    lambda x: ternary_uniform(x, -2), lambda x: gaussian_cdt(x, -1),
])
def test_bad_counts_and_moduli(call):
    with pytest.raises(ParameterError):
        call(seeded_xof(SEED, 1))


def test_rubato_xof_rejects_unknown_kind():
    with pytest.raises(ParameterError):
        sampler.rubato_xof(bytes(16), "shake128")

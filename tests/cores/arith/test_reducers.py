"""Pipelined modular multipliers against their golden models (hhe_gen.models.modarith).

For every reducer x width x latency (minimum, minimum + 1, a larger one): random and corner
operands (0, 1, q-1, q-2, near 2^(w-1)) with ``sel`` switching primes between consecutive
inputs and random clock-enable gaps; the output equals the model's ``mul`` and every probed
intermediate value equals the model's ``trace`` value (modulo 2^its width).
"""

import functools
import random

import pytest

from hhe_gen.cores.arith import StreamPipeline
from hhe_gen.cores.arith.barrett import BarrettMul
from hhe_gen.cores.arith.ntt_montgomery import NttMontgomeryMul
from hhe_gen.cores.arith.special_barrett import SpecialBarrettMul
from hhe_gen.cores.arith.word_montgomery import WordMontgomeryMul
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models.modarith import signed_digits
from hhe_gen.params import ParameterError, abc_fhe_primes, dna_hhe_primes, is_prime, ntt_primes
from hhe_gen.sim.stream import run_stream, run_unit

WIDTHS = [16, 24, 32, 36, 44, 54, 61, 64]


def barrett(width, latency=None, **kw):
    return BarrettMul(ntt_primes(16, width, 3), width, latency=latency, **kw)


def special_barrett(width, latency=None, **kw):
    for log_n in (13, 4):       # N = 2^13 where such primes exist at this k, else N = 16
        ps = dna_hhe_primes(width, 1 << log_n, 10, count=3)
        if len(ps) >= 2:
            return SpecialBarrettMul([p.q for p in ps], width, log_n, latency=latency, **kw)
    return None


def montgomery(width, latency=None, word_bits=None, **kw):
    w = word_bits or (18 if width > 18 else 8)
    return WordMontgomeryMul(ntt_primes(1 << (w - 1), width, 3), width, w, latency=latency, **kw)


@functools.lru_cache(maxsize=None)
def _abc_primes(width, log_n):
    """ABC-FHE primes q = 2^e + kk*2N + 1 below 2^width (own search below the prime search's
    16-bit exponent floor: e = 15, kk with at most three signed digits)."""
    if width - 1 >= 16:
        return tuple(p.q for p in abc_fhe_primes(1 << log_n, width - 1, 3) if p.q < 1 << width)[:3]
    e, out = width - 1, []
    for kk in range(-(1 << (e - log_n - 1)), 1 << (e - log_n - 1)):
        q = (1 << e) + kk * (2 << log_n) + 1
        if kk and len(signed_digits(kk)) <= 3 and 1 << e < q < 1 << width and is_prime(q):
            out.append(q)
    return tuple(out[:3])


def ntt_montgomery(width, latency=None, negated=False, **kw):
    log_n = 13 if width > 16 else 4
    return NttMontgomeryMul(_abc_primes(width, log_n), log_n, width, latency=latency, negated=negated, **kw)


BUILDERS = {"barrett": barrett, "special-barrett": special_barrett, "montgomery": montgomery,
            "ntt-montgomery": ntt_montgomery}


def _operands(dut, n, seed):
    rng = random.Random(seed)
    w = dut.width
    out = []
    for i in range(n):
        s = i % len(dut.moduli)
        q = dut.moduli[s]
        corners = [0, 1, q - 1, q - 2, min(q - 1, 1 << (w - 1)), min(q - 1, (1 << (w - 1)) - 1), q >> 1]
        pick = lambda: rng.choice(corners) if rng.random() < 0.5 else rng.randrange(q)  # noqa: E731
        vec = {"a": pick(), "b": pick()}
        if len(dut.moduli) > 1:
            vec["sel"] = s
        out.append(vec)
    return out


def check_unit(dut, n, seed, gaps=True):
    vecs = _operands(dut, n, seed)
    keys = sorted(dut.probe_names)
    run = run_unit(dut, vecs, en_gaps=seed if gaps else None, probes=keys)
    for v, got in zip(vecs, run.outputs):
        s = v.get("sel", 0)
        assert got == dut.models[s].mul(v["a"], v["b"]), (v, dut.schedule)
    for key in keys:
        bits = len(dut.probes[key][0])
        for v, got in zip(vecs, run.probes[key]):
            want = dut.models[v.get("sel", 0)].trace(v["a"], v["b"])[key]
            assert got % (1 << bits) == want % (1 << bits), (key, v, dut.schedule)
    return vecs, run


def _latencies(make, width):
    low = make(width)
    mark_unused(low)
    return [low.min_latency, low.min_latency + 1, low.min_latency + 6]


@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("width", WIDTHS)
def test_reducer_matches_model(kind, width):
    make = BUILDERS[kind]
    for k, latency in enumerate(_latencies(make, width)):
        dut = make(width, latency)
        if dut is None:
            pytest.skip(f"no {kind} primes at width {width}")
        assert dut.latency == latency and dut.ii == 1 and sum(dut.counts) == latency
        check_unit(dut, 12, seed=width * 7 + k)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_reducer_stream_wrapper(kind):
    dut = BUILDERS[kind](36, None)
    vecs = _operands(dut, 30, seed=5)
    want = [dut.models[v.get("sel", 0)].mul(v["a"], v["b"]) for v in vecs]
    full = run_stream(StreamPipeline(dut), vecs)
    assert full.outputs == want
    assert full.latency == dut.latency
    assert full.out_cycles == [c + dut.latency for c in full.in_cycles]     # full rate, ii = 1
    dut2 = BUILDERS[kind](36, dut.latency + 2)
    gappy = run_stream(StreamPipeline(dut2), vecs, gaps=9)
    assert gappy.outputs == want


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_probes_are_model_trace_values(kind):
    """Every probe a unit declares is a trace value of its model (the test above compares them)."""
    dut = BUILDERS[kind](36, None)
    mark_unused(dut)
    keys = set(dut.models[0].trace(1, 1))
    assert set(dut.probe_names) <= keys and {"x", "r"} <= set(dut.probe_names)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("width", [36, 54])
def test_reducer_dsp_model(kind, width):
    """dsp="model": the ecp5 MULT18X18D wiring (its input and output registers take the pipeline
    registers around the tiles) simulated with a model of the primitive - bit- and cycle-exact."""
    make = BUILDERS[kind]
    low = make(width, dsp="model")
    mark_unused(low)
    for k, latency in enumerate([low.min_latency, low.min_latency + 2, 8]):
        dut = make(width, max(latency, low.min_latency), dsp="model")
        assert sum(dut.counts) == dut.latency
        check_unit(dut, 10, seed=width + k)


@pytest.mark.parametrize("k, log_n, tiles", [(36, 13, 6), (54, 13, 12), (64, 13, 20)])
def test_special_barrett_bnd_luts(k, log_n, tiles):
    """karatsuba=False, bnd_luts=True: a*b on schoolbook tiles, x_hi*Delta_hi on tiles, q_est*bnd
    as LUT rows - 12 tiles at 54 bits, bit-exact at every latency from the minimum."""
    ps = [p.q for p in dna_hhe_primes(k, 1 << log_n, 10, count=3)]
    low = SpecialBarrettMul(ps, k, log_n, karatsuba=False, bnd_luts=True)
    mark_unused(low)
    assert low.tiles == tiles and low.mul_pb.tiles == 0 and low.mul_pb.lut_rows > 0
    for j, latency in enumerate([low.min_latency, low.min_latency + 1, 8, 11]):
        check_unit(SpecialBarrettMul(ps, k, log_n, latency, karatsuba=False, bnd_luts=True), 12, seed=k + j)


@pytest.mark.parametrize("k, log_n, tiles", [(36, 13, 7), (54, 13, 12), (54, 16, 11), (64, 13, 17)])
def test_special_barrett_tiles(k, log_n, tiles):
    """DNA-HHE's claim: at 54 bits the whole multiplier fits 12 MULT18X18D (a*b included)."""
    ps = [p.q for p in dna_hhe_primes(k, 1 << log_n, 10, count=3)]
    dut = SpecialBarrettMul(ps, k, log_n)
    mark_unused(dut)
    assert dut.tiles == tiles
    generic = barrett(k)
    mark_unused(generic)
    if k >= 44:         # the target (54 bits); at 36 bits: 7 vs 11 tiles, 36 % fewer
        assert dut.tiles <= 0.6 * generic.tiles        # >= 40 % fewer DSP tiles than generic Barrett


def test_special_barrett_single_prime_and_wider_port():
    ps = dna_hhe_primes(16, 16, 10, count=1)
    check_unit(SpecialBarrettMul(ps[0].q, 16, 4, latency=4), 40, seed=1)
    check_unit(SpecialBarrettMul(ps[0].q, 16, 4, latency=5, width=20, delta_shift=0), 20, seed=2)


def test_special_barrett_bad_parameters():
    ps = [p.q for p in dna_hhe_primes(36, 1 << 13, 10, count=2)]
    with pytest.raises(ParameterError, match="q"):
        SpecialBarrettMul(ps + [ntt_primes(16, 36, 1)[0]], 36, 13)
    with pytest.raises(ParameterError, match="latency.*>= 3"):
        SpecialBarrettMul(ps, 36, 13, latency=2)
    with pytest.raises(ParameterError, match="width"):
        SpecialBarrettMul(ps, 36, 13, width=30)
    with pytest.raises(ParameterError, match="log_n"):
        SpecialBarrettMul(ps, 36, 18)
    with pytest.raises(ParameterError, match="bnd_luts"):
        SpecialBarrettMul(ps, 36, 13, bnd_luts=1)
    with pytest.raises(ParameterError, match="dsp"):
        SpecialBarrettMul(ps, 36, 13, dsp="primitive", target="xilinx")


@pytest.mark.parametrize("width, word_bits", [(36, 17), (44, 8), (54, 13)])
def test_word_montgomery_word_sizes(width, word_bits):
    dut = montgomery(width, None, word_bits)
    assert dut.words == -(-width // word_bits) and dut.models[0].montgomery_radix == 1 << (word_bits * dut.words)
    check_unit(dut, 12, seed=word_bits)


def test_word_montgomery_bad_parameters():
    qs = ntt_primes(1 << 17, 36, 2)
    with pytest.raises(ParameterError, match="q"):
        WordMontgomeryMul(ntt_primes(16, 36, 2), 36, 18)          # q != 1 mod 2^18
    with pytest.raises(ParameterError, match="latency.*>= 3"):         # a*b and two word steps
        WordMontgomeryMul(qs, 36, 18, latency=2)
    with pytest.raises(ParameterError, match="word_bits"):
        WordMontgomeryMul(qs, 36, 0)


@pytest.mark.parametrize("width", [16, 36, 54, 64])
def test_ntt_montgomery_negated_and_r_bits(width):
    check_unit(ntt_montgomery(width, 2, negated=True), 12, seed=width)
    qs = _abc_primes(width, 13 if width > 16 else 4)
    dut = NttMontgomeryMul(qs, 13 if width > 16 else 4, width, 3, r_bits=64)
    ref = ntt_montgomery(width)
    mark_unused(ref)
    assert dut.tiles == ref.tiles and dut.models[0].montgomery_radix == 1 << 64
    check_unit(dut, 12, seed=width + 1)


def test_ntt_montgomery_bad_parameters():
    with pytest.raises(ParameterError, match="q"):
        NttMontgomeryMul(ntt_primes(16, 36, 1), 13, 36)       # not 1 mod 2N = 2^14
    with pytest.raises(ParameterError, match="latency.*>= 1"):
        ntt_montgomery(36, 0)
    with pytest.raises(ParameterError, match="negated"):
        ntt_montgomery(36, negated="yes")


@pytest.mark.parametrize("dsp", ["infer", "model"])
def test_barrett_mixed_bit_lengths(dsp):
    """Primes of three bit lengths in one unit (an RNS basis with a wider special prime): the
    narrower ones are scaled to k bits, every probe equal to the scaled model's trace."""
    moduli = [ntt_primes(16, 30, 1)[0], ntt_primes(16, 36, 2)[1], ntt_primes(16, 29, 1)[0],
              ntt_primes(16, 36, 1)[0]]
    low = BarrettMul(moduli, 36, dsp=dsp)
    mark_unused(low)
    assert low.k == 36 and low.shifts == (6, 0, 7, 0) and "b_s" in low.probe_names
    same = BarrettMul(moduli[1::2], 36, dsp=dsp)
    mark_unused(same)
    assert same.shifts == (0, 0) and "b_s" not in same.probe_names
    assert low.min_latency == same.min_latency and low.tiles == same.tiles
    for k, latency in enumerate([low.min_latency, low.min_latency + 1, low.min_latency + 5]):
        check_unit(BarrettMul(moduli, 36, latency, dsp=dsp), 24, seed=40 + k)


def test_barrett_bad_parameters():
    with pytest.raises(ParameterError, match="latency.*>= 3"):
        barrett(36, 2)
    with pytest.raises(ParameterError, match="moduli"):
        BarrettMul([ntt_primes(16, 36, 1)[0], 1 << 30], 36)              # even
    with pytest.raises(ParameterError, match="width"):
        BarrettMul([97], 8)
    with pytest.raises(ParameterError, match="target"):
        barrett(36, target="ice40")


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("width", WIDTHS)
def test_reducer_dsp_model_slow(kind, width):
    make = BUILDERS[kind]
    low = make(width, dsp="model")
    if low is None:
        pytest.skip(f"no {kind} primes at width {width}")
    mark_unused(low)
    for k in range(0, 7):
        check_unit(make(width, low.min_latency + k, dsp="model"), 60, seed=width * 17 + k)
    if kind == "special-barrett":
        for k in range(0, 7):
            check_unit(make(width, low.min_latency + k, dsp="model", karatsuba=False, bnd_luts=True), 60,
                       seed=width * 19 + k)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(BUILDERS))
@pytest.mark.parametrize("width", WIDTHS)
def test_reducer_many_vectors_slow(kind, width):
    make = BUILDERS[kind]
    for k, latency in enumerate(_latencies(make, width) + [_latencies(make, width)[0] + 3]):
        for target, kara in (("ecp5", True), ("xilinx", False), ("generic", True)):
            dut = make(width, latency, target=target, karatsuba=kara)
            if dut is None:
                pytest.skip(f"no {kind} primes at width {width}")
            check_unit(dut, 300, seed=width * 13 + k)

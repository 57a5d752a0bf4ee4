"""Modular add/sub units against hhe_gen.models.modarith (raw and stream-wrapped)."""

import random

import pytest

from hhe_gen.cores.arith import ModAdd, ModSub, StreamPipeline
from hhe_gen.models.modarith import mod_add, mod_add_trace, mod_sub, mod_sub_trace
from hhe_gen.params import ParameterError, is_prime, ntt_primes
from hhe_gen.sim.stream import run_stream, run_unit


def _vectors(moduli, width, n, seed):
    rng = random.Random(seed)
    vecs = []
    for i in range(n):
        s = i % len(moduli)            # sel switches between consecutive inputs
        q = moduli[s]
        corners = [0, 1, q - 1, q - 2, min(q - 1, 1 << (width - 1)), (1 << (width - 1)) - 1]
        pick = lambda: rng.choice(corners) if rng.random() < 0.4 else rng.randrange(q)  # noqa: E731
        vecs.append({"a": pick(), "b": pick(), "sel": s})
    return vecs


def _strip(vecs, moduli):
    return vecs if len(moduli) > 1 else [{k: v for k, v in d.items() if k != "sel"} for d in vecs]


@pytest.mark.parametrize("cls, op, trace", [(ModAdd, mod_add, mod_add_trace), (ModSub, mod_sub, mod_sub_trace)])
@pytest.mark.parametrize("width", [16, 36, 64])
@pytest.mark.parametrize("latency", [0, 1])
def test_addsub_matches_model(cls, op, trace, width, latency):
    moduli = ntt_primes(16, width, 3) if width <= 64 else None
    dut = cls(moduli, width, latency=latency)
    vecs = _vectors(moduli, width, 60, seed=width * 10 + latency)
    keys = ["sum", "diff", "result"] if cls is ModAdd else ["diff", "alt", "result"]
    run = run_unit(dut, vecs, en_gaps=latency + 7, probes=keys)
    want = [op(v["a"], v["b"], moduli[v["sel"]]) for v in vecs]
    assert run.outputs == want
    for key in keys:
        for v, got in zip(vecs, run.probes[key]):
            t = trace(v["a"], v["b"], moduli[v["sel"]])[key]
            n = len(dut.probes[key][0])
            assert got % (1 << n) == t % (1 << n), (key, v)


@pytest.mark.parametrize("cls, op", [(ModAdd, mod_add), (ModSub, mod_sub)])
def test_addsub_every_pair_small_modulus(cls, op):
    q = 13
    dut = cls(q, 4, latency=1)
    vecs = [{"a": a, "b": b} for a in range(q) for b in range(q)]
    assert run_unit(dut, vecs).outputs == [op(v["a"], v["b"], q) for v in vecs]


@pytest.mark.parametrize("cls, op", [(ModAdd, mod_add), (ModSub, mod_sub)])
def test_addsub_largest_modulus_corners(cls, op):
    q = (1 << 64) - 59                 # largest 64-bit prime: a + b overflows 64 bits
    assert is_prime(q)
    dut = cls(q, 64, latency=0)
    vals = [0, 1, 2, q - 1, q - 2, 1 << 63, (1 << 63) - 1]
    vecs = [{"a": a, "b": b} for a in vals for b in vals]
    assert run_unit(dut, vecs).outputs == [op(v["a"], v["b"], q) for v in vecs]


@pytest.mark.parametrize("latency", [0, 1])
def test_stream_wrapper_backpressure(latency):
    moduli = ntt_primes(16, 24, 2)
    vecs = _vectors(moduli, 24, 40, seed=3)
    want = [mod_sub(v["a"], v["b"], moduli[v["sel"]]) for v in vecs]
    full = run_stream(StreamPipeline(ModSub(moduli, 24, latency=latency)), vecs)
    assert full.outputs == want and full.latency == latency
    assert full.out_cycles == [c + latency for c in full.in_cycles]
    gappy = run_stream(StreamPipeline(ModSub(moduli, 24, latency=latency)), vecs, gaps=11)
    assert gappy.outputs == want


def test_addsub_bad_parameters():
    with pytest.raises(ParameterError, match="latency"):
        ModAdd(13, 8, latency=2)
    with pytest.raises(ParameterError, match="moduli"):
        ModAdd([13, 14], 8)
    with pytest.raises(ParameterError, match="moduli"):
        ModSub(257, 8)
    with pytest.raises(ParameterError, match="width"):
        ModSub(13, 65)
    with pytest.raises(ParameterError, match="moduli"):
        ModAdd([], 8)

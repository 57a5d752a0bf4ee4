"""Boundary vectors for the CKKS CRT centre (issue 14 section 6), hardware against
hhe_gen.models.ckks_fixed.crt_centre (and the centred value spelled out with plain integers):

- one modulus (the combinational path ``r > q // 2``): every residue of q = 3, 5, 13, so r = q//2
  (stays) and q//2 + 1 (becomes negative) are both there;
- small sets where every X in [0, Q) is fed: all the Barrett corrections inside, every reduction
  of the sum by k*Q and both sides of Q/2 occur;
- wide primes (54, 61 bits, mixed lengths): X = floor(Q/2) - 1, floor(Q/2), floor(Q/2) + 1, +2,
  0, 1, Q - 1 (every residue at q - 1) and Q - 2.
"""

import math

import pytest

from hhe_gen.cores.ckks.crt import CrtCentre
from hhe_gen.models.ckks_fixed import crt_centre
from hhe_gen.params import ntt_primes
from hhe_gen.sim.stream import run_stream


def centred(x: int, big_q: int) -> int:
    x %= big_q
    return x - big_q if x > big_q // 2 else x


def check(moduli, xs, lanes, gaps=None):
    dut = CrtCentre(moduli, lanes)
    big_q = math.prod(moduli)
    cols = [[x % q for q in moduli] for x in xs]
    cols += [cols[-1]] * (-len(cols) % lanes)
    beats = [[sum(r << (i * dut.qbits) for i, r in enumerate(cols[b * lanes + lane])) for lane in range(lanes)]
             for b in range(len(cols) // lanes)]
    want = [crt_centre(c, moduli) for c in cols]
    assert want[:len(xs)] == [centred(x, big_q) for x in xs]
    run = run_stream(dut, beats, gaps=gaps)
    assert [x for b in run.outputs for x in b] == want


@pytest.mark.parametrize("q", [3, 5, 13])
def test_single_modulus_every_residue(q):
    check((q,), list(range(q)), 1)


@pytest.mark.parametrize("moduli, lanes", [((3, 5), 1), ((3, 5, 7), 2), ((11, 13), 3), ((3, 5, 7, 11), 8)])
def test_small_sets_every_value(moduli, lanes):
    check(moduli, list(range(math.prod(moduli))), lanes, gaps=len(moduli))


@pytest.mark.parametrize("moduli", [
    tuple(ntt_primes(64, 54, 3)),
    tuple(ntt_primes(64, 61, 2)),
    (ntt_primes(64, 30, 1)[0], ntt_primes(64, 61, 1)[0], 65537),
])
def test_wide_moduli_around_half_q(moduli):
    big_q = math.prod(moduli)
    h = big_q // 2
    xs = [h - 1, h, h + 1, h + 2, 0, 1, big_q - 1, big_q - 2]         # Q - 1: every residue q - 1
    check(moduli, xs, 3, gaps=5)

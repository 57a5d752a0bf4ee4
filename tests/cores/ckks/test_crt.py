"""The streaming CRT unit (hhe_gen.cores.ckks.crt.CrtCentre) against hhe_gen.models.ckks_fixed.crt_centre
(which test_codec_model.py checks against hhe_gen.models.ckks.crt_centered and a brute-force search):
1 .. 4 and 8 moduli, mixed bit lengths, random and corner residues (0, q-1, around Q/2), random
gaps and back-pressure, exact latency at full rate."""

import math
import random

import pytest

from hhe_gen.cores.ckks.crt import CRT_STAGES, CrtCentre
from hhe_gen.params import ParameterError, ntt_primes
from hhe_gen.sim.stream import run_stream


def columns(moduli, count, seed):
    rng = random.Random(seed)
    big_q = math.prod(moduli)
    special = [0, 1, big_q - 1, big_q // 2, big_q // 2 + 1, big_q // 2 - 1, big_q // 2 + 2]
    cols = [[x % q for q in moduli] for x in special]
    cols.append([q - 1 for q in moduli])                    # every residue at its maximum
    while len(cols) < count:
        cols.append([rng.choice([0, q - 1, q // 2]) if rng.random() < 0.2 else rng.randrange(q) for q in moduli])
    return cols


CASES = [  # moduli, lanes
    (ntt_primes(64, 40, 1), 2),
    ((3, 5), 1),
    (ntt_primes(64, 20, 2), 2),
    (ntt_primes(64, 54, 3), 4),
    (ntt_primes(64, 61, 4), 2),
    ((ntt_primes(64, 30, 1)[0], ntt_primes(64, 61, 1)[0], 65537), 1),   # mixed bit lengths
    (ntt_primes(64, 36, 8), 1),
]


@pytest.mark.parametrize("moduli,lanes", CASES)
@pytest.mark.parametrize("gaps", [None, 7])
def test_crt_unit(moduli, lanes, gaps):
    dut = CrtCentre(moduli, lanes)
    cols = columns(moduli, 16 * lanes, len(moduli) + lanes)
    beats = [[sum(r << (i * dut.qbits) for i, r in enumerate(cols[b * lanes + lane])) for lane in range(lanes)]
             for b in range(len(cols) // lanes)]
    r = run_stream(dut, beats, gaps=gaps)
    assert [x for b in r.outputs for x in b] == [dut.model(c) for c in cols]
    assert dut.latency == (0 if len(moduli) == 1 else CRT_STAGES)
    assert dut.cbits == math.prod(moduli).bit_length() + 1
    if gaps is None:
        assert r.out_cycles == [c + dut.latency for c in r.in_cycles]


def test_bad_parameters():
    q = ntt_primes(64, 30, 1)[0]
    for bad in ([], [q, q], [15, 21], [4], [q] + ntt_primes(64, 36, 8), "x", [1 << 64 | 1]):
        with pytest.raises(ParameterError, match="moduli"):
            CrtCentre(bad)
    with pytest.raises(ParameterError, match="lanes"):
        CrtCentre([q], 0)

"""Rubato's round constants and noise, by the hardware samplers, for EVERY public KAT vector.

The samplers are fed the SHAKE256 stream (hashlib) of each vector's recorded XOF input, or the
AES-128-CTR stream for the alternative-XOF vectors (the samplers do not care which XOF).
"""

import random

import pytest

from hhe_gen.cores.sampler import RubatoNoise, RubatoRoundConstants
from hhe_gen.models.sampler import rubato_noise, rubato_noise_xof_input, rubato_round_constants, rubato_xof_input
from hhe_gen.params import rubato_params
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream

from ._helpers import KAT_SETS, beats, load_kat, shake

WIDTHS = (1, 2, 4, 8)


def _aes_stream(xof_input: bytes, nbytes: int) -> bytes:
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    key, iv = xof_input[:16], (xof_input[16:32] + bytes(16))[:16]
    return Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(bytes(nbytes))


def _vectors(name):
    kat = load_kat(name)
    for v in kat["vectors"]:
        yield kat, v, "shake256"
    for v in kat["alternative_xof_vectors"]["vectors"]:
        yield kat, v, "aes128-ctr"


def _stream(xof, hex_input, nbytes):
    data = bytes.fromhex(hex_input)
    return shake(data, nbytes) if xof == "shake256" else _aes_stream(data, nbytes)


@pytest.mark.parametrize("name", KAT_SETS)
def test_round_constants_of_every_kat_vector(name):
    checked = 0
    for i, (kat, v, xof) in enumerate(_vectors(name)):
        p = rubato_params(kat["parameter_set"])
        assert bytes.fromhex(v["rc_xof_input_hex"]) == rubato_xof_input(v["nonce"], v["counter"])
        # Exactly the recorded number of words: the hardware must not need a byte more.
        data = _stream(xof, v["rc_xof_input_hex"], 4 * v["rc_xof_words_read"])
        w = WIDTHS[i % 4]
        run = run_stream(RubatoRoundConstants(p, in_bytes=w), beats(data, w), p.round_constant_count,
                         gaps=i if i % 2 else None)
        want = [x for row in v["round_constants"] for x in row]
        assert len(want) == p.round_constant_count == (p.rounds + 1) * p.n
        assert run.outputs == want, f"{name} vector {v['index']} ({xof})"
        # Rejections as recorded: each rejected 4-byte word costs one cycle and gives nothing.
        masked = [int.from_bytes(data[j:j + 4], "little") & p.mask for j in range(0, len(data), 4)]
        assert sum(x >= p.q for x in masked) == v["rc_xof_words_rejected"]
        if i % 2 == 0 and w >= 4:       # full rate: one candidate per cycle, the last one accepted
            first = next(j for j, x in enumerate(masked) if x < p.q)
            assert run.out_cycles[-1] - run.out_cycles[0] == len(masked) - 1 - first
        checked += 1
    assert checked == 12


@pytest.mark.parametrize("name", KAT_SETS)
def test_noise_of_every_kat_vector(name):
    checked = 0
    for i, (kat, v, xof) in enumerate(_vectors(name)):
        p = rubato_params(kat["parameter_set"])
        noise = v["noise"]
        assert bytes.fromhex(noise["xof_input_hex"]) == rubato_noise_xof_input(v["nonce"], v["counter"],
                                                                                noise["seed"])
        data = _stream(xof, noise["xof_input_hex"], 4 * p.n)
        w = WIDTHS[(i + 1) % 4]
        comparators = (None, 1, 3)[i % 3]
        moduli = (p.q,) if i % 2 else None
        run = run_stream(RubatoNoise(p, in_bytes=w, comparators=comparators, moduli=moduli), beats(data, w),
                         p.n, gaps=i if i % 3 else None)
        values = [o["value"] for o in run.outputs] if moduli else run.outputs
        assert values == noise["values_all_n_words"], f"{name} vector {v['index']} ({xof})"
        assert values[:p.l] == noise["values"]
        if moduli:
            assert [o["residues"][0] for o in run.outputs] == [x % p.q for x in values]
        # The Par-128M/L table defect is reproduced, not repaired.
        for affected in v.get("noise_cdf_defect_affected_words", []):
            assert values[affected["word"]] == affected["reference_value"] != affected["value_with_corrected_table"]
        checked += 1
    assert checked == 12


def test_defect_vectors_exist():
    """The public files do exercise the defect (128M vector 1, 128L vectors 6, 7, 8)."""
    hits = {name: [v["index"] for v in load_kat(name)["vectors"] if v.get("noise_cdf_defect_affected_words")]
            for name in ("128m", "128l")}
    assert hits == {"128m": [1], "128l": [6, 7, 8]}


def test_random_nonces_against_the_model():
    rng = random.Random(6)
    for name in ("Par-80S", "Par-128M"):
        p = rubato_params(name)
        nonce, counter, seed = rng.getrandbits(64), rng.getrandbits(64), rng.getrandbits(64)
        rc, read, _ = rubato_round_constants(p, nonce, counter)
        data = shake(rubato_xof_input(nonce, counter), 4 * read)
        run = run_stream(RubatoRoundConstants(p, in_bytes=8), beats(data, 8), p.round_constant_count, gaps=3)
        assert run.outputs == [x for row in rc for x in row]
        data = shake(rubato_noise_xof_input(nonce, counter, seed), 4 * p.n)
        run = run_stream(RubatoNoise(p, in_bytes=8, comparators=2), beats(data, 8), p.n, gaps=4)
        assert run.outputs == rubato_noise(p, nonce, counter, seed)


def test_bad_parameters():
    with pytest.raises(ParameterError) as err:
        RubatoRoundConstants("Par-80S")
    assert err.value.name == "params"
    with pytest.raises(ParameterError) as err:
        RubatoNoise(None)
    assert err.value.name == "params"
    with pytest.raises(ParameterError) as err:
        RubatoNoise(rubato_params("Par-80L"), comparators=6)   # the 80L table has 5 entries
    assert err.value.name == "comparators"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["Par-80S", "Par-128L"])
def test_noise_statistics_on_1e5_hardware_samples(name):
    """10^5 noise values of the hardware: chi-square against the exact distribution of the table
    as given (for Par-128L the defect table: no |e| = 10), and the corrected table is rejected."""
    from .test_gaussian import _gaussian_chi_square

    p = rubato_params(name)
    n = 100_000
    data = shake(b"rubato-noise-stats" + name.encode(), 4 * n)
    values = run_stream(RubatoNoise(p, in_bytes=8), beats(data, 8), n).outputs
    words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, 4 * n, 4)]
    from hhe_gen.models.sampler import rubato_noise_from_words
    assert values == rubato_noise_from_words(words, p.cdf_table)
    chi, dof = _gaussian_chi_square(values, p.cdf_table, 31)
    assert chi < dof + 4 * dof ** 0.5 * 2 ** 0.5 + 10, (chi, dof)
    if p.cdf_table_defect:
        assert max(abs(v) for v in values) <= len(p.cdf_table) - 2
        corrected = list(p.cdf_table)
        corrected[4] = 2136316068
        chi_fixed, _ = _gaussian_chi_square(values, corrected, 31)
        assert chi_fixed > dof + 4 * (2 * dof) ** 0.5 + 10

"""The CKKS model: encoding against direct evaluation, key and ciphertext equations checked with a
schoolbook negacyclic product (independent of the NTT), precision, determinism, bad inputs."""

import cmath
import math
import random

import numpy as np
import pytest

from hhe_gen.models import ckks
from hhe_gen.params import CKKSParams, ParameterError, RingParams, ntt_primes, preset

TOY = preset("toy")


def _schoolbook(a, b, q):
    n = len(a)
    out = [0] * n
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                k = i + j
                out[k - n if k >= n else k] += -x * y if k >= n else x * y
    return [c % q for c in out]


def _centre(x, q):
    x %= q
    return x - q if x > q // 2 else x


def _slots(n, seed):
    rng = random.Random(seed)
    return [cmath.rect(math.sqrt(rng.random()), rng.uniform(-math.pi, math.pi)) for _ in range(n)]


@pytest.mark.parametrize("name", ["toy", "race-n10"])
def test_encoding_is_evaluation_at_the_rotation_group(name):
    """slot j == m(zeta^(5^j mod 2N)) / Delta, evaluated directly with numpy."""
    p = preset(name)
    z = _slots(p.slots, 7)
    pt = ckks.encode(p, z)
    m = np.array([_centre(x, p.moduli[0]) for x in pt.rows[0]], dtype=float)
    two_n = 2 * p.n
    for j in range(0, p.slots, max(1, p.slots // 16)):
        root = cmath.exp(1j * math.pi * pow(5, j, two_n) / p.n)
        val = np.polyval(m[::-1], root) / p.scale
        assert abs(val - z[j]) < p.n / p.scale * 4, (j, val, z[j])


def test_encoding_rounds_half_away_from_zero():
    assert [ckks.round_half_away(x) for x in (0.5, -0.5, 1.5, -1.5, 2.4999999, -2.5000001, 2.0**60 + 1024)] == \
        [1, -1, 2, -2, 2, -3, 2**60 + 1024]


def test_decode_inverts_encode():
    p = preset("dna-hhe")
    z = _slots(p.slots, 3)
    got = ckks.decode(p, ckks.encode(p, z))
    assert ckks.precision_bits(z, got)["min_bits"] > 40


def test_crt_centered_matches_direct_reconstruction():
    qs = ntt_primes(16, 30, 3)
    rng = random.Random(1)
    big_q = math.prod(qs)
    vals = [rng.randrange(-big_q // 2 + 1, big_q // 2 + 1) for _ in range(16)]
    assert ckks.crt_centered([[v % q for v in vals] for q in qs], qs) == vals


def test_public_key_equation():
    keys = ckks.keygen(TOY, 11)
    bound = TOY.error.bound
    assert set(keys.sk) <= {-1, 0, 1} and len(keys.sk) == TOY.n
    for i, q in enumerate(TOY.moduli):
        s = [x % q for x in keys.sk]
        e = [_centre(a + b, q) for a, b in zip(keys.pk0[i], _schoolbook(keys.pk1[i], s, q))]
        assert max(map(abs, e)) <= bound and any(e)
    # the same Gaussian e is used for every prime
    e_rows = [[_centre(a + b, q) for a, b in zip(keys.pk0[i], _schoolbook(keys.pk1[i], [x % q for x in keys.sk], q))]
              for i, q in enumerate(TOY.moduli)]
    assert e_rows[0] == e_rows[1]


@pytest.mark.parametrize("mode", ["pk", "sk"])
def test_encryption_noise_is_small_and_decryption_is_right(mode):
    keys = ckks.keygen(TOY, 5)
    z = _slots(TOY.slots, 9)
    pt = ckks.encode(TOY, z)
    ct = ckks.encrypt_pk(TOY, keys, pt, 6) if mode == "pk" else ckks.encrypt_sk(TOY, keys.sk, pt, 6)
    n, b = TOY.n, TOY.error.bound
    limit = b if mode == "sk" else b + 2 * n * b    # e (sk); v*e + e0 + e1*s (pk)
    for i, q in enumerate(TOY.moduli):
        s = [x % q for x in keys.sk]
        noise = [_centre(c0 + c1s - m, q) for c0, c1s, m in zip(ct.c0[i], _schoolbook(ct.c1[i], s, q), pt.rows[i])]
        assert 0 < max(map(abs, noise)) <= limit
    got = ckks.decrypt_slots(TOY, keys.sk, ct)
    assert ckks.precision_bits(z, got)["min_bits"] > 8    # Delta = 2^20, noise ~ 2^8 at N = 64


def test_dna_hhe_precision_at_least_30_bits():
    p = preset("dna-hhe")
    keys = ckks.keygen(p, 1)
    z = _slots(p.slots, 2)
    for mode in ("pk", "sk"):
        ct = ckks.encrypt_slots(p, keys, z, 3, mode)
        assert ckks.precision_bits(z, ckks.decrypt_slots(p, keys.sk, ct))["mean_bits"] >= 30


def test_ntt_form_and_levels():
    p = preset("dna-hhe")
    keys = ckks.keygen(p, 4)
    z = _slots(8, 1)
    ct = ckks.encrypt_slots(p, keys, z, 5, "sk", level=0, form="ntt")
    assert ct.level == 0 and ct.form == "ntt" and len(ct.c1) == 1
    got = ckks.decrypt_slots(p, keys.sk, ct)[:8]
    assert ckks.precision_bits(z, got)["min_bits"] > 30
    again = ckks.Ciphertext.from_json(ct.to_json(), p).to_form(p, "coeff").to_form(p, "ntt")
    assert again.c0 == ct.c0 and again.c1 == ct.c1


def test_seeds_reproduce_and_separate():
    k1, k2, k3 = ckks.keygen(TOY, 1), ckks.keygen(TOY, 1), ckks.keygen(TOY, 2)
    assert k1.sk == k2.sk and k1.pk0 == k2.pk0 and k1.sk != k3.sk
    pt = ckks.encode(TOY, [0.5])
    a, b = ckks.encrypt_pk(TOY, k1, pt, 7), ckks.encrypt_pk(TOY, k1, pt, 8)
    assert a.c0 != b.c0 and ckks.encrypt_pk(TOY, k1, pt, 7).c0 == a.c0


def test_fixed_point_encoding_is_close_to_float():
    from hhe_gen.models.fft import FixedPointFormat
    p = preset("race-n10")
    z = _slots(p.slots, 4)
    fmt = FixedPointFormat(40, 30, "half-up")
    a = ckks.encode(p, z).rows[0]
    b = ckks.encode(p, z, fmt=fmt).rows[0]
    q = p.moduli[0]
    assert max(abs(_centre(x - y, q)) for x, y in zip(a, b)) <= 2


@pytest.mark.parametrize("call,match", [
    (lambda: ckks.encode(TOY, [0j] * 33), "'slots'.*1 .. N/2 = 32"),
    (lambda: ckks.encode(TOY, [float("nan")]), "finite"),
    (lambda: ckks.encode(TOY, [1], level=2), "'level' = 2"),
    (lambda: ckks.encrypt_sk(TOY, [2] * 64, ckks.encode(TOY, [1]), 1), "'sk'"),
    (lambda: ckks.keygen(TOY, -1), "'seed' = -1"),
    (lambda: ckks.Ciphertext.from_json({"scale": 1, "form": "x", "c0": [], "c1": []}, TOY), "'form'"),
    (lambda: ckks.Ciphertext.from_json({"scale": 2**20, "c0": [[TOY.moduli[0]] * 64], "c1": [[0] * 64]}, TOY),
     r"'c0\[0\]'.*q_0"),
])
def test_bad_inputs_are_named(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


# -- interchange readers: malformed JSON gets a ParameterError naming the field, never a TypeError --
@pytest.mark.parametrize("d,name", [
    ([1, 2], "parameters"), ({"LogN": 6, "Q": 5, "LogDefaultScale": 20}, "Q"),
    ({"LogN": 6, "Q": "abc", "LogDefaultScale": 20}, "Q"),
    ({"LogN": 6, "Q": [1073741441, 1073739649], "LogDefaultScale": 20, "P": 7}, "P"),
])
def test_parameters_json_shapes(d, name):
    with pytest.raises(ParameterError) as err:
        CKKSParams.from_interchange(d)
    assert err.value.name == name


def _toy_keys():
    p = preset("toy")
    return p, ckks.keygen(p, 7).to_json(p)


@pytest.mark.parametrize("change,name", [
    (lambda d: d.update(sk=[True] + d["sk"][1:]), "sk"),
    (lambda d: d.update(sk=[1.0] + d["sk"][1:]), "sk"),
    (lambda d: d.update(sk=5), "sk"),
    (lambda d: d.update(pk0=d["pk0"] + [d["pk0"][0]]), "pk0"),
    (lambda d: d.update(pk1=7), "pk1"),
    (lambda d: d.update(pk0=[5] * len(d["pk0"])), "pk0"),
])
def test_keys_json_shapes(change, name):
    p, d = _toy_keys()
    change(d)
    with pytest.raises(ParameterError) as err:
        ckks.KeyPair.from_json(d, p)
    assert err.value.name == name
    with pytest.raises(ParameterError):
        ckks.KeyPair.from_json([d], p)


def test_ciphertext_json_shapes():
    p, d = _toy_keys()
    keys = ckks.KeyPair.from_json(d, p)
    ct = ckks.encrypt_slots(p, keys, [0.5], 3).to_json()
    for bad, name in (({**ct, "c0": 5}, "c0"), ({**ct, "c1": [5, 6]}, "c1"), ([ct], "ciphertext")):
        with pytest.raises(ParameterError) as err:
            ckks.Ciphertext.from_json(bad, p)
        assert err.value.name == name

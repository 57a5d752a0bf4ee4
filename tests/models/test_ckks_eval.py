"""Server-side CKKS in the model (hhe_gen.models.ckks_eval), checked by decryption.

Every step is checked through what it must mean under the secret key, computed independently of
the step: the tensor product decrypts (with s and s^2) to the product of the two plaintexts; the
relinearised ciphertext decrypts to the same plaintext up to the key-switching error; the rescaled
ciphertext to the plaintext divided by the last prime; and the key's digits decrypt to P e_g s^2
plus a small error.  Bit equality with Lattigo is tests/interop/test_eval_lattigo.py.
"""

import math
import random

import pytest

from hhe_gen.models import ckks, ckks_eval
from hhe_gen.models.ckks import Ciphertext
from hhe_gen.models.ntt import negacyclic_multiply
from hhe_gen.models.rns_basis import gadget_groups
from hhe_gen.params import preset
from hhe_gen.params.ckks import CKKSParams, RingParams
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.primes import ntt_primes

TOY = preset("toy")


def _multi_p(n=64):
    q = ntt_primes(n, 30, 5)
    return CKKSParams(RingParams(n, tuple(q)), 20, tuple(ntt_primes(n, 31, 2, exclude=q)), name="5q-2p")


def _slots(params, seed):
    rng = random.Random(seed)
    return [complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(params.slots)]


def _pair(params, seed=1):
    keys = ckks.keygen(params, seed=seed)
    a = ckks.encrypt_slots(params, keys, _slots(params, seed + 1), seed=seed + 2)
    b = ckks.encrypt_slots(params, keys, _slots(params, seed + 3), seed=seed + 4, mode="sk")
    return keys, a, b


def _centred(rows, params):
    return ckks.crt_centered(rows, params.moduli[:len(rows)])


@pytest.mark.parametrize("params", [TOY, _multi_p()], ids=["toy", "5q-2p"])
def test_tensor_decrypts_to_the_product_of_the_plaintexts(params):
    keys, a, b = _pair(params)
    t = ckks_eval.tensor(params, a, b)
    assert t.degree == 2 and t.scale == a.scale * b.scale
    ma, mb = ckks.decrypt(params, keys.sk, a).rows, ckks.decrypt(params, keys.sk, b).rows
    product = [negacyclic_multiply(x, y, q) for x, y, q in zip(ma, mb, params.moduli)]
    assert ckks.decrypt(params, keys.sk, t).rows == product


@pytest.mark.parametrize("params", [TOY, _multi_p()], ids=["toy", "5q-2p"])
def test_relinearisation_keeps_the_plaintext_up_to_the_key_switching_error(params):
    keys, a, b = _pair(params)
    rlk = ckks_eval.relin_keygen(params, keys.sk, seed=9)
    t = ckks_eval.tensor(params, a, b)
    r = ckks_eval.relinearize(params, t, rlk)
    assert r.degree == 1 and r.scale == t.scale
    before = _centred(ckks.decrypt(params, keys.sk, t).rows, params)
    after = _centred(ckks.decrypt(params, keys.sk, r).rows, params)
    # error: sum_g D_g * err_g / P + rounding, with |D_g| <= Q_g / 2, |err| <= 6 sigma, N terms per product
    groups = gadget_groups(params.max_level, len(params.special_moduli))
    largest_digit = max(math.prod(params.moduli[i] for i in g) for g in groups) // 2
    bound = len(groups) * params.n * largest_digit * params.error.bound // math.prod(params.special_moduli) + params.n
    assert max(abs(x - y) for x, y in zip(before, after)) <= bound
    assert before != after           # the key-switching error is not zero: the check would see a lost term


def test_rescale_divides_the_plaintext_by_the_last_prime():
    keys, a, _ = _pair(TOY)
    r = ckks_eval.rescale(TOY, a)
    q_last = TOY.moduli[a.level]
    assert r.level == a.level - 1 and math.isclose(r.scale, a.scale / q_last)
    before = _centred(ckks.decrypt(TOY, keys.sk, a).rows, TOY)
    after = _centred(ckks.decrypt(TOY, keys.sk, r).rows, TOY)
    # each of c0, c1 is rounded (|error| <= 1/2), and c1's error is multiplied by s (|s| = 1, N terms)
    assert all(abs(y * q_last - x) <= (TOY.n + 1) * q_last for x, y in zip(before, after))


def test_the_keys_digits_decrypt_to_p_times_the_gadget_times_s_squared():
    params = _multi_p()
    sk = ckks.keygen(params, seed=3).sk
    rlk = ckks_eval.relin_keygen(params, sk, seed=4)
    moduli = list(params.moduli) + list(params.special_moduli)
    n = params.n
    s2 = [0] * n                                                  # s^2 in Z[X]/(X^N + 1), schoolbook
    for i, x in enumerate(sk):
        for j, y in enumerate(sk):
            s2[(i + j) % n] += x * y if i + j < n else -x * y
    big_p = math.prod(params.special_moduli)
    for g, (b, a) in enumerate(rlk.digits):
        group = gadget_groups(params.max_level, len(params.special_moduli))[g]
        for i, m in enumerate(moduli):
            s_row = [x % m for x in sk]
            noisy = [(x + y) % m for x, y in zip(b[i], negacyclic_multiply(a[i], s_row, m))]
            expected = [big_p * v % m if i in group else 0 for v in s2]
            err = [(x - y) % m for x, y in zip(noisy, expected)]
            assert max(min(e, m - e) for e in err) <= params.error.bound


def test_mul_relin_rescale_decodes_to_the_product():
    n = 256
    q = ntt_primes(n, 40, 4)
    params = CKKSParams(RingParams(n, tuple(q)), 40, tuple(ntt_primes(n, 41, 2, exclude=q)), name="4q-2p")
    keys, a, b = _pair(params, seed=5)
    rlk = ckks_eval.relin_keygen(params, keys.sk, seed=6)
    out = ckks_eval.mul_relin_rescale(params, a, b, rlk)
    expected = [x * y for x, y in zip(ckks.decrypt_slots(params, keys.sk, a), ckks.decrypt_slots(params, keys.sk, b))]
    got = ckks.decrypt_slots(params, keys.sk, out)
    assert out.level == a.level - 1
    assert ckks.precision_bits(expected, got)["min_bits"] > 20     # Delta = 2^40 and 40-bit primes


def test_json_round_trip_and_bad_keys():
    params = _multi_p()
    sk = ckks.keygen(params, seed=3).sk
    rlk = ckks_eval.relin_keygen(params, sk, seed=4)
    assert ckks_eval.RelinKey.from_json(rlk.to_json(), params) == rlk
    d = rlk.to_json()
    with pytest.raises(ParameterError, match="rlk digits"):
        ckks_eval.RelinKey.from_json({**d, "digits": d["digits"][:-1]}, params)
    with pytest.raises(ParameterError, match="rlk levels"):
        ckks_eval.RelinKey.from_json({**d, "levelP": 0}, params)
    bad = [dict(x) for x in d["digits"]]
    bad[1] = {"b": bad[1]["b"], "a": [row[:] for row in bad[1]["a"]]}
    bad[1]["a"][6][3] = params.special_moduli[1]
    with pytest.raises(ParameterError, match=r"rlk.digits\[1\].a\[6\]"):
        ckks_eval.RelinKey.from_json({**d, "digits": bad}, params)


def test_bad_operands_name_the_problem():
    keys, a, b = _pair(TOY)
    t = ckks_eval.tensor(TOY, a, b)
    with pytest.raises(ParameterError, match="degree"):
        ckks_eval.tensor(TOY, t, b)
    with pytest.raises(ParameterError, match="degree"):
        ckks_eval.relinearize(TOY, a, ckks_eval.relin_keygen(TOY, keys.sk))
    low = ckks_eval.rescale(TOY, a)
    with pytest.raises(ParameterError, match="level"):
        ckks_eval.rescale(TOY, low)
    no_p = CKKSParams(TOY.ring, TOY.log_scale, name="no-P")
    with pytest.raises(ParameterError, match="params.P"):
        ckks_eval.relin_keygen(no_p, keys.sk)


def test_ciphertexts_of_degree_two_survive_json():
    _, a, b = _pair(TOY)
    t = ckks_eval.tensor(TOY, a, b)
    assert Ciphertext.from_json(t.to_json(), TOY) == t
    assert t.to_form(TOY, "ntt").to_form(TOY, "coeff") == t

"""The golden models against Lattigo v6 (the first verification layer: each model against an independent reference).

- NTT: bit-exact with Lattigo for every prime of every preset, and the same psi;
- encoder: the model's plaintext equals Lattigo's, coefficient by coefficient, or differs by 1 where
  float rounding differs (counted and bounded);
- model-encrypted ciphertexts decrypt and decode in Lattigo (>= 30 bits at Delta = 2^50, N = 2^13,
  3 x 54-bit primes), public- and secret-key, coefficient and NTT form;
- Lattigo adds and multiplies (relinearise, rescale) model ciphertexts and the results decode right,
  in Lattigo and in the model;
- Lattigo-encrypted ciphertexts (its sk, its pk, and the model's pk) decrypt in the model;
- the same at N = 2^14 with 36-bit primes.
Measured precisions are printed (run with -s) for the record.
"""

import cmath
import math
import random

import pytest

from hhe_gen.models import ckks
from hhe_gen.models.ntt import ntt, ntt_tables
from hhe_gen.params import preset, preset_names

pytestmark = pytest.mark.interop


def _slots(n, seed):
    rng = random.Random(seed)
    return [cmath.rect(math.sqrt(rng.random()), rng.uniform(-math.pi, math.pi)) for _ in range(n)]


def _slots_json(z):
    return {"re": [x.real for x in z], "im": [x.imag for x in z]}


def _from_json(d):
    return [complex(a, b) for a, b in zip(d["re"], d["im"])]


def _centre(x, q):
    return x - q if x > q // 2 else x


@pytest.mark.parametrize("name", preset_names())
def test_ntt_bit_exact_for_every_prime(lattigo_peer, name):
    p = preset(name)
    rng = random.Random(name)
    rows = [[rng.randrange(q) for _ in range(p.n)] for q in p.moduli + p.special_moduli]
    qs = list(p.moduli + p.special_moduli)
    assert lattigo_peer.primes(p.log_n, qs)["psi"] == [ntt_tables(p.n, q).psi for q in qs]
    assert lattigo_peer.ntt(p.log_n, qs, rows) == [ntt(r, q) for r, q in zip(rows, qs)]


@pytest.mark.parametrize("name", ["toy", "race-n12", "dna-hhe", "n14-36bit"])
def test_encoder_equals_lattigo(lattigo_peer, name):
    p = preset(name)
    z = _slots(p.slots, 1)
    mine = ckks.encode(p, z).rows
    theirs = lattigo_peer.encode(p.interchange(), _slots_json(z))
    differ = 0
    for i, q in enumerate(p.moduli):
        d = [abs(_centre((a - b) % q, q)) for a, b in zip(mine[i], theirs[i])]
        assert max(d) <= 1, f"prime {i}: a coefficient differs by {max(d)}"
        differ += sum(d)
    frac = differ / (p.n * len(p.moduli))
    print(f"\nencoder {name}: {differ} of {p.n * len(p.moduli)} residues differ by 1 ({frac:.2%})")
    assert frac < 0.01


@pytest.fixture(scope="module")
def dna():
    p = preset("dna-hhe")
    return p, ckks.keygen(p, 2026)


@pytest.mark.parametrize("mode,form", [("pk", "coeff"), ("pk", "ntt"), ("sk", "coeff"), ("sk", "ntt")])
def test_model_ciphertexts_decrypt_in_lattigo(lattigo_peer, dna, mode, form):
    p, keys = dna
    z = _slots(p.slots, 3)
    ct = ckks.encrypt_slots(p, keys, z, 4, mode, form=form)
    got = lattigo_peer.decrypt(p.interchange(), keys.sk, ct.to_json())
    prec = ckks.precision_bits(z, _from_json(got))
    print(f"\nmodel {mode}-encrypt ({form}) -> Lattigo decrypt: {prec['mean_bits']:.2f} mean, "
          f"{prec['min_bits']:.2f} min bits")
    assert prec["mean_bits"] >= 30 and prec["min_bits"] >= 25
    # Lattigo's decrypted plaintext equals the model's, residue for residue
    assert got["coeffs"] == ckks.decrypt(p, keys.sk, ct).rows


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_lattigo_evaluates_model_ciphertexts(lattigo_peer, dna, op):
    p, keys = dna
    a, b = _slots(p.slots, 5), _slots(p.slots, 6)
    ca = ckks.encrypt_slots(p, keys, a, 7, "pk")
    cb = ckks.encrypt_slots(p, keys, b, 8, "sk")
    res = lattigo_peer.eval(p.interchange(), keys.sk, op, ca.to_json(), cb.to_json())
    want = [x + y if op == "add" else x - y if op == "sub" else x * y for x, y in zip(a, b)]
    by_model = ckks.decrypt_slots(p, keys.sk, ckks.Ciphertext.from_json(res, p))
    by_lattigo = _from_json(lattigo_peer.decrypt(p.interchange(), keys.sk, res))
    pm, pl = ckks.precision_bits(want, by_model), ckks.precision_bits(want, by_lattigo)
    print(f"\nLattigo {op} of model ciphertexts: level {len(res['c0']) - 1}, model decrypt "
          f"{pm['mean_bits']:.2f} mean / {pm['min_bits']:.2f} min bits, Lattigo decrypt {pl['mean_bits']:.2f}")
    if op == "mul":
        assert len(res["c0"]) == len(p.moduli) - 1           # rescaled: one prime dropped
    assert pm["mean_bits"] >= (25 if op == "mul" else 30) and abs(pm["mean_bits"] - pl["mean_bits"]) < 0.5


def test_lattigo_ciphertexts_decrypt_in_the_model(lattigo_peer, dna):
    p, keys = dna
    z = _slots(p.slots, 9)
    for how, kwargs in (("Lattigo sk-encrypt", {"sk": keys.sk}),
                        ("Lattigo pk-encrypt with the model's pk", {"keys": keys.to_json(p)})):
        ct = ckks.Ciphertext.from_json(lattigo_peer.encrypt(p.interchange(), _slots_json(z), seed=1, **kwargs), p)
        prec = ckks.precision_bits(z, ckks.decrypt_slots(p, keys.sk, ct))
        print(f"\n{how} -> model decrypt: {prec['mean_bits']:.2f} mean, {prec['min_bits']:.2f} min bits")
        assert prec["mean_bits"] >= 30


def test_lattigo_keys_work_in_the_model(lattigo_peer, dna):
    p, _ = dna
    theirs = ckks.KeyPair.from_json(lattigo_peer.keygen(p.interchange(), seed=3), p)
    z = _slots(p.slots, 10)
    ct = ckks.encrypt_slots(p, theirs, z, 11, "pk")
    prec = ckks.precision_bits(z, _from_json(lattigo_peer.decrypt(p.interchange(), theirs.sk, ct.to_json())))
    assert prec["mean_bits"] >= 30


def test_36_bit_primes_at_n_2_14(lattigo_peer):
    p = preset("n14-36bit")
    keys = ckks.keygen(p, 14)
    a, b = _slots(p.slots, 1), _slots(p.slots, 2)
    ca, cb = ckks.encrypt_slots(p, keys, a, 3, "pk"), ckks.encrypt_slots(p, keys, b, 4, "pk")
    dec = ckks.precision_bits(a, _from_json(lattigo_peer.decrypt(p.interchange(), keys.sk, ca.to_json())))
    prod = lattigo_peer.eval(p.interchange(), keys.sk, "mul", ca.to_json(), cb.to_json())
    pm = ckks.precision_bits([x * y for x, y in zip(a, b)],
                             ckks.decrypt_slots(p, keys.sk, ckks.Ciphertext.from_json(prod, p)))
    print(f"\nn14-36bit (Delta = 2^33): Lattigo decrypt {dec['mean_bits']:.2f} mean bits; "
          f"mul+relin+rescale {pm['mean_bits']:.2f} mean bits")
    assert dec["mean_bits"] >= 16 and pm["mean_bits"] >= 10

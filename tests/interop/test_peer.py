"""The Lattigo v6 peer checked against references written here (not taken from the peer).

- primes: psi has order exactly 2N and g is a primitive root (q-1 factored here);
- ntt: NTT(a)[j] == a(psi^(2*brv(j)+1)) by Horner evaluation, and intt(ntt(a)) == a;
- encode: the plaintext evaluated at zeta^(5^j) (numpy) gives the slots back; CRT rows agree;
- keys: pk0 + pk1*s is a small error (negacyclic product computed here), sk is ternary;
- encryption/decryption/evaluation round trips, and c0 + c1*s == the peer's decrypted plaintext;
- bad input raises LattigoError with a message.

Without Go these tests skip, except under CI=true where they fail.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from hhe_gen.host import lattigo
from hhe_gen.host.lattigo import LattigoError, LattigoPeer
from testsupport import require_go
from hhe_gen.params import is_prime
from hhe_gen.params import ntt_primes as params_ntt_primes
from hhe_gen.params.errors import ParameterError

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def peer(lattigo_peer) -> LattigoPeer:
    return lattigo_peer


def test_missing_go_skips_locally_and_fails_on_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no go here"):
        require_go("no go here")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true.*no go here"):
        require_go("no go here")
    message = str(lattigo.GoMissing("not found"))
    assert "Go" in message and "apt-get install golang" in message and "go.dev" in message


# -- independent number theory --------------------------------------------------------------

def ntt_primes(bits: int, two_n: int, count: int) -> list[int]:
    """The ``count`` largest primes below 2^bits with p = 1 mod two_n (is_prime itself is checked
    against trial division in tests/test_params.py)."""
    return params_ntt_primes(two_n // 2, bits, count)


def _pollard_rho(n: int) -> int:
    rng = random.Random(n)
    while True:
        x = y = rng.randrange(2, n)
        c, d = rng.randrange(1, n), 1
        while d == 1:
            x = (x * x + c) % n
            y = (y * y + c) % n
            y = (y * y + c) % n
            d = math.gcd(abs(x - y), n)
        if d != n:
            return d


def prime_factors(n: int) -> set[int]:
    """Distinct prime factors: powers of two removed, trial division, Pollard rho for the rest."""
    factors = set()
    if n % 2 == 0:
        factors.add(2)
        while n % 2 == 0:
            n //= 2
    f = 3
    while n > 1 and f < 10_000:
        if n % f == 0:
            factors.add(f)
            while n % f == 0:
                n //= f
        f += 2
    stack = [n] if n > 1 else []
    while stack:
        m = stack.pop()
        if is_prime(m):
            factors.add(m)
        else:
            d = _pollard_rho(m)
            stack += [d, m // d]
    return factors


def brv(j: int, bits: int) -> int:
    return int(format(j, f"0{bits}b")[::-1], 2) if bits else 0


def horner(coeffs: list[int], x: int, q: int) -> int:
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * x + c) % q
    return acc


def centred(values, q: int) -> np.ndarray:
    return np.array([v - q if v > q // 2 else v for v in values], dtype=object)


def negacyclic_times_ternary(a: list[int], s: list[int], q: int) -> np.ndarray:
    """a * s in Z_q[X]/(X^N+1) for a ternary s: signed sum of negacyclic shifts of a."""
    n = len(a)
    base = np.array(a, dtype=np.int64)
    acc = np.zeros(n, dtype=np.int64)
    for k, sk in enumerate(s):
        if sk == 0:
            continue
        shifted = np.concatenate([(q - base[n - k:]) % q, base[:n - k]])  # X^k * a
        acc = (acc + shifted) % q if sk == 1 else (acc - shifted) % q
    return acc


def slot_values(count: int, rng: random.Random) -> list[complex]:
    return [complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(count)]


def max_slot_error(answer: dict, expected: list[complex]) -> float:
    got = lattigo.slots_from_json(answer)
    expected = expected + [0j] * (len(got) - len(expected))
    return max(abs(g - e) for g, e in zip(got, expected))


# -- parameter sets --------------------------------------------------------------------------

LOG_N_CKKS = 12
N_CKKS = 1 << LOG_N_CKKS
# q0 wide for decryption headroom, q1 q2 near the scale so a rescale keeps ~2^35 of scale.
Q_CKKS = ntt_primes(55, 2 * N_CKKS, 1) + ntt_primes(45, 2 * N_CKKS, 2)
P_CKKS = ntt_primes(58, 2 * N_CKKS, 1)
PARAMS = lattigo.params_json(LOG_N_CKKS, Q_CKKS, 40, P_CKKS)


# -- primes and NTT -------------------------------------------------------------------------

@pytest.mark.parametrize("log_n,bits", [(4, 60), (10, 55), (12, 50)])
def test_primes_roots_have_the_right_order(peer, log_n, bits):
    n = 1 << log_n
    q = ntt_primes(bits, 2 * n, 3)
    answer = peer.primes(log_n, q)
    assert len(answer["g"]) == len(answer["psi"]) == 3
    for qi, g, psi in zip(q, answer["g"], answer["psi"]):
        assert pow(psi, 2 * n, qi) == 1
        assert pow(psi, n, qi) == qi - 1
        for f in prime_factors(qi - 1):
            assert pow(g, (qi - 1) // f, qi) != 1, f"g = {g} is not a primitive root mod {qi}"
        assert pow(g, (qi - 1) // (2 * n), qi) == psi  # docs/conventions.md section 2


def test_prime_factor_helper_is_right():
    for n in (2 ** 20 * 3 * 5 * 1_000_003, 2 * 7 * 7 * 1_000_000_007 * 998_244_353):
        product = 1
        for f in prime_factors(n):
            assert is_prime(f) and n % f == 0
            product *= f
        assert all(is_prime(f) for f in prime_factors(n))
    assert prime_factors(2 ** 10 * 3 ** 4 * 65537) == {2, 3, 65537}


@pytest.mark.parametrize("log_n,bits,count,points", [(4, 60, 3, None), (10, 55, 2, 96),
                                                     (10, 50, 1, 96)])
def test_ntt_is_evaluation_at_bit_reversed_odd_powers(peer, log_n, bits, count, points):
    n = 1 << log_n
    rng = random.Random(log_n * 1000 + bits)
    q = ntt_primes(bits, 2 * n, count)
    psi = peer.primes(log_n, q)["psi"]
    rows = [[rng.randrange(qi) for _ in range(n)] for qi in q]
    transformed = peer.ntt(log_n, q, rows)
    indices = range(n) if points is None else rng.sample(range(n), points) + [0, n - 1]
    for row, out, qi, root in zip(rows, transformed, q, psi):
        assert len(out) == n
        for j in indices:
            assert out[j] == horner(row, pow(root, 2 * brv(j, log_n) + 1, qi), qi), (qi, j)
    assert peer.intt(log_n, q, transformed) == rows


def test_ntt_of_fewer_rows_uses_the_first_primes(peer):
    q = ntt_primes(50, 32, 3)
    rows = [[1] + [0] * 15, [0, 1] + [0] * 14]
    out = peer.ntt(4, q, rows)
    assert out[0] == [1] * 16  # the constant 1 evaluates to 1 everywhere
    psi = peer.primes(4, q)["psi"][1]
    assert out[1] == [pow(psi, 2 * brv(j, 4) + 1, q[1]) for j in range(16)]


# -- encoding --------------------------------------------------------------------------------

def test_encode_decode_round_trip_and_evaluation(peer):
    log_n, n, scale = 10, 1 << 10, 2 ** 40
    q = ntt_primes(50, 2 * n, 2)
    params = lattigo.params_json(log_n, q, 40)
    rng = random.Random(7)
    values = slot_values(n // 2, rng)
    rows = peer.encode(params, lattigo.slots_json(values), scale=scale)
    assert len(rows) == 2 and all(len(row) == n for row in rows)

    decoded = peer.decode(params, rows, scale=scale)
    assert len(decoded["re"]) == len(decoded["im"]) == n // 2
    assert max_slot_error(decoded, values) < 2 ** -30

    m = centred(rows[0], q[0])
    assert all(int(x) % q[1] == y for x, y in zip(m, rows[1]))  # CRT rows agree
    assert max(abs(int(x)) for x in m) < 2 ** 46  # |m_k| <~ Delta * |w_k|
    exponents = np.array([pow(5, j, 2 * n) for j in range(n // 2)], dtype=np.int64)
    zeta_powers = np.exp(1j * np.pi * np.outer(exponents, np.arange(n)) / n)
    evaluated = zeta_powers @ m.astype(np.float64) / scale
    assert np.max(np.abs(evaluated - np.array(values))) < 2 ** -25


def test_encode_fewer_slots_level_and_default_scale(peer):
    log_n, n = 10, 1 << 10
    q = ntt_primes(50, 2 * n, 2)
    params = lattigo.params_json(log_n, q, 30)
    rows = peer.encode(params, {"re": [0.5, -0.25]}, level=0)  # default scale 2^30
    assert len(rows) == 1
    m = centred(rows[0], q[0])
    exponents = [pow(5, j, 2 * n) for j in range(4)]
    for j, expected in enumerate([0.5, -0.25, 0, 0]):
        z = sum(int(c) * np.exp(1j * np.pi * exponents[j] * k / n) for k, c in enumerate(m))
        assert abs(z / 2 ** 30 - expected) < 2 ** -20


# -- keys, encryption, decryption, evaluation ------------------------------------------------

@pytest.fixture(scope="module")
def keys(peer):
    return peer.keygen(PARAMS)


def test_keygen_makes_ternary_sk_and_rlwe_public_key(keys):
    assert keys["N"] == N_CKKS and keys["Q"] == Q_CKKS
    sk = keys["sk"]
    assert len(sk) == N_CKKS and set(sk) <= {-1, 0, 1} and sk.count(0) < N_CKKS
    assert len(keys["pk0"]) == len(keys["pk1"]) == len(Q_CKKS)
    errors = []
    for i, q in enumerate(Q_CKKS):
        # pk0 + pk1*s = e with |e| <= 6 sigma (sigma 3.2, Lattigo's bound 19.2)
        e = (np.array(keys["pk0"][i], dtype=np.int64)
             + negacyclic_times_ternary(keys["pk1"][i], sk, q)) % q
        errors.append(centred(e.tolist(), q).tolist())
        assert 0 < max(abs(x) for x in errors[-1]) <= 19
    assert all(e == errors[0] for e in errors)  # the same small error under every prime


def test_seeded_keygen_reproduces_secret_and_a(peer):
    small = lattigo.params_json(10, ntt_primes(50, 2048, 2), 40)
    first, second = peer.keygen(small, seed="abc"), peer.keygen(small, seed="abc")
    other = peer.keygen(small, seed="abd")
    assert first["sk"] == second["sk"] and first["pk1"] == second["pk1"]
    assert first["sk"] != other["sk"] and first["pk1"] != other["pk1"]


def test_public_key_encryption_round_trip(peer, keys):
    values = slot_values(N_CKKS // 2, random.Random(1))
    ct = peer.encrypt(PARAMS, lattigo.slots_json(values), keys=keys, scale=2 ** 40)
    assert ct["form"] == "coeff" and ct["scale"] == 2 ** 40
    assert len(ct["c0"]) == len(ct["c1"]) == len(Q_CKKS)
    answer = peer.decrypt(PARAMS, keys["sk"], ct)
    assert max_slot_error(answer, values) < 2 ** -20


def test_secret_key_encryption_decrypts_to_c0_plus_c1_s(peer, keys):
    values = slot_values(100, random.Random(2))
    ct = peer.encrypt(PARAMS, lattigo.slots_json(values), sk=keys["sk"], level=1)
    assert len(ct["c0"]) == 2  # level 1: the first two primes
    answer = peer.decrypt(PARAMS, keys["sk"], ct)
    assert max_slot_error(answer, values) < 2 ** -20
    for i in range(2):
        q = Q_CKKS[i]
        m = (np.array(ct["c0"][i], dtype=np.int64)
             + negacyclic_times_ternary(ct["c1"][i], keys["sk"], q)) % q
        assert m.tolist() == answer["coeffs"][i]
    # the same ciphertext handed over in NTT form decrypts to the same plaintext
    as_ntt = dict(ct, form="ntt", c0=peer.ntt(LOG_N_CKKS, Q_CKKS, ct["c0"]),
                  c1=peer.ntt(LOG_N_CKKS, Q_CKKS, ct["c1"]))
    assert peer.decrypt(PARAMS, keys["sk"], as_ntt)["coeffs"] == answer["coeffs"]


def test_seeded_secret_key_encryption_fixes_a(peer, keys):
    slots = {"re": [0.25]}
    first = peer.encrypt(PARAMS, slots, sk=keys["sk"], seed=42)
    second = peer.encrypt(PARAMS, slots, sk=keys["sk"], seed=42)
    assert first["c1"] == second["c1"]


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_eval_on_ciphertexts_made_elsewhere(peer, keys, op):
    rng = random.Random(op)
    x, y = slot_values(N_CKKS // 2, rng), slot_values(N_CKKS // 2, rng)
    a = peer.encrypt(PARAMS, lattigo.slots_json(x), keys=keys)
    b = peer.encrypt(PARAMS, lattigo.slots_json(y), sk=keys["sk"])
    result = peer.eval(PARAMS, keys["sk"], op, a, b)
    expected = {"add": [u + v for u, v in zip(x, y)], "sub": [u - v for u, v in zip(x, y)],
                "mul": [u * v for u, v in zip(x, y)]}[op]
    if op == "mul":
        assert len(result["c0"]) == len(Q_CKKS) - 1  # rescaled by the last prime
        assert result["scale"] == pytest.approx(2.0 ** 80 / Q_CKKS[-1], rel=1e-12)
    else:
        assert len(result["c0"]) == len(Q_CKKS) and result["scale"] == 2 ** 40
    answer = peer.decrypt(PARAMS, keys["sk"], result)
    assert max_slot_error(answer, expected) < 2 ** -20


# -- bad input ------------------------------------------------------------------------------

def test_prime_not_one_mod_2n_is_rejected(peer):
    bad = next(p for p in range(2 ** 40 + 1, 2 ** 41) if is_prime(p) and p % 32 != 1)
    with pytest.raises(LattigoError, match=str(bad)) as caught:
        peer.primes(4, [bad])
    assert caught.value.returncode == 1 and "1 mod" in caught.value.stderr


def test_wrong_row_length_and_out_of_range_residue_are_rejected(peer):
    q = ntt_primes(50, 32, 2)
    with pytest.raises(LattigoError, match="row 1 has 15 coefficients, need N = 16"):
        peer.ntt(4, q, [[0] * 16, [0] * 15])
    with pytest.raises(LattigoError, match="not below its prime"):
        peer.ntt(4, q, [[q[0]] + [0] * 15])
    with pytest.raises(LattigoError, match="3 rows but only 2 primes"):
        peer.intt(4, q, [[0] * 16] * 3)
    with pytest.raises(LattigoError, match="sk has 3 coefficients"):
        peer.decrypt(PARAMS, [0, 1, -1], {"scale": 1, "form": "coeff", "c0": [[0] * N_CKKS],
                                          "c1": [[0] * N_CKKS]})
    with pytest.raises(LattigoError, match="form"):
        peer.decrypt(PARAMS, [0] * N_CKKS, {"scale": 1, "form": "eval", "c0": [[0] * N_CKKS],
                                            "c1": [[0] * N_CKKS]})


def test_bad_requests_and_ops(peer):
    with pytest.raises(ParameterError, match="'op'"):
        peer.call("rotate", {})
    with pytest.raises(LattigoError, match="missing \"LogN\""):
        peer.call("primes", {"Q": [97]})
    with pytest.raises(LattigoError, match="bad request JSON"):
        peer.call("ntt", {"LogN": 4, "Q": [97], "coeffs": [[-1] * 16]})
    with pytest.raises(LattigoError, match="needs key-switching primes"):
        no_p = lattigo.params_json(LOG_N_CKKS, Q_CKKS, 40)
        ct = {"scale": 2 ** 40, "form": "coeff", "c0": [[0] * N_CKKS], "c1": [[0] * N_CKKS]}
        peer.eval(no_p, [0] * N_CKKS, "mul", ct, ct)


# -- the wrapper itself ---------------------------------------------------------------------

def test_version_and_cached_build(peer, tmp_path):
    answer = peer.version()
    assert answer["lattigo"] == lattigo.LATTIGO_VERSION
    assert answer["go"].startswith("go")
    again = LattigoPeer(cache=peer.cache)
    assert again.binary == peer.binary and again.build_seconds is None
    assert (lattigo.peer_source_dir() / "go.sum").is_file()
    assert peer.binary.parent.name == f"lattigo-peer-{peer.build_key()}"

"""Rubato golden model against every field of every vector of the shipped KAT files
(hhe_gen/data/kat/rubato/*.json), layer by layer, plus independent matrix checks of the linear
layers and the message round trip."""

import json
import math
import random
from dataclasses import FrozenInstanceError
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from hhe_gen.models import rubato
from hhe_gen.models.sampler import rubato_noise, rubato_round_constants
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import RUBATO_SETS, rubato_params

KAT_DIR = Path(str(resources.files("hhe_gen") / "data" / "kat" / "rubato"))   # shipped package data
SET_FILES = ["rubato_80s.json", "rubato_80m.json", "rubato_80l.json",
             "rubato_128s.json", "rubato_128m.json", "rubato_128l.json"]


def _load(name):
    path = KAT_DIR / name
    if not path.is_file():
        pytest.fail(f"Rubato KAT file missing: {path} (package data hhe_gen/data/kat/rubato)")
    return json.loads(path.read_text())


@pytest.fixture(scope="module", params=SET_FILES)
def kat(request):
    data = _load(request.param)
    return data, rubato_params(data["parameter_set"])


def _aes_or_skip():
    pytest.importorskip("cryptography", reason="AES-128-CTR vectors need the 'cryptography' package")


# ------------------------------------------------------------------------------------------
# parameters
# ------------------------------------------------------------------------------------------

def test_params_match_kat_params_block(kat):
    data, p = kat
    block = data["params"]
    assert (p.n, p.v, p.l, p.q, p.q_bits, p.rounds) == (
        block["n"], block["v"], block["l"], block["q"], block["q_bits"], block["rounds_r"])
    assert hex(p.q) == block["q_hex"]
    assert list(p.circulant) == block["mix_circulant_first_row"]
    assert list(p.cdf_table) == block["noise"]["cdf_table"]
    assert p.cdf_table_defect == (block["noise"]["cdf_table_defect"] is not None)
    assert p.noise_width_s == block["noise"]["gaussian_width_s"]
    assert p.delta == block["delta_for_messages"] == float(np.float32(p.q)) / 16
    assert p.round_constant_count == block["round_constant_count"] == (p.rounds + 1) * p.n


@pytest.mark.parametrize("alias", ["Par-128S", "128S", "128s", "rubato-128s", "par-128s", " RUBATO-128S "])
def test_set_name_aliases(alias):
    assert rubato_params(alias) is RUBATO_SETS["Par-128S"]


def test_unknown_set_lists_the_six():
    with pytest.raises(ParameterError) as info:
        rubato_params("Par-192S")
    for name in RUBATO_SETS:
        assert name in str(info.value)
    assert len(RUBATO_SETS) == 6


def test_params_are_frozen_and_validated():
    p = RUBATO_SETS["Par-80S"]
    with pytest.raises(FrozenInstanceError):
        p.q = 17
    import dataclasses
    for change in (dict(n=17), dict(l=17), dict(q=65929219), dict(q_bits=27), dict(circulant=(1, 2, 3, 4)),
                   dict(cdf_table_defect=True), dict(v=5)):
        with pytest.raises(ParameterError):
            dataclasses.replace(p, **change)


# ------------------------------------------------------------------------------------------
# every vector, every field
# ------------------------------------------------------------------------------------------

def test_round_constants_and_counts(kat):
    data, p = kat
    for vec in data["vectors"]:
        rc, read, rejected = rubato_round_constants(p, vec["nonce"], vec["counter"])
        assert rc == vec["round_constants"]
        assert (read, rejected) == (vec["rc_xof_words_read"], vec["rc_xof_words_rejected"])
        assert bytes.fromhex(vec["rc_xof_input_hex"]) == \
            vec["nonce"].to_bytes(8, "little") + vec["counter"].to_bytes(8, "little")


def test_keystream_noise_and_trace(kat):
    data, p = kat
    for vec in data["vectors"]:
        trace = rubato.RubatoTrace()
        seed = vec["noise"]["seed"]
        out = rubato.keystream(p, vec["key"], vec["nonce"], vec["counter"], noise_seed=seed, trace=trace)
        assert trace.round_keys == vec["round_keys"]
        assert [[k * c % p.q for k, c in zip(vec["key"], row)] for row in vec["round_constants"]] \
            == vec["round_keys"]
        assert trace.keystream_before_noise == vec["keystream_before_noise"]
        assert rubato.keystream(p, vec["key"], vec["nonce"], vec["counter"]) == vec["keystream_before_noise"]
        assert rubato_noise(p, vec["nonce"], vec["counter"], seed) == vec["noise"]["values_all_n_words"]
        assert trace.noise_values == vec["noise"]["values"] == vec["noise"]["values_all_n_words"][:p.l]
        assert out == vec["final_keystream"] == trace.final_keystream
        assert len(trace.steps) == len(vec["trace"]) == p.rounds + 1
        for mine, theirs in zip(trace.steps, vec["trace"]):
            for name, value in mine.items():
                assert theirs[name] == value, (vec["index"], mine["step"], name)
        if p.cdf_table_defect:
            assert rubato.noise_defect_affected_words(p, vec["nonce"], vec["counter"], seed) \
                == vec["noise_cdf_defect_affected_words"]


def test_each_layer_maps_recorded_state_to_recorded_state(kat):
    """Layer functions applied to the KAT's own previous state (hardware-style, one layer at a time)."""
    data, p = kat
    for vec in data["vectors"]:
        state = list(range(1, p.n + 1))
        for step in vec["trace"][:-1]:
            rk = vec["round_keys"][step["round_constant_index"]]
            assert rubato.ark(p, state, rk) == step["after_ARK"]
            assert rubato.mix_columns(p, step["after_ARK"]) == step["after_MixColumns"]
            assert rubato.mix_rows(p, step["after_MixColumns"]) == step["after_MixRows"]
            assert rubato.feistel(p, step["after_MixRows"]) == step["after_Feistel"]
            state = step["after_Feistel"]
        final = vec["trace"][-1]
        assert final["round_constant_index"] == p.rounds
        assert rubato.mix_columns(p, state) == final["after_MixColumns"]
        assert rubato.mix_rows(p, final["after_MixColumns"]) == final["after_MixRows"]
        assert rubato.ark(p, final["after_MixRows"], vec["round_keys"][p.rounds]) == final["after_ARK"]
        assert rubato.finalisation(p, state, vec["round_keys"][p.rounds]) == final["after_ARK"]
        assert rubato.truncation(p, final["after_ARK"]) == vec["keystream_before_noise"]


def test_alternative_xof_vectors(kat):
    _aes_or_skip()
    data, p = kat
    assert len(data["alternative_xof_vectors"]["vectors"]) == 2
    for vec in data["alternative_xof_vectors"]["vectors"]:
        trace = rubato.RubatoTrace()
        out = rubato.keystream(p, vec["key"], vec["nonce"], vec["counter"],
                               noise_seed=vec["noise"]["seed"], trace=trace, xof="aes128-ctr")
        assert trace.round_constants == vec["round_constants"]
        assert (trace.rc_xof_words_read, trace.rc_xof_words_rejected) == \
            (vec["rc_xof_words_read"], vec["rc_xof_words_rejected"])
        assert trace.round_keys == vec["round_keys"]
        assert trace.keystream_before_noise == vec["keystream_before_noise"]
        assert trace.noise_values_all_n_words == vec["noise"]["values_all_n_words"]
        assert trace.noise_values == vec["noise"]["values"]
        assert out == vec["final_keystream"]


def test_encryption_example(kat):
    data, p = kat
    examples = [v for v in data["vectors"] if "encryption_example" in v]
    assert [v["index"] for v in examples] == [0, 1]
    for vec in examples:
        ex = vec["encryption_example"]
        assert ex["delta"] == p.delta
        assert rubato.scale_message(p, ex["message"]) == ex["scaled_message_round_delta_m"]
        # independent: the messages are multiples of 1/4 and Delta*m is far below 2^24 * 4, so
        # float32 is exact here and the intended rounding is plain floor(Delta*m + 0.5)
        assert [math.floor(p.delta * m + 0.5) for m in ex["message"]] == ex["scaled_message_round_delta_m"]
        assert rubato.encrypt(p, vec["final_keystream"], ex["message"]) == ex["ciphertext_intended"]
        assert ex["ciphertext_intended"] != ex["ciphertext_reference_avx2_actual"]  # the documented defect
        bound = rubato.decryption_error_bound(p)
        got = rubato.decrypt(p, vec["key"], vec["nonce"], vec["counter"], ex["ciphertext_intended"])
        for m, m2 in zip(ex["message"], got):
            if abs(m) < 8 - bound:  # m = -8.0 may wrap around with negative noise (documented)
                assert abs(m2 - m) <= bound


# ------------------------------------------------------------------------------------------
# independent checks of the layers and properties
# ------------------------------------------------------------------------------------------

def _circulant(p):
    return np.array([[p.circulant[(j - i) % p.v] for j in range(p.v)] for i in range(p.v)], dtype=object)


@pytest.mark.parametrize("name", list(RUBATO_SETS))
def test_linear_layers_against_matrix_products(name):
    p = RUBATO_SETS[name]
    rng = random.Random(name)
    m = _circulant(p)
    for _ in range(5):
        x = [rng.randrange(p.q) for _ in range(p.n)]
        grid = np.array(x, dtype=object).reshape(p.v, p.v)
        expect_mc = (m.dot(grid) % p.q).flatten().tolist()
        expect_mr = (grid.dot(m.T) % p.q).flatten().tolist()
        assert rubato.mix_columns(p, x) == expect_mc
        assert rubato.mix_rows(p, x) == expect_mr
        assert rubato.mix_rows(p, rubato.mix_columns(p, x)) == rubato.mix_columns(p, rubato.mix_rows(p, x))
        fe = rubato.feistel(p, x)
        assert fe[0] == x[0] and all(fe[i] == (x[i] + pow(x[i - 1], 2, p.q)) % p.q for i in range(1, p.n))


def test_80l_and_128l_share_the_noiseless_keystream():
    key = list(range(64))
    a = rubato.keystream("Par-80L", key, 5, 6)
    b = rubato.keystream("Par-128L", key, 5, 6)
    assert a == b
    assert rubato.keystream("Par-80L", key, 5, 6, noise_seed=1) != rubato.keystream("Par-128L", key, 5, 6, noise_seed=1)


@pytest.mark.parametrize("name", list(RUBATO_SETS))
def test_encrypt_decrypt_round_trip(name):
    p = RUBATO_SETS[name]
    rng = random.Random(name + "rt")
    bound = rubato.decryption_error_bound(p)
    assert bound < 1e-5
    worst = 0.0
    for block in range(4):
        key = [rng.randrange(p.q) for _ in range(p.n)]
        nonce, counter, seed = rng.getrandbits(64), block, rng.getrandbits(64)
        message = [rng.uniform(-7.99, 7.99) for _ in range(p.l)]
        ks = rubato.keystream(p, key, nonce, counter, noise_seed=seed)
        ct = rubato.encrypt(p, ks, message)
        assert all(0 <= c < p.q for c in ct)
        back = rubato.decrypt(p, key, nonce, counter, ct)
        worst = max(worst, max(abs(a - b) for a, b in zip(back, message)))
    assert worst <= bound


def test_noise_is_what_decryption_sees():
    p = RUBATO_SETS["Par-128S"]
    key = list(range(p.n))
    noise = rubato_noise(p, 1, 2, 3)
    ct = rubato.encrypt(p, rubato.keystream(p, key, 1, 2, noise_seed=3), [0.0] * p.l)
    assert [round(x * p.delta) for x in rubato.decrypt(p, key, 1, 2, ct)] == noise[:p.l]


def test_corrected_table_only_differs_for_defective_sets():
    for p in RUBATO_SETS.values():
        fixed = rubato.corrected_cdf_table(p)
        assert all(a <= b for a, b in zip(fixed, fixed[1:]))
        assert (fixed != p.cdf_table) == p.cdf_table_defect


@pytest.mark.parametrize("call", [
    lambda p: rubato.keystream(p, [0] * (p.n - 1), 0, 0),
    lambda p: rubato.keystream(p, [p.q] + [0] * (p.n - 1), 0, 0),
    lambda p: rubato.keystream(p, [-1] + [0] * (p.n - 1), 0, 0),
    lambda p: rubato.keystream(p, [0] * p.n, 2**64, 0),
    lambda p: rubato.keystream(p, [0] * p.n, 0, -1),
    lambda p: rubato.keystream(p, [0] * p.n, 0, 0, noise_seed=2**64),
    lambda p: rubato.keystream(p, [0] * p.n, 0, 0, xof="aes256"),
    lambda p: rubato.encrypt(p, [0] * p.l, [0.0] * (p.l + 1)),
    lambda p: rubato.encrypt(p, [0] * p.l, [float("nan")] * p.l),
    lambda p: rubato.decrypt(p, [0] * p.n, 0, 0, [p.q] * p.l),
])
def test_bad_inputs_raise(call):
    with pytest.raises(ParameterError):
        call(RUBATO_SETS["Par-128M"])

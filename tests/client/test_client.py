"""hhe_gen.client: the same calls give the same ciphertexts and messages on the model, the RTL
(Verilator) and the simulated SoC, and bad calls fail with the parameter named."""

import cmath
import math
import os
import random

import pytest

from hhe_gen.client import Client
from hhe_gen.models import ckks
from hhe_gen.params import ParameterError
from hhe_gen.params.presets import preset
from hhe_gen.params.rubato import rubato_params

PARAMS = preset("toy")
KEYS = ckks.keygen(PARAMS, 3)
SLOTS = [cmath.rect(r.random(), r.random() * 2 * math.pi) for r in [random.Random(1)] for _ in range(PARAMS.slots)]


RUBATO_KEY = [random.Random(2).randrange(rubato_params("128s").q) for _ in range(rubato_params("128s").n)]
MESSAGE = [round(random.Random(4).uniform(-4, 4), 3) for _ in range(2 * rubato_params("128s").l)]


def _session(backend, **board):
    with Client("toy", backend=backend, rubato="128s", board=board or None) as c:
        c.set_keys(KEYS)
        pk = c.encrypt(SLOTS, seed=5)
        pk_cycles = c.last.cycles
        sk = c.encrypt(SLOTS, seed=5, mode="sk")
        back = c.decrypt(pk)
        words = c.rubato_encrypt(MESSAGE, key=RUBATO_KEY, nonce=7, noise_seed=9)
    return pk, sk, back, pk_cycles, words


@pytest.fixture(scope="module")
def on_model():
    return _session("model")


def test_model_backend_encrypts_what_the_reference_decrypts(on_model):
    pk, sk, back, cycles, _ = on_model
    assert cycles is None
    for ct in (pk, sk):
        assert ckks.precision_bits(SLOTS, ckks.decode(PARAMS, ckks.decrypt(PARAMS, KEYS.sk, ct)))["mean_bits"] > 10
    assert ckks.precision_bits(SLOTS, back)["mean_bits"] > 10


def test_model_backend_rubato_decrypts_with_the_reference(on_model):
    from hhe_gen.models import rubato
    rp, words = rubato_params("128s"), on_model[4]
    back = [x for k in range(len(words) // rp.l)
            for x in rubato.decrypt(rp, RUBATO_KEY, 7, k, words[k * rp.l:(k + 1) * rp.l])]
    assert max(abs(a - b) for a, b in zip(MESSAGE, back)) < 2 ** -10


@pytest.mark.toolchain
def test_rtl_backend_gives_the_models_results(on_model):
    pk, sk, back, cycles, words = _session("rtl")
    assert (pk.c0, pk.c1, sk.c0, sk.c1, back, words) == (on_model[0].c0, on_model[0].c1, on_model[1].c0,
                                                         on_model[1].c1, on_model[2], on_model[4])
    assert cycles > 0


def _need_sim_soc():
    from hhe_gen.soc.sim_build import sim_support
    reason = sim_support()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.mark.toolchain
def test_soc_sim_backend_gives_the_models_results(on_model):
    _need_sim_soc()
    pk, sk, back, cycles, words = _session("soc-sim")
    assert (pk.c0, pk.c1, sk.c0, sk.c1, back, words) == (on_model[0].c0, on_model[0].c1, on_model[1].c0,
                                                         on_model[1].c1, on_model[2], on_model[4])
    assert cycles > 0


@pytest.mark.toolchain
def test_board_backend_gives_the_models_results_over_ethernet(on_model):
    """The board backend (Etherbone and UDP sockets to an address, the build folder's soc.json and
    csr.csv) against the simulated SoC's Ethernet, from inside its network namespace: what a board
    on the desk answers, with no board lent to this project."""
    _need_sim_soc()
    from hhe_gen.soc.sim_build import build_sim_soc
    from hhe_gen.soc.sim_run import SimulatedSoC
    build = build_sim_soc(PARAMS, 2, rubato="128s")       # the SoC the soc-sim backend builds for _session
    with SimulatedSoC(build) as soc, soc.namespace.entered():
        soc.host.comm.close()       # LiteX's Etherbone client binds the Etherbone port: one per address
        pk, sk, back, cycles, words = _session("board", folder=build.folder)
    assert (pk.c0, pk.c1, sk.c0, sk.c1, back, words) == (on_model[0].c0, on_model[0].c1, on_model[1].c0,
                                                         on_model[1].c1, on_model[2], on_model[4])
    assert cycles > 0


@pytest.mark.parametrize("backend", ["model", pytest.param("rtl", marks=pytest.mark.toolchain)])
def test_a_device_that_decrypts_chosen_ciphertexts_gives_the_key_away(backend):
    """The key vault's limit (docs/soc.md): no bus read shows a key word, but whoever may ask for
    decryptions reads the key from their results.  (c0, c1) = (0, D) decrypts to D * s; with D =
    scale / 16 its slots stay inside the decoder's range, and encoding them again gives 16 * s / scale."""
    delta = PARAMS.scale
    ct = ckks.Ciphertext([[0] * PARAMS.n for _ in PARAMS.moduli],
                         [[(delta // 16) % q] + [0] * (PARAMS.n - 1) for q in PARAMS.moduli], delta, "coeff")
    with Client("toy", backend=backend) as c:
        c.set_keys(KEYS)
        slots = c.decrypt(ct)
    coeffs = ckks.crt_centered(ckks.encode(PARAMS, slots).rows, PARAMS.moduli)
    assert [round(16 * x / delta) for x in coeffs] == KEYS.sk
    assert any(KEYS.sk)


def test_bad_calls_name_the_parameter():
    with pytest.raises(ParameterError, match="backend"):
        Client("toy", backend="fpga")
    with pytest.raises(ParameterError, match="params"):
        Client(42)
    with Client("toy") as c:
        c.set_keys(KEYS)
        with pytest.raises(ParameterError, match="mode"):
            c.encrypt(SLOTS, seed=1, mode="xx")
        with pytest.raises(ParameterError, match="rubato"):
            c.rubato_encrypt(MESSAGE, key=RUBATO_KEY, nonce=1, noise_seed=1)


def test_board_backend_refuses_a_missing_or_foreign_build_before_sending(tmp_path):
    with pytest.raises(ParameterError, match="board folder"):
        Client("toy", backend="board", board=dict(folder=tmp_path))
    (tmp_path / "soc.json").write_text('{"params": "dna-hhe", "ip": "192.0.2.1"}')
    (tmp_path / "csr.csv").write_text("")
    with pytest.raises(ParameterError, match="built for 'toy'"):
        Client("toy", backend="board", board=dict(folder=tmp_path))


def _server_inputs(params):
    from hhe_gen.models import ckks_eval
    keys = ckks.keygen(params, 3)
    a = ckks.encrypt_slots(params, keys, SLOTS[:params.slots], seed=5)
    b = ckks.encrypt_slots(params, keys, SLOTS[:params.slots], seed=6, mode="sk")
    rlk = ckks_eval.relin_keygen(params, keys.sk, seed=7)
    return keys, a, b, rlk, ckks_eval.mul_relin_rescale(params, a, b, rlk)


def test_mul_relin_rescale_on_the_model_equals_the_evaluator():
    keys, a, b, rlk, want = _server_inputs(PARAMS)
    with Client("toy") as c:
        got = c.mul_relin_rescale(a, b, rlk)
    assert got.to_form(PARAMS, "coeff") == want
    with Client("toy") as c, pytest.raises(ParameterError, match="rlk"):
        c.mul_relin_rescale(a, b, keys)
    from hhe_gen.client.backends import server_runner
    with pytest.raises(ParameterError, match="backend"):
        server_runner(PARAMS, "soc-sim", 2)
    # DNA-HHE's key switch: 2 (L+1) accumulators, a coefficient row and 4 working buffers = 14, each
    # 4096 rows of 2 x 61 bits = 4 x 7 DP16KD (1024 x 18 each)
    with pytest.raises(ParameterError, match="14 buffers = 392 DP16KD at 2 lanes.*208"):
        server_runner(preset("dna-hhe"), "board", 2)


@pytest.mark.slow                 # two Verilator builds (the client accelerator and the server engine)
def test_mul_relin_rescale_on_rtl_equals_the_model():
    from hhe_gen.params.ckks import CKKSParams, RingParams
    from hhe_gen.params.primes import ntt_primes
    primes = ntt_primes(64, 30, 3)
    params = CKKSParams(RingParams(64, tuple(primes[:2])), 20, (primes[2],), name="toy-p30")
    _, a, b, rlk, want = _server_inputs(params)
    with Client(params, backend="rtl") as c:
        got = c.mul_relin_rescale(a, b, rlk)
        assert c.last.cycles > 0
    assert got.to_form(params, "coeff") == want

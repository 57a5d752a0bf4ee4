"""Server-side CKKS: the model (hhe_gen.models.ckks_eval, rns_basis) bit for bit against Lattigo v6.

For every parameter shape (one key-switching prime below and above 2^53, two and three primes in
P, the DNA-HHE set and the design-time-flexible paper's 218-bit set at N = 2^13):

- the tensor product, relinearisation with Lattigo's own key, rescale, and Lattigo's fused
  MulRelin + Rescale equal the model's residue for residue;
- the same with a key made by the model (Lattigo accepts it and gets the model's answer);
- relinearisation of a ciphertext one level down (a key used below its top level);
- Lattigo's basis conversions (ModUpQtoP, ModDownQPtoQ, DecomposeAndSplit) and rescale on the
  boundary values where their double-precision estimate is not exact (0, Q - 1, Q/2, a residue of
  exactly floor(P/2)) equal the model's, which reproduces those estimates;
- Lattigo's exported key decrypts digit by digit to P e_g s^2 plus a small error, the structure
  the model's key generation follows;
- the engine's mul_relin_rescale program on the ISA model, with Lattigo's key in memory, gives
  Lattigo's MulRelin + Rescale (DNA-HHE, N = 2^13).
"""

import math
import random

import pytest

from hhe_gen.models import ckks, ckks_eval, rns_basis
from hhe_gen.models.ntt import negacyclic_multiply
from hhe_gen.params import preset
from hhe_gen.params.ckks import CKKSParams, RingParams
from hhe_gen.params.primes import ntt_primes

pytestmark = pytest.mark.interop


def _custom(n, q_bits, q_count, p_bits, p_count, log_scale, name):
    q = ntt_primes(n, q_bits, q_count)
    return CKKSParams(RingParams(n, tuple(q)), log_scale, tuple(ntt_primes(n, p_bits, p_count, exclude=q)), name=name)


SHAPES = {
    "toy": lambda: preset("toy"),
    "5q-2p": lambda: _custom(64, 30, 5, 31, 2, 20, "5q-2p"),
    "4q-3p-61": lambda: _custom(64, 40, 4, 61, 3, 30, "4q-3p-61"),
    "dna-hhe": lambda: preset("dna-hhe"),
    "flexible-218": lambda: preset("flexible-218"),
}


def _slots(params, seed):
    rng = random.Random(seed)
    return [complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(params.slots)]


@pytest.fixture(scope="module", params=list(SHAPES))
def case(request, lattigo_peer):
    params = SHAPES[request.param]()
    keys = ckks.keygen(params, seed=11)
    a = ckks.encrypt_slots(params, keys, _slots(params, 1), seed=2)
    b = ckks.encrypt_slots(params, keys, _slots(params, 3), seed=4, mode="sk")
    rlk_json = lattigo_peer.rlk(params.interchange(), keys.sk)
    return params, keys, a, b, rlk_json


def test_each_step_equals_lattigo(lattigo_peer, case):
    params, keys, a, b, rlk_json = case
    pj = params.interchange()
    t = ckks_eval.tensor(params, a, b)
    assert t.to_json() == lattigo_peer.tensor(pj, a.to_json(), b.to_json())
    rlk = ckks_eval.RelinKey.from_json(rlk_json, params)
    r = ckks_eval.relinearize(params, t, rlk)
    assert r.to_json() == lattigo_peer.relinearize(pj, t.to_json(), rlk_json)
    s = ckks_eval.rescale(params, r)
    assert s.to_json() == lattigo_peer.rescale(pj, r.to_json())
    fused = lattigo_peer.eval(pj, keys.sk, "mul", a.to_json(), b.to_json(), rlk=rlk_json)
    assert ckks_eval.mul_relin_rescale(params, a, b, rlk).to_json() == fused


def test_lattigo_accepts_the_models_key(lattigo_peer, case):
    params, keys, a, b, rlk_json = case
    rlk = ckks_eval.relin_keygen(params, keys.sk, seed=5)
    pj = params.interchange()
    t = ckks_eval.tensor(params, a, b)
    assert ckks_eval.relinearize(params, t, rlk).to_json() == lattigo_peer.relinearize(pj, t.to_json(), rlk.to_json())
    expected = [x * y for x, y in zip(ckks.decrypt_slots(params, keys.sk, a), ckks.decrypt_slots(params, keys.sk, b))]

    def bits(ct_json):
        d = lattigo_peer.decrypt(pj, keys.sk, ct_json)
        return ckks.precision_bits(expected, [complex(x, y) for x, y in zip(d["re"], d["im"])])["mean_bits"]

    ours = bits(ckks_eval.mul_relin_rescale(params, a, b, rlk).to_json())
    lattigos = bits(lattigo_peer.eval(pj, keys.sk, "mul", a.to_json(), b.to_json(), rlk=rlk_json))
    assert abs(ours - lattigos) < 0.5, (ours, lattigos)


def test_relinearisation_one_level_down(lattigo_peer, case):
    params, keys, a, b, rlk_json = case
    pj = params.interchange()
    low_a, low_b = ckks_eval.rescale(params, a), ckks_eval.rescale(params, b)
    t = ckks_eval.tensor(params, low_a, low_b)
    rlk = ckks_eval.RelinKey.from_json(rlk_json, params)
    assert ckks_eval.relinearize(params, t, rlk).to_json() == lattigo_peer.relinearize(pj, t.to_json(), rlk_json)


def test_lattigos_key_has_the_documented_structure(lattigo_peer):
    params = SHAPES["5q-2p"]()
    sk = ckks.keygen(params, seed=3).sk
    rlk = ckks_eval.RelinKey.from_json(lattigo_peer.rlk(params.interchange(), sk), params)
    moduli = list(params.moduli) + list(params.special_moduli)
    big_p = math.prod(params.special_moduli)
    groups = rns_basis.gadget_groups(params.max_level, len(params.special_moduli))
    for g, (b, a) in enumerate(rlk.digits):
        for i, m in enumerate(moduli):
            s_row = [x % m for x in sk]
            s2 = negacyclic_multiply(s_row, s_row, m)
            noisy = [(x + y) % m for x, y in zip(b[i], negacyclic_multiply(a[i], s_row, m))]
            gadget = big_p % m if i in groups[g] else 0
            err = [(x - gadget * y) % m for x, y in zip(noisy, s2)]
            assert max(min(e, m - e) for e in err) <= params.error.bound, (g, i)


def _near_wrap(big, rng, n):
    half = big >> 1
    fixed = [0, 1, big - 1, big - 2, half - 1, half, half + 1]
    return fixed + [rng.randrange(big) for _ in range(n - len(fixed))]


@pytest.mark.parametrize("q_bits, q_count, p_bits, p_count", [
    (40, 4, 45, 2), (54, 3, 61, 1), (40, 4, 61, 3), (30, 5, 31, 2), (31, 6, 32, 1),
])
def test_basis_conversions_at_the_wrap_equal_lattigo(lattigo_peer, q_bits, q_count, p_bits, p_count):
    n = 16
    qs = ntt_primes(n, q_bits, q_count)
    ps = ntt_primes(n, p_bits, p_count, exclude=qs)
    rng = random.Random(q_bits * 100 + p_count)
    big = math.prod(qs)
    x = _near_wrap(big, rng, n)
    rows = [[v % q for v in x] for q in qs]
    assert lattigo_peer.basis(4, qs, ps, "mod_up", rows)["rows"] == rns_basis.mod_up_centered(rows, qs, ps)
    assert lattigo_peer.basis(4, qs, ps, "decompose", rows)["digits"] == rns_basis.decompose(rows, qs, ps)
    big_p = math.prod(ps)
    half = big_p >> 1
    x = [0, big_p, big_p * 7 + half, big_p * 7 + half + 1, big_p * 7 + half - 1, big * big_p - 1, big_p - 1]
    x += [rng.randrange(big * big_p) for _ in range(n - len(x))]
    rows = [[v % m for v in x] for m in qs + ps]
    assert lattigo_peer.basis(4, qs, ps, "mod_down", rows)["rows"] == rns_basis.mod_down(rows, qs, ps)


def test_rescale_at_the_rounding_boundary_equals_lattigo(lattigo_peer):
    params = preset("dna-hhe")
    qs = params.moduli
    q_last = qs[-1]
    h = (q_last - 1) >> 1
    rng = random.Random(7)
    last = [h, h + 1, h - 1, 0, 1, q_last - 1] + [rng.randrange(q_last) for _ in range(params.n - 6)]
    rows = [[rng.randrange(q) for _ in range(params.n)] for q in qs[:-1]] + [last]
    ct = ckks.Ciphertext(rows, [list(r) for r in reversed(rows)][::-1], 1 << 50)
    assert ckks_eval.rescale(params, ct).to_json() == lattigo_peer.rescale(params.interchange(), ct.to_json())


def test_the_peer_refuses_a_key_for_other_parameters(lattigo_peer):
    from hhe_gen.host.lattigo import LattigoError

    params = SHAPES["5q-2p"]()
    keys = ckks.keygen(params, seed=1)
    d = ckks_eval.relin_keygen(params, keys.sk).to_json()
    ct = ckks_eval.tensor(params, *(ckks.encrypt_slots(params, keys, _slots(params, s), seed=s) for s in (1, 2)))
    with pytest.raises(LattigoError, match="digits"):
        lattigo_peer.relinearize(params.interchange(), ct.to_json(), {**d, "digits": d["digits"][:-1]})
    with pytest.raises(LattigoError, match="levelQ"):
        lattigo_peer.relinearize(params.interchange(), ct.to_json(), {**d, "levelQ": 1})


def test_engine_program_equals_lattigo(lattigo_peer):
    """mul_relin_rescale on the ISA model with Lattigo's own key gives Lattigo's MulRelin + Rescale."""
    from hhe_gen.engine import server_memory as sm
    from hhe_gen.engine import server_programs as sp
    from hhe_gen.engine.model import EngineModel

    params = preset("dna-hhe")
    keys = ckks.keygen(params, seed=21)
    a = ckks.encrypt_slots(params, keys, _slots(params, 5), seed=6)
    b = ckks.encrypt_slots(params, keys, _slots(params, 7), seed=8, mode="sk")
    pj = params.interchange()
    rlk_json = lattigo_peer.rlk(pj, keys.sk)
    shape = sp.server_shape(params)
    layout = sm.ServerMemoryMap.for_params(params)
    model = EngineModel(shape, params.n)
    sm.write_server_ciphertext(model.memory, layout, params, a, ("a0", "a1"))
    sm.write_server_ciphertext(model.memory, layout, params, b, ("b0", "b1"))
    sm.write_relin_key(model.memory, layout, params, ckks_eval.RelinKey.from_json(rlk_json, params))
    sm.write_constants(model.memory, layout, params)
    assert model.run(sp.mul_relin_rescale(params, shape).words) == 0
    theirs = lattigo_peer.eval(pj, keys.sk, "mul", a.to_json(), b.to_json(), rlk=rlk_json)
    got = sm.read_server_ciphertext(model.memory, layout, params, ("r0", "r1"), a.level, theirs["scale"])
    assert got.to_form(params, "coeff").to_json() == theirs

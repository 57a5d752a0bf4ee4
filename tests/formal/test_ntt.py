"""``hhe-gen prove ntt``: the quick proofs (schedule k-induction at N = 16, mutants, stream rules,
covers) in the default run, everything else (the schedule for every N up to 2^10 and every P -
hours at N = 1024 -, the equivalence with the model and the miter on impulse inputs) under
-m slow; the free-input equivalences (``*-free``, ``*-spec-butterfly``: minutes to hours each, some
do not finish in a test run's time) only through ``hhe-gen prove ntt``; plus the harnesses' own
ingredients checked against the models without a solver."""

import random

import pytest

from hhe_gen.apps import prove
from hhe_gen.cores.ntt.single_port import order_cycle, stage_order
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models.ntt import intt, ntt

def _ntt_proofs(quick):
    return [p for p in prove.proofs(["ntt"], quick=quick)]


@pytest.mark.toolchain
@pytest.mark.parametrize("p", _ntt_proofs(True), ids=lambda p: p.name)
def test_quick_ntt_proof(tmp_path, p):
    record = prove.run_proof(p, tmp_path, quick=True, timeout=900)
    assert record["ok"], f"{record['status']} (expected {p.expect}): {record['detail']}"


_FREE = ("-free", "-spec-butterfly")     # every input free: minutes to hours per proof


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.parametrize("p", [p for p in _ntt_proofs(False) if not p.quick and not p.name.endswith(_FREE)],
                         ids=lambda p: p.name)
def test_slow_ntt_proof(tmp_path, p):
    record = prove.run_proof(p, tmp_path, quick=False, timeout=7200)
    assert record["ok"], f"{record['status']} (expected {p.expect}): {record['detail']}"


def test_registry_covers_every_size_and_has_mutants():
    names = {p.name for p in _ntt_proofs(False)}
    for log in range(3, 11):
        for banking in ("dual", "single"):
            for d in ("fwd", "inv"):
                assert f"schedule-{banking}-n{1 << log}-{d}" in names
    for log in range(3, 11):
        n = 1 << log
        for banking, top in (("dual", n // 2), ("single", n // 4)):
            for i in range(top.bit_length()):
                assert f"decoder-{banking}-n{n}-p{1 << i}" in names
    from hhe_gen.formal.ntt.decoder import MUTANTS
    for mutant in MUTANTS:
        assert f"mutant-decoder-{mutant}" in names
    quick = _ntt_proofs(True)
    assert any(p.expect == "FAIL" for p in quick)
    assert any(p.engine == "sby-cover" for p in quick)
    assert any(p.engine == "sby-prove" for p in quick)


@pytest.mark.parametrize("n, lanes", [(16, 1), (16, 2), (64, 4), (1024, 8), (1024, 256)])
def test_inverse_order_inverts_the_single_port_order(n, lanes):
    """The schedule harness's inverse of the single-port cycle order (as bit expressions,
    evaluated here on ints) undoes single_port.order_cycle for every stage and cycle."""
    from hhe_gen.formal.ntt.schedule import inverse_order
    n_log = n.bit_length() - 1
    cw = n_log - (2 * lanes).bit_length() + 1          # bits of a cycle number: n - B
    for k in range(n_log):
        so = stage_order(k, n_log, lanes)
        for c in range(1 << cw):
            bits = inverse_order(so, [(c >> i) & 1 for i in range(cw)])
            assert order_cycle(so, sum(bit << i for i, bit in enumerate(bits))) == c


@pytest.mark.parametrize("n, q", [(8, 17), (16, 97)])
@pytest.mark.parametrize("inverse", [False, True])
def test_spec_network_and_matrix_equal_the_model(n, q, inverse):
    from hhe_gen.formal.ntt.equivalence import butterfly_network, transform_matrix
    rng = random.Random(n + inverse)
    model = intt if inverse else ntt
    matrix = transform_matrix(n, q, inverse)
    for _ in range(20):
        a = [rng.randrange(q) for _ in range(n)]
        net = butterfly_network(a, q, inverse, lambda x, c: x * c % q, lambda x, y: (x + y) % q,
                                lambda x, y: (x + q - y) % q)
        assert net == model(a, q)
        assert [sum(c * x for c, x in zip(row, a)) % q for row in matrix] == model(a, q)


@pytest.mark.parametrize("q", [17, 97])
def test_spec_butterfly_equals_the_butterfly_model(q):
    """The compositional proof's specification butterfly (formal/ntt/spec_butterfly.py) against
    the real Butterfly's golden model (hhe_gen.models.butterfly via Butterfly.model): ct, gs, mul,
    add, sub, mac on random and corner operands < q, with the real unit's latency."""
    from hhe_gen.cores.arith import Butterfly
    from hhe_gen.cores.arith.butterfly import OP_CODES
    from hhe_gen.formal.ntt.spec_butterfly import SpecButterfly
    from hhe_gen.sim.stream import run_unit
    zq = dict(kind="barrett", moduli=[q])
    real = Butterfly(zq=zq)
    mark_unused(real)
    rng = random.Random(q)
    vals = [0, 1, q - 1] + [rng.randrange(q) for _ in range(5)]
    vectors = [dict(op=OP_CODES[op], a=a, b=b, w=w, c=c) for op in ("ct", "gs", "mul", "add", "sub", "mac", "gsh")
               for a, b, w, c in ([rng.choice(vals) for _ in range(4)] for _ in range(12))]
    for port, idx in (("x", 0), ("y", 1)):
        dut = SpecButterfly(real)
        assert dut.latency == real.latency and dut.width == real.width
        got = run_unit(dut, vectors, output=port).outputs
        want = [real.model(v["op"], "zq", v["a"], v["b"], v["w"], v["c"])[idx] for v in vectors]
        assert got == want

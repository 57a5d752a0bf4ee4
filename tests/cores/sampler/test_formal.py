"""The sampler proofs (SymbiYosys) registered in hhe_gen.formal.sampler.proofs: every one gives its
expected verdict (PASS, or FAIL for the deliberately broken cores of formal/sampler/mutants.py).

The default run takes the registry's quick selection (one configuration per harness, and every
mutant); the further sizes are `slow` (``hhe-gen prove sampler`` runs them all).
"""

import pytest

import hhe_gen.formal.sampler.proofs  # noqa: F401  (registers the sampler proofs)
from hhe_gen.apps import prove

pytestmark = pytest.mark.toolchain

# Only this family's module is imported (prove.proofs() would import every family's proofs).
_ALL = [p for p in prove.registered() if p.group == "sampler"]
_PARAMS = [pytest.param(p.name, id=p.name, marks=() if p.quick else pytest.mark.slow) for p in _ALL]


def test_every_harness_has_a_quick_proof_and_a_mutant():
    quick = [p for p in _ALL if p.quick]
    harnesses = {"gatherer", "gaussian-timing", "cdt-contract", "rejection", "ternary", "ternary-pairs"}
    for h in harnesses:
        assert any(p.name.startswith(h) and p.expect == "PASS" for p in quick), h
        assert any(p.name.startswith(f"mutant-{h}") and p.expect == "FAIL" for p in quick), h


@pytest.mark.parametrize("name", _PARAMS)
def test_proof(tmp_path, name):
    p = next(p for p in _ALL if p.name == name)
    record = prove.run_proof(p, tmp_path)
    assert record["ok"], f"{name}: {record['status']} (expected {p.expect})\n{record['detail']}"

"""The Rubato proofs (SymbiYosys) registered in hhe_gen.formal.rubato.proofs give their expected
verdicts: the datapath equals the layers of docs/rubato.md section 2 at a small modulus, and wrong specifications are
refuted.  The quick selection runs by default; the further sizes are slow."""

import pytest

import hhe_gen.formal.rubato.proofs  # noqa: F401  (registers the rubato proofs)
from hhe_gen.apps import prove

pytestmark = pytest.mark.toolchain

_ALL = [p for p in prove.registered() if p.group == "rubato"]
_PARAMS = [pytest.param(p.name, id=p.name, marks=() if p.quick else pytest.mark.slow) for p in _ALL]


def test_quick_selection_has_a_proof_and_mutants():
    quick = [p for p in _ALL if p.quick]
    assert any(p.expect == "PASS" for p in quick)
    assert sum(p.expect == "FAIL" for p in quick) >= 2


@pytest.mark.parametrize("name", _PARAMS)
def test_proof(tmp_path, name):
    p = next(p for p in _ALL if p.name == name)
    record = prove.run_proof(p, tmp_path)
    assert record["ok"], f"{name}: {record['status']} (expected {p.expect})\n{record['detail']}"

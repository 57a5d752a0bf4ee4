"""The FFT proofs registered in hhe_gen.formal.fft.proofs give their expected verdicts (PASS, or FAIL
for the mutants).  The default run takes the quick selection; the further sizes are `slow`
(``hhe-gen prove fft`` runs them all)."""

import pytest

import hhe_gen.formal.fft.proofs  # noqa: F401  (registers the fft proofs)
from hhe_gen.apps import prove

pytestmark = pytest.mark.toolchain

_ALL = [p for p in prove.registered() if p.group == "fft"]
_PARAMS = [pytest.param(p.name, id=p.name, marks=() if p.quick else pytest.mark.slow) for p in _ALL]


def test_every_kind_has_a_quick_proof_and_the_mutants_are_quick():
    quick = [p for p in _ALL if p.quick]
    for prefix in ("stream-", "cover-", "timing-", "z3-three-mult", "mutant-"):
        assert any(p.name.startswith(prefix) for p in quick), prefix
    assert any(p.quick for p in _ALL if p.expect == "FAIL")


@pytest.mark.parametrize("name", _PARAMS)
def test_proof(tmp_path, name):
    p = next(p for p in _ALL if p.name == name)
    record = prove.run_proof(p, tmp_path)
    assert record["ok"], f"{name}: {record['status']} (expected {p.expect})\n{record['detail']}"

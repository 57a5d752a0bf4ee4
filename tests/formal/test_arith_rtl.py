"""The quick RTL proofs of ``hhe-gen prove arith`` (SymbiYosys on the real cores/arith units),
each with its expected verdict; mutants must FAIL.  The full set runs under -m slow."""

import pytest

from hhe_gen import prove

pytestmark = pytest.mark.toolchain


def _rtl(quick):
    return [p for p in prove.proofs(["arith"], quick=quick) if p.engine.startswith("sby")]


@pytest.mark.parametrize("p", _rtl(True), ids=lambda p: p.name)
def test_quick_rtl_proof(tmp_path, p):
    record = prove.run_proof(p, tmp_path, quick=True, timeout=900)
    assert record["ok"], f"{record['status']} (expected {p.expect}): {record['detail']}"


def test_quick_selection_has_mutants_and_covers():
    quick = _rtl(True)
    assert any(p.expect == "FAIL" for p in quick)
    assert any(p.engine == "sby-cover" for p in quick)
    assert any(p.engine == "sby-prove" for p in quick)


@pytest.mark.slow
@pytest.mark.parametrize("p", [p for p in _rtl(False) if not p.quick], ids=lambda p: p.name)
def test_slow_rtl_proof(tmp_path, p):
    record = prove.run_proof(p, tmp_path, quick=False, timeout=3600)
    assert record["ok"], f"{record['status']} (expected {p.expect}): {record['detail']}"

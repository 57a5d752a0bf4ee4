"""The quick RTL proofs of ``hhe-gen prove arith`` (SymbiYosys on the real cores/arith units),
each with its expected verdict; mutants must FAIL.  The full set runs under -m slow."""

import pytest

from hhe_gen.apps import prove

pytestmark = pytest.mark.toolchain


def _rtl(quick):
    return [p for p in prove.proofs(["arith"], quick=quick) if p.engine.startswith("sby")]


# The bit-level reducer equivalence took 15 minutes on a loaded 2-core CI machine: it runs with
# the full set (pytest -m slow, hhe-gen prove arith), not in the default run.
_HEAVY = ("rtl-barrett-",)


@pytest.mark.parametrize("p", [p for p in _rtl(True) if not p.name.startswith(_HEAVY)], ids=lambda p: p.name)
def test_quick_rtl_proof(tmp_path, p):
    record = prove.run_proof(p, tmp_path, quick=True, timeout=900)
    assert record["ok"], f"{record['status']} (expected {p.expect}): {record['detail']}"


def test_quick_selection_has_mutants_and_covers():
    quick = _rtl(True)
    assert any(p.expect == "FAIL" for p in quick)
    assert any(p.engine == "sby-cover" for p in quick)
    assert any(p.engine == "sby-prove" for p in quick)


@pytest.mark.slow
@pytest.mark.parametrize("p", [p for p in _rtl(False) if not p.quick or p.name.startswith(_HEAVY)],
                         ids=lambda p: p.name)
def test_slow_rtl_proof(tmp_path, p):
    record = prove.run_proof(p, tmp_path, quick=False, timeout=3600)
    assert record["ok"], f"{record['status']} (expected {p.expect}): {record['detail']}"

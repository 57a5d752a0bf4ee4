"""The Keccak/SHAKE proofs (SymbiYosys) registered in hhe_gen.formal.keccak.proofs: every one gives
its expected verdict (PASS, or FAIL for the deliberately broken cores of formal/keccak/mutants.py).

The default run takes the registry's quick selection (the round proof on three round groups, one
sponge configuration, and a mutant of each harness); the rest is `slow` (``hhe-gen prove keccak``
runs them all).
"""

import pytest

from hhe_gen.apps import prove
from hhe_gen.formal import keccak as formal_keccak
from hhe_gen.params.errors import ParameterError

pytestmark = pytest.mark.toolchain

_ALL = prove.proofs(["keccak"])
_PARAMS = [pytest.param(p.name, id=p.name, marks=() if p.quick else pytest.mark.slow) for p in _ALL]


def test_every_harness_has_a_quick_proof_and_a_mutant():
    quick = [p for p in _ALL if p.quick]
    for h in ("round", "sponge"):
        assert any(p.name.startswith(h) and p.expect == "PASS" for p in quick), h
        assert any(p.name.startswith(f"mutant-{h}") and p.expect == "FAIL" for p in quick), h


@pytest.mark.parametrize("name", _PARAMS)
def test_proof(tmp_path, name):
    p = next(p for p in _ALL if p.name == name)
    record = prove.run_proof(p, tmp_path)
    assert record["ok"], f"{name}: {record['status']} (expected {p.expect})\n{record['detail']}"


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_bad_names_and_steps():
    with pytest.raises(ParameterError):
        formal_keccak.harness("nope")
    with pytest.raises(ParameterError):
        formal_keccak.harness("round", steps=(24,))
    with pytest.raises(ParameterError):
        formal_keccak.harness("round", rounds_per_cycle=5)

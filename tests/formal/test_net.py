"""``hhe-gen prove net``: the packetizer's stream rules toward LiteEth (formal/net).  The quick
proofs (BMC of every rule at max_segment 2, the covers, the valid-gap mutant refuted) run by
default; the deeper size is slow."""

import pytest

from hhe_gen.apps import prove

_ALL = prove.proofs(["net"])


def test_registry():
    names = {p.name for p in _ALL if p.quick}
    assert {"packetizer-s2", "packetizer-s2-covers", "mutant-packetizer-valid-gap"} <= names
    assert any(p.expect == "FAIL" for p in _ALL) and any(not p.quick for p in _ALL)


@pytest.mark.toolchain
@pytest.mark.parametrize("proof", [pytest.param(p, id=p.name, marks=() if p.quick else pytest.mark.slow)
                                   for p in _ALL])
def test_proof(tmp_path, proof):
    record = prove.run_proof(proof, tmp_path, quick=proof.quick, timeout=1800 if proof.quick else 7200)
    assert record["ok"], f"{proof.name}: {record['status']} (expected {proof.expect})\n{record['detail']}"

"""``hhe-gen prove net``: the packetizer's stream rules toward LiteEth (formal/net).  The quick
proofs (BMC of every rule at max_segment 2, the covers, the valid-gap mutant refuted) run by
default; the deeper size is slow."""

import pytest

from hhe_gen.apps import prove

_ALL = prove.proofs(["net"])
_PARAMS = [pytest.param(p.name, id=p.name, marks=() if p.quick else pytest.mark.slow) for p in _ALL]


def test_registry():
    names = {p.name for p in _ALL if p.quick}
    assert {"packetizer-s2", "packetizer-s2-covers", "mutant-packetizer-valid-gap"} <= names
    assert any(p.expect == "FAIL" for p in _ALL) and any(not p.quick for p in _ALL)


@pytest.mark.toolchain
@pytest.mark.parametrize("name", _PARAMS)
def test_proof(tmp_path, name):
    p = next(p for p in _ALL if p.name == name)
    record = prove.run_proof(p, tmp_path, quick=p.quick, timeout=1800 if p.quick else 7200)
    assert record["ok"], f"{name}: {record['status']} (expected {p.expect})\n{record['detail']}"

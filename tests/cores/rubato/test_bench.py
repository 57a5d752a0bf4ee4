"""hhe_gen.benchmarks.rubato: the quick cases exist for every set, and one simulated case agrees
with the formula (the case itself asserts the simulated keystream and cycles)."""

from hhe_gen.benchmarks import cases


def test_cases_registered():
    names = {c.name for c in cases(["rubato"], quick=True)}
    for s in ("80s", "80m", "80l", "128s", "128m", "128l"):
        assert f"{s}-l2" in names
    assert "128l-l64" in names and "128s-l16" in names
    assert any(not c.quick for c in cases(["rubato"]))


def test_simulated_case():
    case = next(c for c in cases(["rubato"], quick=True) if c.name == "128s-l2")
    res = case.fn(**case.params)
    assert res["simulated_cycles"] == res["cycles_per_block"] <= 0.8 * res["dna_hhe_cycles"]

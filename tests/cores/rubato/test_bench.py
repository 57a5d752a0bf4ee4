"""hhe_gen.apps.bench.rubato: the quick cases exist for every set, and one simulated case agrees
with the formula (the case itself asserts the simulated keystream and cycles)."""

from hhe_gen.apps.bench import cases


def test_cases_registered():
    names = {c.name for c in cases(["rubato"], quick=True)}
    for s in ("80s", "80m", "80l", "128s", "128m", "128l"):
        assert f"{s}-l2" in names
    assert "128l-l64" in names and "128s-l16" in names
    slow = {c.name for c in cases(["rubato"]) if not c.quick}
    assert {"128s-l2-ecp5", "80s-l1-nonoise-ecp5", "128s-l2-multipliers", "128s-l16-area"} <= slow


def test_simulated_case():
    case = next(c for c in cases(["rubato"], quick=True) if c.name == "128s-l2")
    res = case.fn(**case.params)
    assert res["simulated_cycles"] == res["cycles_per_block"] <= 0.8 * res["dna_hhe_cycles"]


def test_fully_parallel_case_is_xof_bound():
    """With n lanes the layers take (4r+3)(1 + depth + 1) cycles; the rest is the XOF's
    (r+1)*n constants at one candidate a cycle plus its permutations: the formula's value."""
    case = next(c for c in cases(["rubato"], quick=True) if c.name == "128s-l16")
    res = case.fn(**case.params)
    from hhe_gen.params import rubato_params
    p = rubato_params("Par-128S")
    assert res["cycles_per_block"] > p.round_constant_count
    assert res["cycles_per_block"] < 0.2 * res["dna_hhe_cycles"]

"""``hhe-gen bench fft``: the cases are registered, and a quick cycles case measures what the
documentation says (the simulation checks the output against the model)."""

from hhe_gen.benchmarks import cases


def test_fft_cases_registered():
    names = {c.name for c in cases(["fft"])}
    quick = {c.name for c in cases(["fft"], quick=True)}
    assert {"cycles-ifft-n128-p4", "precision-n13-w29f26-disc", "synth-ifft-n4096-p2-ecp5"} <= names
    assert "cycles-ifft-n128-p4" in quick and "synth-ifft-n4096-p2-ecp5" not in quick
    assert not any(n.startswith("precision-n16") for n in quick)


def test_cycles_case():
    case = next(c for c in cases(["fft"]) if c.name == "cycles-fft-n128-p4")
    m = case.fn(**case.params)
    assert m["total_cycles"] == m["total_doc"] and m["compute_cycles"] == m["compute_doc"]
    assert m["compute_cycles"] <= 1.05 * m["target"]

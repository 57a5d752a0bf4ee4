"""``hhe-gen bench fft``: the cases are registered, and a quick cycles case measures what the
documentation says (the simulation checks the output against the model)."""

from hhe_gen.apps.bench import cases


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


def test_codec_synth_and_plot_cases_registered():
    names = {c.name for c in cases(["fft"])}
    quick = {c.name for c in cases(["fft"], quick=True)}
    new = {"synth-encoder-n4096-p2-ecp5", "synth-decoder-n4096-p2-ecp5", "precision-plot"}
    assert new <= names and not new & quick


def test_precision_plot_small(tmp_path):
    from hhe_gen.apps.bench.fft import plot_precision, precision_sweep
    rows = precision_sweep(log_ns=(6, 7), widths=(24, 28))
    assert len(rows) == 8
    # one more fraction bit: about one more bit of precision (F = W - 2 against W - 3)
    for log_n in (6, 7):
        for w in (24, 28):
            a, b = ([r for r in rows if r["log_n"] == log_n and r["width"] == w and r["frac_bits"] == w - g][0]
                    for g in (2, 3))
            assert 0.7 < a["E_mean_bits"] - b["E_mean_bits"] < 1.3
    path = plot_precision(rows, tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.endswith("p.png")

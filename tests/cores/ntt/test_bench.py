"""hhe-gen bench ntt: the cases are registered and the quick cycle case reports the schedule's
numbers (stage_starts at the core's depth, independent of the core's own bookkeeping)."""

from hhe_gen.benchmarks import cases
from hhe_gen.models.ntt_schedule import ntt_schedule, stage_starts


def test_cases_registered():
    names = {c.name for c in cases(["ntt"])}
    quick = {c.name for c in cases(["ntt"], quick=True)}
    assert {"cycles-n10-p1", "cycles-n16-p32", "sim-n64-p4", "synth-n13-p8-54b"} <= names
    assert "synth-n12-p2-32b" not in quick and "cycles-n13-p8" in quick


def test_cycles_case():
    from hhe_gen.benchmarks.ntt import ntt_cycles
    res = ntt_cycles(10, 8)
    _, total = stage_starts(ntt_schedule(1 << 10, 8, False), res["depth"])
    assert res["cycles"] == total and res["bound"] == 512 * 10 // 8
    assert res["over_bound"] == total - res["bound"] and res["single_cycles"] >= total


def test_plot_case_draws_cycles_and_this_runs_areas(tmp_path, monkeypatch):
    from hhe_gen.benchmarks import ntt as bench
    monkeypatch.setattr(bench, "_SYNTH_RESULTS", {})
    res = bench.plot(tmp_path / "ntt.png", log_ns=(10,))
    assert res["panels"] == 2 and res["area_points"] == 0
    monkeypatch.setattr(bench, "_SYNTH_RESULTS", {(12, 2, 32): {"LUT4": 4315, "MULT18X18D": 22},
                                                  (12, 8, 32): {"LUT4": 16000, "MULT18X18D": 88}})
    res = bench.plot(tmp_path / "ntt2.png", log_ns=(10,))
    assert res["panels"] == 4 and res["area_points"] == 2
    assert (tmp_path / "ntt2.png").read_bytes()[:4] == b"\x89PNG"

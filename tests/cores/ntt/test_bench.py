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

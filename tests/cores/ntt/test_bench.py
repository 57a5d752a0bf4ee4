"""hhe-gen bench ntt: the cases are registered and the quick cycle case reports the schedule's
numbers (stage_starts at the core's depth, independent of the core's own bookkeeping)."""

from hhe_gen.apps.bench import cases
from hhe_gen.cores.ntt.schedule import ntt_schedule, stage_starts


def test_cases_registered():
    names = {c.name for c in cases(["ntt"])}
    quick = {c.name for c in cases(["ntt"], quick=True)}
    assert {"cycles-n10-p1", "cycles-n16-p32", "sim-n64-p4", "synth-n13-p8-54b"} <= names
    assert "synth-n12-p2-32b" not in quick and "cycles-n13-p8" in quick
    grid = {f"area-n{n}-p{p}-{b}b" for n in (12, 13, 16) for p in (2, 8, 32) for b in (32, 54)}
    assert grid <= names and not grid & quick


def test_area_case_verdict(monkeypatch):
    """The area case synthesizes without place and route, picks the twiddle style by N and judges
    the fit against the LFE5U-85F's LUT4 / MULT18X18D / DP16KD (synthesis replaced by a stub)."""
    import hhe_gen.flow.synth
    from hhe_gen.apps.bench import ntt as bench
    calls = []

    def fake(core, **kw):
        calls.append((core.twiddles, core.lanes, kw))
        mult = 200 if core.lanes == 32 else 96
        return {"LUT4": 40000, "FF": 1, "MULT18X18D": mult, "DP16KD": 208, "CCU2C": 0, "cells": {"PFUMX": 7}}

    def fake_xc7(factory, **kw):
        core = factory()
        calls_xc7.append((core.twiddles, core.target))
        return {"LUT": 50000 + core.lanes, "FF": 1, "DSP48E1": 3, "RAMB18": 4, "RAMB36": 5, "yosys_s": 6}

    calls_xc7 = []
    monkeypatch.setattr(hhe_gen.flow.synth, "synth_ecp5", fake)
    monkeypatch.setattr(hhe_gen.flow.synth, "synth_xilinx_any", fake_xc7)
    monkeypatch.setattr(bench, "_core", lambda n, lanes, bits, count, fast, twiddles, target="ecp5":
                        _Stub(lanes, twiddles, target))
    res = bench.ntt_area(13, 8, 54)
    assert res["fits_85f"] is True and res["xc7_LUT"] == 50008 and res["xc7_RAMB36"] == 5
    res = bench.ntt_area(16, 32, 32)
    assert res["fits_85f"] is False and res["twiddles"] == "otf" and res["PFUMX"] == 7
    assert [c[0] for c in calls] == ["rom", "otf"] and all(c[2]["place_and_route"] is False for c in calls)
    assert calls_xc7 == [("rom", "xilinx"), ("otf", "xilinx")]


class _Stub:
    butterfly_latency, depth, bound = 11, 15, 6656

    def __init__(self, lanes, twiddles, target="ecp5"):
        self.lanes, self.twiddles, self.target = lanes, twiddles, target

    def transform_cycles(self, inverse):
        return 6670


def test_cycles_case():
    from hhe_gen.apps.bench.ntt import ntt_cycles
    res = ntt_cycles(10, 8)
    _, total = stage_starts(ntt_schedule(1 << 10, 8, False), res["depth"])
    assert res["cycles"] == total and res["bound"] == 512 * 10 // 8
    assert res["over_bound"] == total - res["bound"] and res["single_cycles"] >= total


def test_plot_case_draws_cycles_and_this_runs_areas(tmp_path, monkeypatch):
    from hhe_gen.apps.bench import ntt as bench
    monkeypatch.setattr(bench, "_SYNTH_RESULTS", {})
    res = bench.plot(tmp_path / "ntt.png", log_ns=(10,))
    assert res["panels"] == 2 and res["area_points"] == 0
    monkeypatch.setattr(bench, "_SYNTH_RESULTS", {(12, 2, 32): {"LUT4": 4315, "MULT18X18D": 22},
                                                  (12, 8, 32): {"LUT4": 16000, "MULT18X18D": 88}})
    res = bench.plot(tmp_path / "ntt2.png", log_ns=(10,))
    assert res["panels"] == 4 and res["area_points"] == 2
    assert (tmp_path / "ntt2.png").read_bytes()[:4] == b"\x89PNG"

"""``hhe-gen bench accel`` and the datapath choice (issue 37): the ``-shared`` cases build
``datapath="shared"`` and report it, bit-exact on the toy set; an area run of the shared datapath
has a synthesis name of its own; Xilinx 7's equivalent slices (DNA-HHE's ENS) and issue 37's area
goals beside the area figures."""

import json

import pytest

from hhe_gen.apps import bench
from hhe_gen.apps.bench import accel
from hhe_gen.engine.config import AcceleratorConfig


def _case(name):
    (case,) = bench.cases(["accel"], names=[name])
    return case


def test_shared_cases_are_registered_with_the_shared_datapath():
    quick = {c.name for c in bench.cases(["accel"], quick=True)}
    assert {"cycles-toy-pk-shared", "cycles-toy-decrypt-shared"} <= quick
    for name, fn, params in [
        ("cycles-toy-pk-shared", accel.program_cycles, {"params": "toy", "program": "encrypt_pk"}),
        ("cycles-toy-decrypt-shared", accel.program_cycles, {"params": "toy", "program": "decrypt"}),
        ("cycles-dna-hhe-pk-2lanes-ooo-shared", accel.program_cycles,
         {"params": "dna-hhe", "lanes": 2, "program": "encrypt_pk", "ooo": True}),
        ("cycles-dna-hhe-sk-2lanes-ooo-shared", accel.program_cycles,
         {"params": "dna-hhe", "lanes": 2, "program": "encrypt_sk", "ooo": True}),
        ("cycles-dna-hhe-ct-to-m-l0-2lanes-ooo-shared", accel.program_cycles,
         {"params": "dna-hhe", "lanes": 2, "program": "decrypt", "level": 0, "ooo": True}),
        ("cycles-dna-hhe-pk-4lanes-ooo-shared", accel.program_cycles,
         {"params": "dna-hhe", "lanes": 4, "program": "encrypt_pk", "ooo": True}),
        ("area-dna-hhe-2lanes-dual-128s-shared", accel.area, {"lanes": 2, "rubato": "Par-128S"}),
        ("area-by-unit-dna-hhe-2lanes-dual-128s-shared", accel.area_by_unit, {"lanes": 2, "rubato": "Par-128S"}),
    ]:
        case = _case(name)
        assert case.fn is fn and case.params.get("datapath") == "shared", name
        assert {k: case.params.get(k) for k in params} == params, name
        assert (name in quick) == name.startswith("cycles-toy"), name
    separate = _case("area-by-unit-dna-hhe-2lanes-dual-128s")
    assert separate.fn is accel.area_by_unit and separate.params.get("datapath") is None
    assert separate.params.get("rubato") == "Par-128S" and not separate.quick
    # the cases that were there keep their names and build the default datapath
    for name in ("cycles-toy-pk", "cycles-toy-decrypt", "cycles-dna-hhe-pk-2lanes-ooo", "area-dna-hhe-2lanes-dual-128s",
                 "area-by-unit-dna-hhe-2lanes"):
        assert _case(name).params.get("datapath") is None, name


def test_the_4_lane_shared_case_configures():
    c = AcceleratorConfig("dna-hhe", 4, datapath="shared").resolve()
    assert c.datapath == "shared" and c.lanes == 4


def test_area_name_differs_by_datapath():
    separate = accel._area_name("hhe_accel", "dna-hhe", 2, "Par-128S")
    assert separate == "hhe_accel_dna_hhe_p2_128s"          # the name earlier runs are cached under
    assert accel._area_name("hhe_accel", "dna-hhe", 2, "Par-128S", "separate") == separate
    shared = accel._area_name("hhe_accel", "dna-hhe", 2, "Par-128S", "shared")
    assert shared != separate and shared.endswith("_shared")
    assert accel._area_name("hhe_accel_units", "dna-hhe", 2, None, "shared") != \
        accel._area_name("hhe_accel_units", "dna-hhe", 2, None)


def test_xc7_ens_is_dna_hhe_equivalent_slices():
    cells = {"LUT": 40_000, "FF": 30_000, "DSP48E1": 12, "RAMB18": 6, "RAMB36": 50, "CARRY4": 999}
    # 12 x 100 + (50 + 6 / 2) x 196 + 40,000 / 4 + 30,000 / 2 = 1,200 + 10,388 + 10,000 + 15,000
    assert accel.xc7_ens(cells) == 36_588
    assert accel.xc7_ens({"LUT": 4, "FF": 2}) == 2           # missing cells count 0
    assert accel.xc7_ens({"RAMB18": 1, "DSP48E1": 0}) == 98  # a RAMB18 is half a BRAM36


def test_area_goals_values():
    assert accel.AREA_GOALS == {"LUT4": 32_000, "MULT18X18D": 48, "DP16KD": 172, "xc7_ens": 31_428}


def test_area_passes_the_datapath_and_adds_ens_and_goals(monkeypatch):
    """:func:`area` with the synthesis replaced: the datapath reaches both configurations, the run
    is named by datapath, ``xc7_ens`` and, for 2 lanes with Par-128S, the goals beside the figures."""
    import hhe_gen.cores.unused as unused
    import hhe_gen.flow.synth as synth
    built, names = [], []
    monkeypatch.setattr(AcceleratorConfig, "engine",
                        lambda self: built.append((self.datapath, self.target)) or object())
    monkeypatch.setattr(unused, "mark_unused", lambda engine: None)
    monkeypatch.setattr(synth, "synth_ecp5", lambda engine, name, **kw: names.append(name) or
                        {"LUT4": 40_000, "FF": 20_000, "MULT18X18D": 48, "DP16KD": 160})
    monkeypatch.setattr(synth, "synth_xilinx", lambda engine, name, **kw: names.append(name) or
                        {"LUT": 40_000, "FF": 30_000, "DSP48E1": 12, "RAMB18": 6, "RAMB36": 50})
    got = accel.area("dna-hhe", 2, rubato="Par-128S", datapath="shared")
    assert built == [("shared", "ecp5"), ("shared", "xilinx")]
    assert names == ["hhe_accel_dna_hhe_p2_128s_shared"] * 2
    assert got["LUT4"] == 40_000 and got["xc7_LUT"] == 40_000 and got["xc7_ens"] == 36_588
    assert got["goal_LUT4"] == 32_000 and got["vs_goal_LUT4"] == 1.25
    assert got["goal_MULT18X18D"] == 48 and got["vs_goal_MULT18X18D"] == 1.0
    assert got["goal_DP16KD"] == 172 and got["vs_goal_DP16KD"] == 0.93     # 160 / 172 = 0.9302
    assert got["goal_xc7_ens"] == 31_428 and got["vs_goal_xc7_ens"] == 1.164   # 36,588 / 31,428 = 1.1642
    built.clear()
    plain = accel.area("dna-hhe", 2)                 # CKKS only: no goals; the default datapath
    assert built == [(None, "ecp5"), (None, "xilinx")] and "xc7_ens" in plain
    assert not [k for k in plain if k.startswith(("goal_", "vs_goal_"))]
    ecp5_only = accel.area("dna-hhe", 4, rubato="Par-128S", xilinx=False)   # 4 lanes: no goals
    assert "xc7_ens" not in ecp5_only and not [k for k in ecp5_only if "goal" in k]


@pytest.mark.toolchain
def test_toy_shared_cases_run_bit_exact(tmp_path, capsys):
    from hhe_gen.apps.cli import main
    out = tmp_path / "accel.json"
    assert main(["bench", "accel", "--only", "cycles-toy-pk-shared", "cycles-toy-decrypt-shared",
                 "--json", str(out)]) == 0
    rows = {r["name"]: r for r in json.loads(out.read_text())["results"]}
    assert set(rows) == {"cycles-toy-pk-shared", "cycles-toy-decrypt-shared"}
    for name, row in rows.items():
        assert "error" not in row, row
        m = row["metrics"]
        assert m["bit_exact"] is True and m["datapath"] == "shared", (name, m)
        assert m["cycles"] > 0 and m["tasks"] > 0

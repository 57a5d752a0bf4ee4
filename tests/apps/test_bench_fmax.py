"""``hhe-gen bench fmax``: one row per unit of the accelerator and per core the timing issue names,
each against the 100 MHz target; a run that does not finish is a row without Fmax; the plot."""

import pytest

from hhe_gen.apps import bench
from hhe_gen.apps.bench import fmax


def test_every_unit_of_the_measured_engine_has_a_row():
    engine = fmax._engine(*fmax.ACCEL)
    present = {u for u in fmax.UNITS if getattr(engine, u, None) is not None}
    assert present == set(fmax.UNITS)            # dual mode with the network: every unit is there
    rows = {c.params["unit"] for c in bench.cases(["fmax"]) if c.params.get("what") == "unit"}
    assert rows == set(fmax.UNITS)


def test_the_issue_cores_are_registered_outside_quick():
    names = {c.name for c in bench.cases(["fmax"])}
    assert {"ntt-n13-p2-54b", "ntt-n13-p8-54b", "accel-dna-hhe-2lanes"} <= names
    assert {"rubato-128s-l2", "rubato-128s-l8", "rubato-128m-l2", "rubato-128m-l6", "rubato-128l-l2",
            "rubato-128l-l8"} <= names
    assert not bench.cases(["fmax"], quick=True)


def test_a_row_is_read_against_the_target_and_dna_hhe():
    slow = fmax.fmax_row({"fmax_mhz": 67.2, "LUT4": 10, "critical_path": {"ns": 14.9, "routing_ns": 9.1,
                                                                           "from": "a", "to": "b"}},
                         unit="NTT core", config="P = 2")
    assert slow["routed"] and not slow["meets_target"]
    assert slow["to_target_mhz"] == -32.8 and slow["x_dna_hhe"] == 0.34
    assert (slow["crit_ns"], slow["crit_from"], slow["crit_to"]) == (14.9, "a", "b")
    fast = fmax.fmax_row({"fmax_mhz": 100.0}, unit="u", config="c")
    assert fast["meets_target"] and fast["to_target_mhz"] == 0.0
    stuck = fmax.fmax_row({"fmax_mhz": None}, unit="u", config="c")
    assert stuck["routed"] is False and "meets_target" not in stuck and stuck["fmax_mhz"] is None


def test_a_run_past_its_time_out_is_a_row_without_fmax_and_a_failure_is_raised(monkeypatch):
    from hhe_gen.flow import synth
    from hhe_gen.flow.tools import ToolError

    def timed_out(*a, **kw):
        raise ToolError(["nextpnr-ecp5"], None, "", "", "/tmp", reason="timed out after 1 s")

    def failed(*a, **kw):
        raise ToolError(["nextpnr-ecp5"], 1, "", "ERROR: no", "/tmp")

    monkeypatch.setattr(synth, "synth_ecp5", timed_out)
    row = fmax.unit_fmax("unit", unit="memory_unit", params="toy", lanes=1, rubato=None, timeout=1)
    assert row["routed"] is False and row["unit"] == "memory unit" and row["config"] == "toy, 1 lane"
    monkeypatch.setattr(synth, "synth_ecp5", failed)
    with pytest.raises(ToolError):
        fmax.unit_fmax("unit", unit="memory_unit", params="toy", lanes=1, rubato=None)


def test_an_unknown_unit_names_the_parameter_and_the_units_there_are():
    from hhe_gen.params.errors import ParameterError
    with pytest.raises(ParameterError, match="unit.*memory_unit") as info:
        fmax.unit_fmax("unit", unit="no_such_unit", params="toy", lanes=1, rubato=None)
    assert "rubato_unit" not in str(info.value)           # the toy CKKS engine has no Rubato unit


def test_the_plot_shows_rows_with_and_without_fmax(tmp_path):
    rows = [fmax.fmax_row({"fmax_mhz": f}, unit=u, config="c") for u, f in (("a", 67.2), ("b", 103.5), ("c", None))]
    path = fmax.plot_fmax(rows, tmp_path / "x" / "fmax.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    written = bench.summarise([{"group": "fmax", "name": "a", "metrics": rows[0]}], tmp_path)
    assert written == [str(tmp_path / "fmax.png")]


def test_every_registered_core_row_builds_its_design():
    # (the run itself is hours; a row whose parameters its core refuses would only fail then)
    from hhe_gen.cores.unused import mark_unused
    for case in bench.cases(["fmax"]):
        if case.params["what"] in ("ntt", "rubato"):
            kw = {k: v for k, v in case.params.items() if k != "what"}
            component, name, _, _ = fmax._BUILDERS[case.params["what"]](**kw)
            mark_unused(component, deep=True)
            assert name

"""``hhe-gen bench soc``: its cases are registered outside --quick, and the wire time is the
frames' bytes at 8 ns."""

from hhe_gen.apps import bench
from hhe_gen.apps.bench.soc import wire_ns


def test_soc_cases_are_registered_outside_quick():
    names = {c.name for c in bench.cases(["soc"])}
    assert {"sim-toy", "sim-dna-hhe"} <= names
    assert not [c for c in bench.cases(["soc"], quick=True)]


def test_wire_time_counts_every_frame_byte():
    # N = 64, 2 rows: 4 packets of 64 coefficients; 24 + 512 payload + 66 on the wire = 602 bytes each
    assert wire_ns(64, 2, 181) == 4 * 602 * 8
    # N = 2^13, 3 rows, 181 per packet: 45 full packets and one of 47 per row, 6 rows
    assert wire_ns(8192, 3, 181) == 6 * (45 * (24 + 8 * 181 + 66) + (24 + 8 * 47 + 66)) * 8


def test_only_picks_cases_by_name_or_group_and_name_quick_or_not():
    import pytest

    from hhe_gen.params.errors import ParameterError
    picked = bench.cases(["soc"], quick=True, names=["ecpix5-toy", "soc/ecpix5-dna-hhe-1-lane"])
    assert sorted(c.name for c in picked) == ["ecpix5-dna-hhe-1-lane", "ecpix5-toy"]
    assert {c.name: c.params.get("lanes", 2) for c in picked} == {"ecpix5-dna-hhe-1-lane": 1, "ecpix5-toy": 2}
    with pytest.raises(ParameterError, match="only"):
        bench.cases(["soc"], names=["no-such-case"])
    with pytest.raises(ParameterError, match="only"):
        bench.cases(["accel"], names=["ecpix5-toy"])        # a case of another group


def test_bench_list_prints_the_cases_and_runs_nothing(capsys):
    from hhe_gen.apps.cli import main
    assert main(["bench", "soc", "--only", "ecpix5-dna-hhe-1-lane", "--list"]) == 0
    out = capsys.readouterr().out
    assert "ecpix5-dna-hhe-1-lane" in out and "ecpix5-toy" not in out

"""``hhe-gen bench soc``: its cases are registered outside --quick, and the wire time is the
frames' bytes at 8 ns; ``soc build`` and the bench row of a design that does not route."""

from hhe_gen.apps import bench
from hhe_gen.apps.bench.soc import wire_ns


def test_soc_cases_are_registered_outside_quick():
    names = {c.name for c in bench.cases(["soc"])}
    assert {"sim-toy", "sim-dna-hhe"} <= names
    assert not [c for c in bench.cases(["soc"], quick=True)]


def test_wire_time_counts_every_frame_byte():
    # N = 64, 2 rows: 4 packets of 64 coefficients; 24 + 512 + 4 payload + 66 on the wire = 606 bytes each
    assert wire_ns(64, 2, 180) == 4 * 606 * 8
    # N = 2^13, 3 rows, 180 per packet: 45 full packets and one of 92 per row, 6 rows; each payload
    # a 24-byte header, 8 bytes per coefficient, a 4-byte CRC
    assert wire_ns(8192, 3, 180) == 6 * (45 * (24 + 8 * 180 + 4 + 66) + (24 + 8 * 92 + 4 + 66)) * 8


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


def _unrouted_report(**_):
    congestion = {"iteration": 23, "overuse": 21_014, "modules": [
        {"module": "hhe_accel.sampler_unit.xof", "overuse": 6934, "share": 0.33, "nets": 2110},
        {"module": "hhe_accel.manager.scoreboard", "overuse": 5804, "share": 0.2762, "nets": 1890},
        {"module": "soc:builder_csr", "overuse": 347, "share": 0.0165, "nets": 143},
        {"module": "hhe_accel.ntt_unit.ntt", "overuse": 300, "share": 0.0143, "nets": 90}]}
    return {"board": "ecpix5", "fpga": "LFE5UM5G-85F", "params": "toy", "lanes": 1, "fits": True, "routed": False,
            "timing_met": False, "clocks": {}, "route_failure": "router2 does not converge: 7,276 overused wires",
            "router_trace": [(1, 75447), (15, 7276)], "congestion": congestion, "yosys_s": 1.0, "nextpnr_s": 2.0,
            "utilisation": {"TRELLIS_COMB": {"used": 55685, "available": 83640}}}


def test_a_design_that_does_not_route_says_where_it_is_congested(monkeypatch, capsys):
    import hhe_gen.boards.build as build
    from hhe_gen.apps.cli import main
    monkeypatch.setattr(build, "build_board", lambda *a, **k: _unrouted_report())
    assert main(["soc", "build", "--board", "ecpix5", "--params", "toy", "--lanes", "1"]) == 1
    out = capsys.readouterr().out
    assert "DOES NOT ROUTE" in out and "7,276 overused wires" in out
    assert "iteration 23" in out and "hhe_accel.sampler_unit.xof" in out and "33.0 %" in out
    # the bench row names the three most congested modules
    from hhe_gen.apps.bench.soc import soc_on_ecpix5
    row = soc_on_ecpix5("toy", 60.0, 1)
    assert row["routed"] is False and row["fmax_mhz"] == {}
    assert row["most_congested"] == ("hhe_accel.sampler_unit.xof 33 %, hhe_accel.manager.scoreboard 28 %, "
                                     "soc:builder_csr 2 %")


def test_a_routed_design_shows_the_critical_paths_of_its_missed_clocks(monkeypatch, capsys):
    import hhe_gen.boards.build as build
    from hhe_gen.apps.bench.soc import soc_on_ecpix5
    from hhe_gen.apps.cli import main
    path = {"ns": 19.61, "routing_ns": 16.76, "lut": 18, "carry": 0, "dsp": 0,
            "modules": ["soc:ethcore_mac", "soc:builder_liteethudpipcore", "soc:ethcore_ip", "soc:etherbone_probe"]}
    report = {**_unrouted_report(), "routed": True, "route_failure": None, "bitstream": "/x/top.bit",
              "load": "openFPGALoader --board ecpix5 /x/top.bit",
              "clocks": {"sys_clk": {"constraint": 75.0, "achieved": 51.0, "met": False},
                         "eth_rx": {"constraint": 125.0, "achieved": 168.5, "met": True}},
              "critical_paths": {"sys_clk": path, "eth_rx": {**path, "modules": ["soc:storage_10"]}}}
    monkeypatch.setattr(build, "build_board", lambda *a, **k: report)
    assert main(["soc", "build", "--board", "ecpix5", "--params", "toy", "--lanes", "1"]) == 1   # a clock missed
    out = capsys.readouterr().out
    assert "MISSED" in out and "19.61" in out and "soc:etherbone_probe" in out
    assert "soc:storage_10" not in out                          # a clock that is met has no row
    assert "where routing is congested" not in out and "load it: openFPGALoader" in out
    row = soc_on_ecpix5("toy", 60.0, 1)
    assert row["most_congested"] is None
    assert row["critical_paths"] == {"sys_clk": "19.6 ns through soc:ethcore_mac, soc:builder_liteethudpipcore, "
                                                "soc:ethcore_ip"}

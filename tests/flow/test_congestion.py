"""router2's congestion heatmaps summed by module (hhe_gen.flow.congestion), the file names
nextpnr-ecp5 really writes them under, and the modules a critical path runs through."""

import pytest

from hhe_gen.flow.congestion import (HEATMAP_PREFIX, congestion_by_module, module_of, read_net_heatmap,
                                     summarise_heatmaps)
from hhe_gen.flow.gateware import _router
from hhe_gen.params.errors import ParameterError

# names as Yosys leaves them in a flattened SoC (taken from a toy-ring ECPIX-5 run)
NETS = {
    "hhe_accel.sampler_unit.xof.pos_LUT4_C_D_LUT4_D_Z_LUT4_Z_D_LUT4_D_1_Z[2]": "hhe_accel.sampler_unit.xof",
    "hhe_accel.manager.scoreboard.e_disp15_LUT4_B_Z_LUT4_D_Z[1]": "hhe_accel.manager.scoreboard",
    "hhe_accel.sampler_unit.beat_TRELLIS_FF_Q_CE_LUT4_Z_D[0]": "hhe_accel.sampler_unit.beat",
    "elaborate_with_firmware_hheecpix5soc_hheecpix5soc_ethcore_mac_core_tx_crc_reg[3]": "soc:ethcore_mac",
    "builder_csr_bankarray_interface0_bank_bus_dat_r_LUT4_Z[2]": "soc:builder_csr",
    "VexRiscv.dataCache_1_.ways_0_data": "VexRiscv.dataCache_1_.ways_0_data",
    "storage_10.0.1_DO_1": "soc:storage_10",                                   # a LiteX memory's slice
}


def test_a_net_belongs_to_the_module_its_name_starts_with():
    for net, module in NETS.items():
        assert module_of(net) == module, net
    assert module_of("hhe_accel.manager.scoreboard.e_disp15_LUT4_B_Z", depth=2) == "hhe_accel.manager"
    assert module_of("hhe_accel.ntt_unit_LUT4_Z", depth=2) == "hhe_accel.ntt_unit"
    assert module_of("hhe_accel.ntt_unit_LUT4_Z", depth=1) == "hhe_accel"
    with pytest.raises(ParameterError, match="depth"):
        module_of("x.y", depth=0)


def test_overuse_is_summed_by_module_the_most_congested_first(tmp_path):
    path = tmp_path / "router2_congestion_by_net_4.csv"
    path.write_text("hhe_accel.sampler_unit.xof.a[0],5\n"
                    "hhe_accel.sampler_unit.xof.b_LUT4_Z,3\n"
                    "hhe_accel.buffers.b0.x,,odd,name,2\n"          # commas inside a net's name
                    "hhe_accel.manager.scoreboard.e_disp1,6\n"
                    "not a row\n\n")
    rows = read_net_heatmap(path)
    assert rows == [("hhe_accel.sampler_unit.xof.a[0]", 5), ("hhe_accel.sampler_unit.xof.b_LUT4_Z", 3),
                    ("hhe_accel.buffers.b0.x,,odd,name", 2), ("hhe_accel.manager.scoreboard.e_disp1", 6)]
    by = congestion_by_module(rows)
    assert [(m["module"], m["overuse"], m["nets"]) for m in by] == [
        ("hhe_accel.sampler_unit.xof", 8, 2), ("hhe_accel.manager.scoreboard", 6, 1), ("hhe_accel.buffers.b0", 2, 1)]
    assert by[0]["share"] == pytest.approx(0.5) and sum(m["share"] for m in by) == pytest.approx(1)
    assert congestion_by_module([]) == []


def test_the_summary_is_of_the_last_iteration_with_overuse(tmp_path):
    (tmp_path / "router2_congestion_by_net_1.csv").write_text("a.b.c,9\nd.e.f,1\n")
    (tmp_path / "router2_congestion_by_net_2.csv").write_text("a.b.c,2\n")
    (tmp_path / "router2_congestion_by_net_10.csv").write_text("d.e.f,4\na.b.c,1\n")   # 10 after 2, not before
    (tmp_path / "router2_congestion_by_net_11.csv").write_text("")                    # routed
    (tmp_path / "router2_congestion_by_coordinate_11.csv").write_text("0,0\n")
    (tmp_path / "other_congestion_by_net_12.csv").write_text("x.y.z,5\n")              # another prefix
    s = summarise_heatmaps(tmp_path, "router2", top=1)
    assert s == {"iteration": 10, "overuse": 5, "modules": [{"module": "d.e.f", "overuse": 4, "share": 0.8,
                                                             "nets": 1}]}
    assert len(list(tmp_path.glob("router2_*.csv"))) == 5
    summarise_heatmaps(tmp_path, "router2", remove=True)
    assert [p.name for p in tmp_path.iterdir()] == ["other_congestion_by_net_12.csv"]
    assert summarise_heatmaps(tmp_path, "router2") is None


def test_the_router_is_read_from_nextpnrs_options():
    assert _router(("--placer", "static", "--router", "router2")) == "router2"
    assert _router(("--router", "router1")) == "router1"
    assert _router(()) == "router1" and _router(("--router",)) == "router1"


@pytest.mark.toolchain
def test_nextpnr_writes_the_heatmaps_the_flow_reads(tmp_path):
    """A small ECP5 design through Yosys and nextpnr-ecp5 with router2: the heatmap files are where
    :func:`summarise_heatmaps` looks (one per iteration, by net)."""
    from pathlib import Path

    from hhe_gen.flow.runner import run
    (tmp_path / "top.v").write_text(
        "module top(input clk, input [7:0] a, b, output reg [15:0] q);\n"
        "  reg [15:0] s; always @(posedge clk) begin s <= a * b + s; q <= s ^ {b, a}; end\nendmodule\n")
    run("yosys", ["-q", "-p", "synth_ecp5 -top top -json top.json", "top.v"], cwd=tmp_path, timeout=300)
    (tmp_path / HEATMAP_PREFIX).parent.mkdir()
    run("nextpnr-ecp5", ["--25k", "--package", "CABGA256", "--json", "top.json", "--router", "router2",
                         "--router2-heatmap", HEATMAP_PREFIX, "--quiet", "--timing-allow-fail"],
        cwd=tmp_path, timeout=600)
    folder = (tmp_path / HEATMAP_PREFIX).parent
    name = Path(HEATMAP_PREFIX).name
    assert list(folder.glob(f"{name}_congestion_by_net_*.csv")), sorted(p.name for p in folder.iterdir())
    summarise_heatmaps(folder, name, remove=True)
    assert not list(folder.glob(f"{name}_*.csv"))


def _segment(kind, cell, delay, net=""):
    seg = {"type": kind, "delay": delay, "from": {"cell": cell, "port": "Q0"}, "to": {"cell": cell, "port": "A0"}}
    if net:
        seg["net"] = net
    return seg


def test_a_critical_path_names_the_modules_it_runs_through():
    """The accelerator clock's path of the routed 1-lane toy SoC, shortened: scoreboard -> sampler
    -> the XOF's state enable."""
    from hhe_gen.flow.synth_reports import critical_path
    path = [_segment("clk-to-q", "hhe_accel.manager.scoreboard.port__addr$397_TRELLIS_FF_Q", 0.31),
            _segment("routing", "", 3.5, "hhe_accel.manager.scoreboard.e_done11_LUT4_C_1_D[0]"),
            _segment("logic", "hhe_accel.manager.scoreboard.inflight_sampler_LUT4_C", 0.14),
            _segment("routing", "", 2.78, "hhe_accel.sampler_unit.beat_TRELLIS_FF_Q_CE_LUT4_Z_D[0]"),
            _segment("logic", "hhe_accel.sampler_unit.ternary.gather.full_LUT4_Z", 0.14),
            _segment("routing", "", 6.13, "hhe_accel.sampler_unit.ternary.gather.full_TRELLIS_FF_Q_CE_LUT4_Z_B"),
            _segment("setup", "hhe_accel.sampler_unit.xof.rounds.i_state_TRELLIS_FF_Q_395", 0.22)]
    report = {"critical_paths": [{"from": "posedge $glbnet$accel_clk", "to": "posedge $glbnet$accel_clk",
                                  "path": path}]}
    cp = critical_path(report, "$glbnet$accel_clk")
    assert cp["modules"] == ["hhe_accel.manager.scoreboard", "hhe_accel.sampler_unit.beat",
                             "hhe_accel.sampler_unit.ternary", "hhe_accel.sampler_unit.xof"]
    assert cp["ns"] == pytest.approx(13.22) and cp["routing_ns"] == pytest.approx(12.41) and cp["lut"] == 2
    assert critical_path(report, "$glbnet$sys_clk") is None

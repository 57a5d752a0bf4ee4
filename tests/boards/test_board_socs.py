"""The board SoCs elaborated by LiteX at the toy ring (no software, no place and route): the
accelerator on LiteDRAM native ports with the vault above the mapped DRAM, no L2 cache, the
accelerator's own PLL output, what the host reads in ``soc.json``; and their bad parameters.  The
bitstream itself is under the slow marker."""

import pytest

pytest.importorskip("litex")

from hhe_gen.params.errors import ParameterError  # noqa: E402


def _elaborate(tmp_path_factory, soc_class, **kwargs):
    from pathlib import Path

    from litex.soc.integration.builder import Builder

    from hhe_gen.engine.config import AcceleratorConfig
    from hhe_gen.engine.generate_accel import generate_accel
    from hhe_gen.engine.memory_map import MemoryMap
    from hhe_gen.params.presets import preset
    from hhe_gen.soc.accel_instance import load_manifest

    out = tmp_path_factory.mktemp(soc_class.__name__)
    p = preset("toy")
    gen = generate_accel(AcceleratorConfig(p, 2), out / "accel", testbench=False, name="hhe_accel")
    layout = MemoryMap.for_params(p)
    soc = soc_class(load_manifest(gen["paths"]["manifest"]), Path(gen["paths"]["verilog"]).resolve(), layout, **kwargs)
    Builder(soc, output_dir=str(out / "build"), compile_software=False, compile_gateware=False).build(run=False)
    verilog = next((out / "build" / "gateware").glob("*.v")).read_text()
    return soc, verilog, layout


@pytest.fixture(scope="module")
def ecpix5(tmp_path_factory):
    from hhe_gen.boards.ecpix5 import HheEcpix5SoC
    return _elaborate(tmp_path_factory, HheEcpix5SoC, accel_clk_freq=60e6)


@pytest.fixture(scope="module")
def arty(tmp_path_factory):
    from hhe_gen.boards.arty_a7 import HheArtyA7SoC
    return _elaborate(tmp_path_factory, HheArtyA7SoC)


def test_ecpix5_maps_only_the_lower_dram_and_puts_the_vault_above_it(ecpix5):
    from hhe_gen.boards.dram_board import VAULT_ORIGIN
    from hhe_gen.boards.ecpix5 import MAPPED_DRAM
    soc, verilog, layout = ecpix5
    assert soc.bus.regions["main_ram"].size == MAPPED_DRAM
    assert soc.bus.regions["keyvault"].origin == VAULT_ORIGIN and not soc.bus.regions["keyvault"].cached
    info = soc.info()
    assert info["vault"] == VAULT_ORIGIN and info["ram_words"] == MAPPED_DRAM // 8
    assert info["windows"][0]["first"] == layout.address("sk")
    assert soc.accel.bus is None, "on a board the accelerator's memory is LiteDRAM, not a bus master"
    bridge = soc.accel.bridge
    assert bridge.reader.port.data_width == bridge.writer.port.data_width == 64
    import re
    instances = re.findall(r"^\s*hhe_accel\s+\w+\s*\(", verilog, re.MULTILINE)
    assert len(instances) == 1, "the SoC instantiates the generated accelerator once"


def test_boards_run_the_lite_vexriscv_and_a_4_kb_sram(ecpix5, arty):
    # the block RAMs are what a DNA-HHE accelerator runs out of first: no data cache, a 2 KB
    # instruction cache, the SRAM the firmware's data and stack need
    from pathlib import Path
    for soc, _, _ in (ecpix5, arty):
        assert soc.cpu.variant == "lite"
        cpu_files = {Path(source[0]).name for source in soc.platform.sources if "VexRiscv" in str(source[0])}
        assert cpu_files == {"VexRiscv_Lite.v"}
        assert soc.bus.regions["sram"].size == 0x1000


def test_ecpix5_has_no_l2_cache_between_etherbone_and_the_dram(ecpix5):
    soc, verilog, _ = ecpix5
    assert not hasattr(soc, "l2_cache"), "the accelerator reads the DRAM directly: an L2 cache would hide writes"
    assert "l2_cache" not in verilog


def test_ecpix5_accelerator_runs_on_its_own_pll_output(ecpix5):
    soc, verilog, _ = ecpix5
    assert soc.accel_clk_freq == 60e6 and soc.info()["accel_clk_freq"] == 60e6
    outputs = [f for _, f, *_ in soc.crg.pll.clkouts.values()]
    assert 60e6 in outputs
    assert "accel_clk" in verilog


def test_arty_uses_the_mii_phy_and_a_128_bit_dram_behind_64_bit_ports(arty):
    from hhe_gen.boards.arty_a7 import MAPPED_DRAM
    soc, _, _ = arty
    assert soc.bus.regions["main_ram"].size == MAPPED_DRAM
    assert type(soc.ethphy).__name__ == "LiteEthPHYMII"
    assert soc.sdram.crossbar.controller.data_width == 128
    assert soc.accel.bridge.reader.port.data_width == 64
    assert soc.accel_clk_freq is None


def test_bad_board_parameters_name_what_is_wrong():
    from hhe_gen.boards.build import build_board
    from hhe_gen.boards.ecpix5 import HheEcpix5SoC
    from hhe_gen.params.presets import preset
    with pytest.raises(ParameterError, match="board"):
        build_board("de10-nano", preset("toy"))
    with pytest.raises(ParameterError, match="sys_clk_freq"):
        HheEcpix5SoC({}, "x.v", None, sys_clk_freq=200e6)


def test_placer_and_router_options_replace_the_flows():
    from hhe_gen.boards.build import ECP5_NEXTPNR_ARGS, nextpnr_options
    assert nextpnr_options() == ECP5_NEXTPNR_ARGS
    args = nextpnr_options(placer="heap", router="router1")
    assert args[args.index("--placer") + 1] == "heap" and args[args.index("--router") + 1] == "router1"
    assert args.count("--placer") == 1 and args.count("--router") == 1
    with pytest.raises(ParameterError, match="placer"):
        nextpnr_options(placer="sa")
    with pytest.raises(ParameterError, match="router"):
        nextpnr_options(router="router3")


def test_accelerator_clock_out_of_range_is_refused():
    from hhe_gen.boards.arty_a7 import HheArtyA7SoC
    from hhe_gen.boards.ecpix5 import HheEcpix5SoC
    with pytest.raises(ParameterError, match="accel_clk_freq"):
        HheEcpix5SoC({}, "x.v", None, accel_clk_freq=1e9)
    with pytest.raises(ParameterError, match="toolchain"):
        HheArtyA7SoC({}, "x.v", None, toolchain="ise")


@pytest.mark.slow
@pytest.mark.toolchain
def test_ecpix5_bitstream_at_the_toy_ring(tmp_path):
    """Yosys, nextpnr-ecp5 and ecppack on the whole SoC (toy ring, CKKS, 1 lane: 2 lanes do not
    route; about 40 minutes), with the post-route clocks and the critical path of each."""
    from pathlib import Path

    from hhe_gen.boards.build import build_board
    from hhe_gen.params.presets import preset
    r = build_board("ecpix5", preset("toy"), 1, None, accel_clk_freq=60e6, out_dir=tmp_path / "out")
    assert r["routed"] and Path(r["bitstream"]).stat().st_size > 100_000
    # the report names the copy in -o, the one to load; the cache's copy stays named beside it
    assert Path(r["bitstream"]).parent == tmp_path / "out" and r["load"].endswith(r["bitstream"])
    assert Path(r["cached_bitstream"]).read_bytes() == Path(r["bitstream"]).read_bytes()
    assert r["utilisation"]["DP16KD"]["used"] <= r["utilisation"]["DP16KD"]["available"]
    sys_clock = next(name for name in r["clocks"] if "sys" in name)
    assert r["critical_paths"][sys_clock]["ns"] == pytest.approx(1000 / r["clocks"][sys_clock]["achieved"], rel=0.05)
    assert r["router_trace"][-1][1] == 0                       # router2's last iteration: nothing overused
    assert r["load"].startswith("openFPGALoader --board ecpix5 ")


@pytest.mark.slow
@pytest.mark.toolchain
def test_arty_a7_synthesis_and_vivado_script_at_the_toy_ring():
    """Yosys synth_xilinx on the whole SoC (toy ring) and LiteX's Vivado script beside it."""
    from pathlib import Path

    from hhe_gen.boards.build import build_board
    from hhe_gen.params.presets import preset
    r = build_board("arty-a7", preset("toy"), 2, None)
    assert r["area"]["LUT"] > 10_000 and r["area"]["DSP48E1"] > 0
    assert any(s.endswith("digilent_arty.tcl") for s in r["scripts"])
    assert "synth_design" in Path(next(s for s in r["scripts"] if s.endswith(".tcl"))).read_text()


@pytest.mark.parametrize("board", ["ecpix5", "arty"])
def test_the_main_ram_and_the_vault_answer_the_bus_from_a_register(board, request):
    """LiteDRAM's Wishbone bridges acknowledge straight from the DRAM port's handshake; on the boards
    both stand behind the registered stage (soc/wishbone_stage.py), so the bus's ack does not come
    from LiteDRAM's arbiter (the ECPIX-5 system clock's critical path without it)."""
    from hhe_gen.soc.wishbone_stage import WishboneStage
    soc = request.getfixturevalue(board)[0]
    stage = soc.main_ram_stage
    assert isinstance(stage, WishboneStage) and soc.bus.slaves["main_ram"] is stage.bus
    assert isinstance(soc.accel.vault.stage, WishboneStage)

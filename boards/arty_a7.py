"""The hhe-gen SoC on Digilent's Arty A7-100T (XC7A100T, MII Ethernet PHY, 256 MB of DDR3).

The platform and the clock generator are LiteX-Boards' (``digilent_arty``); the SoC is
:class:`.dram_board.DramBoardSoC`: the bus maps the lower 128 MB of the DDR3, the key vault lives
above.  The DDR3 runs at four times the system clock (A7DDRPHY, 128-bit native width behind the
accelerator's 64-bit ports).  The open toolchain here stops at Yosys ``synth_xilinx``; the build
also writes LiteX's Vivado script for those who place and route.

Parameters
----------
manifest, verilog, layout   the generated accelerator and its memory map
sys_clk_freq : float        system clock (LiteX's Arty default: 100 MHz)
accel_clk_freq : float or None   the accelerator's clock; None: the system clock
firmware : list of int or None   the ROM's words (None: LiteX's BIOS, the build's first pass)
toolchain : str             LiteX's toolchain for the written scripts ("vivado" or "openxc7")

Members
-------
as :class:`.dram_board.DramBoardSoC`; ``ddrphy`` (A7DDRPHY), ``ethphy`` (LiteEthPHYMII)
"""

from __future__ import annotations

from hhe_gen.params.errors import ParameterError

from .dram_board import DramBoardSoC

__all__ = ["HheArtyA7SoC", "MAPPED_DRAM", "TOP"]

MAPPED_DRAM = 128 << 20
"""Bytes of the DDR3 the SoC bus maps (the main RAM); the key vault sits above them."""
TOP = "digilent_arty"


class HheArtyA7SoC(DramBoardSoC):
    """The SoC on the Arty A7-100T (module docstring)."""

    def __init__(self, manifest: dict, verilog, layout, *, sys_clk_freq: float = 100e6,
                 accel_clk_freq: float | None = None, firmware=None, toolchain: str = "vivado", **net):
        from litedram.modules import MT41K128M16
        from litedram.phy import s7ddrphy
        from liteeth.phy.mii import LiteEthPHYMII
        from litex_boards.platforms import digilent_arty
        from litex_boards.targets.digilent_arty import _CRG

        if not 50e6 <= sys_clk_freq <= 125e6:
            raise ParameterError("sys_clk_freq", sys_clk_freq, "50 .. 125 MHz (the DDR3 runs at four times it)")
        if toolchain not in ("vivado", "openxc7"):
            raise ParameterError("toolchain", toolchain, "'vivado' or 'openxc7'")
        platform = digilent_arty.Platform(variant="a7-100", toolchain=toolchain)
        self.crg = _CRG(platform, sys_clk_freq)

        def ddrphy():
            return s7ddrphy.A7DDRPHY(platform.request("ddram"), memtype="DDR3", nphases=4, sys_clk_freq=sys_clk_freq)

        def ethphy():
            return LiteEthPHYMII(clock_pads=platform.request("eth_clocks"), pads=platform.request("eth"))

        self.add_board_soc(platform, sys_clk_freq, pll=self.crg.pll, manifest=manifest, verilog=verilog,
                           layout=layout, ddrphy_factory=ddrphy, module=MT41K128M16(sys_clk_freq, "1:4"),
                           mapped_bytes=MAPPED_DRAM, ethphy_factory=ethphy, firmware=firmware,
                           accel_clk_freq=accel_clk_freq, ident="hhe-gen SoC on Arty A7-100T", **net)

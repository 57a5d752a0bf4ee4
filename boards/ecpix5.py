"""The hhe-gen SoC on LambdaConcept's ECPIX-5 (LFE5UM5G-85F, RGMII Ethernet PHY, 512 MB of DDR3).

The platform and the clock generator are LiteX-Boards' (``lambdaconcept_ecpix5``); the SoC is
:class:`.dram_board.DramBoardSoC`: the bus maps the lower 256 MB of the DDR3, the key vault lives
above.  The DDR3 runs at twice the system clock (ECP5DDRPHY, 64-bit native port).

Parameters
----------
manifest, verilog, layout   the generated accelerator and its memory map
sys_clk_freq : float        system clock (LiteX's ECPIX-5 default: 75 MHz)
accel_clk_freq : float or None   the accelerator's clock; None: the system clock
firmware : list of int or None   the ROM's words (None: LiteX's BIOS, the build's first pass)

Members
-------
as :class:`.dram_board.DramBoardSoC`; ``ddrphy`` (ECP5DDRPHY), ``ethphy`` (LiteEthPHYRGMII)
"""

from __future__ import annotations

from hhe_gen.params.errors import ParameterError

from .dram_board import DramBoardSoC

__all__ = ["HheEcpix5SoC", "MAPPED_DRAM", "DEVICE", "PACKAGE", "SPEED", "TOP"]

MAPPED_DRAM = 256 << 20
"""Bytes of the DDR3 the SoC bus maps (the main RAM); the key vault sits above them."""
DEVICE, PACKAGE, SPEED = "um5g-85k", "CABGA554", 8
"""The ECPIX-5's FPGA in nextpnr-ecp5's terms (LFE5UM5G-85F-8BG554)."""
TOP = "lambdaconcept_ecpix5"
"""The top module (LiteX names it after the platform)."""


class HheEcpix5SoC(DramBoardSoC):
    """The SoC on the ECPIX-5 (module docstring)."""

    def __init__(self, manifest: dict, verilog, layout, *, sys_clk_freq: float = 75e6,
                 accel_clk_freq: float | None = None, firmware=None, **net):
        from litedram.modules import MT41K256M16
        from litedram.phy import ECP5DDRPHY
        from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII
        from litex_boards.platforms import lambdaconcept_ecpix5
        from litex_boards.targets.lambdaconcept_ecpix5 import _CRG

        if not 50e6 <= sys_clk_freq <= 125e6:
            raise ParameterError("sys_clk_freq", sys_clk_freq, "50 .. 125 MHz (the DDR3 runs at twice it)")
        platform = lambdaconcept_ecpix5.Platform(device="85F", toolchain="trellis")
        self.crg = _CRG(platform, sys_clk_freq)

        def ddrphy():
            phy = ECP5DDRPHY(platform.request("ddram"), sys_clk_freq=sys_clk_freq)
            self.comb += [self.crg.stop.eq(phy.init.stop), self.crg.reset.eq(phy.init.reset)]
            return phy

        def ethphy():
            return LiteEthPHYRGMII(clock_pads=platform.request("eth_clocks"), pads=platform.request("eth"),
                                   rx_delay=0e-9)

        self.add_board_soc(platform, sys_clk_freq, pll=self.crg.pll, manifest=manifest, verilog=verilog,
                           layout=layout, ddrphy_factory=ddrphy, module=MT41K256M16(sys_clk_freq, "1:2"),
                           mapped_bytes=MAPPED_DRAM, ethphy_factory=ethphy, firmware=firmware,
                           accel_clk_freq=accel_clk_freq, ident="hhe-gen SoC on ECPIX-5", **net)

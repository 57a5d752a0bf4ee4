"""The simulated SoC: VexRiscv, LiteEth (hybrid core: the CPU's MAC, Etherbone and the hardware UDP
port on one PHY model), RAM for the accelerator's data, the key vault and the accelerator.

::

    host (TAP in a network namespace) <-> LiteEthPHYModel <-> LiteEthUDPIPCore (32-bit, sys clock)
                                                               |- Etherbone: bus master (host access)
                                                               |- CPU MAC (ethmac)
                                                               '- UDP port ``udp_port`` <-> accelerator
    VexRiscv + ROM + SRAM + main RAM (the engine's memory map at ``main_ram``) + CSRs + key vault

Parameters
----------
manifest, verilog     the generated accelerator (``hhe-gen generate accel``)
layout : MemoryMap    the programs' memory map (its secret blocks go to the key vault)
sys_clk_freq : int    nominal clock (the simulation counts cycles; timers use it)
udp_port : int        the hardware UDP port of the accelerator (source port of its packets, and the
                      port ``recv`` listens on)
ip_address : str      the Etherbone / hardware UDP address; the CPU's MAC is one below it
remote_ip : str       the host's address (the TAP's)
firmware : list of int or None   the ROM's 32-bit words (``soc/firmware``); None: LiteX's BIOS
accel_clk_freq : int or None     the accelerator's own clock (a domain ``accel`` and the crossing of
                      :mod:`.clock_crossing`, as on a board where it cannot meet the system clock);
                      None: it runs on the system clock

Members
-------
accel, mailbox, info() : :class:`.integration.HheSoC`'s
"""

from __future__ import annotations

from migen import ClockDomain, ResetSignal
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.build.generic_platform import Pins, Subsignal
from litex.build.io import CRG
from litex.build.sim import SimPlatform
from litex.soc.integration.soc_core import SoCCore

from hhe_gen.params.checks import check_int

from .integration import DEFAULT_IP, DEFAULT_REMOTE_IP, DEFAULT_UDP_PORT, HheSoC, pow2_at_least

__all__ = ["SIM_IO", "HheSimSoC"]

SIM_IO = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("accel_clk", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)), Subsignal("source_data", Pins(8)),
        Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)), Subsignal("sink_data", Pins(8))),
    ("eth_clocks", 0, Subsignal("tx", Pins(1)), Subsignal("rx", Pins(1))),
    ("eth", 0,
        Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)), Subsignal("source_data", Pins(8)),
        Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)), Subsignal("sink_data", Pins(8))),
]
"""The pads LiteX's simulator modules (``serial2console``, ``ethernet``) attach to."""


class HheSimSoC(SoCCore, HheSoC):
    """The SoC for Verilator (module docstring)."""

    def __init__(self, manifest: dict, verilog, layout, *, sys_clk_freq: int = int(1e6),
                 udp_port: int = DEFAULT_UDP_PORT, ip_address: str = DEFAULT_IP, remote_ip: str = DEFAULT_REMOTE_IP,
                 firmware=None, accel_clk_freq: int | None = None, **kwargs):
        from liteeth.phy.model import LiteEthPHYModel

        platform = SimPlatform("SIM", SIM_IO)
        self.crg = CRG(platform.request("sys_clk"))
        self.accel_clk_freq = accel_clk_freq
        if accel_clk_freq is not None:
            check_int("accel_clk_freq", accel_clk_freq, 1000, 10 * sys_clk_freq)
            self.cd_accel = ClockDomain()
            self.comb += self.cd_accel.clk.eq(platform.request("accel_clk"))
            self.specials += AsyncResetSynchronizer(self.cd_accel, ResetSignal("sys"))
        SoCCore.__init__(self, platform, clk_freq=sys_clk_freq, ident="hhe-gen SoC (simulation)",
                         cpu_type="vexriscv", uart_name="sim", integrated_rom_size=0x10000,
                         integrated_sram_size=0x4000,
                         integrated_main_ram_size=pow2_at_least(8 * (layout.base + layout.size)),
                         integrated_rom_init=firmware or [], **kwargs)
        self.ethphy = LiteEthPHYModel(platform.request("eth", 0))
        self.add_hhe(manifest, verilog, layout, phy=self.ethphy, ip_address=ip_address, remote_ip=remote_ip,
                     udp_port=udp_port, cd="sys" if accel_clk_freq is None else "accel")

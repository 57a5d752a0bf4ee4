"""The hhe-gen SoC on a board with DRAM and an Ethernet PHY: what the ECPIX-5 and the Arty A7 share.

A board module makes the platform, the clock generator (LiteX-Boards' own) and the PHYs, then calls
:meth:`DramBoardSoC.add_board_soc`, which adds:

- VexRiscv in LiteX's ``lite`` variant (:data:`CPU_VARIANT`: RV32IM, a 2 KB instruction cache
  and no data cache, 6 block RAMs fewer than the standard variant: the firmware only drives the
  accelerator, and the block RAMs are what a DNA-HHE accelerator runs out of first),
  the firmware in a ROM sized to it (LiteX's BIOS, in a 128 KB ROM, for the first pass of the
  build only: :mod:`hhe_gen.soc.soc_build`), a 4 KB SRAM (:data:`SRAM_BYTES`: the firmware's data
  and stack);
- LiteDRAM on the board's DRAM, **without an L2 cache**: the accelerator writes the DRAM behind the
  CPU's back, and what Etherbone writes must reach the DRAM before the accelerator reads it; the
  main RAM's Wishbone bridge behind a registered stage (:class:`hhe_gen.soc.wishbone_stage.WishboneStage`:
  two cycles more per bus access, the bus's ack off LiteDRAM's arbiter);
- the DRAM split in two: the bus maps the lower ``mapped_bytes`` as the main RAM (the engine's
  memory map and the program area); the key vault lives above, reached only by the accelerator's
  native port and the bus's write-only window at :data:`VAULT_ORIGIN`;
- the accelerator's clock: a PLL output of its own (``accel_clk_freq``) when it cannot meet the
  system clock;
- :meth:`hhe_gen.soc.integration.HheSoC.add_hhe` with the memory on two 64-bit native ports.

Members
-------
accel, mailbox, info() : :class:`hhe_gen.soc.integration.HheSoC`'s
accel_clk_freq : float or None
"""

from __future__ import annotations

from migen import ClockDomain, ResetSignal
from migen.genlib.resetsync import AsyncResetSynchronizer

from litex.soc.integration.soc_core import SoCCore
from litex.soc.interconnect import wishbone

from hhe_gen.params.errors import ParameterError
from hhe_gen.soc.accelerator import DramMemory
from hhe_gen.soc.integration import DEFAULT_IP, DEFAULT_REMOTE_IP, DEFAULT_UDP_PORT, HheSoC, has_rubato, \
    pow2_at_least, secret_windows
from hhe_gen.soc.wishbone_stage import WishboneStage

__all__ = ["DramBoardSoC", "VAULT_ORIGIN", "BIOS_ROM", "CPU_VARIANT", "SRAM_BYTES", "rom_size"]

VAULT_ORIGIN = 0x9000_0000
"""Bus address of the key vault's write-only window (the VexRiscv's uncached IO region)."""
BIOS_ROM = 0x20000
"""ROM bytes of the first build pass (LiteX's BIOS with LiteDRAM and LiteEth)."""
CPU_VARIANT = "lite"
"""LiteX's VexRiscv variant on the boards (module docstring)."""
SRAM_BYTES = 0x1000
"""The boards' SRAM: the firmware's data, bss and stack (2 DP16KD)."""


def rom_size(firmware) -> int:
    """ROM bytes for ``firmware`` (32-bit words; None: LiteX's BIOS): a power of two, at least 16 KB."""
    return BIOS_ROM if firmware is None else pow2_at_least(max(4 * len(firmware), 0x4000))


class DramBoardSoC(SoCCore, HheSoC):
    """Base of the board SoCs (module docstring)."""

    def add_board_soc(self, platform, sys_clk_freq: float, *, pll, manifest: dict, verilog, layout, ddrphy_factory,
                      module, mapped_bytes: int, ethphy_factory, firmware=None, accel_clk_freq=None,
                      ident: str, ip_address: str = DEFAULT_IP, remote_ip: str = DEFAULT_REMOTE_IP,
                      udp_port: int = DEFAULT_UDP_PORT, accel_clk_range=(10e6, 250e6)) -> None:
        """``ddrphy_factory()`` / ``ethphy_factory()`` make the PHYs once the SoC is initialised;
        ``pll`` is the clock generator's (for the accelerator's clock); ``module`` LiteDRAM's."""
        lo, hi = accel_clk_range
        if accel_clk_freq is not None and not lo <= accel_clk_freq <= hi:
            raise ParameterError("accel_clk_freq", accel_clk_freq,
                                 f"{lo / 1e6:g} .. {hi / 1e6:g} MHz, or None (the system clock)")
        self.accel_clk_freq = accel_clk_freq
        if accel_clk_freq is not None:
            self.cd_accel = ClockDomain()
            pll.create_clkout(self.cd_accel, accel_clk_freq)
            self.specials += AsyncResetSynchronizer(self.cd_accel, ResetSignal("sys"))
        SoCCore.__init__(self, platform, sys_clk_freq, ident=ident, cpu_type="vexriscv", cpu_variant=CPU_VARIANT,
                         integrated_rom_size=rom_size(firmware), integrated_rom_init=firmware or [],
                         integrated_sram_size=SRAM_BYTES)

        self.ddrphy = ddrphy_factory()
        self.add_sdram("sdram", phy=self.ddrphy, module=module, size=mapped_bytes, l2_cache_size=0)
        # the main RAM behind a registered stage: LiteDRAM's Wishbone bridge acknowledges straight
        # from the DRAM port's handshake, which put LiteDRAM's arbiter on every bus master's ack
        main_ram = self.bus.slaves["main_ram"]
        self.bus.slaves["main_ram"] = wishbone.Interface(data_width=main_ram.data_width, address_width=32,
                                                         addressing=main_ram.addressing)
        self.main_ram_stage = WishboneStage(self.bus.slaves["main_ram"], main_ram)
        g = module.geom_settings
        dram_bytes = (1 << (g.bankbits + g.rowbits + g.colbits)) * self.ddrphy.settings.databits // 8
        vault_bytes = 8 * sum(w for _, w in secret_windows(layout, has_rubato(manifest)))
        if mapped_bytes + vault_bytes > dram_bytes:
            raise ParameterError("layout", layout.n, f"a key vault within the {dram_bytes >> 20} MB of DRAM "
                                 f"above the {mapped_bytes >> 20} MB the bus maps")
        if 8 * (layout.base + layout.size) > mapped_bytes:
            raise ParameterError("layout", layout.n, f"a memory map within the {mapped_bytes >> 20} MB main RAM")
        xbar = self.sdram.crossbar
        dram = DramMemory(read_port=xbar.get_port(mode="read", data_width=64),
                          write_port=xbar.get_port(mode="write", data_width=64),
                          vault_port=xbar.get_port(mode="write", data_width=64),
                          origin=self.mem_map["main_ram"], vault_base=mapped_bytes // 8, vault_origin=VAULT_ORIGIN)
        self.ethphy = ethphy_factory()
        self.add_hhe(manifest, verilog, layout, phy=self.ethphy, ip_address=ip_address, remote_ip=remote_ip,
                     udp_port=udp_port, dram=dram, cd="sys" if accel_clk_freq is None else "accel",
                     vault_origin=VAULT_ORIGIN)

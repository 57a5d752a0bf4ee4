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

Members
-------
accel : :class:`.accelerator.Accelerator`
mailbox : :class:`.mailbox.Mailbox`   the host <-> firmware commands
info() : dict          what the host needs: addresses of the main RAM and the vault, the windows,
                       IPs and ports
"""

from __future__ import annotations

from litex.build.generic_platform import Pins, Subsignal
from litex.build.io import CRG
from litex.build.sim import SimPlatform
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore

from .accelerator import Accelerator
from .mailbox import Mailbox

__all__ = ["SIM_IO", "HheSimSoC", "secret_windows", "SIM_REMOTE_IP", "SIM_IP", "SIM_UDP_PORT"]

SIM_IO = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)), Subsignal("source_data", Pins(8)),
        Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)), Subsignal("sink_data", Pins(8))),
    ("eth_clocks", 0, Subsignal("tx", Pins(1)), Subsignal("rx", Pins(1))),
    ("eth", 0,
        Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)), Subsignal("source_data", Pins(8)),
        Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)), Subsignal("sink_data", Pins(8))),
]
"""The pads LiteX's simulator modules (``serial2console``, ``ethernet``) attach to."""

SIM_REMOTE_IP, SIM_IP, SIM_UDP_PORT = "192.168.1.100", "192.168.1.51", 4791
PROGRAM_WORDS = 512
"""64-bit words at the end of the main RAM where the host leaves programs for the firmware's RUN."""
ETHERBONE_RECORD = 256
"""Words an Etherbone record may carry (LiteEth's ``buffer_depth``, at most 256): a longer record
stalls LiteEth's Etherbone for good, so the host never sends one (:mod:`.host`)."""


def secret_windows(layout) -> list[tuple[int, int]]:
    """The engine word ranges of ``layout`` (a :class:`hhe_gen.engine.memory_map.MemoryMap`) that
    hold secrets: the secret key and its NTT form."""
    return [(layout.address("sk"), layout.n), (layout.address("sk_ntt"), layout.n * layout.primes)]


def _pow2_at_least(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


class HheSimSoC(SoCCore):
    """The SoC for Verilator (module docstring)."""

    def __init__(self, manifest: dict, verilog, layout, *, sys_clk_freq: int = int(1e6),
                 udp_port: int = SIM_UDP_PORT, ip_address: str = SIM_IP, remote_ip: str = SIM_REMOTE_IP,
                 firmware=None, **kwargs):
        from liteeth.common import convert_ip
        from liteeth.phy.model import LiteEthPHYModel

        platform = SimPlatform("SIM", SIM_IO)
        self.layout = layout
        ram_bytes = _pow2_at_least(8 * (layout.base + layout.size))
        self.crg = CRG(platform.request("sys_clk"))
        SoCCore.__init__(self, platform, clk_freq=sys_clk_freq, ident="hhe-gen SoC (simulation)",
                         cpu_type="vexriscv", uart_name="sim", integrated_rom_size=0x10000,
                         integrated_sram_size=0x4000, integrated_main_ram_size=ram_bytes,
                         integrated_rom_init=firmware or [], **kwargs)

        self.ethphy = LiteEthPHYModel(platform.request("eth", 0))
        mac_ip = convert_ip(ip_address) - 1
        self.add_etherbone(phy=self.ethphy, data_width=32, with_ethmac=True, ip_address=ip_address,
                           buffer_depth=ETHERBONE_RECORD,
                           mac_address=0x10E2D5000000, ethmac_address=0x10E2D5000001,
                           ethmac_local_ip=".".join(str((mac_ip >> s) & 0xFF) for s in (24, 16, 8, 0)),
                           ethmac_remote_ip=remote_ip)
        port = self.ethcore_etherbone.udp.crossbar.get_port(udp_port, dw=32)

        self.accel = Accelerator(platform, manifest, verilog, mem_base=self.mem_map["main_ram"],
                                 secret_windows=secret_windows(layout), udp_port=port)
        self.bus.add_master(name="accel", master=self.accel.bus)
        vault = self.accel.vault
        self.bus.add_slave(name="keyvault", slave=vault.bus,
                           region=SoCRegion(origin=None, size=_pow2_at_least(vault.size), cached=False))
        self.irq.add("accel", use_loc_if_exists=True)
        self.mailbox = Mailbox()
        self.timer0.add_uptime()
        self._udp_port, self._ip, self._remote = udp_port, ip_address, remote_ip
        for name, value in (("HHE_N", layout.n), ("HHE_UDP_PORT", udp_port),
                            ("HHE_INSTR_DEPTH", self.accel.instr_depth),
                            ("HHE_LOCAL_IP", mac_ip), ("HHE_REMOTE_IP", convert_ip(remote_ip))):
            self.add_constant(name, value)
        self.add_constant("UART_POLLING")           # the firmware runs without interrupts
        # LiteEth's MAC adds preamble and CRC itself, but the hybrid core does not export the CSR by
        # which LiteX's libliteeth learns that: without this, the CPU's frames carry them twice
        self.add_constant("HW_PREAMBLE_CRC")

    def info(self) -> dict:
        """Addresses and settings the host side needs (written next to the build as soc.json)."""
        vault = self.bus.regions["keyvault"].origin
        windows, offset = [], 0
        for first, words in secret_windows(self.layout):
            windows.append({"first": first, "words": words, "vault_address": vault + 8 * offset})
            offset += words
        return {"main_ram": self.mem_map["main_ram"], "vault": vault, "windows": windows,
                "ip": self._ip, "remote_ip": self._remote, "udp_port": self._udp_port, "etherbone_port": 1234,
                "etherbone_record": ETHERBONE_RECORD,
                "instr_depth": self.accel.instr_depth,
                "layout_words": self.layout.base + self.layout.size, "ram_words": self.integrated_main_ram_size // 8,
                "program_area": self.integrated_main_ram_size // 8 - PROGRAM_WORDS, "program_words": PROGRAM_WORDS,
                "clk_freq": int(self.sys_clk_freq)}

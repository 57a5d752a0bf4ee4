"""What every hhe-gen SoC adds to a LiteX SoC, simulated or on a board: LiteEth's hybrid core on the
SoC's PHY, the accelerator on a hardware UDP port, its memory and key vault, the firmware's mailbox,
the constants the firmware is compiled with, and the description the host reads (``soc.json``).

::

    PHY <-> LiteEthUDPIPCore (hybrid, 32-bit, sys clock)
              |- Etherbone: a bus master for the host
              |- the CPU's MAC (the firmware's SEND)
              '- UDP port ``udp_port`` <-> the accelerator
    VexRiscv + ROM (the firmware) + SRAM + main RAM (the engine's memory map) + CSRs + key vault

A SoC class mixes :class:`HheSoC` into LiteX's ``SoCCore`` (after ``SoCCore.__init__``, with its
main RAM in place) and calls :meth:`HheSoC.add_hhe`.

Parameters (add_hhe)
--------------------
manifest, verilog     the generated accelerator (``hhe-gen generate accel``)
layout : MemoryMap    the programs' memory map (its secret blocks go to the key vault)
phy                   the LiteEth PHY
ip_address : str      Etherbone's and the accelerator's address; the CPU's MAC is one below it
remote_ip : str       the host's address
udp_port : int        the accelerator's UDP port (source port of its packets; ``recv`` listens on it)
dram : :class:`.accelerator.DramMemory` or None   the memory on LiteDRAM (boards); None: a Wishbone master
cd : str              the accelerator's clock domain

Members
-------
accel : :class:`.accelerator.Accelerator`
mailbox : :class:`.mailbox.Mailbox`
hhe_windows : list of (first, words)   the secret windows: sk, sk_ntt and (dual mode) the Rubato key slot
info() : dict         what the host needs: addresses of the main RAM and the vault, the windows, the
                      Rubato key slot, IPs, ports, the program area, the clocks
"""

from __future__ import annotations

from litex.soc.integration.soc import SoCRegion

from .accelerator import Accelerator
from .mailbox import Mailbox

__all__ = ["HheSoC", "secret_windows", "has_rubato", "RUBATO_KEY_WORDS", "DEFAULT_REMOTE_IP", "DEFAULT_IP",
           "DEFAULT_UDP_PORT", "PROGRAM_WORDS", "ETHERBONE_RECORD", "pow2_at_least"]

DEFAULT_REMOTE_IP, DEFAULT_IP, DEFAULT_UDP_PORT = "192.168.1.100", "192.168.1.51", 4791
PROGRAM_WORDS = 512
"""64-bit words at the end of the main RAM where the host leaves programs for the firmware's RUN."""
ETHERBONE_RECORD = 256
"""Words an Etherbone record may carry (LiteEth's ``buffer_depth``, at most 256): a longer record
stalls LiteEth's Etherbone for good, so the host never sends one (:mod:`.host`)."""


RUBATO_KEY_WORDS = 128
"""Engine words of the Rubato key block's slot, right after the CKKS memory map (where
:mod:`hhe_gen.client` and ``hhe-gen soc sim`` put the key, nonce and noise seed): in the vault."""


def secret_windows(layout, rubato: bool = False) -> list[tuple[int, int]]:
    """The engine word ranges of ``layout`` (a :class:`hhe_gen.engine.memory_map.MemoryMap`) that
    hold secrets: the secret key and its NTT form, and (``rubato``: a dual-mode accelerator) the
    Rubato key block's slot after the memory map."""
    windows = [(layout.address("sk"), layout.n), (layout.address("sk_ntt"), layout.n * layout.primes)]
    if rubato:
        windows.append((layout.base + layout.size, RUBATO_KEY_WORDS))
    return windows


def has_rubato(manifest: dict) -> bool:
    """Whether the accelerator of ``manifest`` has the Rubato unit (dual mode)."""
    return bool(manifest.get("parameters", {}).get("rubato"))


def pow2_at_least(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


def _dotted(ip: int) -> str:
    return ".".join(str((ip >> s) & 0xFF) for s in (24, 16, 8, 0))


class HheSoC:
    """The hhe-gen parts of a LiteX SoC (module docstring)."""

    def add_hhe(self, manifest: dict, verilog, layout, *, phy, ip_address: str = DEFAULT_IP,
                remote_ip: str = DEFAULT_REMOTE_IP, udp_port: int = DEFAULT_UDP_PORT, dram=None,
                cd: str = "sys", vault_origin: int | None = None) -> None:
        from liteeth.common import convert_ip

        self.layout = layout
        self.hhe_windows = secret_windows(layout, has_rubato(manifest))
        mac_ip = convert_ip(ip_address) - 1
        self.add_etherbone(phy=phy, data_width=32, with_ethmac=True, ip_address=ip_address,
                           buffer_depth=ETHERBONE_RECORD,
                           mac_address=0x10E2D5000000, ethmac_address=0x10E2D5000001,
                           ethmac_local_ip=_dotted(mac_ip), ethmac_remote_ip=remote_ip)
        port = self.ethcore_etherbone.udp.crossbar.get_port(udp_port, dw=32)

        self.accel = Accelerator(self.platform, manifest, verilog, mem_base=self.mem_map["main_ram"],
                                 secret_windows=self.hhe_windows, udp_port=port, dram=dram, cd=cd)
        if self.accel.bus is not None:
            self.bus.add_master(name="accel", master=self.accel.bus)
        vault = self.accel.vault
        self.bus.add_slave(name="keyvault", slave=vault.bus,
                           region=SoCRegion(origin=vault_origin, size=pow2_at_least(vault.size), cached=False))
        self.irq.add("accel", use_loc_if_exists=True)
        self.mailbox = Mailbox()
        self.timer0.add_uptime()
        self._hhe_net = {"ip": ip_address, "remote_ip": remote_ip, "udp_port": udp_port}
        for name, value in (("HHE_N", layout.n), ("HHE_UDP_PORT", udp_port),
                            ("HHE_INSTR_DEPTH", self.accel.instr_depth),
                            ("HHE_LOCAL_IP", mac_ip), ("HHE_REMOTE_IP", convert_ip(remote_ip))):
            self.add_constant(name, value)
        self.add_constant("UART_POLLING")           # the UART polled (the firmware takes the accelerator IRQ only)
        # LiteEth's MAC adds preamble and CRC itself, but the hybrid core does not export the CSR by
        # which LiteX's libliteeth learns that: without this, the CPU's frames carry them twice
        self.add_constant("HW_PREAMBLE_CRC")

    def info(self) -> dict:
        """Addresses and settings the host side needs (written next to the build as soc.json)."""
        vault = self.bus.regions["keyvault"].origin
        windows, offset = [], 0
        for first, words in self.hhe_windows:
            windows.append({"first": first, "words": words, "vault_address": vault + 8 * offset})
            offset += words
        ram_words = self.bus.regions["main_ram"].size // 8
        rubato_key = self.hhe_windows[2][0] if len(self.hhe_windows) > 2 else None
        return {"main_ram": self.mem_map["main_ram"], "vault": vault, "windows": windows, "rubato_key": rubato_key,
                **self._hhe_net, "etherbone_port": 1234, "etherbone_record": ETHERBONE_RECORD,
                "instr_depth": self.accel.instr_depth,
                "layout_words": self.layout.base + self.layout.size, "ram_words": ram_words,
                "program_area": ram_words - PROGRAM_WORDS, "program_words": PROGRAM_WORDS,
                "clk_freq": int(self.sys_clk_freq), "accel_clk_freq": getattr(self, "accel_clk_freq", None)}

"""The accelerator's memory port on LiteDRAM native ports, and a key vault in DRAM the bus can only
write: the boards' memory (ECPIX-5: DDR3).

:class:`DramMemoryBridge` serves the engine's commands (runs of 64-bit words, in order) with
LiteDRAM's ``LiteDRAMDMAReader`` / ``LiteDRAMDMAWriter``, each on a native port of 64 bits
(``sdram.crossbar.get_port(mode=..., data_width=64)``): engine word ``a`` is DRAM word
``base + a``, the layout the CPU sees through LiteDRAM's Wishbone bridge (the bus bytes
``8a .. 8a + 7`` of the main RAM, low half first).

The secret windows (:func:`.memory_bridge.place_windows`) go to the vault: DRAM words from
``vault_base`` on, above the part of the DRAM the SoC bus maps (``add_sdram(size=...)``), so no bus
master reaches them except through :class:`DramKeyVault`, a Wishbone slave that passes writes into
them and answers every read with 0.  A key uploaded over Etherbone is used by the accelerator and
never read back, as with the block-RAM vault of the simulated SoC.

Parameters (DramMemoryBridge)
-----------------------------
cmd, wdata, rdata : stream endpoints   the engine's memory port
read_port, write_port : LiteDRAM native ports ("read", "write"), 64-bit data
base : Signal                          DRAM word of engine word 0
windows : list of (first, words)       engine word ranges served by the vault
vault_base : int                       DRAM word of the vault's first word

Members
-------
reads, writes : Signal(32)             engine words read / written

Latency
-------
A read command streams one word per cycle once LiteDRAM answers (up to 32 reads outstanding); a
write streams one word per cycle into LiteDRAM's write FIFO.  A command waits until the writes
before it have left that FIFO, so a load always sees the stores before it.
"""

from __future__ import annotations

from migen import FSM, If, NextState, NextValue, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone

from hhe_gen.params.errors import ParameterError

from .memory_bridge import decode_windows, place_windows
from .wishbone_stage import WishboneStage

__all__ = ["DramMemoryBridge", "DramKeyVault"]


class DramMemoryBridge(LiteXModule):
    """The engine's memory port on LiteDRAM (module docstring)."""

    def __init__(self, cmd, wdata, rdata, read_port, write_port, base, windows=(), vault_base: int = 0):
        from litedram.frontend.dma import LiteDRAMDMAReader, LiteDRAMDMAWriter
        for name, port in (("read_port", read_port), ("write_port", write_port)):
            if port.data_width != 64:
                raise ParameterError(name, port.data_width, "a 64-bit LiteDRAM native port (get_port(data_width=64))")
        placed = place_windows(windows)
        self.reader = reader = LiteDRAMDMAReader(read_port, fifo_depth=32)
        self.writer = writer = LiteDRAMDMAWriter(write_port, fifo_depth=16)
        self.reads, self.writes = Signal(32), Signal(32)

        width = read_port.address_width
        adr, count, issued, delivered = Signal(width), Signal(17), Signal(17), Signal(17)
        hit, vault_word = decode_windows(self, cmd.addr, placed)

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            cmd.ready.eq(~writer.fifo.source.valid),        # stores before this command have left
            If(cmd.valid & cmd.ready,
                NextValue(count, cmd.count), NextValue(issued, 0), NextValue(delivered, 0),
                If(hit, NextValue(adr, vault_base + vault_word)).Else(NextValue(adr, base + cmd.addr)),
                If(cmd.count != 0, If(cmd.write, NextState("WRITE")).Else(NextState("READ"))),
            ),
        )
        fsm.act("READ",
            reader.sink.valid.eq(issued < count),
            reader.sink.address.eq(adr + issued),
            If(reader.sink.valid & reader.sink.ready, NextValue(issued, issued + 1)),
            rdata.valid.eq(reader.source.valid),
            rdata.data.eq(reader.source.data),
            rdata.last.eq(delivered == count - 1),
            reader.source.ready.eq(rdata.ready),
            If(rdata.valid & rdata.ready,
                NextValue(delivered, delivered + 1), NextValue(self.reads, self.reads + 1),
                If(rdata.last, NextState("IDLE")),
            ),
        )
        fsm.act("WRITE",
            writer.sink.valid.eq(wdata.valid),
            writer.sink.address.eq(adr + delivered),
            writer.sink.data.eq(wdata.data),
            wdata.ready.eq(writer.sink.ready),
            If(wdata.valid & wdata.ready,
                NextValue(delivered, delivered + 1), NextValue(self.writes, self.writes + 1),
                If(delivered == count - 1, NextState("IDLE")),
            ),
        )


class DramKeyVault(LiteXModule):
    """The bus's write-only window onto the vault's DRAM words (module docstring).

    Parameters
    ----------
    port : LiteDRAM native port ("write" or "both")   its own port on the crossbar
    origin : int       bus byte address of the window
    vault_base : int   DRAM word (of ``port``'s width) the window starts at
    size : int         bytes of the window

    Members
    -------
    bus : wishbone.Interface   the SoC-bus slave (32-bit, word addressing)
    size : int
    writes : Signal(32)        32-bit words written (the firmware's KEYCHECK)

    Latency
    -------
    A write is acknowledged once LiteDRAM's port has taken it, from a register
    (:class:`~hhe_gen.soc.wishbone_stage.WishboneStage`: two cycles more than the bridge alone).  A
    read is acknowledged in the next cycle, with 0.
    """

    def __init__(self, port, origin: int, vault_base: int, size: int):
        from litedram.frontend.wishbone import LiteDRAMWishbone2Native
        self.size = size
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.writes = Signal(32)
        inner = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        dram_byte = vault_base * port.data_width // 8
        if origin < dram_byte:
            raise ParameterError("vault origin", origin, f">= the vault's DRAM byte offset {dram_byte:#x}")
        self.wb2native = LiteDRAMWishbone2Native(wishbone=inner, port=port, base_address=origin - dram_byte)
        # writes through a registered stage: the SoC bus's ack does not hang on LiteDRAM's arbiter
        # (Etherbone's request, the bus decoder, the arbiter, the ack to every master, into the
        # CPU: the ECPIX-5 system clock's critical path when the bridge answered the bus itself)
        outer = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.stage = WishboneStage(outer, inner)
        read_ack = Signal()
        self.comb += If(bus.we, bus.connect(outer)).Else(bus.ack.eq(read_ack), bus.dat_r.eq(0))
        self.sync += [
            read_ack.eq(bus.cyc & bus.stb & ~bus.we & ~read_ack),
            If(bus.cyc & bus.stb & bus.we & bus.ack, self.writes.eq(self.writes + 1)),
        ]

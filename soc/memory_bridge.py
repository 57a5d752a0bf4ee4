"""The accelerator's memory port on a Wishbone bus, and the key vault its secret blocks live in.

The engine's memory port (``cores/engine/memory_port.py``) asks for runs of 64-bit words by word
address.  :class:`MemoryBridge` serves them, in command order, with LiteX's
``WishboneDMAReader`` / ``WishboneDMAWriter`` on a 32-bit Wishbone master: engine word ``a`` is
the bus bytes ``base + 8a`` (low half) and ``base + 8a + 4`` (high half), the layout a little-endian
CPU sees for a ``uint64_t``.

Secret blocks (the secret key ``sk`` and ``sk_ntt``, :mod:`hhe_gen.engine.memory_map`) are not in
the SoC's RAM: the bridge sends the engine addresses of its ``windows`` to a :class:`KeyVault`
instead, a memory with two ports.  Its SoC-bus port is write-only (the host or the CPU uploads a
key; every read returns 0), its other port belongs to the bridge alone.  So a key written to the
SoC can be used by the accelerator and never read back over the bus or Etherbone.

Parameters (MemoryBridge)
-------------------------
cmd, wdata, rdata : stream endpoints   the engine's memory port (:class:`.accel_instance.AcceleratorInstance`)
bus : wishbone.Interface               32-bit master onto the SoC bus
base : Signal(32)                      byte address of engine word 0 on the SoC bus
windows : list of (first, words)       engine word ranges served by the vault, packed in order
vault : KeyVault or None               required when ``windows`` is not empty

Members
-------
reads, writes : Signal(32)             engine words read / written (counters, for the CSRs)

Latency
-------
Two bus words per engine word; LiteX's DMA moves one bus word per two cycles on an SRAM (one
engine word per four cycles), and a command costs one more cycle to decode.  A command is decided
by its first address: one that starts in a window is served by the vault.
"""

from __future__ import annotations

from migen import FSM, If, Memory, NextState, NextValue, Signal, Cat

from litex.gen import LiteXModule
from litex.soc.cores.dma import WishboneDMAReader, WishboneDMAWriter
from litex.soc.interconnect import wishbone

from hhe_gen.params.errors import ParameterError

__all__ = ["KeyVault", "MemoryBridge", "place_windows", "decode_windows"]


def place_windows(windows) -> list[tuple[int, int, int]]:
    """``(first, words, offset)`` for each secret window ``(first, words)``: the windows packed in
    order into the vault, ``offset`` its first vault word."""
    offset, placed = 0, []
    for first, words in windows:
        if first < 0 or words < 1:
            raise ParameterError("secret window", (first, words), "a first engine word >= 0 and >= 1 words")
        placed.append((first, words, offset))
        offset += words
    return placed


def decode_windows(module, addr, placed):
    """Signals (``hit``, ``vault_word``) that ``module`` drives combinationally from the engine word
    address ``addr``: whether it falls in a window of ``placed`` (:func:`place_windows`), and the
    vault word (64-bit) it maps to."""
    hit, vault_word = Signal(), Signal(32)
    module.comb += [hit.eq(0), vault_word.eq(0)]
    for first, words, offset in placed:
        module.comb += If((addr >= first) & (addr < first + words), hit.eq(1), vault_word.eq(offset + addr - first))
    return hit, vault_word


class KeyVault(LiteXModule):
    """A memory written from the SoC bus and read only by the accelerator (module docstring).

    Parameters
    ----------
    words : int    64-bit words it holds

    Members
    -------
    bus : wishbone.Interface       the SoC-bus slave: writes land, reads return 0
    private : wishbone.Interface   the bridge's slave: reads and writes
    size : int                     bytes
    writes : Signal(32)            bus writes taken (32-bit words), for a check that an upload is whole
    """

    def __init__(self, words: int):
        if not 1 <= words <= 1 << 22:
            raise ParameterError("vault words", words, "1 .. 2^22 64-bit words")
        self.size = 8 * words
        self.mem = Memory(32, 2 * words)
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.private = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.bus_port = wishbone.SRAM(self.mem, write_only=True, bus=self.bus)
        self.private_port = wishbone.SRAM(self.mem, bus=self.private)
        self.writes = Signal(32)
        self.sync += If(self.bus.cyc & self.bus.stb & self.bus.we & self.bus.ack, self.writes.eq(self.writes + 1))


class MemoryBridge(LiteXModule):
    """The engine's memory port served over Wishbone (module docstring)."""

    def __init__(self, cmd, wdata, rdata, bus, base, windows=(), vault=None):
        if windows and vault is None:
            raise ParameterError("vault", None, "a KeyVault when secret windows are given")
        placed = place_windows(windows)
        if vault is not None and sum(w for _, w in windows) * 8 > vault.size:
            raise ParameterError("vault", vault.size,
                                 f">= {sum(w for _, w in windows) * 8} bytes for the secret windows")

        reader_bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        writer_bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.reader = reader = WishboneDMAReader(reader_bus, endianness="big")
        self.writer = writer = WishboneDMAWriter(writer_bus, endianness="big")
        self.reads, self.writes = Signal(32), Signal(32)

        adr = Signal(30)            # bus word address of the command's first half-word
        count = Signal(17)
        issued = Signal(18)         # read: bus words asked for
        delivered = Signal(17)      # engine words delivered (read) or taken (write)
        high = Signal()             # the next bus word is a high half
        low = Signal(32)
        to_vault, writing = Signal(), Signal()

        hit_any, vault_word = decode_windows(self, cmd.addr, placed)
        vault_adr = vault_word << 1

        local = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.comb += If(writing, writer_bus.connect(local)).Else(reader_bus.connect(local))
        if vault is not None:
            self.comb += If(to_vault, local.connect(vault.private)).Else(local.connect(bus))
        else:
            self.comb += local.connect(bus)

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            cmd.ready.eq(1),
            If(cmd.valid,
                NextValue(count, cmd.count),
                NextValue(issued, 0), NextValue(delivered, 0), NextValue(high, 0),
                NextValue(to_vault, hit_any), NextValue(writing, cmd.write),
                If(hit_any, NextValue(adr, vault_adr)).Else(NextValue(adr, base[2:] + (cmd.addr << 1))),
                If(cmd.count != 0, If(cmd.write, NextState("WRITE")).Else(NextState("READ"))),
            ),
        )
        fsm.act("READ",
            reader.sink.valid.eq(issued < (count << 1)),
            reader.sink.address.eq(adr + issued),
            If(reader.sink.valid & reader.sink.ready, NextValue(issued, issued + 1)),
            If(~high,
                reader.source.ready.eq(1),
                If(reader.source.valid, NextValue(low, reader.source.data), NextValue(high, 1)),
            ).Else(
                rdata.valid.eq(reader.source.valid),
                rdata.data.eq(Cat(low, reader.source.data)),
                rdata.last.eq(delivered == count - 1),
                reader.source.ready.eq(rdata.ready),
                If(rdata.valid & rdata.ready,
                    NextValue(high, 0), NextValue(delivered, delivered + 1), NextValue(self.reads, self.reads + 1),
                    If(rdata.last, NextState("IDLE")),
                ),
            ),
        )
        fsm.act("WRITE",
            writer.sink.valid.eq(wdata.valid),
            writer.sink.address.eq(adr + (delivered << 1) + high),
            writer.sink.data.eq(wdata.data[32:]),
            If(~high, writer.sink.data.eq(wdata.data[:32])),
            If(writer.sink.valid & writer.sink.ready,
                If(high,
                    wdata.ready.eq(1),
                    NextValue(high, 0), NextValue(delivered, delivered + 1), NextValue(self.writes, self.writes + 1),
                    If(delivered == count - 1, NextState("IDLE")),
                ).Else(NextValue(high, 1)),
            ),
        )

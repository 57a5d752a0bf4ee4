"""The accelerator as a LiteX peripheral: CSRs, an interrupt, its memory (a Wishbone DMA master, or
LiteDRAM native ports on a board), the key vault and LiteEth's hardware UDP port.

::

    CSR instr (64) --> instruction FIFO --> i_instr   AcceleratorInstance   mem --> MemoryBridge --> bus master
    CSR control / status / counters  <-- status, completed                        \\--> KeyVault (private port)
    EventManager: done, error, notify               o_udp --> LiteEth UDP user port (32-bit, sys clock)
                                                    i_udp <-- receive FIFO <-- the same port

Parameters
----------
platform : LiteX platform
manifest : dict                  the accelerator's manifest (``load_manifest``)
verilog : path                   its Verilog
mem_base : int                   reset value of the ``mem_base`` CSR: bus byte address of engine word 0
secret_windows : list of (first, words)   engine word ranges kept in the key vault
instr_depth : int                instruction FIFO depth (words)
udp_port : LiteEth UDP user port or None   (``ethcore.udp.crossbar.get_port(port, dw=32)``)
rx_depth : int                   receive FIFO depth (32-bit beats, a power of two): whole packets
                                 (:class:`.packet_fifo.PacketFifo`); a packet arriving with no room for
                                 it is dropped whole and counted, so a packet nobody asked for never
                                 stalls LiteEth; ``abort`` empties it
dram : :class:`DramMemory` or None   serve the memory port from LiteDRAM (:mod:`.dram_bridge`) with
                                 the vault in DRAM; None: a Wishbone master and a block-RAM vault
cd : str                         the accelerator's clock domain (default "sys"); another one puts
                                 :class:`.clock_crossing.AcceleratorCrossing` between it and the
                                 peripheral, which stays in ``sys``

Members (CSRs, in the order of csr.csv)
---------------------------------------
instr : 64-bit write-only storage; writing its low word (the last) pushes the word into the FIFO
instr_status : level (16), full, overflow (sticky: a word was written while the FIFO was full and lost)
control : abort (pulse: the engine's soft reset, clears the FIFO and ``overflow``), clear (pulse: counters),
          hold (the FIFO keeps its words: a program is loaded whole, then released)
status : busy, error, notify, cause (4)
error_position : the engine's error position within the program: words since the last ``clear``
                 (a program's start: the firmware's RUN, :meth:`.host.SocHost.start`) or abort
notify_code, cycle : the engine's
busy_cycles : cycles (of the accelerator's clock) with the engine busy or words waiting at its input,
              since ``clear``
<unit>_tasks, <unit>_cycles : per unit, tasks completed and the sum of their (finished - dispatched)
The engine's status and the counters of its clock (busy_cycles, <unit>_*) are read together, from
one cycle of that clock.
mem_base : storage
reads, writes : engine words over the memory port
vault_writes : 32-bit words the bus wrote into the key vault (the firmware's KEYCHECK)
packets_sent, packets_received : UDP packets; rx_dropped : arriving packets dropped whole (no room in
          the receive FIFO); rx_level : beats waiting in the receive FIFO
ev : EventManager (done: busy fell, error: error rose, notify: a notify instruction ran)

Members (buses)
---------------
bus : wishbone.Interface or None   the DMA master (add it with ``soc.bus.add_master``); None with ``dram``
vault : KeyVault, DramKeyVault or None   its ``bus`` is the SoC slave to add (``soc.bus.add_slave``)

Latency
-------
An instruction written over the CSR bus passes the (buffered) FIFO in a couple of cycles unless
``hold`` is set (plus the crossing's few cycles with ``cd``); ``status.busy`` is set while the
engine is busy or words wait in the FIFO or the crossing.  The memory bridge's rate is in
:mod:`.memory_bridge`.
"""

from __future__ import annotations

from dataclasses import dataclass

from migen import If, ResetInserter, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream, wishbone
from litex.soc.interconnect.csr import CSRField, CSRStatus, CSRStorage
from litex.soc.interconnect.csr_eventmanager import EventManager, EventSourceProcess, EventSourcePulse

from hhe_gen.params.checks import check_int

from .accel_instance import STATUS_PORTS, AcceleratorInstance
from .clock_crossing import AcceleratorCrossing
from .dram_bridge import DramKeyVault, DramMemoryBridge
from .memory_bridge import KeyVault, MemoryBridge
from .packet_fifo import PacketFifo

__all__ = ["Accelerator", "DramMemory"]


@dataclass(frozen=True)
class DramMemory:
    """Where the accelerator's memory lives on a board with DRAM.

    Members
    -------
    read_port, write_port, vault_port : LiteDRAM native ports, 64-bit (``crossbar.get_port``)
    origin : int        bus byte address of DRAM word 0 (the main RAM's origin)
    vault_base : int    DRAM word of the vault (above what the bus maps)
    vault_origin : int  bus byte address of the vault's write-only window
    """
    read_port: object
    write_port: object
    vault_port: object
    origin: int
    vault_base: int
    vault_origin: int


class Accelerator(LiteXModule):
    """The accelerator peripheral (module docstring)."""

    def __init__(self, platform, manifest: dict, verilog, *, mem_base: int = 0, secret_windows=(),
                 instr_depth: int = 512, udp_port=None, rx_depth: int = 1024, dram: DramMemory | None = None,
                 cd: str = "sys"):
        check_int("instr_depth", instr_depth, 2, 4096)
        check_int("rx_depth", rx_depth, 16, 1 << 16)
        self.instr_depth = instr_depth
        self.core = AcceleratorInstance(platform, manifest, verilog, cd=cd)
        self.crossing = engine = AcceleratorCrossing(self.core, cd)
        sync_core = getattr(self.sync, cd)

        # instructions
        self.fifo = fifo = ResetInserter()(stream.SyncFIFO([("data", 64)], instr_depth, buffered=True))
        self._instr = CSRStorage(64, write_from_dev=False,
                                 description="instruction word; writing the low word pushes it")
        self._instr_status = CSRStatus(fields=[
            CSRField("level", size=16, description="words waiting in the FIFO"),
            CSRField("full", size=1), CSRField("overflow", size=1, description="a word was lost: FIFO full")])
        self._control = CSRStorage(fields=[
            CSRField("abort", size=1, pulse=True, description="soft reset of the engine; clears the FIFO"),
            CSRField("clear", size=1, pulse=True, description="clear the counters"),
            CSRField("hold", size=1, description="keep the words in the FIFO (load a program, then release)")])
        abort, clear = self._control.fields.abort, self._control.fields.clear
        hold = self._control.fields.hold
        overflow = Signal()
        self.comb += [
            fifo.sink.valid.eq(self._instr.re), fifo.sink.data.eq(self._instr.storage),
            fifo.source.connect(engine.instr, omit={"valid", "ready"}),
            engine.instr.valid.eq(fifo.source.valid & ~hold), fifo.source.ready.eq(engine.instr.ready & ~hold),
            fifo.reset.eq(abort),
            engine.abort.eq(abort), engine.clear.eq(clear),
            self._instr_status.fields.level.eq(fifo.level), self._instr_status.fields.full.eq(~fifo.sink.ready),
            self._instr_status.fields.overflow.eq(overflow),
        ]
        self.sync += If(abort, overflow.eq(0)).Elif(self._instr.re & ~fifo.sink.ready, overflow.eq(1))
        # the engine counts an error's position from its last abort; a program starts at a clear
        # (RUN, the host's start): the words handed to the engine since the abort, counted at the
        # clear, are where the program starts (the engine is idle then: every one of them decoded)
        handed, program_start = Signal(32), Signal(32)
        self.sync += [
            If(abort, handed.eq(0)).Elif(engine.instr.valid & engine.instr.ready, handed.eq(handed + 1)),
            If(abort, program_start.eq(0)).Elif(clear, program_start.eq(handed)),
        ]

        # status and the counters of the accelerator's clock, read in sys from one of its cycles
        st = self.core.status
        busy_cycles = Signal(32)
        sync_core += If(engine.clear_core, busy_cycles.eq(0)).Elif(
            st["busy"] | self.core.instr.valid, busy_cycles.eq(busy_cycles + 1))
        units = self.core.completed_units or [f"lane{k}" for k in range(len(self.core.completed))]
        unit_counts = []
        for lane in self.core.completed:
            tasks, cycles = Signal(32), Signal(32)
            sync_core += If(engine.clear_core, tasks.eq(0), cycles.eq(0)).Elif(
                lane["valid"], tasks.eq(tasks + 1), cycles.eq(cycles + lane["finished"] - lane["dispatched"]))
            unit_counts += [tasks, cycles]
        names = list(STATUS_PORTS)
        seen = dict(zip(names + ["busy_cycles"] + [f"{u}_{c}" for u in units for c in ("tasks", "cycles")],
                        engine.snapshot([st[n] for n in names] + [busy_cycles] + unit_counts)))

        self._status = CSRStatus(fields=[CSRField("busy", size=1), CSRField("error", size=1),
                                         CSRField("notify", size=1), CSRField("cause", size=4)])
        self.comb += [self._status.fields.busy.eq(seen["busy"] | fifo.source.valid | engine.pending),
                      self._status.fields.error.eq(seen["error"]), self._status.fields.notify.eq(seen["notify"]),
                      self._status.fields.cause.eq(seen["error_cause"])]
        self._error_position = CSRStatus(32)
        self._notify_code = CSRStatus(16)
        self._cycle = CSRStatus(32)
        self._busy_cycles = CSRStatus(32, description="cycles with the engine busy or words waiting, since clear")
        self.comb += [self._error_position.status.eq(seen["error_position"] - program_start),
                      self._notify_code.status.eq(seen["notify_code"]), self._cycle.status.eq(seen["cycle"]),
                      self._busy_cycles.status.eq(seen["busy_cycles"])]
        for unit in units:
            for count in ("tasks", "cycles"):
                csr = CSRStatus(32, name=f"{unit}_{count}")
                setattr(self, f"_{unit}_{count}", csr)
                self.comb += csr.status.eq(seen[f"{unit}_{count}"])

        # memory
        self._mem_base = CSRStorage(32, reset=mem_base, description="bus byte address of engine word 0")
        windows = [tuple(w) for w in secret_windows]
        vault_words = sum(w for _, w in windows)
        if dram is None:
            self.vault = KeyVault(vault_words) if windows else None
            self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
            self.bridge = MemoryBridge(engine.cmd, engine.wdata, engine.rdata, self.bus, self._mem_base.storage,
                                       windows, self.vault)
        else:
            self.bus = None
            self.vault = DramKeyVault(dram.vault_port, dram.vault_origin, dram.vault_base, 8 * vault_words)
            base = Signal(32)
            self.comb += base.eq((self._mem_base.storage - dram.origin)[3:])
            self.bridge = DramMemoryBridge(engine.cmd, engine.wdata, engine.rdata, dram.read_port, dram.write_port,
                                           base, windows, dram.vault_base)
        self._reads, self._writes = CSRStatus(32, name="reads"), CSRStatus(32, name="writes")
        self._vault_writes = CSRStatus(32, name="vault_writes", description="32-bit words written to the key vault")
        if self.vault is not None:
            self.comb += self._vault_writes.status.eq(self.vault.writes)
        self.comb += [self._reads.status.eq(self.bridge.reads), self._writes.status.eq(self.bridge.writes)]

        # network
        self._packets_sent = CSRStatus(32, name="packets_sent")
        self._packets_received = CSRStatus(32, name="packets_received")
        self._rx_dropped = CSRStatus(32, name="rx_dropped", description="packets dropped whole: no room")
        self._rx_level = CSRStatus(32, name="rx_level", description="beats waiting in the receive FIFO")
        if engine.has_network and udp_port is not None:
            self._attach_udp(engine, udp_port, rx_depth, abort, clear)

        # interrupt
        self.ev = EventManager()
        self.ev.done = EventSourceProcess(edge="falling", description="the engine went idle")
        self.ev.error = EventSourceProcess(edge="rising", description="the engine stopped on an error")
        self.ev.notify = EventSourcePulse(description="a notify instruction ran")
        self.ev.finalize()
        notify_seen = Signal()
        self.sync += notify_seen.eq(seen["notify"])
        self.comb += [self.ev.done.trigger.eq(seen["busy"]), self.ev.error.trigger.eq(seen["error"]),
                      self.ev.notify.trigger.eq(seen["notify"] & ~notify_seen)]

    def _attach_udp(self, engine, port, rx_depth, abort, clear):
        """o_udp onto the port's sink; the port's source through a FIFO of whole packets that drops
        (and counts) a packet arriving with no room for it, and empties on ``abort``."""
        from liteeth.common import eth_udp_user_description
        self.comb += engine.udp_tx.connect(port.sink)
        self.rx_fifo = rx = PacketFifo(eth_udp_user_description(32), rx_depth)
        self.comb += [port.source.connect(rx.sink), rx.source.connect(engine.udp_rx),
                      rx.flush.eq(abort), rx.clear.eq(clear),
                      self._rx_dropped.status.eq(rx.dropped), self._rx_level.status.eq(rx.level)]
        sent, received = self._packets_sent.status, self._packets_received.status
        self.sync += [
            If(clear, sent.eq(0)).Elif(port.sink.valid & port.sink.ready & port.sink.last, sent.eq(sent + 1)),
            If(clear, received.eq(0)).Elif(port.source.valid & port.source.last, received.eq(received + 1)),
        ]

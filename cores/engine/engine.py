"""The accelerator engine: the task manager, the polynomial buffers and the units, in one component
that runs programs of the instruction set (:mod:`.isa`, docs/isa.md) from its instruction stream
to its memory port.

::

    i_instr --> TaskManager --(task / done per unit)--> MemoryUnit   <--> mem (memory port)
                   | cfg (slot -> prime)                  SamplerUnit (XOF + samplers; seed from
                   v                                      NttUnit      the memory unit's ldseed)
               status, notify, completed                  PointwiseUnit
                                                             | read / write ports
                                                          BufferFile (B buffers of N/P rows x P words)

Buffer ports: each unit declares its kind and the buffer ports it reads and writes
(:mod:`.unit_ports`); the buffer file has as many read and write ports as the built units declare,
given out in the order of :data:`UNITS` (``buffer_ports``, written into the manifest): memory unit
read / write, NTT unit read / write (in place: the bank port instead), pointwise unit reads a, b, c
/ write, sampler unit write, codec unit read (slots) and decode's rows / write, then the network,
Rubato and basis units' read / write.  The scoreboard keeps every buffer to one unit at a time
(readers too: a buffer has one read port; the manager is built with ``exclusive_reads``), so the
crossbar needs no arbitration.

Parameters
----------
n : int               N
primes : sequence     the built-in primes (``cfg.prime`` binds a slot to one of them)
lanes : int           P, words per buffer row, butterflies per arithmetic unit
buffers : int         B polynomial buffers (N words each)
slots : int           S prime slots (default: the number of primes, at most 8)
window, queue, ooo    the task manager's (:class:`.task_manager.TaskManager`)
word_bits : int       bits of a buffer word (default: the largest prime's bit length, at least the
                      slot format's width and, with the Rubato unit, 32: a key block's halves)
ntt : dict            options of the NTT unit (kind, twiddles, banking, latency of its core;
                      ``in_place``: the buffers banked as the NTT's memory plan and the transforms
                      in them, :class:`.ntt_unit.NttUnit`)
pointwise : dict      options of the pointwise unit (kind, latency)
datapath : str        "separate" (default): the NTT unit, the pointwise unit and the codec unit, each
                      with its P butterflies; "shared": the crypto unit (:class:`.crypto_unit.CryptoUnit`),
                      one array of P butterflies for the NTT, the pointwise ops, the codec's FFT and
                      Rubato's Feistel, ``ntt``, ``pointwise``, ``codec`` and ``rubato`` its options
                      (one reducer kind and latency), and one XOF for the sampling unit and Rubato
sampler : dict or False   options of the sampling unit (sigma, bound_sigmas, hamming_weight,
                      rounds_per_cycle); False: no sampling unit (``sample.*`` are NOT_BUILT; the
                      server programs sample nothing, and its uniform sampler needs primes of one
                      byte length)
codec : dict or False the codec unit's options (fmt, decode_rows); False: no codec unit (then
                      ``encode`` / ``decode`` are NOT_BUILT); default: built, slot format 29/26
net : dict or None    the network unit's options (``max_segment``); None (default): not built
                      (``send`` / ``cfg.net.*`` are NOT_BUILT, no ``o_udp``)
basis : bool          build the basis-conversion unit (``conv``, :class:`.basis_unit.BasisUnit`,
                      the server-side programs); default False (``conv`` is NOT_BUILT)
rubato : dict or None the Rubato unit's options (``params``: the set, ``rubato_lanes``,
                      ``multiplier``; :class:`.rubato_unit.RubatoUnit`); None (default): not built
                      (``rubato.*`` / ``cfg.rubato`` are NOT_BUILT)
beat_words : int      64-bit words per memory beat (:class:`.memory_port.MemoryPort`): 1 (default,
                      a SoC's 64-bit port) .. min(P, 8) (a 512-bit port, e.g. HBM on a card)
target : str          "ecp5" | "xilinx" | "generic"

Members
-------
i_instr : In(stream.Signature(64))   instruction words
abort : In(1)                        soft reset: clears the manager and every unit
mem : Out(MemoryPort(beat_words))    the memory-master port
o_udp : Out(stream of UDP_LAYOUT)    (network unit built) packets, LiteEth's UDP user port shape
i_udp : In(stream of UDP_LAYOUT)     (network unit built) arriving packets, for ``recv``
busy, error, error_cause, error_position, notify, notify_code, cycle, completed : Out
                                     the task manager's status (:class:`.task_manager.TaskManager`);
                                     ``busy`` also while the network unit finishes a packet after
                                     an abort
shape : the :class:`.isa.EngineShape` programs are assembled for
units : ((name, unit), ...)           the built units, in :data:`UNITS` order
buffer_ports : :class:`.unit_ports.PortAllocation`   which unit port has which buffer-file port
manager, buffers_file, memory_unit, sampler_unit, crypto_unit, ntt_unit, pointwise_unit, codec_unit,
network_unit, rubato_unit, basis_unit : the parts (sampler_unit / codec_unit / network_unit /
                                     rubato_unit / basis_unit None when not built; crypto_unit None
                                     with the separate datapath, ntt_unit, pointwise_unit,
                                     codec_unit and rubato_unit None with the shared one: they are its
                                     sequencers, ``crypto_unit.ntt_unit`` ...)
xof : the one XOF (:class:`~hhe_gen.cores.keccak.shared.SharedXof`) of the sampling unit and
      Rubato, with the shared datapath and both built (None otherwise: each has its own SHAKE256);
      a sampling task and a Rubato stream take turns on it, one task at a time

Latency
-------
Per task: the unit's (``memory_unit``: N / beat_words beats at the memory's rate, ``ntt_unit.task_cycles``,
``pointwise_unit.task_cycles``, ``sampler_unit``: as the random stream allows) plus the manager's
two cycles from a word's arrival to its first offer; independent tasks overlap (out-of-order
dispatch).  ``completed`` gives every task's dispatch and completion cycle.
"""

from __future__ import annotations

import dataclasses

from amaranth.hdl import Array, Const, Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.keccak.shared import SharedXof
from hhe_gen.cores.net.packetizer import UDP_LAYOUT
from hhe_gen.cores.unused import mark_unused, quiet_on_error
from hhe_gen.params.checks import check_int, check_power_of_two
from hhe_gen.params.errors import ParameterError

from . import isa
from .basis_unit import BasisUnit
from .buffers import BufferFile
from .codec_unit import CodecUnit
from .crypto_unit import CryptoUnit
from .memory_port import MemoryPort
from .memory_unit import MemoryUnit
from .network_unit import NetworkUnit
from .ntt_unit import NttUnit
from .pointwise_unit import PointwiseUnit
from .rubato_unit import RubatoUnit
from .sampler_unit import BEAT_BYTES as SAMPLER_BEAT_BYTES, SamplerUnit
from .task_manager import TaskManager, check_window, status_members
from .unit_ports import PortAllocation, task_groups
from .units import tag_bits

__all__ = ["Engine", "ENGINE_UNITS", "UNITS"]

ONE_XOF_RING = True
"""The one XOF of the shared datapath is a ring XOF (:class:`~hhe_gen.cores.keccak.xof.ShakeXof`
``ring=True``): no state bit chooses among the rate's slots, for a padding that turns the ring to
the block's end (Rubato's cycle formula counts it, ``RubatoCore(xof_ring=True)``)."""

UNITS = ("memory_unit", "crypto_unit", "ntt_unit", "pointwise_unit", "sampler_unit", "codec_unit", "network_unit",
         "rubato_unit", "basis_unit")
"""The engine's units, registered in this order: the buffer file's read and write ports go to their
declared ports in this order (:class:`.unit_ports.PortAllocation`); a unit not built takes none."""

ENGINE_UNITS = frozenset({isa.Unit.MEMORY, isa.Unit.SAMPLER, isa.Unit.NTT, isa.Unit.POINTWISE})
DATAPATHS = ("separate", "shared")
"""The units of an engine without the codec (``codec=False``); with it, ``| {isa.Unit.CODEC}``."""


class Engine(wiring.Component):
    """Task manager + buffers + units (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, primes, *, lanes: int = 2, buffers: int = 16, slots=None, window: int = 8,
                 queue: int = 4, ooo: bool = True, word_bits=None, ntt=None, pointwise=None,
                 datapath: str = "separate", sampler=None,
                 codec=None, net=None, rubato=None, basis: bool = False, log_scale: int = 0,
                 beat_words: int = 1, target: str = "ecp5"):
        self.n = check_power_of_two("n", n, 8, 1 << 16)
        self.primes = tuple(primes)
        if not 1 <= len(self.primes) <= 32:
            raise ParameterError("primes", primes, "1 .. 32 built-in primes")
        self.lanes = check_power_of_two("lanes", lanes, 1, n // 2)
        codec = None if codec is False else dict(codec or {})
        if codec is not None:
            codec.setdefault("fmt", isa.DEFAULT_FORMAT)
        widest = max([q.bit_length() for q in self.primes] + ([codec["fmt"].width] if codec else [])
                     + ([isa.RUBATO_HALF_BITS] if rubato is not None else []))
        self.word_bits = word_bits if word_bits is not None else widest
        check_int("word_bits", self.word_bits, widest, 64)
        slots = min(len(self.primes), isa.MAX_SLOTS) if slots is None else slots
        optional = {isa.Unit.SAMPLER: sampler is not False, isa.Unit.CODEC: codec is not None,
                    isa.Unit.NETWORK: net is not None, isa.Unit.RUBATO: rubato is not None,
                    isa.Unit.BASIS: bool(basis)}
        units = (ENGINE_UNITS - {isa.Unit.SAMPLER}) | {unit for unit, built in optional.items() if built}
        self.shape = isa.EngineShape(buffers, slots, self.primes, log_scale, frozenset(units), n=n)
        self.rows = n // lanes
        common = dict(n=n, lanes=lanes, word_bits=self.word_bits, buffers=buffers, slots=slots)
        tw = tag_bits(check_window(window))
        manager_shape = self.shape          # the manager's (built after the units: their task groups)
        if datapath not in DATAPATHS:
            raise ParameterError("datapath", datapath, "one of " + ", ".join(DATAPATHS))
        self.datapath = datapath
        self.crypto_unit = self.ntt_unit = self.pointwise_unit = self.codec_unit = None
        # the one XOF: the sampling unit's and Rubato's streams on one SHAKE256 (shared datapath)
        one_xof = datapath == "shared" and sampler is not False and rubato is not None
        if one_xof:
            rubato = dict(rubato, xof="external", xof_ring=ONE_XOF_RING,
                          xof_rounds_per_cycle=dict(sampler or {}).get("rounds_per_cycle", 1))
        if datapath == "shared":        # the NTT, the pointwise ops and the codec on one butterfly array
            ntt, pointwise = dict(ntt or {}), dict(pointwise or {})
            for name in set(ntt) & set(pointwise):
                if ntt[name] != pointwise[name]:
                    raise ParameterError(f"pointwise.{name}", pointwise[name],
                                         f"{ntt[name]!r}, the NTT's (one butterfly array with datapath='shared')")
            self.crypto_unit = CryptoUnit(**common, tag_width=tw, primes=self.primes, target=target,
                                          codec=None if codec is None else dict(codec, log_scale=log_scale),
                                          rubato=None if rubato is None else dict(rubato), **{**ntt, **pointwise})
            codec_part = self.crypto_unit.codec_unit
        else:
            self.ntt_unit = NttUnit(**common, tag_width=tw, primes=self.primes, target=target, **(ntt or {}))
            self.pointwise_unit = PointwiseUnit(**common, tag_width=tw, primes=self.primes, target=target,
                                                **(pointwise or {}))
            codec_part = None
            if codec is not None:
                codec_part = self.codec_unit = CodecUnit(**common, tag_width=tw, primes=self.primes,
                                                         log_scale=log_scale, target=target, **codec)
        if codec_part is not None:
            fmt = codec["fmt"]
            self.shape = dataclasses.replace(self.shape, decode_rows=frozenset(codec_part.decode_rows),
                                             message_bound=1 << (fmt.width - 1 - fmt.frac_bits + log_scale))
        self.network_unit = None
        if net is not None:
            self.network_unit = NetworkUnit(**common, tag_width=tw, log_scale=log_scale, **dict(net))
        self.rubato_unit = None
        if rubato is not None:
            if self.crypto_unit is None:
                self.rubato_unit = RubatoUnit(**common, tag_width=tw, **dict(rubato))
            rubato_part = self.rubato_unit or self.crypto_unit.rubato_unit
            self.shape = dataclasses.replace(self.shape, rubato_set=rubato_part.set_id)
        self.basis_unit = BasisUnit(**common, tag_width=tw, primes=self.primes) if basis else None
        self.memory_unit = MemoryUnit(**common, tag_width=tw, beat_words=beat_words)
        self.beat_words = beat_words
        self.sampler_unit = self.xof = None
        if sampler is not False:
            self.sampler_unit = SamplerUnit(**common, tag_width=tw, primes=self.primes,
                                            xof="external" if one_xof else "own", **(sampler or {}))
        if one_xof:
            self.xof = SharedXof(2, beat_bytes=SAMPLER_BEAT_BYTES, rounds_per_cycle=self.sampler_unit.rounds_per_cycle,
                                 ring=ONE_XOF_RING)
        self.units = tuple((name, getattr(self, name)) for name in UNITS if getattr(self, name) is not None)
        self.buffer_ports = PortAllocation.of(self.units)
        self.manager = TaskManager(manager_shape, window=window, ooo=ooo, queue=queue, exclusive_reads=True,
                                   groups=task_groups(self.units))
        self.ntt_in_place = self.buffer_ports.bank is not None
        self.buffers_file = BufferFile(buffers, self.rows, lanes, self.word_bits,
                                       read_ports=max(1, len(self.buffer_ports.reads)),
                                       write_ports=max(1, len(self.buffer_ports.writes)), banked=self.ntt_in_place)
        mark_unused(self.manager, self.buffers_file, *(unit for _, unit in self.units))
        if self.xof is not None:
            mark_unused(self.xof, deep=True)
        super().__init__({
            "i_instr": In(stream.Signature(isa.WORD_BITS)),
            "abort": In(1),
            "mem": Out(MemoryPort(beat_words)),
            **({"o_udp": Out(stream.Signature(UDP_LAYOUT)), "i_udp": In(stream.Signature(UDP_LAYOUT))}
               if self.network_unit else {}),
            **status_members(),
            "completed": Out(self.manager.completed.shape()),
        })

    @classmethod
    def for_params(cls, params, **kw):
        """An engine for a :class:`hhe_gen.params.ckks.CKKSParams`: its N, its primes (in order) and
        its log_scale built in."""
        return cls(params.n, params.moduli, log_scale=params.log_scale, **kw)

    def memory_plan(self, device: str = "LFE5UM5G-85F", reserve: int = 0):
        """The block-RAM plan of this engine (:class:`.memory_plan.MemoryPlan`): every memory it
        holds, per part, against ``device`` with ``reserve`` blocks kept for the rest of a SoC."""
        from .memory_plan import MemoryPlan, unit_memories
        return MemoryPlan(tuple(unit_memories(None, self)), device=device, reserve=reserve)

    def elaborate(self, platform):
        m = Module()
        mgr, bufs = self.manager, self.buffers_file
        mu, su, nu, pu = self.memory_unit, self.sampler_unit, self.ntt_unit, self.pointwise_unit
        m.submodules.manager, m.submodules.buffers = mgr, bufs

        wiring.connect(m, wiring.flipped(self.i_instr), mgr.i_instr)
        m.d.comb += mgr.abort.eq(self.abort)
        for name in [*status_members(), "completed"]:
            if name != "busy":
                m.d.comb += getattr(self, name).eq(getattr(mgr, name))
        network_busy = self.network_unit.busy if self.network_unit is not None else 0
        m.d.comb += self.busy.eq(mgr.busy | network_busy)

        # every registered unit: its task port and the buffer ports it declared (unit_ports)
        units = dict(self.units)
        for name, unit in self.units:
            m.submodules[name] = unit
            wiring.connect(m, mgr.unit_port(unit.declaration.kind), unit.port)
        for k, (name, member) in enumerate(self.buffer_ports.reads):
            wiring.connect(m, getattr(units[name], member), bufs.read(k))
        for k, (name, member) in enumerate(self.buffer_ports.writes):
            wiring.connect(m, getattr(units[name], member), bufs.write(k))
        if self.buffer_ports.bank is not None:
            name, member = self.buffer_ports.bank
            wiring.connect(m, getattr(units[name], member), bufs.bank)

        # what units take besides tasks and buffers
        wiring.connect(m, mu.mem, wiring.flipped(self.mem))
        prime_q = Array(Const(q, 64) for q in self.primes)      # slot -> prime id, q per slot for checked loads
        for s in range(self.shape.slots):
            m.d.comb += mu.slot_q[s].eq(prime_q[mgr.cfg.prime[s]])
        for unit in (nu, pu, self.crypto_unit, su, self.codec_unit, self.basis_unit):
            if unit is not None:
                m.d.comb += unit.slot_prime.eq(mgr.cfg.prime)
        if su is not None:
            m.d.comb += su.seed.eq(mu.seed)
        if self.xof is not None:                # the sampling unit first when both request at once
            m.submodules.xof = self.xof
            wiring.connect(m, su.xof, self.xof.client0)
            wiring.connect(m, self.crypto_unit.xof, self.xof.client1)
        if self.network_unit is not None:
            nw = self.network_unit
            wiring.connect(m, nw.o_udp, wiring.flipped(self.o_udp))
            wiring.connect(m, wiring.flipped(self.i_udp), nw.i_udp)
            cfg = mgr.cfg
            m.d.comb += [nw.cfg.ip_address.eq(cfg.net_ip), nw.cfg.src_port.eq(cfg.net_src_port),
                         nw.cfg.dst_port.eq(cfg.net_dst_port), nw.cfg.segment.eq(cfg.net_segment),
                         nw.cfg.message.eq(cfg.net_message), nw.restart.eq(mgr.net_restart)]
        return m

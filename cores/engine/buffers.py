"""The engine's polynomial buffers and the crossbar between them and the units' ports.

A buffer is N words of ``word_bits`` bits kept as N/P rows of P words (lane ``j`` of row ``r`` is
word ``r*P + j``), so a unit moves a polynomial beat of P coefficients per cycle.  Each buffer is
one :class:`amaranth.lib.memory.Memory` with one synchronous read port and one write port with a
write enable per lane (a unit that delivers one word per cycle, like the memory port, writes one
lane).

Units reach the buffers through numbered read and write ports (:func:`read_port_signature`,
:func:`write_port_signature`): a port names the buffer it wants (``sel``) with the row address.
The task manager's scoreboard guarantees that at most one port uses a buffer at a time (no two
tasks in flight share a buffer unless both only read it, and the engine then serialises the
readers too: one read port per buffer), so the crossbar is plain multiplexing: the lowest-numbered
enabled port that selects a buffer drives it.

Parameters
----------
buffers : int       B, 1 .. 32
rows : int          N/P (depth of each buffer)
lanes : int         P words per row
word_bits : int     bits of a word, 1 .. 64
read_ports, write_ports : int   number of unit-side ports of each kind, 1 .. 16

Members
-------
read<k> : In(read_port_signature(...))    ``sel``, ``addr``, ``en`` in; ``data`` out one cycle
                                          after ``en`` (the buffer's row at ``addr`` then)
write<k> : In(write_port_signature(...))  ``sel``, ``addr``, ``data``, ``lanes`` (write enable per
                                          lane); written at the clock edge

Latency
-------
Read: 1 cycle (address in cycle c, data in cycle c + 1).  Write: the row holds the data from
cycle c + 1.  A read and a write of the same row in one cycle read the old data.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_int

from .isa import MAX_BUFFERS

__all__ = ["read_port_signature", "write_port_signature", "BufferFile"]


def read_port_signature(buffers: int, rows: int, lanes: int, word_bits: int) -> wiring.Signature:
    """A unit's read port, as seen by the unit (``data`` comes in)."""
    return wiring.Signature({
        "sel": Out(range(max(buffers, 2))), "addr": Out(range(max(rows, 2))), "en": Out(1),
        "data": In(data.ArrayLayout(unsigned(word_bits), lanes)),
    })


def write_port_signature(buffers: int, rows: int, lanes: int, word_bits: int) -> wiring.Signature:
    """A unit's write port, as seen by the unit (everything goes out)."""
    return wiring.Signature({
        "sel": Out(range(max(buffers, 2))), "addr": Out(range(max(rows, 2))),
        "lanes": Out(lanes), "data": Out(data.ArrayLayout(unsigned(word_bits), lanes)),
    })


class BufferFile(wiring.Component):
    """B polynomial buffers behind a crossbar of unit read and write ports (see the module
    docstring)."""

    @quiet_on_error
    def __init__(self, buffers: int, rows: int, lanes: int, word_bits: int, *, read_ports: int = 1,
                 write_ports: int = 1):
        self.buffers = check_int("buffers", buffers, 1, MAX_BUFFERS)
        self.rows = check_int("rows", rows, 1, 1 << 20)
        self.lanes = check_int("lanes", lanes, 1, 64)
        self.word_bits = check_int("word_bits", word_bits, 1, 64)
        self.read_ports = check_int("read_ports", read_ports, 1, 16)
        self.write_ports = check_int("write_ports", write_ports, 1, 16)
        self.row_layout = data.ArrayLayout(unsigned(word_bits), lanes)
        rd = read_port_signature(buffers, rows, lanes, word_bits)
        wr = write_port_signature(buffers, rows, lanes, word_bits)
        members = {f"read{k}": In(rd) for k in range(read_ports)}
        members.update({f"write{k}": In(wr) for k in range(write_ports)})
        super().__init__(members)

    def read(self, k: int):
        return getattr(self, f"read{k}")

    def write(self, k: int):
        return getattr(self, f"write{k}")

    def elaborate(self, platform):
        m = Module()
        outs = []
        for b in range(self.buffers):
            mem = Memory(shape=self.row_layout, depth=self.rows, init=[])
            m.submodules[f"buffer{b}"] = mem
            rp = mem.read_port()
            wp = mem.write_port(granularity=1)           # one enable per lane (ArrayLayout element)
            outs.append(rp.data)
            # read: the lowest-numbered enabled port selecting b
            addr, en = Signal.like(rp.addr), Signal()
            for k in reversed(range(self.read_ports)):
                port = self.read(k)
                hit = port.en & (port.sel == b)
                addr = Mux(hit, port.addr, addr)
                en = en | hit
            m.d.comb += [rp.addr.eq(addr), rp.en.eq(en)]
            # write: likewise
            w_addr, w_data = Signal.like(wp.addr), Signal.like(wp.data)
            w_en = Signal(self.lanes)
            a, d, e = Signal.like(wp.addr), Signal.like(wp.data), Signal(self.lanes)     # no port: 0
            for k in reversed(range(self.write_ports)):
                port = self.write(k)
                hit = port.lanes.any() & (port.sel == b)
                a, d, e = Mux(hit, port.addr, a), Mux(hit, port.data, d), Mux(hit, port.lanes, e)
            m.d.comb += [w_addr.eq(a), w_data.eq(d), w_en.eq(e), wp.addr.eq(w_addr), wp.data.eq(w_data),
                         wp.en.eq(w_en)]
        # read data back to each port by the buffer it selected in the previous cycle
        for k in range(self.read_ports):
            port = self.read(k)
            sel_q = Signal.like(port.sel, name=f"read{k}_sel_q")
            m.d.sync += sel_q.eq(port.sel)
            value = outs[0]
            for b in range(1, self.buffers):
                value = Mux(sel_q == b, outs[b], value)
            m.d.comb += port.data.eq(value)
        return m

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

Banked buffers (``banked=True``): each buffer is instead the 2P banks of N/2P words of the NTT
core's memory plan (:mod:`hhe_gen.cores.ntt.bank_port`: word i in bank bank(i) at address i >> B,
B = log2 2P), so the NTT unit transforms a polynomial where it lies, through the ``bank`` port
(per bank an address, the whole bank set of one buffer for its reads (``rsel``) and of one for its
writes (``wsel``)).  A row port sees the same rows as before: row r's word j is in bank
bank(rP) XOR j at address r >> 1; a read goes through a half select and an XOR network on the
registered bank(rP), a write through an XOR network on the row's data.  The banks' reads are not
transparent for their writes (the NTT reads a word at the earliest in the cycle after its write;
no two units touch one buffer in a cycle), so no bypass sits beside the block RAMs.

Parameters
----------
buffers : int       B, 1 .. 32
rows : int          N/P (depth of each buffer)
lanes : int         P words per row
word_bits : int     bits of a word, 1 .. 64
read_ports, write_ports : int   number of unit-side ports of each kind, 1 .. 16
banked : bool       2P banks per buffer and the ``bank`` port (rows >= 2, N = rows * P a power of
                    two)

Members
-------
read<k> : In(read_port_signature(...))    ``sel``, ``addr``, ``en`` in; ``data`` out one cycle
                                          after ``en`` (the buffer's row at ``addr`` then)
write<k> : In(write_port_signature(...))  ``sel``, ``addr``, ``data``, ``lanes`` (write enable per
                                          lane); written at the clock edge
bank : In(bank_access_signature(...))     banked only: ``rsel`` / ``wsel`` and the members of
                                          :func:`hhe_gen.cores.ntt.bank_port.bank_port_signature`

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

from hhe_gen.cores.ntt.bank_port import bank_port_signature, row_bank
from hhe_gen.cores.ntt.crossbar import xor_network
from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_int, check_power_of_two

from .isa import MAX_BUFFERS

__all__ = ["read_port_signature", "write_port_signature", "bank_access_signature", "BufferFile"]


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


def bank_access_signature(buffers: int, lanes: int, rows: int, word_bits: int) -> wiring.Signature:
    """The NTT unit's bank port onto banked buffers (as seen by the unit): the buffer it reads
    (``rsel``), the buffer it writes (``wsel``) and the 2P banks' port."""
    sel = range(max(buffers, 2))
    banks = bank_port_signature(2 * lanes, rows // 2, word_bits)
    return wiring.Signature({"rsel": Out(sel), "wsel": Out(sel), **dict(banks.members.items())})


class BufferFile(wiring.Component):
    """B polynomial buffers behind a crossbar of unit read and write ports (see the module
    docstring)."""

    @quiet_on_error
    def __init__(self, buffers: int, rows: int, lanes: int, word_bits: int, *, read_ports: int = 1,
                 write_ports: int = 1, banked: bool = False):
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
        self.banked = bool(banked)
        if self.banked:
            check_power_of_two("lanes", lanes, 1, 64)
            check_power_of_two("rows", rows, 2, 1 << 20)
            members["bank"] = In(bank_access_signature(buffers, lanes, rows, word_bits))
        super().__init__(members)

    def read(self, k: int):
        return getattr(self, f"read{k}")

    def write(self, k: int):
        return getattr(self, f"write{k}")

    def elaborate(self, platform):
        if self.banked:
            return self._banked()
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

    def _banked(self):
        """Banked buffers (see the module docstring).  The row logic sits once per buffer, not
        per port (one port reads and one writes a buffer in a cycle): a buffer turns the row its
        reader names into the half of its banks holding it and the XOR network on the registered
        bank(rP), and the row its writer names into bank-ordered words and enables."""
        m = Module()
        P, wb = self.lanes, self.word_bits
        lp = P.bit_length() - 1
        n_log = (self.rows * P).bit_length() - 1
        nb, depth, bank = 2 * P, self.rows // 2, self.bank
        rows_out, banks_out = [], []
        for b in range(self.buffers):
            # the row read: the lowest-numbered enabled port selecting b
            r_addr, r_en = Signal(range(self.rows), name=f"b{b}_raddr"), Signal(name=f"b{b}_ren")
            a, e = Signal(range(self.rows)), Signal()
            for k in reversed(range(self.read_ports)):
                port = self.read(k)
                hit = port.en & (port.sel == b)
                a, e = Mux(hit, port.addr, a), e | hit
            m.d.comb += [r_addr.eq(a), r_en.eq(e)]
            r_bank = Signal(lp + 1, name=f"b{b}_rbank")
            m.d.sync += r_bank.eq(row_bank(r_addr, lp, n_log))
            # the row write: likewise, its words and lane enables in bank order
            w_addr, w_lanes = Signal(range(self.rows), name=f"b{b}_waddr"), Signal(P, name=f"b{b}_wlanes")
            w_data = Signal(self.row_layout, name=f"b{b}_wdata")
            a, d, e = Signal(range(self.rows)), Signal(self.row_layout), Signal(P)
            for k in reversed(range(self.write_ports)):
                port = self.write(k)
                hit = port.lanes.any() & (port.sel == b)
                a, d, e = Mux(hit, port.addr, a), Mux(hit, port.data, d), Mux(hit, port.lanes, e)
            m.d.comb += [w_addr.eq(a), w_data.eq(d), w_lanes.eq(e)]
            w_bank = row_bank(w_addr, lp, n_log)
            words = xor_network(m, [w_data[j] for j in range(P)], w_bank[:lp], wb, f"b{b}_wx")
            lanes = xor_network(m, [w_lanes[j] for j in range(P)], w_bank[:lp], 1, f"b{b}_wl")
            read_hit = bank.ren & (bank.rsel == b)
            data_out = []
            for t in range(nb):
                mem = Memory(shape=unsigned(wb), depth=depth, init=[])
                m.submodules[f"buffer{b}_bank{t}"] = mem
                wp = mem.write_port()
                rp = mem.read_port()
                data_out.append(rp.data)
                m.d.comb += [rp.addr.eq(Mux(read_hit, bank.raddr[t], r_addr >> 1)), rp.en.eq(read_hit | r_en)]
                w_hit = bank.wen[t] & (bank.wsel == b)
                row_we = lanes[t % P] & (w_bank[lp] == t >> lp)
                m.d.comb += [wp.addr.eq(Mux(w_hit, bank.waddr[t], w_addr >> 1)),
                             wp.data.eq(Mux(w_hit, bank.wdata[t], words[t % P])), wp.en.eq(w_hit | row_we)]
            banks_out.append(data_out)
            half = []
            for i in range(P):
                h = Signal(wb, name=f"b{b}_half{i}")
                m.d.comb += h.eq(Mux(r_bank[lp], data_out[P + i], data_out[i]))
                half.append(h)
            rows_out.append(xor_network(m, half, r_bank[:lp], wb, f"b{b}_rx"))

        def by_buffer(sel, words):
            value = words[0]
            for b in range(1, self.buffers):
                value = Mux(sel == b, words[b], value)
            return value

        rsel_q = Signal.like(bank.rsel, name="bank_rsel_q")
        m.d.sync += rsel_q.eq(bank.rsel)
        for t in range(nb):
            m.d.comb += bank.rdata[t].eq(by_buffer(rsel_q, [out[t] for out in banks_out]))
        for k in range(self.read_ports):
            port = self.read(k)
            sel_q = Signal.like(port.sel, name=f"read{k}_sel_q")
            m.d.sync += sel_q.eq(port.sel)
            for j in range(P):
                m.d.comb += port.data[j].eq(by_buffer(sel_q, [out[j] for out in rows_out]))
        return m

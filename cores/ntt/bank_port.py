"""The bank port of the iterative NTT: its 2P data banks held outside the core.

The core's memory plan (:mod:`.schedule`) keeps word i of a polynomial in bank ``bank(i)`` (the XOR
of the B-bit chunks of i, B = log2 2P) at address ``i >> B``.  With ``memory="external"``
(:class:`~.iterative.IterativeNtt`) the core has no banks of its own: it reads and writes the 2P
banks of whoever holds the polynomial through this port, in place, so a polynomial never travels
in or out of the core.  The holder (the engine's :class:`~hhe_gen.cores.engine.buffers.BufferFile`)
keeps the same layout for its row ports: row r of P words (words rP .. rP+P-1) is in banks
``bank(rP) XOR j`` (j < P) at address ``r >> 1`` (:func:`row_bank`).

Members of the signature (as seen by the core, the port's master)
-----------------------------------------------------------------
raddr : Out(ArrayLayout(range(N/2P), 2P))   per bank, the word address read this cycle
ren : Out(1)                                the banks are read this cycle
first : Out(1)                              the read belongs to the transform's first stage (the
                                            holder reads the source polynomial then, the
                                            destination otherwise: a transform from one buffer
                                            into another needs no copy)
rdata : In(ArrayLayout(width, 2P))          per bank, the word read in the previous cycle; the
                                            read need not be transparent for the same bank's
                                            write (the core reads a word at the earliest in the
                                            cycle after the write it needs)
waddr : Out(ArrayLayout(range(N/2P), 2P))   per bank, the address written this cycle
wen : Out(2P)                               per bank, write enable
wdata : Out(ArrayLayout(width, 2P))         per bank, the word written
"""

from __future__ import annotations

from amaranth.hdl import unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .address_decoder import bank_of

__all__ = ["bank_port_signature", "row_bank"]


def bank_port_signature(banks: int, depth: int, width: int) -> wiring.Signature:
    """The bank port of ``banks`` banks of ``depth`` words of ``width`` bits (the core's view)."""
    addr = data.ArrayLayout(range(max(depth, 2)), banks)
    word = data.ArrayLayout(unsigned(width), banks)
    return wiring.Signature({
        "raddr": Out(addr), "ren": Out(1), "first": Out(1), "rdata": In(word),
        "waddr": Out(addr), "wen": Out(banks), "wdata": Out(word),
    })


def row_bank(row, lanes_log: int, n_log: int):
    """bank(r * P) for row ``row`` (hardware expression, B = lanes_log + 1 bits): word j of the row
    is in bank ``row_bank XOR j``."""
    return bank_of((row << lanes_log)[:n_log], n_log, lanes_log + 1)

"""The engine's memory-master port: commands, write beats and read beats on three streams.

The engine reaches external memory (keys, slots, ciphertexts) through this port only; the SoC maps
it onto a Wishbone DMA master or a LiteDRAM native port, the simulations onto
:class:`hhe_gen.sim.memory.MemoryModel`.

Protocol (as seen by the engine, the master):

* ``cmd``: ``addr`` (64-bit word address), ``count`` (beats, 1 .. 2^17 - 1) and ``write``.  Commands
  are served in order.
* a write command is followed by ``count`` beats on ``wdata`` (``last`` on the final one); the
  master sends them after the command transfer, in order;
* a read command is answered by ``count`` beats on ``rdata`` (``last`` on the final one), in
  command order.

A beat is one 64-bit word: a coefficient or slot part in its low bits (zero-extended), or 8 bytes
of a seed (little-endian).  Nothing else is implied: latency and rate belong to the memory.
"""

from __future__ import annotations

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["ADDR_BITS", "COUNT_BITS", "BEAT_BITS", "command_layout", "beat_layout", "MemoryPort"]

ADDR_BITS, COUNT_BITS, BEAT_BITS = 32, 17, 64


def command_layout() -> data.StructLayout:
    return data.StructLayout({"addr": ADDR_BITS, "count": COUNT_BITS, "write": 1})


def beat_layout() -> data.StructLayout:
    return data.StructLayout({"data": BEAT_BITS, "last": 1})


class MemoryPort(wiring.Signature):
    """The master's side of the memory port.

    Members
    -------
    cmd : Out(stream.Signature(command_layout()))
    wdata : Out(stream.Signature(beat_layout()))
    rdata : In(stream.Signature(beat_layout()))
    """

    def __init__(self):
        super().__init__({
            "cmd": Out(stream.Signature(command_layout())),
            "wdata": Out(stream.Signature(beat_layout())),
            "rdata": In(stream.Signature(beat_layout())),
        })

    def __eq__(self, other):
        return type(other) is MemoryPort

    def __hash__(self):
        return hash(MemoryPort)

    def __repr__(self):
        return "MemoryPort()"

"""The engine's memory-master port: commands, write beats and read beats on three streams.

The engine reaches external memory (keys, slots, ciphertexts) through this port only; the SoC maps
it onto a Wishbone DMA master or a LiteDRAM native port, the simulations onto
:class:`hhe_gen.sim.memory.MemoryModel`.

Protocol (as seen by the engine, the master):

* ``cmd``: ``addr`` (64-bit word address), ``count`` (beats, 1 .. 2^17 - 1) and ``write``.  Commands
  are served in order; beat k of a command covers words addr + kW .. addr + kW + W - 1.
* a write command is followed by ``count`` beats on ``wdata`` (``last`` on the final one); the
  master sends them after the command transfer, in order;
* a read command is answered by ``count`` beats on ``rdata`` (``last`` on the final one), in
  command order.

A beat is W = ``words`` 64-bit words, word i in bits 64i .. 64i + 63 (W = 1: a SoC's 64-bit
LiteDRAM port or Wishbone DMA master; W = 4 or 8: a 256- or 512-bit port, as an HBM pseudo-channel's
AXI port on a data-centre card).  A word is a coefficient or slot part in its low bits
(zero-extended), or 8 bytes of a seed (little-endian).  Nothing else is implied: latency and rate
belong to the memory.
"""

from __future__ import annotations

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.checks import check_power_of_two

__all__ = ["ADDR_BITS", "COUNT_BITS", "BEAT_BITS", "MAX_BEAT_WORDS", "command_layout", "beat_layout", "MemoryPort"]

ADDR_BITS, COUNT_BITS, BEAT_BITS = 32, 17, 64
MAX_BEAT_WORDS = 8
"""The widest beat: 8 words, 512 bits."""


def command_layout() -> data.StructLayout:
    return data.StructLayout({"addr": ADDR_BITS, "count": COUNT_BITS, "write": 1})


def beat_layout(words: int = 1) -> data.StructLayout:
    return data.StructLayout({"data": BEAT_BITS * words, "last": 1})


class MemoryPort(wiring.Signature):
    """The master's side of the memory port.

    Parameters
    ----------
    words : int    W, 64-bit words per beat: 1, 2, 4 or 8

    Members
    -------
    cmd : Out(stream.Signature(command_layout()))
    wdata : Out(stream.Signature(beat_layout(W)))
    rdata : In(stream.Signature(beat_layout(W)))
    """

    def __init__(self, words: int = 1):
        self.words = check_power_of_two("words", words, 1, MAX_BEAT_WORDS)
        super().__init__({
            "cmd": Out(stream.Signature(command_layout())),
            "wdata": Out(stream.Signature(beat_layout(words))),
            "rdata": In(stream.Signature(beat_layout(words))),
        })

    def __eq__(self, other):
        return type(other) is MemoryPort and other.words == self.words

    def __hash__(self):
        return hash((MemoryPort, self.words))

    def __repr__(self):
        return "MemoryPort()" if self.words == 1 else f"MemoryPort({self.words})"

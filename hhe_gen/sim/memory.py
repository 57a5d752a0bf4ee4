"""A simulated external memory behind the engine's memory port
(:class:`hhe_gen.cores.engine.memory_port.MemoryPort`), for Amaranth simulations.

The model answers one beat every ``cycles_per_beat`` cycles after a fixed ``latency``: with
``cycles_per_beat=1`` the shape of a LiteDRAM native port (64 bits per cycle), with 4 a 32-bit
Wishbone DMA master moving one word per 2 cycles (two bus words per 64-bit beat); with
``beat_words`` W > 1 a beat is W consecutive words (a 256- or 512-bit port).  Words never written
read as 0.

Usage::

    mem = MemoryModel({0x100: 5}, latency=8)
    sim.add_process(mem.process(dut.mem))      # serves until the simulation ends
    ...
    mem.words[0x200]                            # what the engine wrote
"""

from __future__ import annotations

from hhe_gen.params.checks import check_int, check_power_of_two
from hhe_gen.params.errors import ParameterError

__all__ = ["MemoryModel"]

MASK64 = (1 << 64) - 1


async def _take(ctx, stream):
    """Wait for a transfer on ``stream`` (whose ``ready`` the caller holds high); its payload.

    (A plain loop: ``tick().until()`` cannot be closed cleanly in a process that never ends.)"""
    while True:
        *_, valid, payload = await ctx.tick().sample(stream.valid, stream.payload)
        if valid:
            return payload


class MemoryModel:
    """A word-addressed 64-bit memory serving a memory port (see the module docstring).

    Parameters
    ----------
    words : dict or None      initial contents {address: value}
    latency : int             cycles from a read command's transfer to its first beat, 1 .. 1000
    cycles_per_beat : int     cycles per beat on either direction, 1 .. 16
    beat_words : int          W, 64-bit words per beat: 1, 2, 4 or 8 (the port's ``words``)

    Members
    -------
    words : dict              the contents
    reads, writes : int       beats served (W words each)
    commands : list           (addr, count, write) of every command taken, in order (count in beats)
    """

    def __init__(self, words=None, *, latency: int = 8, cycles_per_beat: int = 1, beat_words: int = 1):
        self.words = dict(words or {})
        self.latency = check_int("latency", latency, 1, 1000)
        self.cycles_per_beat = check_int("cycles_per_beat", cycles_per_beat, 1, 16)
        self.beat_words = check_power_of_two("beat_words", beat_words, 1, 8)
        self.reads = self.writes = 0
        self.commands = []

    def load(self, addr: int, values) -> None:
        """Place consecutive 64-bit words (negative values as two's complement) from ``addr``."""
        for i, v in enumerate(values):
            self.words[addr + i] = v & MASK64

    def dump(self, addr: int, count: int) -> list[int]:
        """``count`` words from ``addr`` (0 where never written)."""
        return [self.words.get(addr + i, 0) for i in range(count)]

    def process(self, port):
        """An async process for ``sim.add_process`` serving ``port`` (the engine's ``MemoryPort``)."""
        w = self.beat_words
        if port.signature.words != w:
            raise ParameterError("beat_words", w, f"the port's words per beat ({port.signature.words})")

        async def serve(ctx):
            while True:
                ctx.set(port.cmd.ready, 1)
                cmd = await _take(ctx, port.cmd)
                ctx.set(port.cmd.ready, 0)
                addr, count, write = int(cmd.addr), int(cmd.count), int(cmd.write)
                self.commands.append((addr, count, write))
                if write:
                    for i in range(count):
                        ctx.set(port.wdata.ready, 1)
                        payload = await _take(ctx, port.wdata)
                        ctx.set(port.wdata.ready, 0)
                        data = int(payload.data)
                        for j in range(w):
                            self.words[addr + i * w + j] = (data >> (64 * j)) & MASK64
                        self.writes += 1
                        for _ in range(self.cycles_per_beat - 1):
                            await ctx.tick()
                else:
                    for _ in range(self.latency - 1):
                        await ctx.tick()
                    for i in range(count):
                        data = sum(self.words.get(addr + i * w + j, 0) << (64 * j) for j in range(w))
                        ctx.set(port.rdata.payload, {"data": data, "last": int(i == count - 1)})
                        ctx.set(port.rdata.valid, 1)
                        while not (await ctx.tick().sample(port.rdata.ready))[-1]:
                            pass
                        ctx.set(port.rdata.valid, 0)
                        self.reads += 1
                        for _ in range(self.cycles_per_beat - 1):
                            await ctx.tick()
        return serve

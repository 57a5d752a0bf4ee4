"""A clock-enabled delay line: registers when short, a circular buffer in memory when long.

Used by the pipelined NTT (:mod:`.pipelined`) for its feedback / commutator delays.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.errors import ParameterError

__all__ = ["DelayLine"]


class DelayLine(wiring.Component):
    """``o`` = ``i`` of ``delay`` enabled cycles ago (cycles with ``en`` low do not count).

    Parameters
    ----------
    width : int             word width
    delay : int             0 (a wire) or more enabled cycles
    memory_threshold : int  delays >= this use an :class:`amaranth.lib.memory.Memory` circular buffer
                            of ``delay - 1`` words (one write port and one non-transparent read
                            port at the same address: the word read is the one being overwritten;
                            the read port's register is the last stage); shorter ones a chain of
                            ``delay`` registers
    clear : bool            memory form only: ``o`` is 0 until the buffer has been written once
                            after reset (so flag bits stored in it never come out as garbage)

    Members
    -------
    i : In(width), o : Out(width), en : In(1)
    in_memory : bool   whether the memory form is used
    words : int        storage in words (registers or memory)

    Latency: exactly ``delay`` enabled cycles.
    """

    @quiet_on_error
    def __init__(self, width: int, delay: int, *, memory_threshold: int = 16, clear: bool = False):
        if isinstance(delay, bool) or not isinstance(delay, int) or delay < 0:
            raise ParameterError("delay", delay, "an integer >= 0")
        if isinstance(memory_threshold, bool) or not isinstance(memory_threshold, int) or memory_threshold < 3:
            raise ParameterError("memory_threshold", memory_threshold, "an integer >= 3")
        self.width, self.delay, self.clear = width, delay, clear
        self.in_memory = delay >= memory_threshold
        self.words = delay - 1 if self.in_memory else delay
        super().__init__({"i": In(width), "o": Out(width), "en": In(1)})

    def elaborate(self, platform):
        m = Module()
        d = self.delay
        if d == 0:
            m.d.comb += self.o.eq(self.i)
            return m
        if not self.in_memory:
            prev = self.i
            for k in range(d):
                r = Signal(self.width, name=f"r{k}")
                with m.If(self.en):
                    m.d.sync += r.eq(prev)
                prev = r
            m.d.comb += self.o.eq(prev)
            return m
        depth = d - 1
        mem = memory.Memory(shape=self.width, depth=depth, init=[])
        m.submodules.buffer = mem
        wp = mem.write_port()
        rp = mem.read_port()               # not transparent: reads the word before this write
        ptr = Signal(range(depth), name="ptr")
        with m.If(self.en):
            m.d.sync += ptr.eq(Mux(ptr == depth - 1, 0, ptr + 1))
        m.d.comb += [wp.addr.eq(ptr), wp.data.eq(self.i), wp.en.eq(self.en),
                     rp.addr.eq(ptr), rp.en.eq(self.en)]
        if self.clear:
            written = Signal(name="written")      # every word written once since reset
            valid = Signal(name="valid")          # the read port's word was written
            with m.If(self.en):
                m.d.sync += valid.eq(written)
                with m.If(ptr == depth - 1):
                    m.d.sync += written.eq(1)
            m.d.comb += self.o.eq(Mux(valid, rp.data, 0))
        else:
            m.d.comb += self.o.eq(rp.data)
        return m

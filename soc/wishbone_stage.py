"""A registered stage between the SoC bus and one Wishbone slave.

:class:`WishboneStage` takes an access from the bus into registers, runs it on the slave from
there, and answers the bus from a register: the bus's ``ack`` and ``dat_r`` never come
combinationally from the slave.  On the boards it stands in front of LiteDRAM's Wishbone bridge of
the main RAM, whose ack comes straight from the DRAM port's handshake: without it the SoC bus's
shared ack (and every master's, the VexRiscv's included) hung on LiteDRAM's arbiter, the ECPIX-5
system clock's critical path.

Parameters
----------
bus : wishbone.Interface     the side the SoC bus drives (its slave)
slave : wishbone.Interface   the slave it stands in front of (same widths and addressing)

Latency
-------
An access takes the slave's cycles plus two: one to take it, and the answer in the cycle after the
slave's.  Writes are not posted: the bus's ack follows the slave's, so a write has reached the
slave when the bus sees it done.  A master that drops ``cyc`` before the answer (a bus time-out)
gets none; the slave's access still ends before the stage takes the next.
"""

from __future__ import annotations

from migen import If, Signal

from litex.gen import LiteXModule

from hhe_gen.params.errors import ParameterError

__all__ = ["WishboneStage"]


class WishboneStage(LiteXModule):
    """The registered stage (module docstring)."""

    def __init__(self, bus, slave):
        for name in ("data_width", "addressing"):
            if getattr(bus, name) != getattr(slave, name):
                raise ParameterError(f"slave {name}", getattr(slave, name), f"the bus side's, {getattr(bus, name)}")
        self.bus, self.slave = bus, slave
        busy, answer, aborted = Signal(), Signal(), Signal()
        self.comb += [slave.cyc.eq(busy), slave.stb.eq(busy), bus.ack.eq(answer)]
        self.sync += [
            answer.eq(0),
            If(~busy & ~answer & bus.cyc & bus.stb,
                busy.eq(1), aborted.eq(0),
                slave.adr.eq(bus.adr), slave.dat_w.eq(bus.dat_w), slave.sel.eq(bus.sel), slave.we.eq(bus.we),
            ).Elif(busy,
                If(~bus.cyc, aborted.eq(1)),
                If(slave.ack,
                    busy.eq(0), answer.eq(~aborted & bus.cyc), bus.dat_r.eq(slave.dat_r),
                ),
            ),
        ]

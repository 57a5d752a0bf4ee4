"""The registered Wishbone stage (soc/wishbone_stage.py) in Migen's simulator, in front of a slave
that answers after a random number of cycles: every write lands and every read returns it, the
bus's answer comes from a register in the cycle after the slave's, and a master that gives up gets no answer."""

import random

import pytest

migen = pytest.importorskip("migen")

from migen import run_simulation  # noqa: E402
from litex.gen import LiteXModule  # noqa: E402
from litex.soc.interconnect import wishbone  # noqa: E402

from hhe_gen.params.errors import ParameterError  # noqa: E402
from hhe_gen.soc.wishbone_stage import WishboneStage  # noqa: E402


class Harness(LiteXModule):
    def __init__(self):
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.slave = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.stage = WishboneStage(self.bus, self.slave)


def _serve(slave, memory, delays, log, state):
    """A slave that acknowledges each access after the next of ``delays`` cycles (byte enables on
    writes); ``log`` gets the cycle of each ack."""
    delays = iter(delays)
    while not state["done"]:
        if (yield slave.cyc) and (yield slave.stb):
            for _ in range(next(delays)):
                yield
            adr, we, sel = (yield slave.adr), (yield slave.we), (yield slave.sel)
            if we:
                mask = sum(0xFF << 8 * b for b in range(4) if sel >> b & 1)
                memory[adr] = (memory.get(adr, 0) & ~mask) | ((yield slave.dat_w) & mask)
            else:
                yield slave.dat_r.eq(memory.get(adr, 0xDEAD0000 | adr))
            yield slave.ack.eq(1)
            log.append(state["cycle"])
            yield
            yield slave.ack.eq(0)
        yield


def _clock(state):
    while not state["done"]:
        yield
        state["cycle"] += 1


def test_writes_land_and_reads_return_them_through_the_stage():
    rng = random.Random(5)
    dut, memory, state = Harness(), {}, {"done": False, "cycle": 0}
    values = [0, 0xFFFFFFFF, 0x80000000, 1] + [rng.getrandbits(32) for _ in range(12)]
    got = []

    def master():
        for k, v in enumerate(values):
            yield from dut.bus.write(0x100 + k, v)
        yield from dut.bus.write(0x100, 0xAB, sel=0b0001)             # one byte
        for k in range(len(values)):
            got.append((yield from dut.bus.read(0x100 + k)))
        state["done"] = True

    delays = [rng.randrange(0, 6) for _ in range(100)]
    run_simulation(dut, [master(), _clock(state), _serve(dut.slave, memory, delays, [], state)])
    assert got == [(values[0] & ~0xFF) | 0xAB] + values[1:]


def test_the_answer_comes_from_a_register_the_cycle_after_the_slaves():
    dut, state = Harness(), {"done": False, "cycle": 0}
    acks, answers = [], []

    def master():
        yield dut.bus.adr.eq(7)
        yield dut.bus.cyc.eq(1)
        yield dut.bus.stb.eq(1)
        for _ in range(20):
            yield
            if (yield dut.bus.ack):
                answers.append(state["cycle"])
                break
        yield dut.bus.cyc.eq(0)
        yield dut.bus.stb.eq(0)
        for _ in range(4):
            yield
        state["done"] = True

    run_simulation(dut, [master(), _clock(state), _serve(dut.slave, {7: 42}, [3], acks, state)])
    assert len(acks) == 1 and answers == [acks[0] + 1]      # the slave's ack cycle, then the stage's


def test_a_master_that_gives_up_gets_no_answer_and_the_next_access_works():
    dut, state, memory = Harness(), {"done": False, "cycle": 0}, {3: 33, 4: 44}
    stray, got = [], []

    def master():
        yield dut.bus.adr.eq(3)
        yield dut.bus.cyc.eq(1)
        yield dut.bus.stb.eq(1)
        yield
        yield
        yield dut.bus.cyc.eq(0)                # a time-out: the master leaves before the answer
        yield dut.bus.stb.eq(0)
        for _ in range(12):
            yield
            stray.append((yield dut.bus.ack))
        got.append((yield from dut.bus.read(4)))
        state["done"] = True

    run_simulation(dut, [master(), _clock(state), _serve(dut.slave, memory, [6, 1], [], state)])
    assert not any(stray)
    assert got == [44]


def test_mismatched_widths_are_refused():
    bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
    with pytest.raises(ParameterError, match="slave data_width"):
        WishboneStage(bus, wishbone.Interface(data_width=64, address_width=32, addressing="word"))

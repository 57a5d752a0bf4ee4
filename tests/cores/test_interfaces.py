"""The interface vocabulary (hhe_gen.cores.interfaces): the cores' signatures conform, the checker
finds what does not, RNS orders name real members, PolyFramer frames bit for bit."""

import importlib

import pytest
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores import interfaces
from hhe_gen.cores.ckks import Decoder, Encoder
from hhe_gen.cores.keccak.xof import ShakeXof
from hhe_gen.cores.net import Depacketizer, Packetizer
from hhe_gen.cores.ntt.iterative import IterativeNtt
from hhe_gen.cores.rubato.core import RubatoCore
from hhe_gen.cores.rubato.round_keys import RoundKeySchedule
from hhe_gen.cores.sampler import GaussianCDT, TernaryUniform, UniformModQ
from hhe_gen.cores.sampler.bytes import ByteGatherer
from hhe_gen.models import fft as fftm
from hhe_gen.cores.unused import mark_unused
from hhe_gen.params import ParameterError, ntt_primes, rubato_params
from hhe_gen.sim.stream import run_simulation

FMT = fftm.FixedPointFormat(29, 26)


def _cores():
    qs = ntt_primes(16, 30, 2)
    rubato = rubato_params("80S")
    cores = {
        "IterativeNtt": IterativeNtt(16, 2, qs),
        "ShakeXof": ShakeXof(),
        "TernaryUniform": TernaryUniform(),
        "GaussianCDT": GaussianCDT(),
        "UniformModQ": UniformModQ(qs[0]),
        "ByteGatherer": ByteGatherer(),
        "Encoder": Encoder(16, 1, FMT, 20, qs),
        "Decoder": Decoder(16, 1, FMT, 20, qs),
        "RoundKeySchedule": RoundKeySchedule(rubato),
        "RubatoCore": RubatoCore(rubato),
        "PolyFramer": interfaces.PolyFramer(30, 2, 2, 8),
        "Packetizer": Packetizer(8),
        "Depacketizer": Depacketizer(8),
        "IterativeNtt in place": IterativeNtt(16, 2, qs, memory="external"),
    }
    for core in cores.values():
        mark_unused(core, deep=True)
    return cores


@pytest.mark.parametrize("name", list(_cores()))
def test_core_signatures_follow_the_vocabulary(name):
    assert interfaces.check_vocabulary(_cores()[name]) == []


class _OldShapes(wiring.Component):
    def __init__(self):
        super().__init__({"clear": In(1), "busy": Out(2), "done": In(1), "o_stream": In(stream.Signature(8)),
                          "restart": In(1), "abort": Out(1)})

    def elaborate(self, platform):      # pragma: no cover - never elaborated
        raise NotImplementedError


def test_checker_names_every_departure():
    old = _OldShapes()
    mark_unused(old)
    problems = interfaces.check_vocabulary(old)
    assert problems == [
        "clear: an abort input is named 'abort'",
        "busy: a one-bit output",
        "done: a one-bit output",
        "o_stream: an output stream",
        "restart: an abort input is named 'abort'",
        "abort: a one-bit input",
    ]


def test_rns_orders_name_real_members():
    for path, order in interfaces.RNS_ORDERS.items():
        parts = path.split(".")
        # module path, class, optional member
        for cut in (len(parts) - 1, len(parts) - 2):
            try:
                module = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            cls = getattr(module, parts[cut])
            assert isinstance(cls, type), path
            break
        else:
            raise AssertionError(f"{path}: no such module")
        assert isinstance(order, interfaces.RnsOrder)


def test_command_members_shape():
    members = interfaces.command_members(8, error=True, abort=True)
    assert set(members) == {"cmd", "busy", "done", "error", "abort"}
    assert members["cmd"].flow == In and members["busy"].flow == Out and members["abort"].flow == In


@pytest.mark.parametrize("kwargs,name", [({"width": 0, "lanes": 1, "primes": 1}, "width"),
                                         ({"width": 65, "lanes": 1, "primes": 1}, "width"),
                                         ({"width": 8, "lanes": 0, "primes": 1}, "lanes"),
                                         ({"width": 8, "lanes": 1, "primes": 0}, "primes")])
def test_poly_beat_layout_refuses(kwargs, name):
    with pytest.raises(ParameterError, match=f"'{name}'"):
        interfaces.poly_beat_layout(**kwargs)


def test_poly_framer_frames_and_aborts():
    """Ten beats with a gap after each: the prime is sampled at a polynomial's first beat (changing
    it mid-polynomial does nothing), ``last`` on beats 3 and 7; an abort (no handshake in its cycle)
    makes the next beat a first beat again."""
    from amaranth.sim import Simulator

    dut = interfaces.PolyFramer(8, 2, 3, 4)
    got = []

    async def bench(ctx):
        ctx.set(dut.o_stream.ready, 1)
        primes = [2, 0, 1, 1, 1, 2, 0, 0, 0, 1]
        for k, prime in enumerate(primes):
            ctx.set(dut.prime, prime)
            ctx.set(dut.i_stream.payload, [k, k + 1])
            ctx.set(dut.i_stream.valid, 1)
            assert ctx.get(dut.o_stream.valid) and ctx.get(dut.i_stream.ready)
            payload = ctx.get(dut.o_stream.payload)
            got.append((list(payload.data), payload.prime, payload.last))
            await ctx.tick()
            ctx.set(dut.i_stream.valid, 0)
            await ctx.tick()                                    # a gap
        ctx.set(dut.abort, 1)
        ctx.set(dut.i_stream.valid, 1)
        assert ctx.get(dut.o_stream.valid) == 0 and ctx.get(dut.i_stream.ready) == 0
        await ctx.tick()
        ctx.set(dut.abort, 0)
        ctx.set(dut.prime, 2)
        payload = ctx.get(dut.o_stream.payload)
        got.append((list(payload.data), payload.prime, payload.last))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    run_simulation(sim)
    assert got == [([0, 1], 2, 0), ([1, 2], 2, 0), ([2, 3], 2, 0), ([3, 4], 2, 1),
                   ([4, 5], 1, 0), ([5, 6], 1, 0), ([6, 7], 1, 0), ([7, 8], 1, 1),
                   ([8, 9], 0, 0), ([9, 10], 0, 0),
                   ([9, 10], 2, 0)]

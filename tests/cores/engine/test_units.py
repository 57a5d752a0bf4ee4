"""MockUnit (the stand-in unit of the engine tests and proofs) and the UnitPort signature."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from hhe_gen.cores.engine.units import MockUnit, UnitPort, tag_bits, task_layout
from hhe_gen.params.errors import ParameterError


def drive(mock, cycles, offer=lambda c: True, abort=(), free=None):
    """Offer a task every cycle ``offer(c)`` allows; returns per cycle (ready, done, error)."""
    out = []

    async def bench(ctx):
        for c in range(cycles):
            ctx.set(mock.port.task.valid, int(offer(c)))
            ctx.set(mock.port.task.payload.imm, c)
            ctx.set(mock.port.abort, int(c in abort))
            if free:
                for name, fn in free.items():
                    ctx.set(getattr(mock, name), int(fn(c)))
            *_, ready, done, error = await ctx.tick().sample(mock.port.task.ready,
                                                             mock.port.done, mock.port.error)
            out.append((ready, done, error))

    sim = Simulator(mock)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return out


def test_fixed_latency():
    trace = drive(MockUnit(3, 3), 12)
    taken = [c for c, (r, _, _) in enumerate(trace) if r]
    done = [c for c, (_, d, _) in enumerate(trace) if d]
    assert taken == [0, 4, 8] and done == [3, 7, 11]


def test_latency_and_error_tables():
    trace = drive(MockUnit(2, (1, 2, 4), errors=(False, True)), 14)
    taken = [c for c, (r, _, _) in enumerate(trace) if r]
    done = [c for c, (_, d, _) in enumerate(trace) if d]
    errs = [c for c, (_, _, e) in enumerate(trace) if e]
    # tasks 0, 1, 2, 3, 4 take 1, 2, 4, 1, 2 cycles; tasks 1 and 3 err
    assert taken == [0, 2, 5, 10, 12] and done == [1, 4, 9, 11]
    assert errs == [4, 11]


def test_abort_drops_the_task():
    trace = drive(MockUnit(1, 5), 12, abort=(2,))
    done = [c for c, (_, d, _) in enumerate(trace) if d]
    taken = [c for c, (r, _, _) in enumerate(trace) if r]
    assert taken == [0, 3, 9] and done == [8]      # task 0 dropped; ready again after abort


def test_free_mode_bounds():
    # done never asked for: forced after max_latency; ready withheld: forced after max_stall
    mock = MockUnit(1, "free", max_latency=3, max_stall=2)
    trace = drive(mock, 12, free={"free_done": lambda c: 0, "free_error": lambda c: 1,
                                  "free_ready": lambda c: 0})
    taken = [c for c, (r, _, _) in enumerate(trace) if r]
    done = [c for c, (_, d, e) in enumerate(trace) if d and e]
    assert taken == [2, 8] and done == [5, 11]


def test_port_signature():
    port = UnitPort(3)
    assert port == UnitPort(3) and port != UnitPort(2)
    assert set(port.members) == {"task", "done", "error", "abort"}
    assert tag_bits(2) == 1 and tag_bits(8) == 3 and tag_bits(16) == 4
    assert task_layout(3).size == 64 + 3
    m = Module()
    a, b = MockUnit(3, 1), MockUnit(3, 2)
    wiring.connect(m, wiring.flipped(a.port), b.port)    # the same shape of port
    from hhe_gen.cores.unused import mark_unused
    mark_unused(a, b, m)


@pytest.mark.parametrize("args, kwargs, name", [
    ((3, 0), {}, "latency[0]"), ((3, ()), {}, "latency"), ((3, "fast"), {}, "latency"),
    ((3, 1), dict(errors=()), "errors"), ((3, 1), dict(errors=(1,)), "errors"),
    ((0, 1), {}, "tag_width"), ((3, "free"), dict(max_latency=0), "max_latency"),
    ((3, 5000), {}, "latency[0]")])
def test_bad_parameters(args, kwargs, name):
    with pytest.raises(ParameterError) as exc:
        MockUnit(*args, **kwargs)
    assert exc.value.name == name

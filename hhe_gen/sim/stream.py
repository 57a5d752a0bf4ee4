"""Drive ``amaranth.lib.stream`` interfaces in Amaranth's simulator: put / get one payload, run a
whole stream component with random valid / ready gaps and count cycles (used by the tests, the
benchmarks, the KAT checker and users' own tests of generated cores)."""

__all__ = ["stream_put", "stream_get", "StreamRun", "run_simulation", "run_stream", "UnitRun",
           "run_unit"]


# Cores expose `amaranth.lib.stream` interfaces.  These helpers drive them in Amaranth's simulator
# with async testbenches, optionally with random valid/ready gaps, and count cycles so tests can
# assert latencies exactly.

async def stream_put(ctx, stream, payload):
    """Offer one payload on a sink-side stream and wait until it is taken."""
    ctx.set(stream.payload, payload)
    ctx.set(stream.valid, 1)
    await ctx.tick().until(stream.ready)
    ctx.set(stream.valid, 0)


async def stream_get(ctx, stream):
    """Take one payload from a source-side stream."""
    ctx.set(stream.ready, 1)
    payload, = await ctx.tick().sample(stream.payload).until(stream.valid)
    ctx.set(stream.ready, 0)
    return payload


class StreamRun:
    """Result of :func:`run_stream`.

    Members
    -------
    outputs : list   payloads taken from the output stream, in order (ints, or dicts for structs)
    in_cycles : list[int]    the cycle each input was accepted
    out_cycles : list[int]   the cycle each output was taken
    latency : int | None     out_cycles[0] - in_cycles[0] when both exist (first-in to first-out)
    """

    def __init__(self, outputs, in_cycles, out_cycles):
        self.outputs, self.in_cycles, self.out_cycles = outputs, in_cycles, out_cycles
        self.latency = out_cycles[0] - in_cycles[0] if outputs and in_cycles else None


def run_simulation(sim, vcd: str | None = None) -> None:
    """Run an Amaranth ``Simulator`` to the end, writing a VCD trace to ``vcd`` if given."""
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()


def _plain(value):
    """Simulator values to Python: ints, or dicts/lists for data.View payloads."""
    from amaranth.lib import data
    if isinstance(value, data.Const):
        layout = value.shape()
        if isinstance(layout, data.ArrayLayout):
            return [_plain(value[i]) for i in range(layout.length)]
        return {name: _plain(value[name]) for name, _ in layout}
    return value


def run_stream(dut, inputs, n_outputs=None, *, i_name="i_stream", o_name="o_stream",
               gaps: int | None = None, max_cycles: int = 1_000_000, vcd: str | None = None,
               setup=None, all_inputs: bool = True) -> StreamRun:
    """Simulate ``dut`` feeding ``inputs`` into its input stream and collecting ``n_outputs``
    (default: as many as inputs) payloads from its output stream.

    Parameters
    ----------
    dut : an Elaboratable with stream members ``i_name`` and ``o_name``.
    inputs : payloads (ints, or dicts for struct payloads).
    gaps : None for a full-rate producer and an always-ready consumer; an int seed for random
        valid gaps and ready back-pressure (the results must not change).
    setup : optional ``async def setup(ctx)`` run before streaming (e.g. to set configuration ports).
    all_inputs : True (default) to wait until every input was taken; False to stop as soon as
        ``n_outputs`` outputs came out, whatever inputs are left (e.g. a rejection sampler fed
        more random bytes than it needs); ``in_cycles`` then lists the inputs taken.
    """
    import random

    from amaranth.sim import Simulator

    inputs = list(inputs)
    n_outputs = len(inputs) if n_outputs is None else n_outputs
    i_stream, o_stream = getattr(dut, i_name), getattr(dut, o_name)
    rng = random.Random(gaps) if gaps is not None else None
    outputs, in_cycles, out_cycles = [], [], []
    state = {"cycle": 0, "ready": setup is None}

    async def clock(ctx):
        async for _ in ctx.tick():
            state["cycle"] += 1
            if state["cycle"] > max_cycles:
                raise TimeoutError(f"no result within {max_cycles} cycles "
                                   f"({len(outputs)} of {n_outputs} outputs)")

    async def producer(ctx):
        if setup is not None:
            await setup(ctx)
            state["ready"] = True
        for payload in inputs:
            while rng is not None and rng.random() < 0.3:
                await ctx.tick()
            ctx.set(i_stream.payload, payload)
            ctx.set(i_stream.valid, 1)
            if all_inputs:
                await ctx.tick().until(i_stream.ready)
            else:   # plain ticks: a coroutine left parked here at the end closes cleanly
                while not (await ctx.tick().sample(i_stream.ready))[-1]:
                    pass
            in_cycles.append(state["cycle"] - 1)
            ctx.set(i_stream.valid, 0)

    async def consumer(ctx):
        while not state["ready"]:
            await ctx.tick()
        while len(outputs) < n_outputs:
            ready = rng is None or rng.random() >= 0.3
            ctx.set(o_stream.ready, int(ready))
            *_, payload, valid = await ctx.tick().sample(o_stream.payload, o_stream.valid)
            if ready and valid:
                outputs.append(_plain(payload))
                out_cycles.append(state["cycle"] - 1)
        ctx.set(o_stream.ready, 0)

    from amaranth.hdl import Module, Signal
    top = Module()                      # a 'sync' domain even for a combinational dut
    top.submodules.dut = dut
    toggle = Signal()
    top.d.sync += toggle.eq(~toggle)
    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_process(clock)
    sim.add_testbench(producer, background=not all_inputs)
    sim.add_testbench(consumer)
    run_simulation(sim, vcd)
    return StreamRun(outputs, in_cycles, out_cycles)


class UnitRun:
    """Result of :func:`run_unit`.

    Members
    -------
    outputs : list[int]          the output port's value for each input vector, in order
    probes : dict[str, list]     for each probe name, its value for each input vector
    cycles : int                 simulated cycles
    """

    def __init__(self, outputs, probes, cycles):
        self.outputs, self.probes, self.cycles = outputs, probes, cycles


def run_unit(dut, inputs, *, output: str = "p", en_gaps: int | None = None, probes=(),
             max_cycles: int = 1_000_000) -> UnitRun:
    """Simulate a raw pipelined unit (ports ``en`` + inputs + ``output``, attribute ``latency``).

    Each input vector (a dict port -> int) is presented in one cycle with ``en = 1``; the result of
    vector j is read in the enabled cycle after exactly ``j + latency`` enabled clock edges (so
    latency 0 means the same cycle).  With ``en_gaps`` (a seed) random cycles with ``en = 0`` and random garbage on the
    inputs are interleaved: a correct unit ignores them and holds its state.

    probes : names in ``dut.probes`` (a dict name -> (signal, stage) filled by elaboration); probe
        ``name`` of vector j is read while ``j + stage`` enabled edges have passed.
    """
    import random

    from amaranth.hdl import Module, Signal
    from amaranth.sim import Simulator

    inputs = list(inputs)
    rng = random.Random(en_gaps) if en_gaps is not None else None
    latency = dut.latency
    top = Module()                      # a 'sync' domain even for a combinational unit
    top.submodules.dut = dut
    tick = Signal()
    top.d.sync += tick.eq(~tick)
    sim = Simulator(top)
    probe_sigs = {name: dut.probes[name] for name in probes}
    outputs = [None] * len(inputs)
    probe_vals = {name: [None] * len(inputs) for name in probes}
    ports = sorted({k for vec in inputs for k in vec})
    state = {"cycles": 0}

    async def bench(ctx):
        n_en, j = 0, 0
        total = len(inputs) + latency + max([s for _, s in probe_sigs.values()], default=0)
        while n_en <= total:
            state["cycles"] += 1
            if state["cycles"] > max_cycles:
                raise TimeoutError("run_unit: too many cycles")
            gap = rng is not None and rng.random() < 0.3
            if not gap and j < len(inputs):
                for k in ports:
                    ctx.set(getattr(dut, k), inputs[j].get(k, 0))
            elif rng is not None:
                for k in ports:
                    sig = getattr(dut, k)
                    ctx.set(sig, rng.getrandbits(len(sig)) % (1 << len(sig)))
            ctx.set(dut.en, 0 if gap else 1)
            if not gap:         # each count of enabled edges has exactly one enabled cycle
                i = n_en - latency
                if 0 <= i < len(inputs):
                    outputs[i] = ctx.get(getattr(dut, output))
                for name, (sig, stage) in probe_sigs.items():
                    i = n_en - stage
                    if 0 <= i < len(inputs):
                        probe_vals[name][i] = ctx.get(sig)
            await ctx.tick()
            if not gap:
                n_en += 1
                j += 1

    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return UnitRun(outputs, probe_vals, state["cycles"])

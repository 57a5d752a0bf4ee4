"""RubatoDatapath on its own, against its documented contract: ``init`` loads 1..n, a phase
issues exactly n/L groups (``step`` 0..n/L-1, one per cycle from the cycle after ``go``), commits
``phase_cycles`` cycles after ``go`` (when the next phase may start), ``state`` is aligned while
idle and in the commit cycle, and every layer equals the golden model hhe_gen.models.rubato."""

import random

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.rubato import Layer, RubatoDatapath
from hhe_gen.models import rubato as model
from hhe_gen.params import rubato_params

LAYERS = [Layer.ARK, Layer.MIX_COLUMNS, Layer.MIX_ROWS, Layer.FEISTEL, Layer.ARK, Layer.FEISTEL]


def _expected(p, rks):
    """The state before and after every phase of LAYERS (the round keys of the ARK phases in
    order), from the model."""
    x, states, keys = list(range(1, p.n + 1)), [], iter(rks)
    for layer in LAYERS:
        if layer == Layer.ARK:
            y = model.ark(p, x, next(keys))
        elif layer == Layer.MIX_COLUMNS:
            y = model.mix_columns(p, x)
        elif layer == Layer.MIX_ROWS:
            y = model.mix_rows(p, x)
        else:
            y = model.feistel(p, x)
        states.append((x, y))
        x = y
    return states


@pytest.mark.parametrize("name,lanes,multiplier,mul_latency", [
    ("Par-80S", 4, "barrett", None), ("Par-80S", 16, "butterfly", None), ("Par-80M", 3, "barrett", 5),
    ("Par-128L", 8, "butterfly", None)])
def test_phase_contract(name, lanes, multiplier, mul_latency):
    p = rubato_params(name)
    rng = random.Random(f"{name}{lanes}")
    rks = [[rng.randrange(p.q) for _ in range(p.n)] for layer in LAYERS if layer == Layer.ARK]
    want = _expected(p, rks)
    dut = RubatoDatapath(p, lanes, multiplier=multiplier, mul_latency=mul_latency)
    S, L = dut.steps, lanes
    assert S == p.n // L and dut.phase_cycles == S + dut.depth + 1
    gos, issues, readys, commits = [], [], [], []   # cycles (issues: (cycle, phase, step))
    after = {}

    async def bench(ctx):
        assert ctx.get(dut.ready) and not ctx.get(dut.issue) and not ctx.get(dut.commit)
        ctx.set(dut.init, 1)
        await ctx.tick()
        ctx.set(dut.init, 0)
        assert [ctx.get(x) for x in dut.state] == list(range(1, p.n + 1))
        assert list(ctx.get(dut.head)) == list(range(1, L + 1))
        ark_keys = iter(rks)
        keys = None                     # the round keys of the phase being issued
        last_issue = None               # (phase, step) issued in the previous cycle
        cycle = 0
        while len(commits) < len(LAYERS):
            started = len(gos)
            if started < len(LAYERS):
                ctx.set(dut.go, 1)
                ctx.set(dut.layer, LAYERS[started])
            else:
                ctx.set(dut.go, 0)
            if last_issue is not None:  # ARK: the keys of the words issued in the previous cycle
                ctx.set(dut.rk, keys[last_issue[1] * L:last_issue[1] * L + L])
            ready, issue, step, commit = (ctx.get(dut.ready), ctx.get(dut.issue), ctx.get(dut.step),
                                          ctx.get(dut.commit))
            if ready:
                readys.append(cycle)
            if commit:
                done = len(commits)
                commits.append(cycle)
                assert [ctx.get(x) for x in dut.state] == want[done][0], f"state in commit {done}"
                assert [ctx.get(y) for y in dut.next_state] == want[done][1], f"next_state in commit {done}"
            last_issue = None
            if issue:
                issues.append((cycle, len(gos) - 1, step))
                last_issue = (len(gos) - 1, step)
            if ready and started < len(LAYERS):
                gos.append(cycle)
                if LAYERS[started] == Layer.ARK:
                    keys = next(ark_keys)
            await ctx.tick()
            cycle += 1
            assert cycle < 30 * dut.phase_cycles
        after["state"] = [ctx.get(x) for x in dut.state]
        after["head"] = list(ctx.get(dut.head))
        after["idle"] = (ctx.get(dut.ready), ctx.get(dut.issue), ctx.get(dut.commit))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    # back to back: every phase commits phase_cycles after its go, in the cycle the next go is taken
    assert commits == [g + dut.phase_cycles for g in gos]
    assert gos[1:] == commits[:-1]
    # exactly S issue cycles per phase, steps 0..S-1, from the cycle after go
    assert issues == [(g + 1 + s, j, s) for j, g in enumerate(gos) for s in range(S)]
    # ready: idle before the first go, then only in the commit cycles
    assert readys == [gos[0]] + commits
    assert after["state"] == want[-1][1]
    assert after["head"] == want[-1][1][:L]
    assert after["idle"] == (1, 0, 0)

"""Drive a :class:`~hhe_gen.cores.rubato.RubatoCore` in Amaranth's simulator: key, seed, blocks, probes."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["BlockRun", "simulate_blocks", "write_key"]


@dataclass
class BlockRun:
    """One simulated keystream block.

    Members
    -------
    outputs : list[int]   the l words from ``o_stream``
    cycles : int          from the command's acceptance (cycle 0) to the cycle the last word
                          was taken (always-ready consumer)
    states : list[tuple[int, list[int]]]  (phase index, the n committed state words) for every
                          phase in order (only with ``trace``)
    xof_words : int       candidate words the round-constant filter took
    """

    outputs: list = field(default_factory=list)
    cycles: int = 0
    states: list = field(default_factory=list)
    xof_words: int = 0


async def write_key(ctx, dut, words) -> None:
    """Write ``words`` into the key memory of ``dut`` (a RubatoCore or its round-key unit: the
    ``key_we`` / ``key_addr`` / ``key_data`` port), one word per cycle from address 0."""
    for i, k in enumerate(words):
        ctx.set(dut.key_we, 1)
        ctx.set(dut.key_addr, i)
        ctx.set(dut.key_data, k)
        await ctx.tick()
    ctx.set(dut.key_we, 0)


def simulate_blocks(core, key, blocks, *, seed: int | None = None, trace: bool = False,
                    max_cycles: int = 200_000, vcd: str | None = None) -> list[BlockRun]:
    """Write ``key`` (and the noise ``seed``), then run ``blocks`` back to back.

    Parameters
    ----------
    core : RubatoCore (not elaborated elsewhere); one with ``xof="external"`` runs on a
           :class:`~hhe_gen.cores.keccak.shared.SharedXof` of one client
    key : n ints in [0, q), or None (written per block, or left as it is)
    blocks : iterable of (nonce, counter) or (nonce, counter, noise) tuples (noise 0/1, only for
             a core with noise), or dicts with "nonce", "counter" and optionally "noise", "key"
             and "seed" (a new key / seed written before that block)
    seed : the 64-bit noise seed (core with noise only); None leaves it unwritten
    trace : record every committed state
    """
    from amaranth.sim import Simulator

    from hhe_gen.sim.stream import run_simulation

    p = core.params
    dp = core.datapath
    runs: list[BlockRun] = []
    blocks = [dict(b) if isinstance(b, dict) else
              dict(zip(("nonce", "counter", "noise"), tuple(b))) for b in blocks]

    async def write_seed(ctx, value):
        for i in range(2):
            ctx.set(core.seed_we, 1)
            ctx.set(core.seed_addr, i)
            ctx.set(core.seed_data, value >> (32 * i) & 0xFFFFFFFF)
            await ctx.tick()
        ctx.set(core.seed_we, 0)

    async def bench(ctx):
        if key is not None:
            await write_key(ctx, core, key)
        if seed is not None:
            await write_seed(ctx, seed)
        ctx.set(core.o_stream.ready, 1)
        for blk in blocks:
            if blk.get("key") is not None:
                await write_key(ctx, core, blk["key"])
            if blk.get("seed") is not None:
                await write_seed(ctx, blk["seed"])
            payload = {"nonce": blk["nonce"], "counter": blk["counter"]}
            if core.noise:
                payload["noise"] = blk.get("noise") or 0
            ctx.set(core.i_stream.payload, payload)
            ctx.set(core.i_stream.valid, 1)
            waited = 0
            while True:
                accepted = ctx.get(core.i_stream.ready)
                await ctx.tick()
                waited += 1
                if accepted:
                    break
                if waited > max_cycles:
                    raise TimeoutError("command not accepted")
            ctx.set(core.i_stream.valid, 0)
            run = BlockRun()
            cycle = 1
            while len(run.outputs) < p.l:
                if trace and ctx.get(dp.commit):
                    run.states.append((ctx.get(core.commit_phase),
                                       [ctx.get(s) for s in dp.next_state]))
                if ctx.get(core.o_stream.valid):
                    run.outputs.append(ctx.get(core.o_stream.payload))
                    run.cycles = cycle
                await ctx.tick()
                cycle += 1
                if cycle > max_cycles:
                    raise TimeoutError(f"block {blk['nonce']:#x}/{blk['counter']}: {len(run.outputs)} "
                                       f"words after {cycle} cycles")
            run.xof_words = ctx.get(core.xof_words)
            runs.append(run)

    top = core
    if getattr(core, "external_xof", False):      # the core's outside XOF: one of its own, always granted
        from amaranth.hdl import Module
        from amaranth.lib import wiring

        from hhe_gen.cores.keccak.shared import SharedXof
        top = Module()
        top.submodules.core = core
        top.submodules.xof = xof = SharedXof(1, beat_bytes=core.xof_beat_bytes,
                                             rounds_per_cycle=core.xof_rounds_per_cycle, ring=core.xof_ring)
        wiring.connect(top, core.xof, xof.client0)
    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    run_simulation(sim, vcd)
    return runs

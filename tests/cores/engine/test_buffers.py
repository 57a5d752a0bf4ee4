"""BufferFile: random traffic from several unit ports (each buffer used by one port at a time, as
the scoreboard guarantees) against a Python model of the buffers, lane write enables, read latency
one cycle, read-during-write returns the old row (banked buffers too: no bypass); the banked
buffers' bank port against the NTT's layout (word i in bank bank(i) at address i >> B), both ways;
bad sizes refused."""

import random

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.params import ParameterError
from hhe_gen.sim.stream import run_simulation


@pytest.mark.parametrize("banked", [False, True])
@pytest.mark.parametrize("buffers,rows,lanes,bits,rports,wports,seed", [
    (4, 8, 2, 12, 2, 2, 1), (3, 16, 1, 54, 3, 1, 2), (5, 4, 4, 7, 1, 3, 3)])
def test_random_traffic(buffers, rows, lanes, bits, rports, wports, seed, banked):
    dut = BufferFile(buffers, rows, lanes, bits, read_ports=rports, write_ports=wports, banked=banked)
    rng = random.Random(seed)
    model = [[[0] * lanes for _ in range(rows)] for _ in range(buffers)]
    mismatches = []

    async def bench(ctx):
        for cycle in range(400):
            # each buffer to at most one port of each kind (the scoreboard's guarantee)
            order = list(range(buffers))
            rng.shuffle(order)
            reads, writes = {}, {}
            for k in range(rports):
                if rng.random() < 0.7:
                    reads[k] = (order[k % buffers], rng.randrange(rows))
            rng.shuffle(order)
            for k in range(wports):
                if rng.random() < 0.7 and order[k % buffers] not in [w[0] for w in writes.values()]:
                    mask = rng.randrange(1, 1 << lanes)
                    writes[k] = (order[k % buffers], rng.randrange(rows), mask,
                                 [rng.randrange(1 << bits) for _ in range(lanes)])
            for k in range(rports):
                port = dut.read(k)
                b, a = reads.get(k, (rng.randrange(buffers), rng.randrange(rows)))
                ctx.set(port.sel, b)
                ctx.set(port.addr, a)
                ctx.set(port.en, int(k in reads))
            for k in range(wports):
                port = dut.write(k)
                if k in writes:
                    b, a, mask, words = writes[k]
                    ctx.set(port.sel, b)
                    ctx.set(port.addr, a)
                    ctx.set(port.lanes, mask)
                    ctx.set(port.data, words)
                else:
                    ctx.set(port.lanes, 0)
                    ctx.set(port.sel, rng.randrange(buffers))   # a disabled port selects anything
            expected_now = {k: list(model[b][a]) for k, (b, a) in reads.items()}   # old data
            for b, a, mask, words in writes.values():
                for j in range(lanes):
                    if mask >> j & 1:
                        model[b][a][j] = words[j]
            await ctx.tick()
            for k in range(rports):             # the next cycle's request must not change the data
                ctx.set(dut.read(k).sel, rng.randrange(buffers))
                ctx.set(dut.read(k).addr, rng.randrange(rows))
            for k, row in expected_now.items():
                got = list(ctx.get(dut.read(k).data))
                if got != row:
                    mismatches.append((cycle, k, got, row))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    run_simulation(sim)
    assert mismatches == []


def _bank(i, n_log, bits):
    out = 0
    for lo in range(0, n_log, bits):
        out ^= (i >> lo) & ((1 << bits) - 1)
    return out


@pytest.mark.parametrize("buffers,rows,lanes", [(3, 8, 2), (2, 16, 1), (2, 4, 4)])
def test_bank_port_layout(buffers, rows, lanes):
    """Rows written through a row port are where the NTT's layout says in the bank port's reads,
    and words written through the bank port come back in the right rows; the bank port's reads
    and writes may name different buffers."""
    bits = 16
    dut = BufferFile(buffers, rows, lanes, bits, read_ports=1, write_ports=1, banked=True)
    n = rows * lanes
    n_log, bb = n.bit_length() - 1, lanes.bit_length()
    rng = random.Random(rows * lanes)
    poly = [rng.randrange(1 << bits) for _ in range(n)]
    got = {}

    async def bench(ctx):
        wr, rd, bank = dut.write(0), dut.read(0), dut.bank
        for r in range(rows):                   # poly into buffer 1 by rows
            ctx.set(wr.sel, 1)
            ctx.set(wr.addr, r)
            ctx.set(wr.lanes, (1 << lanes) - 1)
            ctx.set(wr.data, poly[r * lanes:(r + 1) * lanes])
            await ctx.tick()
        ctx.set(wr.lanes, 0)
        # bank port: read buffer 1 address by address, write each word + 1 into buffer 0
        banks, seen = 2 * lanes, [None] * n
        ctx.set(bank.rsel, 1)
        ctx.set(bank.wsel, 0)
        for a in range(rows // 2 + 1):
            if a < rows // 2:
                ctx.set(bank.ren, 1)
                ctx.set(bank.raddr, [a] * banks)
            else:
                ctx.set(bank.ren, 0)
            ctx.set(bank.wen, 0)
            if a:                               # the previous address's data is here now
                data = list(ctx.get(bank.rdata))
                for t in range(banks):
                    i = next(i for i in range(n) if _bank(i, n_log, bb) == t and i >> bb == a - 1)
                    seen[i] = data[t]
                ctx.set(bank.waddr, [a - 1] * banks)
                ctx.set(bank.wdata, [(w + 1) % (1 << bits) for w in data])
                ctx.set(bank.wen, (1 << banks) - 1)
            await ctx.tick()
        ctx.set(bank.wen, 0)
        got["bank"] = seen
        rows_out = []
        for r in range(rows):
            ctx.set(rd.sel, 0)
            ctx.set(rd.addr, r)
            ctx.set(rd.en, 1)
            await ctx.tick()
            rows_out += list(ctx.get(rd.data))
        got["rows"] = rows_out

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    run_simulation(sim)
    assert got["bank"] == poly
    assert got["rows"] == [(w + 1) % (1 << bits) for w in poly]


@pytest.mark.parametrize("kwargs,name", [
    ({"buffers": 0}, "buffers"), ({"buffers": 33}, "buffers"), ({"rows": 0}, "rows"),
    ({"lanes": 0}, "lanes"), ({"word_bits": 65}, "word_bits"), ({"read_ports": 0}, "read_ports"),
    ({"write_ports": 17}, "write_ports")])
def test_bad_sizes(kwargs, name):
    args = {"buffers": 2, "rows": 4, "lanes": 1, "word_bits": 8} | kwargs
    extra = {k: args.pop(k) for k in ("read_ports", "write_ports") if k in args}
    with pytest.raises(ParameterError, match=f"'{name}'"):
        BufferFile(args["buffers"], args["rows"], args["lanes"], args["word_bits"], **extra)

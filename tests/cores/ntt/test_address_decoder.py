"""NttAddressDecoder in Amaranth's simulator, exhaustively over stage and cycle at small N, against
the memory plan of the models (hhe_gen.cores.ntt.schedule for dual-port banks, the single-port
schedule of cores/ntt/single_port): the banks serve exactly the cycle's 2P indices, each at its
bank(i) / i >> B' word; the lanes' twiddle indices and ROM banks are the schedule's.  Plus the
parameter checks."""

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.ntt import NttAddressDecoder
from hhe_gen.cores.ntt.single_port import single_port_schedule
from hhe_gen.cores.ntt.schedule import ntt_schedule
from hhe_gen.params.errors import ParameterError


def _decoder_table(dec, inverse):
    """{(stage, cyc): (base, used[], slot[], addr[], tw_idx[], tw_bank[])} by simulation."""
    table = {}

    async def bench(ctx):
        ctx.set(dec.inverse, int(inverse))
        for s in range(dec.n_log):
            for c in range(dec.crows):
                ctx.set(dec.stage, s)
                ctx.set(dec.cyc, c)
                table[s, c] = (ctx.get(dec.base), [ctx.get(dec.used[b]) for b in range(dec.banks)],
                               [ctx.get(dec.slot[b]) for b in range(dec.banks)],
                               [ctx.get(dec.addr[b]) for b in range(dec.banks)],
                               [ctx.get(dec.tw_idx[p]) for p in range(dec.lanes)],
                               [ctx.get(dec.tw_bank[p]) for p in range(dec.lanes)])

    sim = Simulator(dec)
    sim.add_testbench(bench)
    sim.run()
    return table


CASES = [(n, p, banking) for n in (8, 16, 32) for banking in ("dual", "single")
         for p in [1 << i for i in range((n // (2 if banking == "dual" else 4)).bit_length())]]


@pytest.mark.parametrize("n, lanes, banking", CASES)
@pytest.mark.parametrize("inverse", [False, True])
def test_decoder_follows_the_memory_plan(n, lanes, banking, inverse):
    dec = NttAddressDecoder(n, lanes, banking)
    sched = (single_port_schedule if banking == "single" else ntt_schedule)(n, lanes, inverse)
    assert sched.bank_bits == dec.bank_bits
    table = _decoder_table(dec, inverse)
    for s, stage in enumerate(sched.stages):
        k, group = sched.stage_bits[s]
        g0 = min(group)
        for c, cycle in enumerate(stage):
            base, used, slot, addr, tw_idx, tw_bank = table[s, c]
            served = {}
            for b in range(dec.banks):
                if used[b]:
                    i = base | (slot[b] << g0)          # the index bank b serves
                    assert sched.bank(i) == b and addr[b] == sched.addr(i), (s, c, b)
                    served[i] = b
            want = {i for sl in cycle for i in (sl.lo, sl.hi)}
            assert set(served) == want and len(served) == 2 * lanes, (s, c)
            for sl in cycle:
                assert tw_idx[sl.lane] == sl.tw, (s, c, sl.lane)
                assert tw_bank[sl.lane] == sl.tw % lanes, (s, c, sl.lane)


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=12, lanes=1), "n"), (dict(n=4, lanes=1), "n"), (dict(n=16, lanes=3), "lanes"),
    (dict(n=16, lanes=16), "lanes"), (dict(n=16, lanes=8, banking="single"), "lanes"),
    (dict(n=16, lanes=2, banking="quad"), "banking")])
def test_parameter_errors(kwargs, name):
    with pytest.raises(ParameterError) as err:
        NttAddressDecoder(**kwargs)
    assert err.value.name == name

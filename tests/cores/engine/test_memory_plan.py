"""Block-RAM plan: block counts per shape (worked by hand from the block aspect ratios), memories
found inside a core equal the core's documented banks and tables, device budget arithmetic."""

import pytest

from hhe_gen.cores.engine.memory_plan import (MemoryPlan, MemoryUse, bram36_blocks, dp16kd_blocks,
                                              unit_memories)
from hhe_gen.cores.ntt.iterative import IterativeNtt
from hhe_gen.params import ParameterError, ntt_primes


@pytest.mark.parametrize("depth,width,dp16kd,bram36", [
    (4096, 108, 24, 12.0),     # N = 2^13 x 54 bits at 2 lanes: 442368 bits = 24 x 18432 = 12 x 36864
    (8192, 54, 24, 12.0),      # the same bits one word wide: 2048 x 9 -> 4 x 6
    (2048, 58, 7, 3.5),        # 2048 x 9 x 7 columns; seven RAMB18 2048 x 9
    (512, 36, 1, 0.5),
    (513, 36, 2, 1.0),
    (16384, 1, 1, 0.5),
    (64, 1, 1, 0.5),           # the smallest depth that goes to a block
    (63, 200, 0, 0.0),         # LUT RAM
])
def test_block_counts(depth, width, dp16kd, bram36):
    assert dp16kd_blocks(depth, width) == dp16kd
    assert bram36_blocks(depth, width) == bram36


@pytest.mark.parametrize("depth,width,name", [(0, 8, "depth"), (8, 0, "width"), (1.5, 8, "depth")])
def test_bad_shapes(depth, width, name):
    with pytest.raises(ParameterError, match=f"'{name}'"):
        dp16kd_blocks(depth, width)


def test_unit_memories_of_an_ntt_match_its_documented_banks_and_rom():
    qs = ntt_primes(256, 30, 2)
    core = IterativeNtt(256, 2, qs, twiddles="rom")
    found = unit_memories("ntt", core)
    banks = [u for u in found if not u.rom]
    roms = [u for u in found if u.rom]
    assert len(banks) == core.banks == 4
    assert all(u.depth == 256 // 4 and u.width == core.qbits for u in banks)
    assert sum(u.depth for u in roms) == core.rom_words * core.lanes == 2 * 256 * 2
    assert all(u.owner == "ntt" for u in found)


def test_plan_totals_and_budget():
    uses = (MemoryUse("buffers", "wide", 4096, 108, count=4), MemoryUse("buffers", "small", 8192, 2, count=3))
    plan = MemoryPlan(uses, device="LFE5UM5G-85F", reserve=40)
    assert plan.dp16kd == 4 * 24 + 3 * 1
    assert plan.left == 208 - 99 - 40 and plan.fits
    assert plan.by_owner()["buffers"]["bits"] == 4 * 4096 * 108 + 3 * 8192 * 2
    xc7 = MemoryPlan(uses, device="XC7A35T")
    assert xc7.used == 4 * 12.0 + 3 * 0.5 and xc7.left == 50 - 49.5
    assert not MemoryPlan(uses, device="XC7A35T", reserve=1).fits
    with pytest.raises(ParameterError, match="'device'"):
        MemoryPlan(uses, device="ice40")


def test_engine_plan_counts_buffers_and_units():
    """An engine's plan: B buffers of N/P x P*w bits, the NTT's 2P banks, owners by part."""
    from hhe_gen.cores.engine.engine import Engine
    qs = ntt_primes(1024, 30, 2)
    engine = Engine(1024, qs, lanes=2, buffers=5, ntt=dict(twiddles="otf"), codec=False)
    plan = engine.memory_plan(device="XC7A35T", reserve=10)
    owners = plan.by_owner()
    assert set(owners) >= {"buffers", "ntt_unit"}
    buffers = [u for u in plan.uses if u.owner == "buffers"]
    assert len(buffers) == 5 and all((u.depth, u.width) == (512, 60) for u in buffers)
    assert owners["buffers"]["dp16kd"] == 5 * 2          # 512 x 36 twice per buffer
    banks = [u for u in plan.uses if u.owner == "ntt_unit" and "bank" in u.name]
    assert len(banks) == 4 and all((u.depth, u.width) == (256, 30) for u in banks)
    assert plan.left == 50 - plan.bram36 - 10

"""Plans: a multiplier's, a butterfly's and an NTT core's latency, schedule, tiles and cycle
formulas are read from a plain object (no Elaboratable is made), and they equal what the unit
built from the same parameters has; the engine's NTT and pointwise units read theirs from plans
and build their cores only when elaborated."""

import gc
import warnings

import pytest
from amaranth.hdl import Elaboratable

from hhe_gen.cores.arith import PLANS, modmul, reducer_plan
from hhe_gen.cores.arith.butterfly import Butterfly, ButterflyPlan
from hhe_gen.cores.ntt.iterative import IterativeNtt, IterativeNttPlan
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.presets import preset
from hhe_gen.params.primes import ntt_primes

DNA = preset("dna-hhe")
REDUCERS = [
    ("barrett", ntt_primes(64, 30, 2), 32, {}),
    ("barrett", [12289, 40961], 16, {"karatsuba": True}),
    ("special-barrett", list(DNA.moduli), 54, {"log_n": 13, "bnd_luts": True}),
    ("montgomery", ntt_primes(1 << 17, 36, 2), 36, {"word_bits": 18}),
]


@pytest.mark.parametrize("kind,moduli,width,kw", REDUCERS, ids=[r[0] + str(r[2]) for r in REDUCERS])
@pytest.mark.parametrize("latency", [None, 9])
def test_a_reducer_plan_is_the_units_figures_without_hardware(kind, moduli, width, kw, latency):
    plan = reducer_plan(kind, moduli, width, latency, **kw)
    unit = modmul(kind, moduli, width, latency, **kw)
    assert not isinstance(plan, Elaboratable) and isinstance(plan, PLANS[kind])
    for name in ("latency", "min_latency", "counts", "tiles", "width", "moduli", "schedule"):
        assert getattr(plan, name) == getattr(unit, name), name
    assert [plan.model(q - 1, q - 2, sel=i) for i, q in enumerate(moduli)] == \
        [unit.model(q - 1, q - 2, sel=i) for i, q in enumerate(moduli)]
    from hhe_gen.cores.unused import mark_unused
    mark_unused(unit)


def test_a_reducer_plan_refuses_what_the_unit_refuses():
    with pytest.raises(ParameterError, match="latency"):
        reducer_plan("barrett", [12289], 16, 1)
    with pytest.raises(ParameterError, match="word_bits"):
        reducer_plan("montgomery", [12289], 16)


def test_butterfly_and_ntt_plans_equal_their_units_and_warn_about_nothing():
    zq = dict(kind="special-barrett", moduli=list(DNA.moduli), log_n=13)
    q = ntt_primes(256, 30, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bf_plan, ntt_plan = ButterflyPlan(zq=zq), IterativeNttPlan(256, 4, q, twiddles="otf")
        assert not isinstance(bf_plan, Elaboratable) and not isinstance(ntt_plan, Elaboratable)
        del bf_plan, ntt_plan
        gc.collect()
    bf, ntt = Butterfly(zq=zq), IterativeNtt(256, 4, q, twiddles="otf")
    again, core = ButterflyPlan(zq=zq), IterativeNttPlan(256, 4, q, twiddles="otf")
    for name in ("latency", "mul_latency", "tiles", "tiles_separate", "width", "share_plan"):
        assert getattr(again, name) == getattr(bf, name), name
    for name in ("depth", "tw_latency", "butterfly_latency", "qbits", "starts"):
        assert getattr(core, name) == getattr(ntt, name), name
    assert [core.command_cycles(i) for i in (False, True)] == [ntt.command_cycles(i) for i in (False, True)]
    from hhe_gen.cores.unused import mark_unused
    mark_unused(bf, ntt)


def test_the_engines_ntt_and_pointwise_units_build_their_cores_only_when_elaborated():
    from amaranth.back import rtlil

    from hhe_gen.engine.config import AcceleratorConfig
    engine = AcceleratorConfig("toy", 2).engine()
    ntt, pw = engine.ntt_unit, engine.pointwise_unit
    assert not hasattr(ntt, "ntt") and ntt.task_cycles(False) == ntt.ntt_plan.command_cycles(False) + \
        (not ntt.in_place)
    assert pw.bf_latency == ButterflyPlan(**pw._butterfly).latency
    rtlil.convert(ntt)
    assert isinstance(ntt.ntt, IterativeNtt) and ntt.ntt.depth == ntt.ntt_plan.depth
    from hhe_gen.cores.unused import mark_unused
    mark_unused(engine, deep=True)

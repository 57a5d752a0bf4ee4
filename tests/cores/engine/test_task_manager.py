"""TaskManager with mock units: exact cycle counts of small directed programs (derived by hand
from the pipeline in the task_manager docstring), the hazard / serialising / in-order rules on
random programs (checked from the units' own transfer and done cycles), draining, errors and
abort."""

import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.isa import ErrorCause as E
from hhe_gen.cores.engine.isa import Instruction as I
from hhe_gen.cores.engine.isa import Opcode as O
from hhe_gen.cores.engine.isa import Unit
from hhe_gen.cores.engine.task_manager import TaskManager
from hhe_gen.cores.unused import mark_unused
from hhe_gen.params.errors import ParameterError

from ._helpers import (ALL_UNITS, check_order, drain_bound, prime_all, shapes, simulate,
                       well_formed)

B7 = shapes()["b7s3"]          # 7 buffers, 3 slots, CKKS units + Rubato
B4 = shapes()["b4s2"]

# -- exact cycles ------------------------------------------------------------------------------
# Pipeline (queue depth 4, mocks ready whenever idle): word k offered back to back is accepted in
# cycle k, decoded and inserted in k + 1, offered to its unit from k + 2; a unit of latency L
# that takes a task in cycle d raises done in d + L; the entry counts as completed from d + L + 1
# (its dependents and, the cycle after its done, the unit may get a new task then) and retires
# from the head then (one per cycle, in order); a serialising entry executes and retires in the
# cycle it reaches the head; busy is 0 from the cycle after the last retirement.

INDEPENDENT = [I(O.LOAD, dst=0, imm=1),             # 0 memory
               I(O.LOAD, dst=1, imm=2),             # 1 memory (waits for the unit)
               I(O.MOVE, dst=2, a=3),               # 2 pointwise
               I(O.SAMPLE, dst=4, flags=1, imm=9)]  # 3 sampler (ternary: reads the seed only)
INDEPENDENT_LAT = {Unit.MEMORY: 4, Unit.POINTWISE: 8, Unit.SAMPLER: 5}


def test_independent_tasks_overlap_out_of_order():
    # #0: inserted 1, taken 2, done 6 (the memory unit is free again from 7).
    # #1: valid from 3, memory busy until its done in 6 -> taken 7, done 11.
    # #2: valid from 4, pointwise idle -> taken 4, done 12.
    # #3: valid from 5, sampler idle -> taken 5, done 10.
    # retirement: #0 in 7, #1 in 12, #2 in 13 (completed from 13), #3 in 14 -> idle in 15.
    run = simulate(B7, INDEPENDENT, latency=INDEPENDENT_LAT, ooo=True)
    assert run.accepted == [0, 1, 2, 3]
    assert run.start == {0: 2, 1: 7, 2: 4, 3: 5}
    assert run.finish == {0: 6, 1: 11, 2: 12, 3: 10}
    assert run.idle_cycle == 15
    check_order(run, INDEPENDENT, ooo=True)


def test_in_order_dispatch_is_slower():
    # ooo=False: an entry waits until every older entry has been taken (visible the cycle after):
    # #1 taken 7 as before; #2 from 8 (done 16); #3 from 9 (done 14); retirement #0 7, #1 12,
    # #2 17, #3 18 -> idle in 19: four cycles more than out of order (15).
    run = simulate(B7, INDEPENDENT, latency=INDEPENDENT_LAT, ooo=False)
    assert run.start == {0: 2, 1: 7, 2: 8, 3: 9}
    assert run.finish == {0: 6, 1: 11, 2: 16, 3: 14}
    assert run.idle_cycle == 19
    check_order(run, INDEPENDENT, ooo=False)


def test_without_queue_everything_is_one_cycle_earlier():
    # queue=0: a word is decoded in the cycle it is offered (accepted 0..3, inserted 0..3), so
    # every start, finish and the idle cycle come one cycle earlier than with the queue.
    run = simulate(B7, INDEPENDENT, latency=INDEPENDENT_LAT, queue=0)
    assert run.start == {0: 1, 1: 6, 2: 3, 3: 4}
    assert run.finish == {0: 5, 1: 10, 2: 11, 3: 9}
    assert run.idle_cycle == 14


HAZARDS = [I(O.LOAD, dst=0, imm=1),       # 0
           I(O.MOVE, dst=1, a=0),         # 1 RAW on b0 with #0
           I(O.LOAD, dst=0, imm=3),       # 2 WAW with #0, WAR with #1 (reads b0)
           I(O.FENCE),                    # 3
           I(O.MOVE, dst=2, a=5),         # 4 independent, but after the fence
           I(O.NOTIFY, imm=0x55)]         # 5


@pytest.mark.parametrize("ooo", [True, False])
def test_hazards_and_serialising_exact_cycles(ooo):
    # memory L = 3, pointwise L = 2.
    # #0 taken 2, done 5, completed from 6.  #1 (RAW) taken 6, done 8, completed from 9.
    # #2 (WAW with #0, WAR with #1) taken 9 (#1 completed), done 12, completed from 13.
    # Retirement: #0 6, #1 9, #2 13; the fence reaches the head in 14 and retires there; #4 is
    # blocked by it until then: taken 15, done 17, retires 18; the notify reaches the head in 19
    # (pulse, code 0x55); idle in 20.  In order gives the same cycles: every entry is held by a
    # hazard or the fence anyway.
    run = simulate(B7, HAZARDS, latency={Unit.MEMORY: 3, Unit.POINTWISE: 2}, ooo=ooo)
    assert run.start == {0: 2, 1: 6, 2: 9, 4: 15}
    assert run.finish == {0: 5, 1: 8, 2: 12, 4: 17}
    assert run.notify == [(19, 0x55)]
    assert run.idle_cycle == 20
    check_order(run, HAZARDS, ooo)


def test_seed_is_a_scoreboard_resource():
    """sample reads the seed, ldseed writes it: ldseed after sample waits (WAR), sample after
    ldseed waits (RAW), although they run on different units."""
    prog = [I(O.SAMPLE, dst=0, flags=1), I(O.LDSEED, imm=4), I(O.SAMPLE, dst=1, flags=2)]
    run = simulate(B7, prog, latency={Unit.SAMPLER: 6, Unit.MEMORY: 2})
    # #0 taken 2, done 8; #1 taken 9, done 11; #2 taken 12, done 18
    assert run.start == {0: 2, 1: 9, 2: 12}
    assert run.finish == {0: 8, 1: 11, 2: 18}
    check_order(run, prog)


def test_exclusive_reads_serialise_readers_of_one_buffer():
    """Three readers of b0 on three units: by default they overlap (read-after-read is no
    hazard); with exclusive_reads each waits for the previous one to finish."""
    prog = [I(O.STORE, a=0, imm=9), I(O.MOVE, dst=1, a=0), I(O.SAMPLE, dst=2, flags=1),
            I(O.MOVE, dst=3, a=0)]
    lat = {Unit.MEMORY: 4, Unit.POINTWISE: 3, Unit.SAMPLER: 2}
    shared = simulate(B7, prog, latency=lat)
    # #0 taken 2, #1 3, #2 4 (independent), #3 waits for the pointwise unit: done 6 -> taken 7
    assert shared.start == {0: 2, 1: 3, 2: 4, 3: 7}
    alone = simulate(B7, prog, latency=lat, exclusive_reads=True)
    # #1 waits for #0 (done 6 -> taken 7, done 10), #3 for #1 (taken 11); #2 reads no buffer
    assert alone.start == {0: 2, 1: 7, 2: 4, 3: 11}
    check_order(shared, prog)
    check_order(alone, prog, exclusive_reads=True)


@pytest.mark.parametrize("seed", range(3))
def test_random_programs_with_exclusive_reads(seed):
    rng = random.Random(100 + seed)
    latency = {u: [rng.randrange(1, 7) for _ in range(3)] for u in B4.units}
    prog = random_program(rng, B4, 40)
    run = simulate(B4, prog, latency=latency, exclusive_reads=True, window=[4, 8, 16][seed],
                   max_cycles=3000)
    assert run.error == (0, 0, 0) and run.idle_cycle is not None
    check_order(run, prog, exclusive_reads=True)


def test_cfg_prime_binds_at_decode_and_configures():
    shape = isa.EngineShape(4, 2, (97, 193), log_scale=30, units=ALL_UNITS)
    prog = [I(O.CFG_PRIME, slot=1, imm=1 << 27 | 193),
            I(O.NTT, dst=1, a=0, slot=1),                    # checked against the new binding
            I(O.CFG_SCALE, imm=30), I(O.CFG_RUBATO, imm=5), I(O.CFG_NET_IP, imm=0x0A000002),
            I(O.CFG_NET_PORTS, imm=0x1234_5678), I(O.CFG_NET_SEGMENT, imm=180),
            I(O.CFG_NET_MESSAGE, imm=0xCAFE_F00D), I(O.NOTIFY, imm=1)]
    run = simulate(shape, prog, latency={Unit.NTT: 3})
    assert run.error == (0, 0, 0)
    assert run.start == {1: 3} and run.finish == {1: 6}   # cfg.prime executes at the head in 2
    assert run.cfg == {"prime": [0, 1], "bound": 0b10, "log_scale": 30, "rubato": 5,
                       "net_ip": 0x0A000002, "net_src_port": 0x1234, "net_dst_port": 0x5678,
                       "net_segment": 180, "net_message": 0xCAFE_F00D}
    check_order(run, prog)


# -- random programs -----------------------------------------------------------------------------

def random_program(rng, shape, n):
    """cfg.prime for every slot, then n random well-formed words: mostly functional ones over
    the shape's buffers, some fence / notify / cfg.scale / nop."""
    prog = prime_all(shape)
    bound = set(range(shape.slots))
    for k in range(n):
        r = rng.random()
        if r < 0.06:
            prog.append(I(O.FENCE))
        elif r < 0.10:
            prog.append(I(O.NOTIFY, imm=k))
        elif r < 0.12:
            prog.append(I(O.CFG_SCALE, imm=shape.log_scale))
        elif r < 0.15:
            prog.append(I(O.NOP))
        else:
            prog.append(well_formed(rng, shape, bound))
    return prog


@pytest.mark.parametrize("seed", range(14))
def test_random_programs_respect_hazards_and_drain(seed):
    rng = random.Random(seed)
    shape = [B4, B7, isa.EngineShape(3, 1, (97,), units=isa.CKKS_UNITS)][seed % 3]
    ooo = seed % 4 != 1
    window = [2, 4, 8, 16][seed % 4]
    queue = [0, 1, 4][seed % 3]
    latency = {u: [rng.randrange(1, 9) for _ in range(rng.randrange(1, 5))] for u in shape.units}
    prog = random_program(rng, shape, 45)
    run = simulate(shape, prog, latency=latency, ooo=ooo, window=window, queue=queue,
                   gaps=seed if seed % 2 else None, max_cycles=3000)
    assert run.error == (0, 0, 0)
    assert run.idle_cycle is not None, "did not drain"
    assert run.idle_cycle - run.accepted[0] <= drain_bound(prog, latency)
    check_order(run, prog, ooo)


def test_out_of_order_finishes_independent_work_earlier():
    """Independent tasks (distinct destinations, sources nobody writes) behind two tasks of a
    busy unit: in order, the pointwise work cannot start before the second load is taken; out of
    order it starts at once, so the whole program finishes earlier."""
    shape = isa.EngineShape(16, 1, (97,), units=isa.CKKS_UNITS)
    prog = [I(O.LOAD, dst=0, imm=0), I(O.LOAD, dst=1, imm=1), I(O.MOVE, dst=2, a=8),
            I(O.MOVE, dst=3, a=9), I(O.SAMPLE, dst=4, flags=1), I(O.MOVE, dst=5, a=10),
            I(O.MOVE, dst=6, a=11), I(O.SAMPLE, dst=7, flags=3), I(O.MOVE, dst=12, a=13)]
    lat = {Unit.MEMORY: 5, Unit.POINTWISE: 4, Unit.SAMPLER: 3}
    fast = simulate(shape, prog, latency=lat, ooo=True)
    slow = simulate(shape, prog, latency=lat, ooo=False)
    check_order(fast, prog, True)
    check_order(slow, prog, False)
    assert fast.idle_cycle < slow.idle_cycle


# -- errors and abort ----------------------------------------------------------------------------

MALFORMED = [I(O.LOAD, dst=0, imm=1),            # 0 runs (memory L = 5: taken 2, done 7)
             I(O.NOP),                            # 1 (counts as a position)
             I(O.NTT, dst=1, a=0, slot=1),        # 2 slot 1 never bound: SLOT_UNBOUND
             I(O.CFG_PRIME, slot=1, imm=1 << 27 | 193),   # 3.. dropped: no state change
             I(O.LOAD, dst=1, imm=2),
             I(O.NOTIFY, imm=3)]


@pytest.mark.parametrize("queue", [0, 4])
def test_malformed_instruction_sets_error_and_drops_the_rest(queue):
    run = simulate(B4, MALFORMED, latency={Unit.MEMORY: 5}, queue=queue)
    assert run.error == (1, E.SLOT_UNBOUND, 2)
    assert sorted(run.start) == [0] and run.notify == []
    assert run.cfg["bound"] == 0                      # the cfg.prime after the error was dropped
    # #2 is offered in cycle 2 (accepted then), decoded in 3 with the queue (2 without): the
    # error is visible from the next cycle.
    first_error = run.error_trace.index(1)
    assert first_error == (4 if queue else 3)
    # #0: taken 2 (1 without the queue), done 7 (6), retires 8 (7): idle in 9 (8) - the dropped
    # words never wait for anything
    assert run.idle_cycle == (9 if queue else 8)


def test_first_error_wins_and_abort_clears_it():
    prog = [I(0x3F), I(O.LOAD, dst=7), I(O.NOP, imm=1)]   # UNKNOWN_OPCODE at 0, then others
    run = simulate(B4, prog)
    assert run.error == (1, E.UNKNOWN_OPCODE, 0)
    second = prime_all(B4) + [I(O.LOAD, dst=0, imm=5), I(O.NTT, dst=1, a=0, slot=1)]
    run = simulate(B4, prog, abort_at=12, after_abort=second, latency={Unit.NTT: 2})
    assert run.error_trace[12] == 1 and run.error_trace[13] == 0
    assert run.error == (0, 0, 0)
    check_order(run, second)                          # positions count from 0 again


def test_abort_clears_bound_slots():
    first = prime_all(B4) + [I(O.LOAD, dst=0, imm=5)]
    second = [I(O.LOAD, dst=0, imm=5), I(O.NTT, dst=1, a=0, slot=0)]
    run = simulate(B4, first, abort_at=15, after_abort=second)
    assert run.error == (1, E.SLOT_UNBOUND, 1)
    assert run.cfg["bound"] == 0


@pytest.mark.parametrize("queue", [0, 4])
def test_abort_mid_program_returns_to_idle_at_once(queue):
    prog = [I(O.LOAD, dst=0, imm=1), I(O.MOVE, dst=1, a=0), I(O.SAMPLE, dst=2, flags=1)] + \
           [I(O.MOVE, dst=3, a=2)] * 12
    lat = {Unit.MEMORY: 20, Unit.POINTWISE: 20, Unit.SAMPLER: 20}
    run = simulate(B4, prog, latency=lat, queue=queue, abort_at=8)
    assert run.busy[7] == 1
    assert run.idle_cycle == 9                # everything idle in the cycle after the abort
    assert run.records == []                  # no task completed
    second = [I(O.LOAD, dst=0, imm=1), I(O.MOVE, dst=1, a=0)]
    run = simulate(B4, prog, latency=lat, queue=queue, abort_at=8, after_abort=second)
    check_order(run, second)
    # the second program starts from scratch in cycle 9 (accepted 9, 10): #0 taken 11 (10 without
    # the queue), done 31 (30)
    assert run.start[0] == (11 if queue else 10) and run.finish[0] == run.start[0] + 20


def test_data_range_error_from_a_unit():
    """The second memory task reports a data error: cause DATA_RANGE at its position; the words
    decoded before the error run to completion (a prefix of the program), the rest is dropped."""
    prog = [I(O.LOAD, dst=0, imm=1), I(O.LOAD, dst=1, imm=2, flags=1, slot=0)] + \
           [I(O.MOVE, dst=2 + k % 2, a=0) for k in range(14)]
    prog = prime_all(B4) + prog
    run = simulate(B4, prog, latency={Unit.MEMORY: 6, Unit.POINTWISE: 3},
                   errors={Unit.MEMORY: (False, True)})
    assert run.error == (1, E.DATA_RANGE, 3)
    ran = sorted(run.start)
    assert ran == list(range(2, 2 + len(ran)))       # a prefix of the functional words
    assert 3 in ran and len(ran) < len(prog) - 2      # the erring load completed; some dropped


# -- parameters ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    (dict(window=3), "window"), (dict(window=32), "window"), (dict(window=1), "window"),
    (dict(ooo=1), "ooo"), (dict(queue=-1), "queue"), (dict(queue=257), "queue"),
    (dict(exclusive_reads=None), "exclusive_reads")])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as exc:
        TaskManager(B4, **kwargs)
    assert exc.value.name == name


def test_bad_shape():
    with pytest.raises(ParameterError, match="shape"):
        TaskManager((4, 2))


def test_signature():
    tm = mark_unused(TaskManager(B7, window=4), deep=True)
    names = set(tm.signature.members)
    assert {"i_instr", "abort", "busy", "error", "error_cause", "error_position", "notify",
            "notify_code", "cycle", "cfg", "completed"} <= names
    assert {n for n in names if n.startswith("unit_")} == {
        "unit_memory", "unit_sampler", "unit_ntt", "unit_pointwise", "unit_codec", "unit_rubato"}
    assert tm.tag_width == 2 and len(tm.error_cause) == 4 and len(tm.error_position) == 32
    assert "net_ip" not in dict(tm.cfg.shape()) and "rubato" in dict(tm.cfg.shape())


# -- several task kinds on one physical unit (a shared datapath) ---------------------------------------
SHARED = ((Unit.NTT, Unit.POINTWISE, Unit.CODEC),)


def _kind_intervals(run, program, kinds):
    ins = [isa.decode(w) if isinstance(w, int) else w for w in program]
    return sorted((run.start[p], run.finish[p]) for p, i in enumerate(ins)
                  if i.info.unit in kinds and p in run.start)


def test_a_group_is_one_port_and_its_kinds_never_overlap():
    """NTT, pointwise and codec tasks on one unit: one port (named after its first kind, NTT),
    each task offered to it, one at a time, while the memory unit runs beside it."""
    primed = prime_all(B7)
    k = len(primed)
    program = primed + [I(O.NTT, dst=0, a=1), I(O.MOVE, dst=2, a=3), I(O.LOAD, dst=4, imm=1), I(O.NTT, dst=5, a=6)]
    run = simulate(B7, program, latency={Unit.NTT: 6, Unit.MEMORY: 3}, groups=SHARED)
    assert run.error == (0, 0, 0)
    tm = mark_unused(TaskManager(B7, groups=SHARED), deep=True)
    assert Unit.POINTWISE not in tm.units and Unit.CODEC not in tm.units and Unit.NTT in tm.units
    assert tm.unit_port(Unit.POINTWISE) is tm.unit_port(Unit.NTT) is tm.unit_port(Unit.CODEC)
    spans = _kind_intervals(run, program, {Unit.NTT, Unit.POINTWISE})
    assert len(spans) == 3 and all(a[1] < b[0] for a, b in zip(spans, spans[1:])), spans
    assert run.start[k + 2] < run.finish[k], "the memory unit's load runs beside the shared unit"
    check_order(run, program)
    ungrouped = simulate(B7, program, latency={Unit.NTT: 6, Unit.MEMORY: 3})
    assert ungrouped.start[k + 1] < ungrouped.finish[k], "apart, the pointwise task overlaps the NTT"


@pytest.mark.parametrize("seed", range(4))
def test_random_programs_on_a_shared_unit(seed):
    rng = random.Random(100 + seed)
    latency = {u: [rng.randrange(1, 9) for _ in range(3)] for u in B7.units}
    prog = random_program(rng, B7, 45)
    run = simulate(B7, prog, latency=latency, ooo=seed != 1, window=[4, 8, 16, 16][seed], groups=SHARED,
                   gaps=seed if seed % 2 else None, max_cycles=4000)
    assert run.error == (0, 0, 0) and run.idle_cycle is not None
    check_order(run, prog, seed != 1)
    spans = _kind_intervals(run, prog, set(SHARED[0]))
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), "two tasks of the group overlapped"


@pytest.mark.parametrize("groups", [((Unit.NTT,),), ((Unit.NTT, Unit.NTT),), ((Unit.NTT, Unit.BASIS),),
                                    ((Unit.NTT, Unit.POINTWISE), (Unit.POINTWISE, Unit.CODEC))])
def test_bad_groups_are_refused(groups):
    with pytest.raises(ParameterError) as exc:
        TaskManager(B7, groups=groups)
    assert exc.value.name == "groups"

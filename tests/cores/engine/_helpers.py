"""Shared helpers of the engine tests: shapes, random instruction words (malformed-biased and
well-formed), and a cycle-level simulation of a TaskManager with one MockUnit per unit that
records every task's transfer and ``done`` cycles as the units see them."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.decoder import RTL_UNITS
from hhe_gen.cores.engine.isa import FIELDS, OPCODES, Instruction, Opcode, Unit

ALL_UNITS = RTL_UNITS
# primes whose low 27 bits differ (a cfg.prime check value names exactly one of them)
PRIMES = (97, 193, 7681, 12289, 40961, 65537, 786433, 1179649, 2013265921, 469762049,
          1811939329, 2113929217, 3221225473, 3489660929)


def shapes():
    """A few engine shapes: small, the largest fields, a minimal one, an odd one."""
    return {
        "b4s2": isa.EngineShape(4, 2, PRIMES[:2], log_scale=20),
        "b32s8": isa.EngineShape(32, 8, tuple(range(101, 101 + 64, 2))[:32], log_scale=255,
                                 units=ALL_UNITS, n=64),
        "b1s1": isa.EngineShape(1, 1, PRIMES[:1], log_scale=0, units=frozenset({Unit.MEMORY})),
        "b7s3": isa.EngineShape(7, 3, PRIMES[:5], log_scale=40,
                                units=isa.CKKS_UNITS | {Unit.RUBATO}, n=64, rubato_set=4),
    }


def _pick(rng, values, limit):
    v = rng.choice(values)
    return v if v is not None and 0 <= v <= limit else rng.randrange(limit + 1)


def random_word(rng: random.Random, shape: isa.EngineShape) -> int:
    """A 64-bit word biased towards each opcode of the table and towards the boundaries of every
    rule of ``isa.check`` (buffer / slot ends, unused fields, rows, prime ids, immediates)."""
    code = rng.choice(list(OPCODES)) if rng.random() < 0.9 else rng.randrange(64)
    info = OPCODES.get(code)
    nb, ns = shape.buffers, shape.slots
    f = {}
    for fd in FIELDS[1:]:
        if info is not None and fd.name in info.uses:
            used = True
        else:
            used = rng.random() < 0.06
        if not used:
            f[fd.name] = 0
            continue
        if fd.name in ("dst", "a", "b", "c"):
            f[fd.name] = _pick(rng, [0, 1, nb - 2, nb - 1, nb, nb + 1, 31, None], 31)
        elif fd.name == "slot":
            f[fd.name] = _pick(rng, [0, 1, ns - 2, ns - 1, ns, 7, None], 7)
        elif fd.name == "flags":
            f[fd.name] = _pick(rng, [0, 0, 1, 1, 2, 3, 4, 7, None], 7)
        else:
            f[fd.name] = rng.getrandbits(32) if rng.random() < 0.3 else _pick(
                rng, [0, 1, 15, 16, 0xFFFF, 0x10000, 0xFFFFFFFF, None], 0xFFFFFFFF)
    if code in (Opcode.ENCODE, Opcode.DECODE) and rng.random() < 0.85:
        f["imm"] = rng.randrange(16)
    elif code == Opcode.SEND and rng.random() < 0.85:      # rows, kind 0 .. 5, ntt, T, imm[15:12], words
        f["imm"] = rng.randrange(16) | rng.randrange(6) << 4 | rng.randrange(2) << 7 | rng.randrange(16) << 8 | \
            _pick(rng, [0, 0, 0, 1], 0xF) << 12 | _pick(rng, [0, 1, 64, 65, 0xFFFF, None], 0xFFFF) << 16
    elif code == Opcode.CFG_PRIME and rng.random() < 0.85:
        pid = _pick(rng, [0, len(shape.primes) - 1, len(shape.primes), 31, None], 31)
        low = shape.primes[pid] & ((1 << 27) - 1) if pid < len(shape.primes) and \
            rng.random() < 0.8 else rng.getrandbits(27)
        f["imm"] = pid << 27 | low
    elif code == Opcode.CFG_SCALE and rng.random() < 0.6:
        f["imm"] = shape.log_scale
    elif code in (Opcode.RUBATO_STREAM, Opcode.RUBATO_ENC) and rng.random() < 0.7:    # blocks 0 .. 3, any offset
        f["imm"] = rng.randrange(4) << 24 | rng.getrandbits(24)
    elif code in (Opcode.NOTIFY, Opcode.CFG_NET_SEGMENT, Opcode.CFG_RUBATO) and rng.random() < 0.6:
        f["imm"] = rng.randrange({Opcode.CFG_RUBATO: 16, Opcode.CFG_NET_SEGMENT: 200}.get(code, 1 << 16))
    return isa.encode(Instruction(code, **f))


def restricted(resources: frozenset, shape: isa.EngineShape) -> int:
    """A set of isa resources as the RTL's mask (bit B = the seed, B + 1 = the Rubato registers,
    B + 2 = the network's packet numbering, each when the engine has it)."""
    width = shape.buffers + (3 if isa.Unit.NETWORK in shape.units else 2 if isa.Unit.RUBATO in shape.units else 1)
    at = {isa.SEED: shape.buffers, isa.RUBATO_REGISTERS: shape.buffers + 1, isa.NETWORK_REGISTERS: shape.buffers + 2}
    mask = 0
    for r in resources:
        if r in at:
            mask |= 1 << at[r] if at[r] < width else 0
        elif r < shape.buffers:
            mask |= 1 << r
    return mask


# -- well-formed random programs ------------------------------------------------------------------

def well_formed(rng: random.Random, shape: isa.EngineShape, bound: set, opcodes=None,
                tries: int = 200) -> Instruction:
    """A random instruction that ``isa.check`` accepts on ``shape`` with ``bound`` bound (drawn
    from ``opcodes``, default every functional opcode of a built unit)."""
    if opcodes is None:
        opcodes = [c for c, i in OPCODES.items() if i.unit != Unit.NONE and i.requires in shape.units]
    nb, ns = shape.buffers, shape.slots
    for _ in range(tries):
        code = rng.choice(list(opcodes))
        info = OPCODES[code]
        f = {}
        for name in info.uses:
            if name in ("dst", "a", "b", "c"):
                f[name] = rng.randrange(nb)
            elif name == "slot":
                f[name] = rng.choice(sorted(bound)) if bound and rng.random() < 0.9 else rng.randrange(ns)
            elif name == "flags":
                f[name] = rng.randrange(8)
            elif name == "imm":
                f[name] = rng.getrandbits(32)
        if code in (Opcode.ENCODE, Opcode.DECODE):
            f["imm"] = rng.randrange(1, 3)
        if code in (Opcode.LOAD, Opcode.MOVE, Opcode.NTT):
            f["flags"] = rng.randrange(2)
        if code in (Opcode.ADD, Opcode.SUB, Opcode.MUL):
            f["flags"] = rng.randrange(4)
        if code == Opcode.SAMPLE:
            f["flags"] = rng.randrange(4)
        if code == Opcode.NOTIFY:
            f["imm"] = rng.randrange(1 << 16)
        if code == Opcode.CFG_PRIME:
            pid = rng.randrange(len(shape.primes))
            f["imm"] = pid << 27 | (shape.primes[pid] & ((1 << 27) - 1))
        if code == Opcode.CFG_SCALE:
            f["imm"] = shape.log_scale
        ins = Instruction(code, **f)
        if isa.check(ins, shape, bound) == isa.ErrorCause.NONE:
            return ins
    raise RuntimeError(f"no well-formed instruction among {opcodes}")


def prime_all(shape: isa.EngineShape) -> list[Instruction]:
    """cfg.prime for every slot (prime i mod the number of primes)."""
    out = []
    for s in range(shape.slots):
        pid = s % len(shape.primes)
        out.append(Instruction(Opcode.CFG_PRIME, slot=s,
                               imm=pid << 27 | (shape.primes[pid] & ((1 << 27) - 1))))
    return out


def hazard(a: Instruction, b: Instruction, exclusive_reads: bool = False) -> bool:
    """RAW, WAW or WAR (and RAR with ``exclusive_reads``) between two instructions
    (isa.reads_writes)."""
    ra, wa = isa.reads_writes(a)
    rb, wb = isa.reads_writes(b)
    return bool(wa & (rb | wb) or ra & wb or (exclusive_reads and ra & rb))


# -- cycle-level simulation ------------------------------------------------------------------------

@dataclass
class Run:
    """What :func:`simulate` saw (cycles are simulation cycles, the first one 0).

    Members
    -------
    start, finish : dict position -> cycle    each task's transfer and ``done`` cycle as its unit
                                              saw them (identified through the manager's
                                              completion records, cross-checked by _match)
    unit_of : dict position -> Unit
    events : dict Unit -> list of (cycle, fields dict | "done")   what each unit saw
    records : list of dict                    the manager's ``completed`` lanes
    notify : list of (cycle, code)
    accepted : list of cycles                 i_instr transfers
    aborts : list of cycles
    idle_cycle : int | None                   the first cycle, after the last word was offered and
                                              accepted, with busy = 0 and every mock unit idle
    error : (error, cause, position) at the end
    cfg : dict                                the cfg registers at the end
    busy, error_trace : list[int]             busy / error per cycle
    port_of : dict Unit -> Unit               the manager's: a task kind -> the kind naming its port
    """
    start: dict = field(default_factory=dict)
    finish: dict = field(default_factory=dict)
    unit_of: dict = field(default_factory=dict)
    events: dict = field(default_factory=dict)
    records: list = field(default_factory=list)
    notify: list = field(default_factory=list)
    accepted: list = field(default_factory=list)
    aborts: list = field(default_factory=list)
    idle_cycle: int | None = None
    cycles: int = 0
    error: tuple = (0, 0, 0)
    cfg: dict = field(default_factory=dict)
    busy: list = field(default_factory=list)
    error_trace: list = field(default_factory=list)
    port_of: dict = field(default_factory=dict)


def build(shape, window=8, ooo=True, queue=4, latency=None, errors=None, exclusive_reads=False, groups=()):
    """A TaskManager and one MockUnit per physical unit (``latency`` / ``errors``: dict Unit -> value
    for :class:`MockUnit`, default latency 1, no errors; ``groups``: kinds sharing one unit)."""
    from hhe_gen.cores.engine.task_manager import TaskManager
    from hhe_gen.cores.engine.units import MockUnit
    tm = TaskManager(shape, window=window, ooo=ooo, queue=queue, exclusive_reads=exclusive_reads, groups=groups)
    top = Module()
    top.submodules.tm = tm
    mocks = {}
    for u in tm.units:
        mocks[u] = mock = MockUnit(tm.tag_width, (latency or {}).get(u, 1),
                                   errors=(errors or {}).get(u, False))
        top.submodules[f"mock_{u.name.lower()}"] = mock
        wiring.connect(top, tm.unit_port(u), mock.port)
    return top, tm, mocks


def _words(program):
    return [w if isinstance(w, int) else isa.encode(w) for w in program]


def simulate(shape, program, *, window=8, ooo=True, queue=4, latency=None, errors=None,
             gaps=None, max_cycles=5000, abort_at=None, after_abort=(), vcd=None,
             exclusive_reads=False, groups=()) -> Run:
    """Run ``program`` (Instructions or words) through a TaskManager with mock units until it is
    idle (or ``max_cycles``).

    gaps : seed for random cycles without ``valid`` between words (None: back to back)
    abort_at : a cycle at which ``abort`` is pulsed; then ``after_abort`` (a second program) is
               offered from the next cycle on, and the run ends when that one is idle
    """
    top, tm, mocks = build(shape, window, ooo, queue, latency, errors, exclusive_reads, groups)
    rng = random.Random(gaps) if gaps is not None else None
    run = Run(port_of=dict(tm.port_of))
    first = _words(program)
    second = _words(after_abort)

    async def bench(ctx):
        todo = list(first)
        holding = False                       # a word is offered (must stay until taken)
        cycle = 0
        while cycle < max_cycles:
            abort = cycle == abort_at
            if abort:
                todo, holding = list(second), False
                run.aborts.append(cycle)
            ctx.set(tm.abort, int(abort))
            offer = bool(todo) and not abort and (holding or rng is None or rng.random() >= 0.3)
            ctx.set(tm.i_instr.valid, int(offer))
            if offer:
                ctx.set(tm.i_instr.payload, todo[0])
            holding = offer
            sigs = [tm.i_instr.ready, tm.busy, tm.notify, tm.notify_code, tm.error]
            for u in tm.units:
                p = tm.unit_port(u)
                sigs += [p.task.valid, p.task.ready, p.task.payload, p.done, mocks[u].busy,
                         tm.completed[tm.units.index(u)]]
            vals = list(await ctx.tick().sample(*sigs))[-len(sigs):]
            ready, busy, notify, code, error = vals[:5]
            run.busy.append(busy)
            run.error_trace.append(error)
            if offer and ready:
                run.accepted.append(cycle)
                todo.pop(0)
                holding = False
            if notify:
                run.notify.append((cycle, code))
            units_busy = False
            for k, u in enumerate(tm.units):
                tv, tr, payload, done, mbusy, rec = vals[5 + 6 * k:11 + 6 * k]
                units_busy |= bool(mbusy)
                ev = run.events.setdefault(u, [])
                if tv and tr:
                    ev.append((cycle, {f.name: int(payload[f.name]) for f in FIELDS}))
                if done:
                    ev.append((cycle, "done"))
                if rec.valid:
                    run.records.append({"position": int(rec.position), "unit": Unit(int(rec.unit)),
                                        "dispatched": int(rec.dispatched),
                                        "finished": int(rec.finished), "cycle": cycle})
            cycle += 1
            after = abort_at is None or cycle > abort_at
            drained = bool(run.accepted) and cycle - 1 > run.accepted[-1]
            if after and drained and not todo and not busy and not units_busy:
                run.idle_cycle = cycle - 1
                break
        run.cycles = cycle
        run.error = (ctx.get(tm.error), ctx.get(tm.error_cause), ctx.get(tm.error_position))
        cfg = ctx.get(tm.cfg)
        run.cfg = {name: ([int(cfg[name][i]) for i in range(shape.slots)] if name == "prime"
                          else int(cfg[name])) for name, _ in tm.cfg.shape()}

    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    _match(run, second if abort_at is not None else first)
    return run


def _match(run: Run, words):
    """Identify each task by the manager's completion record and check it against what the unit
    saw: a transfer in the record's dispatch cycle whose fields are those of the program word at
    the record's position, and ``done`` in the record's finish cycle; every transfer and every
    ``done`` belongs to exactly one record.  (Records before the last abort are skipped: their
    positions belong to the first program.)"""
    since = run.aborts[-1] if run.aborts else -1
    acc = [c for c in run.accepted if c > since]
    offset = acc[0] if acc else 0           # cycle counter 0 = the first accept
    used = set()
    for r in run.records:
        if r["cycle"] <= since:
            continue
        d, f = offset + r["dispatched"], offset + r["finished"]
        assert f == r["cycle"], r
        pos, u = r["position"], r["unit"]
        assert pos not in run.start, f"position {pos} completed twice"
        ev = run.events[u]
        starts = [i for i, (c, what) in enumerate(ev) if c == d and what != "done"]
        dones = [i for i, (c, what) in enumerate(ev) if c == f and what == "done"]
        assert len(starts) == 1 and len(dones) == 1, (r, ev)
        want = isa.decode(words[pos])
        assert ev[starts[0]][1] == {fd.name: getattr(want, fd.name) for fd in FIELDS}, (r, want)
        kind = isa.OPCODES[want.opcode].unit
        assert run.port_of.get(kind, kind) == u          # the unit, or the shared unit of its group
        used.update({(u, starts[0]), (u, dones[0])})
        run.start[pos], run.finish[pos], run.unit_of[pos] = d, f, u
    for u, ev in run.events.items():
        for i, (c, _) in enumerate(ev):
            if c > since:
                assert (u, i) in used, f"unit {u.name} event {ev[i]} has no completion record"


def check_order(run: Run, program, ooo: bool = True, exclusive_reads: bool = False):
    """The scheduling rules, from the units' own transfer / done cycles:

    * every functional instruction ran exactly once (and nothing else ran);
    * for every pair i < j with a RAW / WAR / WAW hazard: j starts after i finished
      (start_j > finish_i);
    * a serialising instruction s (fence, notify, cfg.*): every functional i < s finished before
      every functional j > s started; a notify's pulse comes after every earlier finish and
      before every later start, with its code, in program order;
    * ``ooo=False``: tasks start in program order (strictly increasing start cycles).
    """
    ins = [isa.decode(w) for w in _words(program)]
    func = [p for p, i in enumerate(ins) if i.info.unit != Unit.NONE]
    assert sorted(run.start) == func, (sorted(run.start), func)
    for a in func:
        for b in func:
            if a < b and hazard(ins[a], ins[b], exclusive_reads):
                assert run.start[b] > run.finish[a], \
                    f"{ins[b]} (#{b}) started {run.start[b]}, before #{a} {ins[a]} finished {run.finish[a]}"
    notifies = [p for p, i in enumerate(ins) if i.opcode == Opcode.NOTIFY]
    assert [code for _, code in run.notify] == [ins[p].imm for p in notifies]
    when = dict(zip(notifies, (c for c, _ in run.notify)))
    for s, i in enumerate(ins):
        if i.opcode not in isa.SERIALISING:
            continue
        before = [run.finish[a] for a in func if a < s]
        after = [run.start[b] for b in func if b > s]
        if before and after:
            assert max(before) < min(after), f"serialising #{s} {i} let a task overtake it"
        if s in when:
            assert all(c < when[s] for c in before) and all(when[s] < c for c in after)
    if not ooo:
        starts = [run.start[p] for p in func]
        assert starts == sorted(starts) and len(set(starts)) == len(starts), "in-order dispatch broken"


def drain_bound(program, latency) -> int:
    """An upper bound of cycles from the first accept to idle: per word 1 (decode), per task its
    unit's largest latency + 2 (done -> completed -> retired), per serialising word 2, plus 4
    (queue, insert, final retire, busy register) - as if nothing overlapped."""
    total = 4
    for i in (isa.decode(w) for w in _words(program)):
        u = i.info.unit if i.info else Unit.NONE
        total += 1
        if u != Unit.NONE:
            lat = (latency or {}).get(u, 1)
            total += (max(lat) if isinstance(lat, (list, tuple)) else lat) + 2
        elif i.opcode != Opcode.NOP:
            total += 2
    return total

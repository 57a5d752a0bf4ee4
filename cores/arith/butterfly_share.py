"""DSP-tile sharing between the fields of the multi-field butterfly (DNA-HHE's idea,
section III-B, Fig. 8, at the granularity of this package's multiplier tiles).

Why sharing is free of conflicts
--------------------------------
The butterfly is one pipeline with one clock enable: at any cycle the operation sitting at
pipeline stage s belongs to exactly one field.  A DSP tile used at stage s by the Z_q reducer and
a tile used at the *same* stage s by the Z_t reducer or the complex product are therefore never
needed in the same cycle, so one physical tile can serve both; its operands are selected by the
field index of the operation at stage s (the ``field`` input delayed to s).  Tiles at different
stages cannot be shared (both could be busy in the same cycle).

What is shared
--------------
Every multiplier of every field is a :class:`~hhe_gen.cores.arith.multiplier.MulPlan`, whose
partial products that fit one DSP (``term.kind == "tile"``) are the tiles.  A *unit* is one
pipeline that contains such plans: the Z_q reducer, the Z_t reducer (both built by
:func:`~hhe_gen.cores.arith.factory.modmul`, their datapath emitted into a :class:`FieldPipe`),
and the three products k1, k2, k3 of the complex 3-multiplier form.  A unit may start ``D``
stages into the multiplier section and run with latency ``l`` (D + l = the stage where the
field needs its result); that choice moves its tiles to other stages.  :func:`plan_sharing`
picks (D, l) for every unit so that the number of physical tiles,

    sum over stages s of  max over fields f of  (tiles field f uses at stage s),

is smallest, subject to no unit's estimated stage delay (the
:data:`~hhe_gen.cores.arith.pipeline.DELAY` model, plus the operand-select multiplexers in front
of each unit) exceeding the worst delay the units would have on their own (sharing never makes
the estimated critical path longer), or, with ``max_stage_ns``, its own best delay or that
bound, whichever is larger.  The search is a
coordinate descent (each unit in turn takes its best option given the others, until nothing
changes), deterministic.

How it is built
---------------
:class:`FieldPipe` is a :class:`~hhe_gen.cores.arith.pipeline.Pipe` that recognises the tile
products of its unit's plans (the values ``MulPlan.build`` creates as ``{plan}_tile{i}``, checked
against the plan's term widths) and asks the :class:`TileBank` for them instead of emitting its
own ``*``; anything it does not recognise is built as usual, so a change of the multiplier
generator can cost sharing but never correctness (the tests count the ``*`` cells).  The bank
gives each (stage, field) its tiles in order of size, so tile i of every field at stage s lands
in physical slot (s, i); a slot's operands are zero-extended to its widest user and selected by
the field of the operation at that stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field as dc_field

from amaranth.hdl import Const, Mux, Signal, Value

from .pipeline import DELAY, Pipe, Timed, schedule

__all__ = ["ShareUnit", "Option", "plan_sharing", "count_slots", "max_stage_delay", "FieldPipe",
           "TileBank", "Stager"]


def max_stage_delay(segments, counts, io: float | None = None, io_in: float | None = None) -> float:
    """Largest estimated delay between two registers of a segment chain with ``counts``
    registers at its boundaries (the measure :func:`~hhe_gen.cores.arith.pipeline.schedule`
    minimises); ``io`` is charged after the last segment, ``io_in`` (default ``io``) before the
    first."""
    io = DELAY["io"] if io is None else io
    cur, worst = (io if io_in is None else io_in), 0.0
    if counts[0]:
        worst, cur = max(worst, cur), 0.0
    for seg, c in zip(segments, counts[1:]):
        cur += seg.delay
        if c:
            worst, cur = max(worst, cur), 0.0
    return max(worst, cur + io)


def _dims(term) -> tuple[int, int]:
    """Tile operand widths, wider first (a slot multiplies its wider port by its narrower one)."""
    a, b = term.x.width, term.y.width
    return (a, b) if a >= b else (b, a)


@dataclass
class ShareUnit:
    """One pipeline with DSP tiles that can move in time.

    Members
    -------
    field : str             the field it belongs to ("zq", "zt", "complex")
    name : str              unique name (signal prefix)
    segments : list         its segment chain (:class:`~hhe_gen.cores.arith.pipeline.Segment`)
    plans : tuple           the MulPlans in it whose tiles are shareable
    min_latency : int       its minimum latency
    end : int               stage (counted from the start of the multiplier section) at which its
                            result is needed: options are D + l <= end, l >= min_latency (a unit
                            that finishes early has its result delayed)
    io_in : float           estimated delay in front of its first segment (routing, the
                            operand-select multiplexers and the pre-adder's tail), charged when
                            it starts at stage 0 (a later start has registered operands)
    io_out : float          estimated delay after its last segment when it ends at ``end``
                            (the post-adder's head); an earlier end has its result registered
    """
    field: str
    name: str
    segments: list
    plans: tuple
    min_latency: int
    end: int
    io_in: float = DELAY["io"]
    io_out: float = DELAY["io"]
    options: list = dc_field(default_factory=list)

    def __post_init__(self):
        for start in range(0, self.end - self.min_latency + 1):
            for lat in range(self.end - start, self.min_latency - 1, -1):
                self.options.append(Option.make(self, start, lat))


@dataclass(frozen=True)
class Option:
    """A unit started ``start`` stages into the multiplier section with latency ``latency``.

    ``profile``: stage (from the start of the section) -> list of tile dims at that stage;
    ``delay``: its largest estimated stage delay."""
    start: int
    latency: int
    counts: tuple
    profile: dict
    delay: float

    @staticmethod
    def make(unit: ShareUnit, start: int, latency: int) -> "Option":
        counts = schedule(unit.segments, latency)
        names = [s.name for s in unit.segments]
        prof = {}
        for plan in unit.plans:
            tiles = sorted((_dims(t) for t in plan.terms if t.kind == "tile"), reverse=True)
            if not tiles:
                continue
            idx = names.index(f"{plan.name}.pp")
            stage = start + sum(counts[:idx + 1])
            prof.setdefault(stage, []).extend(tiles)
        for v in prof.values():
            v.sort(reverse=True)
        # a late start (start > 0) gets its operands from the stager's registers: only routing
        # is in front of its first segment then, not the operand selection (io_in)
        io_in = unit.io_in if start == 0 else DELAY["io"]
        io_out = unit.io_out if start + latency == unit.end else DELAY["io"]
        return Option(start, latency, tuple(counts), prof,
                      max_stage_delay(unit.segments, counts, io=io_out, io_in=io_in))


def count_slots(units, choice) -> int:
    """Physical tiles for the chosen options (``choice[i]`` is an Option of ``units[i]``)."""
    per = {}
    for u, o in zip(units, choice):
        for s, tiles in o.profile.items():
            key = (s, u.field)
            per[key] = per.get(key, 0) + len(tiles)
    best = {}
    for (s, _), n in per.items():
        best[s] = max(best.get(s, 0), n)
    return sum(best.values())


def plan_sharing(units, share: bool = True, max_stage_ns: float | None = None) -> list:
    """The chosen :class:`Option` for every unit (see the module docstring).

    ``max_stage_ns``: None - a unit's options may be as slow as the slowest unit's best option
    (the estimated critical path of the whole unit does not grow); a number - each unit's options
    are limited to max(its own best estimate, max_stage_ns) (less sharing, better timing)."""
    if not units:
        return []
    best_own = [min(o.delay for o in u.options) for u in units]
    if max_stage_ns is None:
        bounds = [max(best_own)] * len(units)
    else:
        bounds = [max(b, max_stage_ns) for b in best_own]
    feasible = [[o for o in u.options if o.delay <= b + 1e-9] for u, b in zip(units, bounds)]
    # on its own: the best-timed option (ties: the earliest start, i.e. the longest latency)
    choice = [min(opts, key=lambda o: (o.delay, o.start, -o.latency)) for opts in feasible]
    if not share:
        return choice

    def cost(ch):
        return (count_slots(units, ch), round(sum(o.delay for o in ch), 6),
                sum(u.end - o.latency for u, o in zip(units, ch)))

    best = cost(choice)
    for _ in range(20):
        changed = False
        for i, opts in enumerate(feasible):
            for o in opts:
                trial = choice[:i] + [o] + choice[i + 1:]
                c = cost(trial)
                if c < best:
                    best, choice, changed = c, trial, True
        if not changed:
            break
    return choice


class Stager:
    """Clock-enabled delay chains for values on the butterfly's absolute stage numbers (the
    chains are shared: asking twice for the same value at a later stage reuses registers)."""

    def __init__(self, m, en):
        self.m, self.en = m, en
        self._chains = {}
        self._sync = []

    def at(self, tv: Timed, stage: int) -> Value:
        if stage < tv.stage:
            raise AssertionError(f"value of stage {tv.stage} needed at stage {stage}")
        if stage == tv.stage:
            return tv.value
        key = (id(tv.value), tv.stage)
        src, chain = self._chains.setdefault(key, (tv.value, []))
        base = getattr(src, "name", None) or "v"
        while len(chain) < stage - tv.stage:
            prev = chain[-1] if chain else src
            reg = Signal(Value.cast(prev).shape(), name=f"{base}_s{tv.stage + len(chain) + 1}", reset_less=True)
            self._sync.append(reg.eq(prev))
            chain.append(reg)
        return chain[stage - tv.stage - 1]

    def flush(self):
        if self._sync:
            with self.m.If(self.en):
                self.m.d.sync += self._sync
        self._sync = []


_TILE_NAME = re.compile(r"^(?P<plan>.+)_tile(?P<i>\d+)$")


class FieldPipe(Pipe):
    """A :class:`~hhe_gen.cores.arith.pipeline.Pipe` whose tile products come from a
    :class:`TileBank` (see the module docstring).

    Extra parameters: ``bank`` (None: no sharing, plain Pipe), ``field`` (name), ``offset``
    (absolute stage of this pipe's stage 0), ``plans`` (the MulPlans built in it)."""

    def __init__(self, m, en, segments, counts, sel=None, prefix="", *, bank=None, field=None, offset=0,
                 plans=()):
        super().__init__(m, en, segments, counts, sel, prefix)
        self.bank, self.field, self.offset = bank, field, offset
        self._tiles = {}
        for plan in plans:
            for i, t in enumerate(plan.terms):
                if t.kind == "tile":
                    self._tiles[f"{plan.name}_tile{i}"] = t
        self.intercepted = 0

    def comb(self, fn, *tvs, shape=None, name=None, probe=False):
        term = self._tiles.get(name) if (self.bank is not None and name) else None
        if term is None or len(tvs) != 2 or shape != term.x.width + term.y.width or probe \
                or not _TILE_NAME.match(name):
            return super().comb(fn, *tvs, shape=shape, name=name, probe=probe)
        xv, yv = self.now(tvs[0]), self.now(tvs[1])
        x = xv[term.x.lo:term.x.lo + term.x.width]
        y = yv[term.y.lo:term.y.lo + term.y.width]
        if len(x) != term.x.width or len(y) != term.y.width:       # not what the plan said
            return super().comb(fn, *tvs, shape=shape, name=name, probe=probe)
        out = self.bank.product(self.field, self.offset + self.stage, x, y, self._name(name))
        self.intercepted += 1
        return Timed(out, self.stage)


@dataclass
class _Request:
    field: str
    x: Value
    y: Value
    out: Signal

    @property
    def dims(self):
        return (len(self.x), len(self.y)) if len(self.x) >= len(self.y) else (len(self.y), len(self.x))


class TileBank:
    """The physical DSP tiles of a butterfly, shared by its fields stage by stage.

    Parameters
    ----------
    m : Module
    field_at : callable(stage) -> Value   the field index of the operation at that absolute stage
    field_index : dict name -> int

    After :meth:`emit`: ``slots`` lists (stage, slot, (wide, narrow) bits, {field: (wide, narrow)}).
    """

    def __init__(self, m, field_at, field_index, prefix="tile"):
        self.m, self.field_at, self.field_index, self.prefix = m, field_at, field_index, prefix
        self.requests = {}          # stage -> list of _Request
        self.slots = []

    def product(self, field, stage, x, y, name) -> Signal:
        out = Signal(len(x) + len(y), name=name)
        self.requests.setdefault(stage, []).append(_Request(field, x, y, out))
        return out

    def emit(self):
        m = self.m
        for stage in sorted(self.requests):
            by_field = {}
            for r in self.requests[stage]:
                by_field.setdefault(r.field, []).append(r)
            for reqs in by_field.values():
                reqs.sort(key=lambda r: r.dims, reverse=True)
            n = max(len(v) for v in by_field.values())
            for i in range(n):
                users = [(f, v[i]) for f, v in by_field.items() if i < len(v)]
                wide = max(u.dims[0] for _, u in users)
                narrow = max(u.dims[1] for _, u in users)
                ports = []
                for _, u in users:
                    p, q = (u.x, u.y) if len(u.x) >= len(u.y) else (u.y, u.x)
                    ports.append((p, q))
                xs = Signal(wide, name=f"{self.prefix}{stage}_{i}_a")
                ys = Signal(narrow, name=f"{self.prefix}{stage}_{i}_b")
                px, py = ports[-1]
                fsel = self.field_at(stage) if len(users) > 1 else None
                for (f, _), (p, q) in zip(users[:-1], ports[:-1]):
                    hit = fsel == self.field_index[f]
                    px, py = Mux(hit, p, px), Mux(hit, q, py)
                m.d.comb += [xs.eq(px), ys.eq(py)]
                prod = Signal(wide + narrow, name=f"{self.prefix}{stage}_{i}_p")
                m.d.comb += prod.eq(xs * ys)
                for _, u in users:
                    m.d.comb += u.out.eq(prod[:len(u.out)])
                self.slots.append((stage, i, (wide, narrow), {f: u.dims for f, u in users}))
        return self.slots


def const_timed(value: int, width: int, stage: int) -> Timed:
    return Timed(Const(value, width), stage)

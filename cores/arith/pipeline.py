"""Pipeline building blocks shared by the arithmetic cores.

Three things live here:

* :class:`Segment` and :func:`schedule` - a unit's datapath is described (before elaboration, in
  pure Python) as a linear chain of combinational *segments*, each with an estimated delay.  The
  boundaries between segments (plus the input boundary before the first one and the output
  boundary after the last one) are where pipeline registers may go.  ``schedule`` places exactly
  ``latency`` registers: every *required* boundary gets one (that is what makes a unit's minimum
  latency), the others are chosen to minimise the largest estimated stage delay (ties: the
  smaller sum of squared stage delays, then the earliest boundaries), and registers beyond one
  per boundary are added at the output.  The delays are rough ECP5 figures (:data:`DELAY`); they
  only steer where registers go, they never change a cycle count.
* :class:`Pipe` - the elaboration helper that follows such a schedule: values carry the number of
  registers they have crossed (their *stage*), every register is clock-enabled by the unit's
  ``en``, and values from earlier stages are delayed automatically (and shared) when they are
  combined with later ones.  Per-prime constants come from :meth:`Pipe.table`, registered from
  the (delayed) prime index so the table lookup is never on the critical path (except at stage 0).
* :class:`StreamPipeline` - wraps any raw unit (``en`` + input ports + one output port, attribute
  ``latency``) into ``amaranth.lib.stream`` interfaces.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Array, Cat, Const, Module, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.errors import ParameterError

__all__ = ["DELAY", "Segment", "schedule", "stage_delays", "Timed", "Pipe", "StreamPipeline", "check_latency",
           "add_delay", "chunk_costs", "dsp_costs"]


# -- delay model (ns, ECP5-85 speed grade 6 as nextpnr-ecp5 times it) -------------------------------
# Measured with yowasp nextpnr-ecp5 (85k, seed 1) on register-to-register paths: flip-flop clk->Q
# 0.53, a net into or out of a carry chain or a DSP 1.2 .. 1.6, a LUT4 0.24 with 0.4 .. 1.25 of
# routing (four levels of 3:2 compressors: 5.5 ns register to register), a CCU2C carry chain
# 0.45 to enter + 0.071 per two bits + 0.40 to leave, a MULT18X18D A->P 3.93 combinational, 3.49
# setup when its output register is used (REG_OUTPUT) and 3.86 clk->P when its input registers
# are used (REG_INPUTA/B).
# A segment's delay counts its input routing and its logic; the clk->Q of the register that starts
# a stage and the routing into the register that ends it are the same for every stage and are
# left out.  The delays only steer where registers go; they never change a cycle count.
DELAY = {
    "io": 1.0,          # routing into / out of the unit (charged to the first and the last stage)
    "route": 1.3,       # one routed net into or out of a carry chain or a DSP
    "lut": 0.25,        # one LUT4 level
    "lut_route": 0.75,  # the (mostly local) net into a LUT level
    "carry_in": 0.45,   # entering a CCU2C carry chain
    "carry_out": 0.4,   # leaving it (sum output)
    "carry_bit": 0.0355,  # per bit of carry chain
    "dsp": 3.93,        # MULT18X18D A/B -> P, combinational
    "dsp_setup": 3.49,  # A/B setup of a MULT18X18D whose output register is used
    "dsp_clk_p": 3.33,  # clk->P of a MULT18X18D with input registers, minus a flip-flop's clk->Q
    "clk_q": 0.53,
    # derived figures (kept for the callers that compose their own segments)
    "tile": 1.3 + 3.93,     # a DSP tile used combinationally, with its input routing
    "gate": 0.75 + 0.25,    # one LUT level: AND-gated rows of a LUT product, a 3:2 compressor level
    "mux": 0.75 + 0.25,     # a 2:1 select (its own LUT level)
    "add_base": 1.3 + 0.45 + 0.4,   # an adder of n bits costs add_base + add_bit * n
    "add_bit": 0.0355,
}


def add_delay(bits: int) -> float:
    """Estimated delay of a ``bits``-wide carry-chain adder (with its input routing)."""
    return DELAY["add_base"] + DELAY["add_bit"] * max(bits, 1)


def chunk_costs(bits: int, first: bool, last: bool) -> dict:
    """``delay``/``head``/``tail``/``alone`` of one chunk of a carry chain split into chunks (see
    :class:`Segment`): a chunk that starts a stage (a register before it holds the carry) restarts
    the chain (routing + entry), one that ends a stage leaves it (exit); the first chunk always
    enters, the last always leaves."""
    body = DELAY["carry_bit"] * max(bits, 1)
    enter = DELAY["route"] + DELAY["carry_in"]
    leave = DELAY["carry_out"]
    mid = body + (enter if first else 0.0) + (leave if last else 0.0)
    head = body + enter + (leave if last else 0.0)
    tail = body + (enter if first else 0.0) + leave
    return {"delay": mid, "head": head, "tail": tail, "alone": body + enter + leave}


def dsp_costs(primitive: bool) -> dict:
    """Costs of a segment of DSP tiles: combinational (inferred ``*``) or a MULT18X18D primitive
    whose input registers absorb a register right before the segment (``head``) and whose output
    register absorbs the one right after it (``tail``)."""
    comb = DELAY["route"] + DELAY["dsp"]
    if not primitive:
        return {"delay": comb, "head": comb, "tail": comb, "alone": comb}
    return {"delay": comb, "head": DELAY["dsp_clk_p"], "tail": DELAY["dsp_setup"], "alone": 0.5}


@dataclass(frozen=True)
class Segment:
    """One combinational step of a unit's datapath.

    Members
    -------
    name : str        the boundary after this segment is called ``name`` (unique within a unit)
    delay : float     estimated delay in ns (:data:`DELAY`) inside a stage
    required : bool   the boundary after this segment must hold a register (e.g. after DSP tiles)
    head : float or None    delay when a register sits right before it (it starts a stage);
                            None = ``delay``.  A carry chunk restarts its chain there; a DSP
                            primitive's input registers absorb that register.
    tail : float or None    delay when a register sits right after it (it ends a stage); None =
                            ``delay``
    alone : float or None   delay when both (the segment is a stage of its own); None =
                            head + tail - delay
    """
    name: str
    delay: float
    required: bool = False
    head: float | None = None
    tail: float | None = None
    alone: float | None = None

    def cost(self, first: bool, last: bool) -> float:
        """The delay of this segment as the first and/or last one of a stage."""
        head = self.delay if self.head is None else self.head
        tail = self.delay if self.tail is None else self.tail
        if first and last:
            return head + tail - self.delay if self.alone is None else self.alone
        if first:
            return head
        if last:
            return tail
        return self.delay


def stage_delays(segments, counts, io_delay: float | None = None) -> list[float]:
    """Estimated delay of every stage of a segment chain with ``counts`` registers at its
    boundaries (what :func:`schedule` minimises; first and last stage include ``io_delay``)."""
    io = DELAY["io"] if io_delay is None else io_delay
    out, cur, start = [], io, False
    if counts[0]:
        out.append(cur)
        cur, start = 0.0, True
    for seg, c in zip(segments, counts[1:]):
        cur += seg.cost(start, bool(c))
        start = False
        if c:
            out.append(cur)
            cur, start = 0.0, True
    out.append(cur + io)
    return out


def check_latency(latency, minimum: int, name: str = "latency") -> int:
    """``latency`` (None -> ``minimum``) as an int >= minimum, else ParameterError."""
    if latency is None:
        return minimum
    if not isinstance(latency, int) or isinstance(latency, bool) or latency < minimum:
        raise ParameterError(name, latency, f"an integer >= {minimum} (the minimum latency of this unit)")
    return latency


def schedule(segments, latency: int, *, io_delay: float | None = None) -> list[int]:
    """Register counts for the boundaries of a segment chain.

    Parameters
    ----------
    segments : list of :class:`Segment` (n of them)
    latency : total number of registers, >= the number of required boundaries
    io_delay : delay charged before the first and after the last segment (default DELAY["io"])

    Returns
    -------
    list of n + 1 ints: entry 0 is the input boundary, entry i + 1 the boundary after segment i
    (the last entry is the output boundary).  Their sum is ``latency``.
    """
    io = DELAY["io"] if io_delay is None else io_delay
    n = len(segments)
    required = [False] + [s.required for s in segments]
    n_req = sum(required)
    if latency < n_req:
        raise ParameterError("latency", latency, f"an integer >= {n_req} (the minimum latency of this unit)")
    if latency == 0:
        return [0] * (n + 1)
    if latency >= n + 1:
        counts = [1] * (n + 1)
        counts[-1] += latency - (n + 1)
        return counts
    # boundary positions 0..n; delay between boundaries i < j = the segments i .. j-1 (the first one
    # with its ``head`` cost when a register sits at boundary i, the last one with its ``tail``
    # cost when one sits at boundary j), plus io at the ends of the unit
    prefix = [0.0]
    for s in segments:
        prefix.append(prefix[-1] + s.delay)

    def span(i, j):     # stage delay from a register at boundary i (or the input, i = -1) to j (or out, n+1)
        lo = 0 if i < 0 else i
        hi = n if j > n else j
        d = prefix[hi] - prefix[lo]
        if hi > lo:
            first, last = i >= 0, j <= n
            if hi - lo == 1:
                d += segments[lo].cost(first, last) - segments[lo].delay
            else:
                d += segments[lo].cost(first, False) - segments[lo].delay
                d += segments[hi - 1].cost(False, last) - segments[hi - 1].delay
        if i < 0:
            d += io
        if j > n:
            d += io
        return d

    # best[(j, c)] = (max, sumsq, cuts) for a register at boundary j being the c-th register
    best = {}
    for j in range(n + 1):
        if any(required[:j]):
            continue                        # a required boundary before j would be skipped
        d = span(-1, j)
        best[(j, 1)] = (d, d * d, (j,))
    for c in range(2, latency + 1):
        for j in range(n + 1):
            cand = None
            for i in range(j - 1, -1, -1):
                if (i, c - 1) in best:
                    m, s2, cuts = best[(i, c - 1)]
                    d = span(i, j)
                    val = (max(m, d), s2 + d * d, cuts + (j,))
                    if cand is None or val[:2] < cand[:2]:
                        cand = val
                if required[i]:
                    break                   # cannot skip a required boundary between i and j
            if cand is not None:
                best[(j, c)] = cand
    final = None
    for j in range(n + 1):
        if (j, latency) in best and not any(required[j + 1:]):
            m, s2, cuts = best[(j, latency)]
            d = span(j, n + 1)
            val = (max(m, d), s2 + d * d, cuts)
            if final is None or val[:2] < final[:2]:
                final = val
    counts = [0] * (n + 1)
    for j in final[2]:
        counts[j] += 1
    return counts


# -- elaboration helper ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Timed:
    """A value and the number of pipeline registers between the unit's inputs and it."""
    value: Value
    stage: int

    def __len__(self):
        return len(Value.cast(self.value))


class Pipe:
    """Builds one unit's pipeline inside ``elaborate()``, following a :func:`schedule`.

    Parameters
    ----------
    m : Module
    en : Value              clock enable of every register
    segments : list of Segment, counts : list of int   the plan and its register counts
    sel : Value or None     the prime index input (for :meth:`table`)

    Use: ``pipe.input(sig)`` for each input; compute a segment's values with ``pipe.comb`` (its
    inputs are delayed to the current stage automatically); end every segment with
    ``pipe.boundary(name, *values)`` (in plan order), which registers the given values as many
    times as the schedule says; finally ``pipe.output(value)``.  ``pipe.probes`` maps names given to
    ``comb(..., probe=True)`` to ``(signal, stage)`` so tests can compare intermediate values.
    """

    def __init__(self, m: Module, en, segments, counts, sel=None, prefix: str = ""):
        self.m, self.en = m, en
        self.segments, self.counts = list(segments), list(counts)
        assert len(self.counts) == len(self.segments) + 1
        self.prefix = prefix
        self.index = 0                      # segments finished so far
        self.stage = self.counts[0]         # registers crossed by a value of the current segment
        self.sel = None if sel is None else Timed(sel, 0)
        self._delays = {}                   # id(value) -> (value, [delayed copies])
        self._sync = []
        self._n = 0
        self.probes = {}
        self.named = {}                     # every comb signal by name (for debugging)

    # values
    def _name(self, name):
        self._n += 1
        return f"{self.prefix}{name}" if name else f"{self.prefix}v{self._n}"

    def input(self, value) -> Timed:
        return Timed(value, 0)

    def delay(self, tv: Timed, stage: int) -> Value:
        """``tv`` delayed to ``stage`` (>= tv.stage); delay chains are shared."""
        if stage < tv.stage:
            raise AssertionError(f"value at stage {tv.stage} needed at earlier stage {stage}")
        if stage == tv.stage:
            return tv.value
        key = id(tv.value)
        if key not in self._delays:
            self._delays[key] = (tv.value, [])
        src, chain = self._delays[key]
        base = getattr(src, "name", None) or "d"
        while len(chain) < stage - tv.stage:
            prev = chain[-1] if chain else src
            shape = Value.cast(prev).shape()
            reg = Signal(shape, name=f"{base}_d{tv.stage + len(chain) + 1}", reset_less=True)
            self._sync.append(reg.eq(prev))
            chain.append(reg)
        return chain[stage - tv.stage - 1]

    def now(self, tv: Timed) -> Value:
        """``tv`` at the current stage."""
        return self.delay(tv, self.stage)

    def registers_before(self) -> int:
        """Registers at the boundary right before the current segment."""
        return self.counts[self.index]

    def registers_after(self) -> int:
        """Registers at the boundary right after the current segment."""
        return self.counts[self.index + 1]

    def registers_at(self, name: str) -> int:
        """Registers at boundary ``name`` ("in" = the input boundary)."""
        if name == "in":
            return self.counts[0]
        names = [sg.name for sg in self.segments]
        return self.counts[names.index(name) + 1]

    def earlier(self, tv: Timed):
        """``tv`` one stage before the current one, when the register between that stage and the
        current one is at the boundary right before the current segment (a DSP primitive's input
        register can then take its place); else None."""
        if self.registers_before() < 1 or tv.stage > self.stage - 1:
            return None
        return self.delay(tv, self.stage - 1)

    def wire(self, fn, *tvs, shape=None, name=None, probe=False) -> Timed:
        """A new signal = fn(*values) at the latest stage of its inputs (not the current one):
        for slicing and wiring, which add no delay (a later consumer then finds the value one
        register earlier, e.g. for a DSP primitive's input register)."""
        stage = max((tv.stage for tv in tvs), default=self.stage)
        vals = [self.delay(tv, stage) for tv in tvs]
        expr = Value.cast(fn(*vals)) if callable(fn) else Value.cast(fn)
        sig = Signal(expr.shape() if shape is None else shape, name=self._name(name))
        self.m.d.comb += sig.eq(expr)
        tv = Timed(sig, stage)
        self.named.setdefault(name, []).append(tv)
        if probe:
            self.probes[name] = (sig, stage)
        return tv

    def comb_multi(self, fn, *tvs, shapes, name=None) -> list:
        """Several new signals at the current stage: ``fn(*values)`` returns one expression per
        entry of ``shapes``."""
        vals = [self.now(tv) for tv in tvs]
        exprs = fn(*vals)
        out = []
        for k, (e, sh) in enumerate(zip(exprs, shapes)):
            sig = Signal(sh, name=self._name(f"{name}_{k}" if name else None))
            self.m.d.comb += sig.eq(e)
            out.append(Timed(sig, self.stage))
        return out

    def comb(self, fn, *tvs, shape=None, name=None, probe=False) -> Timed:
        """A new signal at the current stage = fn(*values of tvs at the current stage)."""
        vals = [self.now(tv) for tv in tvs]
        expr = Value.cast(fn(*vals)) if callable(fn) else Value.cast(fn)
        sig = Signal(expr.shape() if shape is None else shape, name=self._name(name))
        self.m.d.comb += sig.eq(expr)
        tv = Timed(sig, self.stage)
        self.named.setdefault(name, []).append(tv)
        if probe:
            self.probes[name] = (sig, self.stage)
        return tv

    def table(self, rows, width: int, name: str) -> Timed:
        """Per-prime constant ``rows[sel]`` for the current stage: at stage > 0 the lookup is done
        one stage earlier (from the delayed prime index) so that the value used here comes out of
        a register (the returned value is the lookup, one stage early; using it at the current
        stage registers it; a DSP primitive's input register can take that place)."""
        rows = list(rows)
        if len(rows) == 1 or self.sel is None:
            return Timed(Const(rows[0], width), self.stage)
        consts = Array(Const(r, width) for r in rows)
        if self.stage == 0:
            return self.comb(lambda s: consts[s], self.sel, shape=width, name=name)
        sel = self.delay(self.sel, self.stage - 1)
        sig = Signal(width, name=self._name(name))
        self.m.d.comb += sig.eq(consts[sel])
        return Timed(sig, self.stage - 1)

    def select(self, tvs, name: str, probe: bool = False) -> Timed:
        """``tvs[sel]`` at the current stage (per-prime results of parallel networks)."""
        if len(tvs) == 1 or self.sel is None:
            return self.comb(lambda v: v, tvs[0], name=name, probe=probe)
        width = max(len(tv) for tv in tvs)

        def pick(s, *vals):
            return Array(vals)[s]
        return self.comb(pick, self.sel, *tvs, shape=width, name=name, probe=probe)

    def boundary(self, name: str, *tvs):
        """End the current segment (``name`` must match the plan); returns the given values
        registered as the schedule says at this boundary (a tuple, or one Timed for one value)."""
        seg = self.segments[self.index]
        if seg.name != name:
            raise AssertionError(f"pipeline out of step with its plan: boundary {name!r}, plan {seg.name!r}")
        self.index += 1
        n = self.counts[self.index]
        new_stage = self.stage + n
        out = []
        for tv in tvs:
            if tv.stage > self.stage:           # registered inside the segment (a DSP primitive)
                if tv.stage > new_stage:
                    raise AssertionError(f"value of stage {tv.stage} at boundary {name!r} (stage {new_stage})")
                out.append(Timed(self.delay(tv, new_stage), new_stage))
            else:
                out.append(Timed(self.delay(Timed(self.now(tv), self.stage), new_stage), new_stage))
        self.stage = new_stage
        return out[0] if len(out) == 1 else tuple(out)

    def output(self, tv: Timed) -> Value:
        """The unit's result (all segments must be finished)."""
        if self.index != len(self.segments):
            raise AssertionError(f"pipeline finished after {self.index} of {len(self.segments)} segments")
        total = sum(self.counts)
        assert self.stage == total
        value = self.delay(tv, total)
        if self._sync:
            with self.m.If(self.en):
                self.m.d.sync += self._sync
        self._sync = []
        return value


# -- stream wrapper ------------------------------------------------------------------------------------
class StreamPipeline(wiring.Component):
    """Wrap a raw pipelined unit into ``amaranth.lib.stream`` interfaces.

    Parameters
    ----------
    unit : a ``wiring.Component`` with an ``en: In(1)`` port (clock enable of all its registers),
        input ports, one output port, and attribute ``latency`` (its result appears ``latency``
        enabled cycles after its operands; 0 = combinational).
    inputs : list of input port names carried by ``i_stream`` (default: every ``In`` port of the
        unit except ``en``, in signature order).
    output : name of the output port driven onto ``o_stream`` (default ``"p"``).

    Members
    -------
    i_stream : In(stream.Signature(StructLayout({name: port shape for name in inputs})))
    o_stream : Out(stream.Signature(shape of the output port))
    latency : int   = unit.latency: at full rate a result leaves ``latency`` cycles after its
                    operands were accepted (first-in to first-out)
    ii : int        1 (one operation per cycle)

    Back-pressure: a valid bit travels beside the data through ``latency`` registers; everything
    advances (``en = ~o_stream.valid | o_stream.ready``) unless the output holds a result that is
    not taken.  ``i_stream.ready = en``.  With latency 0 the wrapper is combinational.
    """

    @quiet_on_error
    def __init__(self, unit, inputs=None, output: str = "p"):
        self.unit = unit
        members = unit.signature.members
        if "en" not in members:
            raise ParameterError("unit", type(unit).__name__, "a raw unit with an 'en' clock-enable port")
        if inputs is None:
            inputs = [n for n, mb in members.items() if mb.is_port and mb.flow == wiring.In and n != "en"]
        for n in list(inputs) + [output]:
            if n not in members or not members[n].is_port:
                raise ParameterError("inputs/output", n, f"a port of the unit ({', '.join(members)})")
        self.inputs, self.output_name = list(inputs), output
        self.latency = unit.latency
        self.ii = 1
        layout = data.StructLayout({n: members[n].shape for n in self.inputs})
        super().__init__({
            "i_stream": In(stream.Signature(layout)),
            "o_stream": Out(stream.Signature(members[output].shape)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self.unit
        for n in self.inputs:
            m.d.comb += getattr(unit, n).eq(self.i_stream.payload[n])
        m.d.comb += self.o_stream.payload.eq(getattr(unit, self.output_name))
        if self.latency == 0:
            m.d.comb += [
                unit.en.eq(1),
                self.o_stream.valid.eq(self.i_stream.valid),
                self.i_stream.ready.eq(self.o_stream.ready),
            ]
            return m
        en = Signal()
        valid = Signal(self.latency)
        m.d.comb += [
            en.eq(~self.o_stream.valid | self.o_stream.ready),
            unit.en.eq(en),
            self.i_stream.ready.eq(en),
            self.o_stream.valid.eq(valid[-1]),
        ]
        with m.If(en):
            m.d.sync += valid.eq(_shift_in(valid, self.i_stream.valid))
        return m


def _shift_in(reg: Value, bit: Value) -> Value:
    """``reg`` shifted up by one with ``bit`` entering at position 0."""
    return Cat(bit, reg[:-1]) if len(reg) > 1 else bit

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

from hhe_gen.params.errors import ParameterError

from .constants import quiet_on_error

__all__ = ["DELAY", "Segment", "schedule", "Timed", "Pipe", "StreamPipeline", "check_latency"]


# -- delay model (ns, rough ECP5-85 speed grade 6 figures incl. local routing) ---------------------
# Calibrated on one measurement (yowasp nextpnr-ecp5, 85k, seed 1): a 57-bit subtract, a select,
# another 57-bit subtract and a select between registers took 12.4 ns (6.8 ns logic in 115 carry
# levels, 5.6 ns routing), i.e. about 1.5 + 0.07 * n ns per n-bit adder with its routing.
DELAY = {
    "io": 1.0,          # routing into / out of the unit (charged to the first and the last stage)
    "tile": 6.0,        # one MULT18X18D / DSP48E1 used combinationally, with its routing
    "gate": 0.6,        # AND-gated rows of a LUT product, slicing, wiring
    "mux": 0.7,         # a 2:1 select
    "add_base": 1.5,    # an adder of n bits costs add_base + add_bit * n (carry chain + routing)
    "add_bit": 0.07,
}


def add_delay(bits: int) -> float:
    """Estimated delay of a ``bits``-wide carry-chain adder."""
    return DELAY["add_base"] + DELAY["add_bit"] * max(bits, 1)


@dataclass(frozen=True)
class Segment:
    """One combinational step of a unit's datapath.

    Members
    -------
    name : str        the boundary after this segment is called ``name`` (unique within a unit)
    delay : float     estimated delay in ns (:data:`DELAY`)
    required : bool   the boundary after this segment must hold a register (e.g. after DSP tiles)
    """
    name: str
    delay: float
    required: bool = False


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
    # boundary positions 0..n; delay between boundaries i < j = sum(segments[i:j]) (+ io at the ends)
    prefix = [0.0]
    for s in segments:
        prefix.append(prefix[-1] + s.delay)

    def span(i, j):     # stage delay from a register at boundary i (or the input, i = -1) to j (or out, n+1)
        lo = 0 if i < 0 else i
        hi = n if j > n else j
        d = prefix[hi] - prefix[lo]
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
        """Per-prime constant ``rows[sel]`` at the current stage (registered when stage > 0)."""
        rows = list(rows)
        if len(rows) == 1 or self.sel is None:
            return Timed(Const(rows[0], width), self.stage)
        consts = Array(Const(r, width) for r in rows)
        if self.stage == 0:
            return self.comb(lambda s: consts[s], self.sel, shape=width, name=name)
        sel = self.delay(self.sel, self.stage - 1)
        reg = Signal(width, name=self._name(name), reset_less=True)
        self._sync.append(reg.eq(consts[sel]))
        return Timed(reg, self.stage)

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
        out = tuple(Timed(self.delay(Timed(self.now(tv), self.stage), new_stage), new_stage) for tv in tvs)
        self.stage = new_stage
        return out[0] if len(out) == 1 else out

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

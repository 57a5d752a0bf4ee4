"""``hhe-gen bench arith``: area and speed of the modular multipliers (cores/arith).

Every reducer (generic Barrett, word-level Montgomery, DNA-HHE special-prime Barrett, ABC-FHE
NTT-friendly Montgomery) at w = 36, 54, 64 bits, at its minimum latency and at 6 and 8 cycles,
with a run-time-selected modulus from an RNS set of three primes of its form (N = 2^13):

* ECP5-85F (LFE5U-85F, CABGA381): Yosys ``synth_ecp5`` + ``nextpnr-ecp5`` (seed 1, 125 MHz
  target): LUT4, FF, MULT18X18D, CCU2C, post-route Fmax and where the critical path is;
* Xilinx 7-series: Yosys ``synth_xilinx -family xc7``: LUT, FF, DSP48E1, CARRY4.

Each unit sits in ``hhe_gen.flow.synth.TimingHarness`` (inputs from a shift register, outputs
XOR-folded into registered pins, ``en`` tied high), so every path is register to register; the
area is the unit's own. Two reference rows show what Yosys does with a Barrett written naively
with Amaranth's ``*`` (``NaiveBarrett``): "naive-staged" (a register after each of the three
products: the measured baseline of 27 MULT18X18D / 42-54 MHz) and "naive-comb" (registers only
at the inputs and the output). Two more show the DSP ceiling on ECP5: one MULT18X18D as Yosys
maps a ``*`` (no internal registers) and one with its input and output registers on
(``Mult18x18D``).

Goals are attached to each case where they apply: 54-bit on ECP5 Fmax >= 125 MHz, latency <= 8
and special Barrett <= 12 MULT18X18D (hhe-gen's own goals for the ECP5 port; no paper gives ECP5
figures); special Barrett DSPs >= 40 % below the generic Barrett's at the same width and latency,
on both targets (DNA-HHE section III-B: its DSP-efficient Barrett "contributing to a
40% reduction in DSP overhead"). The last case ("plot") draws
Fmax against area of every ECP5 case of the run into ``bench-results/arith.png``.

Runs are cached (``hhe_gen.flow.synth``), so a second ``hhe-gen bench arith`` takes seconds; the
first takes about an hour or two on two cores (the 64-bit units and naive-comb are the slow ones).
"""

from __future__ import annotations

from functools import lru_cache

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.params.errors import ParameterError
from hhe_gen.apps.bench import bench_case

__all__ = ["NaiveBarrett", "Mult18x18D", "KINDS", "WIDTHS", "LATENCIES", "VARIANTS", "build",
           "measure_ecp5", "measure_xilinx"]

KINDS = ("barrett", "montgomery", "special-barrett", "ntt-montgomery")
WIDTHS = (36, 54, 64)
#: besides each unit's minimum latency
LATENCIES = (6, 8)
LOG_N = 13
WORD_BITS = 18          # word-level Montgomery: one ECP5 18x18 tile per word
PRIMES = 3              # RNS set size (run-time selected by ``sel``)

GOAL_FMAX_MHZ = 125.0
GOAL_LATENCY = 8
GOAL_SPECIAL_DSP = 12
GOAL_DSP_SAVING = 0.40


# ------------------------------------------------------------------------------ reference design


class NaiveBarrett(wiring.Component):
    """Generic Barrett a*b mod q written with Amaranth's ``*``: the unoptimised reference.

    No DSP-aware splitting, no pipelining inside the products: Yosys maps each ``*`` by itself.
    The algorithm is the golden model's (``hhe_gen.models.modarith.BarrettReducer``):
    x = a*b, t = ((x >> (k-1)) * mu) >> (k+1), r0 = x - t*q in [0, 3q), two constant-time
    corrections.

    Parameters
    ----------
    moduli : int or list of int   odd moduli of one bit length k (run-time selected by ``sel``)
    width : int                   port width, k .. 64
    staged : bool                 False: registers only at the inputs and the output;
                                  True: also a register after each of the three products

    Members
    -------
    a, b : In(width)   operands in [0, q)
    sel : In(range(len(moduli)))   prime index (absent with one modulus)
    en : In(1)         clock enable of every register
    p : Out(width)     a*b mod q

    Latency: 2 cycles (staged: 5), initiation interval 1.
    """

    def __init__(self, moduli, width: int, staged: bool = False):
        moduli = [moduli] if isinstance(moduli, int) else list(moduli)
        if not moduli or any(not isinstance(q, int) or q < 3 or q % 2 == 0 for q in moduli):
            raise ParameterError("moduli", moduli, "a non-empty list of odd integers >= 3")
        k = moduli[0].bit_length()
        if any(q.bit_length() != k for q in moduli):
            raise ParameterError("moduli", moduli, "moduli of one bit length")
        if not isinstance(width, int) or not k <= width <= 64:
            raise ParameterError("width", width, f"an integer in {k} .. 64")
        self.moduli, self.width, self.staged, self.k = moduli, width, bool(staged), k
        self.mus = [(1 << (2 * k)) // q for q in moduli]
        self.latency = 5 if staged else 2
        self.ii = 1
        sig = {"a": In(width), "b": In(width)}
        if len(moduli) > 1:
            sig["sel"] = In(range(len(moduli)))
        sig["en"] = In(1)
        sig["p"] = Out(width)
        super().__init__(sig)

    def elaborate(self, platform):
        m = Module()
        k = self.k
        many = len(self.moduli) > 1

        def reg(value, name):
            r = Signal.like(value, name=name)
            with m.If(self.en):
                m.d.sync += r.eq(value)
            return r

        def stage(value, name):
            return reg(value, name) if self.staged else value

        def table(values, bits, sel):
            if not many:
                return Const(values[0], bits)
            return Array(Const(v, bits) for v in values)[sel]

        a, b = reg(self.a, "a_r"), reg(self.b, "b_r")
        sel0 = reg(self.sel, "sel_r") if many else None
        x = Signal(2 * k)
        m.d.comb += x.eq(a * b)
        x1, sel1 = stage(x, "x_s1"), (stage(sel0, "sel_s1") if many else None)
        t = Signal(k + 1)
        m.d.comb += t.eq(((x1 >> (k - 1)) * table(self.mus, k + 1, sel1)) >> (k + 1))
        x2, t2 = stage(x1, "x_s2"), stage(t, "t_s2")
        sel2 = stage(sel1, "sel_s2") if many else None
        r0 = Signal(k + 2)
        m.d.comb += r0.eq(x2 - t2 * table(self.moduli, k, sel2))
        r0s, sel3 = stage(r0, "r0_s3"), (stage(sel2, "sel_s3") if many else None)
        q = table(self.moduli, k, sel3)
        r1 = Signal(k + 2)
        m.d.comb += r1.eq(Mux(r0s >= q, r0s - q, r0s))
        with m.If(self.en):
            m.d.sync += self.p.eq(Mux(r1 >= q, r1 - q, r1))
        return m


class Mult18x18D(wiring.Component):
    """One ECP5 MULT18X18D primitive, unsigned 18 x 18 -> 36 bits (ECP5 only, not simulable).

    The reference for the DSP ceiling: ``registered=False`` is how Yosys maps a ``*`` (no
    internal registers: the multiplier's delay and the routing to and from the DSP block are on
    the fabric path), ``registered=True`` turns on the block's input and output registers
    (``REG_INPUTA/B``, ``REG_OUTPUT`` on CLK0), which Yosys never infers.

    Members
    -------
    a, b : In(18)   operands
    p : Out(36)     a*b

    Latency: 0 cycles (2 with ``registered``), initiation interval 1.
    """

    def __init__(self, registered: bool):
        self.registered = bool(registered)
        self.latency = 2 if registered else 0
        super().__init__({"a": In(18), "b": In(18), "p": Out(36)})

    def elaborate(self, platform):
        from amaranth.hdl import ClockSignal, Instance
        m = Module()
        regs = {}
        if self.registered:
            for reg in ("INPUTA", "INPUTB", "OUTPUT"):
                regs.update({f"p_REG_{reg}_CLK": "CLK0", f"p_REG_{reg}_CE": "CE0",
                             f"p_REG_{reg}_RST": "RST0"})
        m.submodules.mult = Instance(
            "MULT18X18D", **regs,
            **{f"i_A{i}": self.a[i] for i in range(18)},
            **{f"i_B{i}": self.b[i] for i in range(18)},
            **{f"i_C{i}": Const(0, 1) for i in range(18)},
            i_SIGNEDA=Const(0, 1), i_SIGNEDB=Const(0, 1), i_SOURCEA=Const(0, 1),
            i_SOURCEB=Const(0, 1), i_CLK0=ClockSignal(), i_CE0=Const(1, 1), i_RST0=Const(0, 1),
            **{f"o_P{i}": self.p[i] for i in range(36)})
        return m


# ------------------------------------------------------------------------------ the units


@lru_cache(maxsize=None)
def moduli_for(kind: str, width: int) -> tuple[int, ...]:
    """The RNS set used for ``kind`` at ``width`` bits: three primes of the reducer's form."""
    from hhe_gen.params import abc_fhe_primes, dna_hhe_primes, ntt_primes
    if kind in ("barrett", "naive-staged", "naive-comb"):
        return tuple(ntt_primes(1 << LOG_N, width, PRIMES))
    if kind == "montgomery":        # q = 1 mod 2^word_bits
        return tuple(ntt_primes(1 << (WORD_BITS - 1), width, PRIMES))
    if kind == "special-barrett":
        return tuple(p.q for p in dna_hhe_primes(width, 1 << LOG_N, 10, count=PRIMES))
    if kind == "ntt-montgomery":
        # q = 2^(w-1) + kk*2N + 1 with kk > 0: full-width primes, like the other forms
        found = [p.q for p in abc_fhe_primes(1 << LOG_N, width - 1, 3)
                 if p.q.bit_length() == width]
        return tuple(found[:PRIMES])
    raise ParameterError("kind", kind, "one of " + ", ".join(KINDS + ("naive-staged", "naive-comb")))


#: Option sets of the reducers (``modmul`` keyword arguments) measured, by name. "" = the
#: generator's defaults (Yosys infers the DSP tiles); "prim" = ECP5 MULT18X18D primitives whose
#: own registers hold the pipeline registers around the tiles; "nok-bndluts" (special-prime
#: Barrett) = schoolbook a*b and q_est*bnd as LUT rows, the generator's fastest ECP5 form.
VARIANTS = {
    "": {},
    "prim": {"dsp": "primitive"},
    "prim-nok-bndluts": {"dsp": "primitive", "karatsuba": False, "bnd_luts": True},
    "nok-bndluts": {"karatsuba": False, "bnd_luts": True},
}


def build(kind: str, width: int, latency: int | None, target: str, variant: str = ""):
    """The unit measured for (kind, width, latency, variant) on ``target`` ("ecp5"/"xilinx")."""
    if kind.startswith("mult18x18d-"):
        if target != "ecp5":
            raise ParameterError("target", target, "'ecp5' (MULT18X18D is an ECP5 primitive)")
        return Mult18x18D(registered=kind == "mult18x18d-registered")
    moduli = list(moduli_for(kind, width))
    if kind.startswith("naive-"):
        return NaiveBarrett(moduli, width, staged=kind == "naive-staged")
    if variant not in VARIANTS:
        raise ParameterError("variant", variant, "one of " + ", ".join(map(repr, VARIANTS)))
    from hhe_gen.cores.arith import modmul
    extra = {"montgomery": {"word_bits": WORD_BITS}, "special-barrett": {"log_n": LOG_N},
             "ntt-montgomery": {"log_n": LOG_N}}.get(kind, {})
    return modmul(kind, moduli, width, latency, target=target, **extra, **VARIANTS[variant])


def _name(kind: str, width: int, latency: int, variant: str = "") -> str:
    tail = f"_{variant.replace('-', '_')}" if variant else ""
    return f"{kind.replace('-', '_')}_{width}_l{latency}{tail}"


def _label(kind: str, variant: str) -> str:
    """Plot group of a case: the reducer and, for the generator's units, the variant."""
    if kind.startswith(("naive-", "mult18x18d-")):
        return kind
    return f"{kind} ({variant or 'infer'})"


def _baseline(width: int, latency: int, target: str, variant: str) -> tuple[int, str]:
    """(latency, variant) of the generic Barrett a special-prime Barrett is compared with: the
    same DSP mode and latency, or the generic Barrett's minimum if that is larger."""
    base = "prim" if variant.startswith("prim") else ""
    return max(latency, build("barrett", width, None, target, base).min_latency), base


def _tiles(unit) -> int | None:
    return getattr(unit, "tiles", None)


def _cp_text(cp: dict | None) -> str:
    if not cp:
        return ""
    return f"{cp['dsp']} dsp, {cp['carry']} carry, {cp['lut']} lut"


def _ok(flag: bool) -> str:
    return "ok" if flag else "MISS"


# ------------------------------------------------------------------------------ measurements

_ECP5_RESULTS: dict[str, dict] = {}     # case name -> metrics, for the plot case


def measure_ecp5(kind: str, width: int, latency: int | None = None, variant: str = "",
                 seed: int = 1, freq_mhz: float = 125) -> dict:
    """Synthesize and place-and-route one unit on the ECP5-85F.

    Returns
    -------
    dict   latency, tiles (the generator's DSP-tile count), the unit's LUT4 / FF / MULT18X18D /
           CCU2C, fmax_mhz (post-route), cp_ns and cp_path (critical path length and its DSP /
           carry / LUT segments), cp_signals (the design signals it starts at, goes through and
           ends at), cp_src (the first Python lines of its nets), dsp_saving
           (special Barrett: 1 - its MULT18X18D / generic Barrett's at the same latency, or the
           generic Barrett's minimum latency if that is larger) and goals (the module's
           goals that apply: "ok" or by how much they are missed)
    """
    from hhe_gen.flow import synth
    unit = build(kind, width, latency, "ecp5", variant)
    r = synth.synth_ecp5(unit, name=_name(kind, width, unit.latency, variant), seed=seed,
                         freq_mhz=freq_mhz)
    cp = r["critical_path"] or {}
    out = {
        "latency": unit.latency, "tiles": _tiles(unit),
        "LUT4": r["LUT4"], "FF": r["FF"], "MULT18X18D": r["MULT18X18D"], "CCU2C": r["CCU2C"],
        "fmax_mhz": r["fmax_mhz"], "cp_ns": cp.get("ns"), "cp_path": _cp_text(cp),
        "cp_signals": " > ".join(cp.get("signals", [])[:6]),
        "cp_src": ", ".join(cp.get("sources", [])[:3]),
    }
    goals = []
    if width == 54:
        fmax = r["fmax_mhz"]
        goals.append("fmax>=125 " + ("ok" if fmax is not None and fmax >= GOAL_FMAX_MHZ else
                                     f"MISS by {GOAL_FMAX_MHZ - (fmax or 0):.1f} MHz"))
        goals.append(f"lat<=8 {_ok(unit.latency <= GOAL_LATENCY)}")
        if kind == "special-barrett":
            goals.append(f"dsp<=12 {_ok(r['MULT18X18D'] <= GOAL_SPECIAL_DSP)}")
    if kind == "special-barrett":
        base = measure_ecp5("barrett", width, *_baseline(width, unit.latency, "ecp5", variant),
                            seed, freq_mhz)["MULT18X18D"]
        goals.append(_saving(out, r["MULT18X18D"], base))
    out["goals"] = "; ".join(goals)
    _ECP5_RESULTS[f"{kind}/{width}/{unit.latency}/{variant}"] = {
        "reducer": _label(kind, variant), "width": width, **out}
    return out


def measure_xilinx(kind: str, width: int, latency: int | None = None, variant: str = "") -> dict:
    """Synthesize one unit for Xilinx 7-series (no place and route).

    Returns
    -------
    dict   latency, tiles, the unit's LUT / FF / DSP48E1 / CARRY4 / SRL, dsp_saving and goals
           (special Barrett: DSP48E1 >= 40 % below the generic Barrett's)
    """
    from hhe_gen.flow import synth
    unit = build(kind, width, latency, "xilinx", variant)
    r = synth.synth_xilinx(unit, name=_name(kind, width, unit.latency, variant))
    out = {"latency": unit.latency, "tiles": _tiles(unit), "LUT": r["LUT"], "FF": r["FF"],
           "DSP48E1": r["DSP48E1"], "CARRY4": r["CARRY4"], "SRL": r["SRL"]}
    goals = []
    if kind == "special-barrett":
        base = measure_xilinx("barrett", width,
                              *_baseline(width, unit.latency, "xilinx", variant))["DSP48E1"]
        goals.append(_saving(out, r["DSP48E1"], base))
    out["goals"] = "; ".join(goals)
    return out


def _saving(out: dict, dsps: int, base: int) -> str:
    """Record 1 - dsps/base as ``dsp_saving``; the goal text (>= 40 %)."""
    if not base:
        out["dsp_saving"] = None
        return "saving n/a"
    saving = 1 - dsps / base
    out["dsp_saving"] = round(saving, 3)
    return f"saving {saving:.0%} vs {base} {_ok(saving >= GOAL_DSP_SAVING)}"


def plot(path: str = "bench-results/arith.png") -> dict:
    """Draw Fmax against area for every ECP5 case measured in this run (``report.plot_area_vs_fmax``)."""
    from hhe_gen.apps.report import plot_area_vs_fmax
    points = list(_ECP5_RESULTS.values())
    if not points:
        return {"plot": "", "points": 0}
    return {"plot": str(plot_area_vs_fmax(points, path)), "points": len(points)}


# ------------------------------------------------------------------------------ the cases


def _register():
    # the reference rows first: what Yosys does with a naive Barrett
    for kind in ("naive-staged", "naive-comb"):
        bench_case("arith", f"ecp5-{kind}-54", quick=False, kind=kind, width=54)(measure_ecp5)
    # and the ceiling: one DSP block without / with its own registers
    for kind in ("mult18x18d-comb", "mult18x18d-registered"):
        bench_case("arith", f"ecp5-{kind}", quick=False, kind=kind, width=18)(measure_ecp5)
    for target, measure in (("ecp5", measure_ecp5), ("xilinx", measure_xilinx)):
        if target == "xilinx":
            for kind in ("naive-staged", "naive-comb"):
                bench_case("arith", f"xilinx-{kind}-54", quick=False, kind=kind,
                           width=54)(measure)
        for kind, width, latency, variant, quick in _grid(target):
            params = {"kind": kind, "width": width, "variant": variant}
            if latency is not None:
                params["latency"] = latency
            name = f"{target}-{kind}-{width}-l{latency or 'min'}" + (f"-{variant}" if variant else "")
            bench_case("arith", name, quick=quick, **params)(measure)
    bench_case("arith", "plot", quick=True, path="bench-results/arith.png")(plot)


def _grid(target: str):
    """(kind, width, latency or None for the minimum, variant, quick) of every measured unit.

    ECP5: every reducer with DSP primitives ("prim") at every width and latency, the
    generator's defaults ("": inferred DSPs) at 54 bits (minimum latency and 8), and the
    special-prime Barrett's fastest form ("prim-nok-bndluts") at 54 bits. Xilinx: the defaults
    everywhere and "nok-bndluts" for the special-prime Barrett at 54 bits. The latencies above
    the minimum are fixed (``LATENCIES``, above every unit's minimum: 1 .. 5) so that the
    reducers compare at equal depth. Only the 36-bit NTT-friendly Montgomery at its minimum
    latency is quick.
    """
    main = "prim" if target == "ecp5" else ""
    for kind in KINDS:
        for width in WIDTHS:
            yield kind, width, None, main, kind == "ntt-montgomery" and width == 36
            for latency in LATENCIES:
                yield kind, width, latency, main, False
    if target == "ecp5":
        for kind in KINDS:
            yield kind, 54, None, "", False
            yield kind, 54, LATENCIES[-1], "", False
    fast = "prim-nok-bndluts" if target == "ecp5" else "nok-bndluts"
    yield "special-barrett", 54, None, fast, False
    for latency in LATENCIES:
        yield "special-barrett", 54, latency, fast, False


_register()

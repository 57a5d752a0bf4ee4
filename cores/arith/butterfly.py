"""The multi-field butterfly unit (DNA-HHE's BFU, section III-B, Fig. 7/8): Cooley-Tukey,
Gentleman-Sande, pointwise mul/add/sub and multiply-accumulate over Z_q (RNS, run-time prime),
Z_t (Rubato's moduli) and fixed-point complex numbers, with the DSP tiles of the three fields'
multipliers shared stage by stage (:mod:`.butterfly_share`).

Golden model: :func:`hhe_gen.models.butterfly.butterfly` (the hardware equals it output for
output; :meth:`Butterfly.model` calls it with this unit's field specifications).

Datapath (one pipeline for every op and field; P = Q = ``add_latency``, M = ``mul_latency``)
---------------------------------------------------------------------------------------------
::

    stage 0        P                      P+M                        P+M+Q = latency
      a,b --[pre: d = a - b (gs operand)]--+
                                           | m1 = ct: b | gs/gsh: d | mul/mac: a
                                           | m2 = ct/gs/gsh: w | mul/mac: b
                                           +--[field multiplier: t = m1*m2]--+
                                                                             | u = mac: c | gsh: a1 | else a
                                                                             | v = ct/mac: t | gsh: b1+k | else b
                                                                             +--[post: u+v, u-v]--> x, y

    op    x              y          (field zq/zt: mod q arithmetic; complex: fixed point)
    ct    a + b*w        a - b*w
    gs    a + b          (a - b)*w  (complex: x = round_shift(a + b, 1), the multiplier gets
                                     h = round_shift(a - b, 1): the model's halving GS)
    gsh   (a + b)/2      (a - b)*w/2  Z_q / Z_t only (complex: undefined): x = a1 + (b1 + k) with
                                     a = 2a1 + a0, b = 2b1 + b0, k in {0, 1, (q+1)/2} formed a stage
                                     before the post adder; y = t1 + t0 (q+1)/2 beside it
    mul   a*b            0
    add   a + b          0
    sub   a - b          0
    mac   c + a*b        0

Z_q and Z_t products are the reducers of :func:`~hhe_gen.cores.arith.factory.modmul` (Montgomery
kinds return a*b*R^-1, like their models); their add/sub stages are one shared
:class:`~hhe_gen.cores.arith.modadd.ModSub` (pre) and one ModAdd + ModSub (post) over the union
of both fields' moduli (the combined prime index is formed from ``field`` and ``sel``).  The
complex product is the 3-multiplier form (:class:`~.butterfly_complex.ComplexProducts`), exact,
rounded once per component by ``frac_bits`` with the format's rounding mode, wrapped to W bits;
complex add/sub wrap.  Constant time: every path is computed for every operation, ``op`` and
``field`` only steer multiplexers; no cycle count depends on data, op or field.

Operand packing
---------------
Ports ``a``, ``b``, ``w``, ``c``, ``x``, ``y`` are ``width`` = max(Z_q port width, Z_t port width,
2W) bits.  Z_q / Z_t residues sit in the low bits (must be < q of the selected prime; higher
port bits are ignored).  A complex value is ``re | im << W`` (:func:`pack_complex`: two W-bit
two's complement numbers, Re in bits [0, W), Im in [W, 2W)).  Outputs are zero above the field's
width; ``y`` is 0 for single-output operations.

Latency
-------
``latency = 2 * add_latency + mul_latency`` cycles for EVERY op and field (the NTT/FFT
controllers rely on one fixed depth), initiation interval 1, registers clock-enabled by ``en``.
``mul_latency`` >= the largest minimum of the enabled fields' multipliers (Barrett kinds 3,
NTT-friendly Montgomery 1, word Montgomery 1 + word steps, complex 1); default: that minimum + 3
(complex alone: 3).  Inside the multiplier section each field's units may start late and run
shorter (the sharing plan, ``share_plan``), delayed to end together.

DSP tiles: what is shared
-------------------------
Sharing is per pipeline stage (:mod:`.butterfly_share`): every DSP-sized partial product of every
field's multipliers is a tile; tiles of different fields at the same stage use one physical
tile whose operands the ``field`` of the operation at that stage selects.  The complex product's
three real products k1, k2, k3 are placed at the stages of the reducers' three products.
DNA-HHE's configuration (Z_q: three 54-bit special primes, k = 54, N = 2^13, special-prime
Barrett with Karatsuba; Z_t: Rubato's t = 0x3EE0001, Barrett with Karatsuba; complex 29/26;
ecp5, default latency 8 = 1 + 6 + 1)::

    stage  Z_q (special Barrett)      Z_t (Barrett)          complex     physical tiles
    1      x = a*b          6 tiles   x = a*b       3 tiles  k2  3 tiles        6
    3      pd = x_hi*dh     3 tiles   p = x_hi*mu   3 tiles  k3  3 tiles        3
    5      pb = q_est*bnd   3 tiles   qq = q_est*t  3 tiles  k1  3 tiles        3
                            12                      9            9             12  (separate: 30)

so Z_t and the complex product cost no DSP at all beyond the Z_q reducer's (``tile_usage`` and
``share_plan`` give this table for any configuration).  Planned tiles per enabled-field set
(``hhe-gen bench butterfly``, ecp5 / xilinx, shared vs. the fields' own multipliers)::

    fields          zq     zt    cx    zq+zt    zq+cx    zt+cx    zq+zt+cx
    ecp5 shared     12     9     9     12       12       12       12
    ecp5 separate   12     9     9     21       21       18       30
    xilinx shared   11     9     9     12       11       12       12
    xilinx separate 11     9     9     20       20       18       29

(computed with the reducers' delay estimates of the time of writing: the default plan depends
on them - a unit may only take a slower schedule that stays within the slowest unit's estimate,
or within ``max_stage_ns``; with the bound lifted, ``max_stage_ns=1000``, all three fields fit
the 12 tiles of the Z_q reducer on both targets).

Sharing trades the fields' own multipliers for operand multiplexers in front of the Z_q
reducer's tiles (the measured areas and post-route Fmax of the shared, separate and single-field
units, ``hhe-gen bench butterfly``'s ``synth-*`` cases: docs/figures.md).  The plan charges the
pre-subtractor's tail and the post-adder's head to the stages around the DSP tiles (operands and
result registered around them).  What stays separate: the Z_q / Z_t add/sub units are
shared with each other but not with the complex ones (the complex adders need a carry break
between Re and Im and no modular correction), and each field's adder trees, corrections and
constant tables are its own (only the DSP products are worth multiplexing).
"""

from __future__ import annotations

from functools import reduce

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.butterfly import FIELDS, OPS, FieldSpec, butterfly as butterfly_model
from hhe_gen.models.fft import FixedPointFormat
from hhe_gen.params.errors import ParameterError

from .butterfly_complex import COMPLEX_REDUCE, ComplexProducts, pack_complex, parts, round_shift_hw, unpack_complex, wrap_hw
from .butterfly_share import FieldPipe, ShareUnit, Stager, TileBank, count_slots, plan_sharing
from .compressor import REDUCTIONS
from .constants import check_int, check_target
from .factory import KINDS, reducer_plan
from .modadd import ModAdd, ModSub, add_sub_segments
from .pipeline import DELAY, Pipe, Segment, Timed, add_delay, schedule, stage_delays

__all__ = ["Butterfly", "ButterflyPlan", "ButterflyStream", "OP_CODES", "pack_complex", "unpack_complex"]

#: ``op`` input encoding: the index in :data:`hhe_gen.models.butterfly.OPS` (code 7: undefined).
OP_CODES = {name: i for i, name in enumerate(OPS)}

#: estimated delay in front of a field multiplier: routing, the op decode and the operand select
IO_IN = DELAY["io"] + 2 * DELAY["mux"]


def _add_sub_stages(width: int, add_latency: int) -> list[float]:
    """Estimated logic per stage of a ``width``-bit modular adder / subtractor with ``add_latency``
    registers (:func:`~.modadd.add_sub_segments`)."""
    segments = add_sub_segments(width)
    return stage_delays(segments, schedule(segments, add_latency), io_delay=0.0)


def _pre_tail_delay(width: int, add_latency: int = 1) -> float:
    """Estimated logic after the last register of the Z_q / Z_t pre-subtractor (its ``gs``
    operand ``d`` feeds the multiplier's operand select): the sharing plan charges it, with
    :data:`IO_IN`, in front of a modular field's multiplier, so an unregistered start of the
    multiplier is only chosen when that path fits (otherwise the operands get a register first)."""
    return _add_sub_stages(width, add_latency)[-1]


def _post_head_delay(width: int, add_latency: int = 1) -> float:
    """Estimated logic in front of the first register of the Z_q / Z_t post-adders (fed by the
    multiplier's result, plus the result select and routing): charged after a modular field's
    multiplier that ends unregistered at the end of the multiplier section."""
    return _add_sub_stages(width, add_latency)[0] + DELAY["io"] + DELAY["mux"]


def _modular_config(name, cfg):
    if not isinstance(cfg, dict) or "moduli" not in cfg:
        raise ParameterError(name, cfg, "a dict with 'moduli' (and optionally kind, width and the "
                             "reducer's parameters, see modmul)")
    kw = dict(cfg)
    moduli = kw.pop("moduli")
    kind = kw.pop("kind", "barrett")
    if kind not in KINDS:
        raise ParameterError(f"{name}.kind", kind, "one of " + ", ".join(repr(k) for k in KINDS))
    qs = (moduli,) if isinstance(moduli, int) else moduli
    try:
        top = max(int(q).bit_length() for q in qs)
    except (TypeError, ValueError):
        raise ParameterError(f"{name}.moduli", moduli, "an odd modulus or a list of them") from None
    width = kw.pop("width", kw.get("k", top) if kind == "special-barrett" else max(16, top))
    if "latency" in kw or "target" in kw:
        raise ParameterError(f"{name}.latency/target", kw.get("latency", kw.get("target")),
                             "not per field: give the butterfly's latency and target")
    return kind, moduli, width, kw


def _complex_config(cfg):
    """(fmt, karatsuba, reduce) of the ``complex`` field's configuration."""
    if isinstance(cfg, FixedPointFormat):
        return cfg, True, COMPLEX_REDUCE
    if isinstance(cfg, dict) and isinstance(cfg.get("fmt"), FixedPointFormat) \
            and set(cfg) <= {"fmt", "karatsuba", "reduce"} and cfg.get("karatsuba", True) in (True, False) \
            and cfg.get("reduce", COMPLEX_REDUCE) in REDUCTIONS:
        return cfg["fmt"], cfg.get("karatsuba", True), cfg.get("reduce", COMPLEX_REDUCE)
    raise ParameterError("complex", cfg, "a FixedPointFormat or dict(fmt=FixedPointFormat, karatsuba=bool, "
                         "reduce=" + "|".join(REDUCTIONS) + ")")


class ButterflyPlan:
    """What a :class:`Butterfly` of these parameters is, with no hardware made: the same
    parameters and refusals, and every member of the unit but its ports and probes (fields,
    latencies, the sharing plan, tiles, the reducers' plans, widths) and its golden ``model``.
    The NTT and pointwise units read a butterfly's latency and width from it."""

    def __init__(self, fields=None, *, zq=None, zt=None, complex=None, target="ecp5", latency=None,
                 add_latency=1, share=True, max_stage_ns=None):
        cfg = {}
        if fields is not None:
            if not isinstance(fields, dict):
                raise ParameterError("fields", fields, "a dict {field name: configuration}")
            for k, v in fields.items():
                if k not in FIELDS:
                    raise ParameterError("fields", k, "keys among " + ", ".join(FIELDS))
                cfg[k] = v
        for k, v in (("zq", zq), ("zt", zt), ("complex", complex)):
            if v is not None:
                if cfg.get(k) is not None:
                    raise ParameterError(k, v, "given once (keyword or fields entry)")
                cfg[k] = v
        self.fields = tuple(f for f in FIELDS if cfg.get(f) is not None)
        if not self.fields:
            raise ParameterError("fields", fields, "at least one of zq, zt, complex")
        self.field_index = {f: i for i, f in enumerate(self.fields)}
        self.target = check_target(target)
        self.add_latency = check_int("add_latency", add_latency, 0, 1)
        if share not in (True, False):
            raise ParameterError("share", share, "True or False")
        self.share = share
        if max_stage_ns is not None and (isinstance(max_stage_ns, bool) or not isinstance(max_stage_ns, (int, float))
                                         or not 0 < max_stage_ns <= 1000):
            raise ParameterError("max_stage_ns", max_stage_ns, "None or a number of ns in (0, 1000]")
        self.max_stage_ns = max_stage_ns
        self.ii = 1

        self._mod_cfg, mins, defaults = {}, {}, []
        for f in ("zq", "zt"):
            if f in self.fields:
                kind, moduli, width, kw = self._mod_cfg[f] = _modular_config(f, cfg[f])
                probe = reducer_plan(kind, moduli, width, None, target=self.target, **kw)
                mins[f] = probe.min_latency
                defaults.append(probe.min_latency + 3)
        self.fmt, self.cx = None, None
        if "complex" in self.fields:
            self.fmt, kara, reduce = _complex_config(cfg["complex"])
            self.cx = ComplexProducts(self.fmt, self.target, kara, reduce)
            mins["complex"] = 1
            defaults.append(3)
        self.min_mul_latency = max(mins.values())
        self.min_latency = 2 * self.add_latency + self.min_mul_latency
        if latency is None:
            self.mul_latency = max(defaults)
            self.latency = 2 * self.add_latency + self.mul_latency
        else:
            if not isinstance(latency, int) or isinstance(latency, bool) or latency < self.min_latency:
                raise ParameterError("latency", latency, f"an integer >= {self.min_latency} (the minimum latency "
                                     f"of this butterfly: 2*add_latency + {self.min_mul_latency})")
            self.latency, self.mul_latency = latency, latency - 2 * self.add_latency
        M = self.mul_latency
        self.cx_combine_latency = (1 if M >= 2 else 0) if self.cx else 0

        # sharing plan
        units = []
        for f in ("zq", "zt"):
            if f in self._mod_cfg:
                kind, moduli, width, kw = self._mod_cfg[f]
                probe = reducer_plan(kind, moduli, width, None, target=self.target, **kw)
                units.append(ShareUnit(f, f, list(probe.segments), tuple(probe.mul_plans), probe.min_latency, M,
                                       io_in=_pre_tail_delay(probe.width, self.add_latency) + IO_IN,
                                       io_out=_post_head_delay(probe.width, self.add_latency)))
        if self.cx:
            for name in ComplexProducts.NAMES:
                units.append(ShareUnit("complex", name, self.cx.segments[name], (self.cx.plans[name],), 1,
                                       M - self.cx_combine_latency, io_in=IO_IN))
        choice = plan_sharing(units, share, max_stage_ns)
        self._units = units
        self._choice = dict(zip((u.name for u in units), choice))
        self.share_plan = {u.name: (o.start, o.latency) for u, o in zip(units, choice)}
        self.tiles_by_field = {}
        for u in units:
            self.tiles_by_field[u.field] = self.tiles_by_field.get(u.field, 0) + sum(p.tiles for p in u.plans)
        self.tiles_separate = sum(self.tiles_by_field.values())
        self.tiles = count_slots(units, choice) if share else self.tiles_separate
        self.tile_usage = {}            # absolute stage -> {field: tiles used there}
        for u, o in zip(units, choice):
            for stage, dims in o.profile.items():
                row = self.tile_usage.setdefault(self.add_latency + stage, {})
                row[u.field] = row.get(u.field, 0) + len(dims)
        self.tile_usage = dict(sorted(self.tile_usage.items()))

        self.reducers, self.moduli = {}, {}
        for f, (kind, moduli, width, kw) in self._mod_cfg.items():
            unit = reducer_plan(kind, moduli, width, self._choice[f].latency, target=self.target, **kw)
            if tuple(unit.counts) != self._choice[f].counts:
                raise AssertionError("reducer schedule differs from the sharing plan")
            self.reducers[f] = unit
            self.moduli[f] = tuple(unit.moduli)
        self.mod_width = max((u.width for u in self.reducers.values()), default=0)
        self.mod_moduli = tuple(dict.fromkeys(q for f in self.reducers for q in self.moduli[f]))
        self.width = max(self.mod_width, 2 * self.fmt.width if self.fmt else 0)
        self.n_sel = max((len(v) for v in self.moduli.values()), default=1)
        self.specs = {f: [FieldSpec(f, reducer=md) for md in u.models] for f, u in self.reducers.items()}
        if self.fmt:
            self.specs["complex"] = [FieldSpec("complex", fmt=self.fmt)]

    # -- golden model -------------------------------------------------------------------------------
    def model(self, op, field, a, b, w=0, c=0, sel=0) -> tuple[int, int]:
        """(x, y) port values the unit produces for these port values (``field`` a name or index):
        :func:`hhe_gen.models.butterfly.butterfly` with this unit's field (prime ``sel``),
        complex operands unpacked / results packed, y = 0 for single-output ops."""
        if isinstance(op, int):
            op = OPS[op]
        if isinstance(field, int):
            field = self.fields[field]
        if field == "complex":
            f = self.fmt
            x, y = butterfly_model(op, self.specs["complex"][0], unpack_complex(a, f), unpack_complex(b, f),
                                   unpack_complex(w, f), unpack_complex(c, f))
            return pack_complex(x, f), 0 if y is None else pack_complex(y, f)
        x, y = butterfly_model(op, self.specs[field][sel], a, b, w, c)
        return x, 0 if y is None else y


class Butterfly(ButterflyPlan, wiring.Component):
    """Multi-field butterfly: a raw clock-enabled unit (see :mod:`hhe_gen.cores.arith`).

    Parameters
    ----------
    fields : dict or None    {"zq": cfg, "zt": cfg, "complex": cfg}; or give them as keywords:
    zq, zt : dict or None    ``dict(moduli=..., kind="barrett", width=None, **reducer params)``:
                             ``kind`` one of ``modmul``'s kinds (default "barrett"; e.g.
                             ``dict(kind="special-barrett", moduli=qs, k=54, log_n=13)``), width
                             default k for special-barrett, else max(16, bit length of the moduli)
    complex : FixedPointFormat, dict(fmt=..., karatsuba=True, reduce=COMPLEX_REDUCE) or None
                             ``reduce``: how the complex products' rows are summed
                             (:class:`~.butterfly_complex.ComplexProducts`)
    target : str             "ecp5" | "xilinx" | "generic" (DSP tile size)
    latency : int or None    total latency = 2*add_latency + mul_latency (default: mul_latency =
                             the largest field minimum + 3)
    add_latency : int        0 or 1: registers of the pre and of the post add/sub stage each
    share : bool             share DSP tiles between fields (default True; False builds every
                             field's multipliers on their own tiles, for comparison)
    max_stage_ns : float or None   timing bound of the sharing plan (:func:`.butterfly_share.plan_sharing`):
                             None = as much sharing as the slowest unit's estimated stage delay
                             allows; a number = every unit stays within max(its own best
                             estimate, this) - fewer shared tiles, shorter paths

    Fields that are not given generate no hardware.  Field index (``field`` input) = position in
    ``fields`` (the enabled ones of ("zq", "zt", "complex"), in that order).

    Members
    -------
    op : In(3)            :data:`OP_CODES` (ct 0, gs 1, mul 2, add 3, sub 4, mac 5, gsh 6)
    field : In(range(n))  only with more than one field
    sel : In(range(n))    prime index of the Z_q / Z_t field (the same input for both); only when a
                          modular field has more than one modulus; must be < that field's count
    a, b, w, c : In(width)   operands (see the module docstring for the packing)
    en : In(1)            clock enable of every register
    x, y : Out(width)     results, ``latency`` enabled cycles after the operands
    fields, field_index, width, mod_width, moduli (field -> tuple), fmt, reducers (field -> the
    reducer's plan, :func:`~.factory.reducer_plan`, whose datapath is built in here), latency,
    min_latency, mul_latency, add_latency, ii = 1, tiles (physical DSP tiles), tiles_separate
    (without sharing), tiles_by_field, share_plan (unit -> (start, latency) in the multiplier
    section), tile_usage (stage -> {field: tiles used at that stage}; with sharing the tiles of a
    stage are the largest of its row), probes ({"x": (x, latency), "y": ...} after elaboration, for
    :func:`hhe_gen.sim.stream.run_unit`)
    """

    @quiet_on_error
    def __init__(self, fields=None, *, zq=None, zt=None, complex=None, target="ecp5", latency=None,
                 add_latency=1, share=True, max_stage_ns=None):
        ButterflyPlan.__init__(self, fields, zq=zq, zt=zt, complex=complex, target=target, latency=latency,
                               add_latency=add_latency, share=share, max_stage_ns=max_stage_ns)
        self.probes = {}

        ports = {"op": In(3)}
        if len(self.fields) > 1:
            ports["field"] = In(range(len(self.fields)))
        if self.n_sel > 1:
            ports["sel"] = In(range(self.n_sel))
        ports.update({n: In(self.width) for n in ("a", "b", "w", "c")})
        ports.update({"en": In(1), "x": Out(self.width), "y": Out(self.width)})
        wiring.Component.__init__(self, ports)

    # -- hardware -------------------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        st = Stager(m, self.en)
        P, M, Q = self.add_latency, self.mul_latency, self.add_latency
        L = self.latency
        op0 = Timed(self.op, 0)
        fld0 = Timed(self.field, 0) if len(self.fields) > 1 else None
        sel0 = Timed(self.sel, 0) if self.n_sel > 1 else None

        def op_is(stage, *names):
            v = st.at(op0, stage)
            return reduce(lambda u, w: u | w, [v == OP_CODES[n] for n in names])

        def field_is(stage, f):
            return Const(1, 1) if fld0 is None else st.at(fld0, stage) == self.field_index[f]

        bank = None
        if self.share and len(self.fields) > 1:
            bank = TileBank(m, lambda s: st.at(fld0, s), self.field_index)
        pipes = []
        outs = {}
        if self.reducers:
            outs["mod"] = self._modular(m, st, op_is, field_is, sel0, bank, pipes, P, M, Q)
        if self.cx:
            outs["complex"] = self._complex(m, st, op_is, bank, pipes, P, M, Q)
        mx, my = outs.get("mod", (None, None))
        if self.cx:
            cx_, cy_ = outs["complex"]
            if mx is None:
                mx, my = cx_, cy_
            else:
                is_cx = field_is(L, "complex")
                mx, my = Mux(is_cx, cx_, mx), Mux(is_cx, cy_, my)
        m.d.comb += [self.x.eq(mx), self.y.eq(my)]
        if bank is not None:
            slots = bank.emit()
            self.tile_slots = slots
            if len(slots) != self.tiles:
                raise AssertionError(f"tile bank has {len(slots)} tiles, the plan {self.tiles}")
        self.intercepted = sum(p.intercepted for p in pipes)
        st.flush()
        self.probes = {"x": (self.x, L), "y": (self.y, L)}
        return m

    def _modular(self, m, st, op_is, field_is, sel0, bank, pipes, P, M, Q):
        mw, qs = self.mod_width, self.mod_moduli
        a0, b0, w0, c0 = (Timed(getattr(self, n)[:mw], 0) for n in ("a", "b", "w", "c"))
        msel = None
        if len(qs) > 1:
            msel = Signal(range(len(qs)), name="mod_sel")
            exprs = {}
            for f in self.reducers:
                idx = [qs.index(q) for q in self.moduli[f]]
                if len(idx) == 1:
                    exprs[f] = Const(idx[0], range(len(qs)))
                elif idx == list(range(len(idx))) and len(idx) == self.n_sel:
                    exprs[f] = sel0.value
                else:
                    exprs[f] = Array(Const(i, range(len(qs))) for i in idx)[sel0.value]
            e = exprs[next(iter(exprs))]
            if len(exprs) == 2:
                e = Mux(field_is(0, "zt"), exprs["zt"], exprs["zq"])
            m.d.comb += msel.eq(e)
            msel = Timed(msel, 0)

        def addsub(cls, name, u, v, stage, latency):
            unit = cls(qs, mw, latency=latency)
            m.submodules[name] = unit
            m.d.comb += [unit.a.eq(u), unit.b.eq(v), unit.en.eq(self.en)]
            if msel is not None:
                m.d.comb += unit.sel.eq(st.at(msel, stage))
            return unit.p

        d = addsub(ModSub, "mod_pre_sub", a0.value, b0.value, 0, P)
        m1, m2 = Signal(mw, name="mod_m1"), Signal(mw, name="mod_m2")
        m.d.comb += [
            m1.eq(Mux(op_is(P, "ct"), st.at(b0, P), Mux(op_is(P, "gs", "gsh"), d, st.at(a0, P)))),
            m2.eq(Mux(op_is(P, "ct", "gs", "gsh"), st.at(w0, P), st.at(b0, P))),
        ]
        m1, m2 = Timed(m1, P), Timed(m2, P)
        ts = {}
        for f, unit in self.reducers.items():
            opt = self._choice[f]
            off = P + opt.start
            sel = st.at(sel0, off) if (sel0 is not None and len(unit.moduli) > 1) else None
            pipe = FieldPipe(m, self.en, unit.segments, unit.counts, sel, prefix=f"{f}_", bank=bank, field=f,
                             offset=off, plans=unit.mul_plans)
            pipes.append(pipe)
            r = unit._build(pipe, pipe.input(st.at(m1, off)), pipe.input(st.at(m2, off)))
            ts[f] = Timed(pipe.output(r), off + unit.latency)
        t = Signal(mw, name="mod_t")
        if len(ts) == 2:
            m.d.comb += t.eq(Mux(field_is(P + M, "zt"), st.at(ts["zt"], P + M), st.at(ts["zq"], P + M)))
        else:
            m.d.comb += t.eq(st.at(next(iter(ts.values())), P + M))
        t = Timed(t, P + M)
        s = P + M
        half_q = [(q + 1) // 2 for q in qs]

        def half_q_at(stage):       # (q + 1) / 2 of the selected prime
            if msel is None:
                return Const(half_q[0], mw)
            return Array(Const(h, mw) for h in half_q)[st.at(msel, stage)]
        # the post adder's operands u (mac: c, gsh: a1, else a) and, unless the product, v (gsh:
        # b1 + k, else b), formed a stage early and registered: gsh's x = (a + b) / 2 = a1 + (b1 + k)
        # with a = 2 a1 + a0, b = 2 b1 + b0 and k = 0 (both even), 1 (both odd) or (q + 1) / 2 (one
        # odd); b1 + k <= q, so the post adder's u + v < 2q holds.  The a, b, c delay lines stay the
        # ones the other fields' operands share.
        e = s - 1
        ae, be = st.at(a0, e), st.at(b0, e)
        gsh_e = op_is(e, "gsh")
        u_e, v_e = Signal(mw, name="mod_u"), Signal(mw, name="mod_vb")
        k = Mux(ae[0] ^ be[0], half_q_at(e), ae[0] & be[0])
        m.d.comb += [u_e.eq(Mux(op_is(e, "mac"), st.at(c0, e), Mux(gsh_e, ae >> 1, ae))),
                     v_e.eq(Mux(gsh_e, (be >> 1) + k, be))]
        u = st.at(Timed(u_e, e), s)
        v = Mux(op_is(s, "ct", "mac"), t.value, st.at(Timed(v_e, e), s))
        add = addsub(ModAdd, "mod_post_add", u, v, s, Q)
        sub = addsub(ModSub, "mod_post_sub", u, v, s, Q)
        L = s + Q
        # gsh's y = t / 2 = t1 + t0 (q + 1) / 2, beside the post adder
        t_y = Signal(mw, name="mod_ty")
        m.d.comb += t_y.eq(Mux(op_is(s, "gsh"), (t.value >> 1) + Mux(t.value[0], half_q_at(s), 0), t.value))
        tl = st.at(Timed(t_y, s), L)
        x = Mux(op_is(L, "mul"), tl, Mux(op_is(L, "sub"), sub, add))
        y = Mux(op_is(L, "ct"), sub, Mux(op_is(L, "gs", "gsh"), tl, 0))
        return x, y

    def _complex(self, m, st, op_is, bank, pipes, P, M, Q):
        fmt, cx = self.fmt, self.cx
        w, rounding = fmt.width, fmt.rounding
        cw = 2 * w
        a0, b0, w0, c0 = (Timed(getattr(self, n)[:cw], 0) for n in ("a", "b", "w", "c"))
        # pre: h = round_shift(a - b, 1), wrapped (the GS multiplier operand)
        segs = [Segment("h", add_delay(w + 1) + (add_delay(w) if rounding == "half-even" else 0.0))]
        pre = Pipe(m, self.en, segs, schedule(segs, P), prefix="cx_")

        def halve_diff(u, v):
            (ur, ui), (vr, vi) = parts(u, w), parts(v, w)
            return Cat(wrap_hw(round_shift_hw(ur - vr, 1, rounding), w),
                       wrap_hw(round_shift_hw(ui - vi, 1, rounding), w))
        h = pre.comb(halve_diff, pre.input(a0.value), pre.input(b0.value), shape=cw, name="h")
        h = pre.output(pre.boundary("h", h))
        m1, m2 = Signal(cw, name="cx_m1"), Signal(cw, name="cx_m2")
        m.d.comb += [
            m1.eq(Mux(op_is(P, "ct"), st.at(b0, P), Mux(op_is(P, "gs"), h, st.at(a0, P)))),
            m2.eq(Mux(op_is(P, "ct", "gs"), st.at(w0, P), st.at(b0, P))),
        ]
        m1, m2 = Timed(m1, P), Timed(m2, P)
        ks = {}
        lc = self.cx_combine_latency
        for name in ComplexProducts.NAMES:
            opt = self._choice[name]
            off = P + opt.start
            pipe = FieldPipe(m, self.en, cx.segments[name], list(opt.counts), None, prefix=f"cx_{name}_",
                             bank=bank, field="complex", offset=off, plans=(cx.plans[name],))
            pipes.append(pipe)
            r = cx.build_product(name, pipe, pipe.input(st.at(m1, off)), pipe.input(st.at(m2, off)))
            ks[name] = Timed(pipe.output(r), off + opt.latency)
        start = P + M - lc
        comb = Pipe(m, self.en, cx.combine_segments, schedule(cx.combine_segments, lc), prefix="cx_")
        p = comb.output(cx.build_combine(comb, *(comb.input(st.at(ks[n], start)) for n in ComplexProducts.NAMES)))
        p = Timed(p, P + M)
        # post: sum / difference, GS halving, output select
        s = P + M
        segs = [Segment("s", add_delay(w + 1)),
                Segment("r", (add_delay(w) if rounding == "half-even" else 0.0) + 2 * DELAY["mux"])]
        post = Pipe(m, self.en, segs, schedule(segs, Q), prefix="cx_")
        u, v, cin = Signal(cw, name="cx_u"), Signal(cw, name="cx_v"), Signal(name="cx_cin")
        m.d.comb += [u.eq(Mux(op_is(s, "mac"), st.at(c0, s), st.at(a0, s))),
                     v.eq(Mux(op_is(s, "ct", "mac"), p.value, st.at(b0, s))),
                     cin.eq(op_is(s, "gs") if rounding == "half-up" else 0)]
        u, v, cin, p = post.input(u), post.input(v), post.input(cin), post.input(p.value)
        ops = {}
        for n in ("ct", "gs", "mul", "sub"):
            flag = Signal(name=f"cx_is_{n}")
            m.d.comb += flag.eq(op_is(s, n))
            ops[n] = post.input(flag)
        sums, diffs = [], []
        for k in range(2):
            sums.append(post.comb(lambda uu, vv, ci, k=k: parts(uu, w)[k] + parts(vv, w)[k] + ci, u, v, cin,
                                  shape=w + 2, name=f"sum{k}"))
            diffs.append(post.comb(lambda uu, vv, k=k: parts(uu, w)[k] - parts(vv, w)[k], u, v, shape=w + 1,
                                   name=f"dif{k}"))
        vals = post.boundary("s", *sums, *diffs)
        sums, diffs = vals[:2], vals[2:]

        def select(is_ct, is_gs, is_mul, is_sub, pv, s0, s1, d0, d1):
            out = []
            for sm in (s0, s1):
                sm = sm.as_signed()
                half = round_shift_hw(sm, 1, "half-even") if rounding == "half-even" else sm >> 1
                out.append((wrap_hw(half, w), wrap_hw(sm, w)))
            halves, plain = Cat(out[0][0], out[1][0]), Cat(out[0][1], out[1][1])
            diff = Cat(wrap_hw(d0, w), wrap_hw(d1, w))
            x = Mux(is_gs, halves, Mux(is_sub, diff, Mux(is_mul, pv, plain)))
            y = Mux(is_ct, diff, Mux(is_gs, pv, 0))
            return Cat(x, y)
        xy = post.comb(select, ops["ct"], ops["gs"], ops["mul"], ops["sub"], p, *sums, *diffs, shape=2 * cw, name="xy")
        xy = post.output(post.boundary("r", xy))
        return xy[:cw], xy[cw:]


class ButterflyStream(wiring.Component):
    """:class:`Butterfly` behind ``amaranth.lib.stream`` interfaces (as
    :class:`~hhe_gen.cores.arith.pipeline.StreamPipeline` does for one-output units).

    Members
    -------
    i_stream : In(stream.Signature(StructLayout({op, [field], [sel], a, b, w, c})))
    o_stream : Out(stream.Signature(StructLayout({"x": width, "y": width})))
    unit, latency (= unit.latency, first-in to first-out at full rate), ii = 1

    Back-pressure: a valid bit travels beside the data through ``latency`` registers; the unit
    advances (``en = ~o_stream.valid | o_stream.ready``) unless its output is not taken;
    ``i_stream.ready = en``.
    """

    @quiet_on_error
    def __init__(self, unit):
        if not isinstance(unit, Butterfly):
            raise ParameterError("unit", type(unit).__name__, "a Butterfly")
        self.unit = unit
        members = unit.signature.members
        self.inputs = [n for n in ("op", "field", "sel", "a", "b", "w", "c") if n in members]
        self.latency, self.ii = unit.latency, 1
        super().__init__({
            "i_stream": In(stream.Signature(data.StructLayout({n: members[n].shape for n in self.inputs}))),
            "o_stream": Out(stream.Signature(data.StructLayout({"x": unit.width, "y": unit.width}))),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self.unit
        for n in self.inputs:
            m.d.comb += getattr(unit, n).eq(self.i_stream.payload[n])
        m.d.comb += [self.o_stream.payload.x.eq(unit.x), self.o_stream.payload.y.eq(unit.y)]
        en = Signal()                   # latency >= 1 always (every field multiplier has a register)
        valid = Signal(self.latency)
        m.d.comb += [en.eq(~self.o_stream.valid | self.o_stream.ready), unit.en.eq(en),
                     self.i_stream.ready.eq(en), self.o_stream.valid.eq(valid[-1])]
        with m.If(en):
            m.d.sync += valid.eq(Cat(self.i_stream.valid, valid[:-1]) if self.latency > 1 else self.i_stream.valid)
        return m

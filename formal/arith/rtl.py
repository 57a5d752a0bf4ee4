"""SymbiYosys harnesses of the arithmetic RTL (``hhe_gen.cores.arith``).

What is proven, at which size (every harness below says it again):

* **Full functional equivalence of each reducer at small widths** (:func:`equivalence`): the
  real generator (``BarrettMul``, ``WordMontgomeryMul``, ``SpecialBarrettMul``,
  ``NttMontgomeryMul``) instantiated with small primes of its form, for every operand pair
  a, b < q and every prime of a two-prime table (``sel``), against an independent specification:
  ``a*b mod q`` or ``a*b*R^-1 mod q`` expressed by a *certificate* - free values k, r with
  ``Assume(a*b == k*q + r)``, ``r < q`` (Montgomery: a quotient certificate M < R, c in {0,1} with
  ``a*b + M*q == (r + c*q)*R``, ``r < q``), which pins r to the unique residue without a divider
  in the solver.  Harness:
  :func:`~hhe_gen.formal.common.contract.pipeline_contract`, operands entering in the first
  cycle, no stalls, BMC of depth latency + 1 (the one checked step).  Bit-level proofs of
  multipliers grow steeply with the width (measured: Barrett 8 bits ~15 s, 10 bits ~45 s,
  12 bits ~75 s), so the sizes are the largest that finish in about a minute; above them the
  algorithm is proven by z3 (``formal/arith/bounds.py``) and the same generator code runs at
  the real widths.
* **The pipeline contract with stalls** (:func:`contract`): the same units, the operands entering
  in any cycle, ``en`` and every other input free in every cycle, BMC of depth 2*latency + 3.
* **ModAdd / ModSub at 64 bits**: full equivalence with (a + b) mod q / (a - b) mod q (as a
  certificate r < q, c in {0, 1} with a + b = r + c*q / a + c*q = b + r) for two 64-bit primes, by k-induction without stalls (every cycle, from any reachable state) and by
  BMC with stalls.
* **Stream handshake of StreamPipeline** (:func:`stream_handshake`): AXI-like rules assumed on
  ``i_stream`` and asserted on ``o_stream``; an in-flight counter asserted equal to the number of
  set bits of the wrapper's own ``valid`` shift register, so k-induction closes; a scoreboard
  that follows one item through a 64-bit ModAdd (BMC); covers (a result comes out, back-pressure,
  full pipeline, transfer after back-pressure).
* **The multiplier generator** (:func:`multiplier_structure`): ``Multiplier`` built with DSP tiles
  scaled down to 3x3 (4x3 for the Xilinx shape) so that operand splitting, Karatsuba, low/high
  parts, signed operands, LUT rows and the compressor trees are all exercised, equal to a*b (or
  its part) for every operand pair at 6..8 bits (BMC).
* **Pieces of the full-width reducers** (:func:`piece`, table ``PIECES``), at 36 / 54 / 64-bit
  primes of the real forms (N = 2^13), on the real full-width units, each relation between the
  unit's own internal values (probes) for every operand pair: the constant-time corrections of
  both Barrett kinds (r0 < 3q, proven by z3, gives r = r0 mod q) at 36/54/64 bits, ABC-FHE's
  shift-add QInv (m*q = t_lo mod R) and its carry-save m*q network (d = x - m*q exactly), both
  signs, at 36 bits (at 54 bits the QInv relation ran over 1200 s).  The
  pieces that go through the wide constant products (the DNA-HHE quotient and remainder) did
  not finish in 400 s at 36 bits and are covered by the z3 proofs of the algorithm plus
  simulation.
* **A miter between two reducers** (:func:`miter_barrett_montgomery`): Barrett(a, b) equals word
  Montgomery(a, b*R mod q) at 8 bits, both primes; no specification in between.
* **Mutants** (``expect="FAIL"``): units built for a different modulus than the specification's.
"""

from __future__ import annotations

import contextlib
import functools

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assume, Const, Mux, Signal, Value

from hhe_gen.params import dna_hhe_primes, is_prime
from hhe_gen.flow.proof import ProofResult, proof

from ..common.contract import induction_depth, pipeline_contract
from ..common.sby import run_harness

GROUP = "arith"
KINDS = ("barrett", "montgomery", "special-barrett", "ntt-montgomery")


def _cores():
    """The arithmetic cores, or None while they do not exist (the proofs then SKIP)."""
    try:
        from hhe_gen.cores import arith
    except ImportError:
        return None
    return arith


# -- small primes of each form -----------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def small_primes(kind: str, bits: int, count: int = 2) -> tuple:
    """``count`` primes of exactly ``bits`` bits of the form ``kind`` needs, largest first.

    barrett: any primes; montgomery: q = 1 (mod 16) (word_bits = 4); special-barrett: DNA-HHE
    primes at k = bits (>= 16) for N = 16; ntt-montgomery: q = 2^(bits-1) + kk*32 + 1, kk a
    signed sum of at most three powers of two (N = 16).
    """
    from hhe_gen.models.modarith import signed_digits
    if kind == "special-barrett":
        return tuple(p.q for p in dna_hhe_primes(bits, 16, 10, count=count))
    out = []
    if kind == "ntt-montgomery":
        e = bits - 1
        cands = sorted(((1 << e) + kk * 32 + 1 for kk in range(1, 1 << (e - 5))
                        if len(signed_digits(kk)) <= 3), reverse=True)
    else:
        step = 16 if kind == "montgomery" else 2
        top = (1 << bits) - 1
        first = top - (top - 1) % step if step == 16 else top
        cands = range(first, 1 << (bits - 1), -step)
    for q in cands:
        if q.bit_length() == bits and is_prime(q):
            out.append(q)
            if len(out) == count:
                break
    return tuple(out)


def make_unit(kind: str, bits: int, latency=None, *, count: int = 2, moduli=None, **kw):
    """A reducer of ``kind`` for small primes of ``bits`` bits (port width max(16, bits)).

    ``moduli`` overrides the primes (mutants: a unit built for other primes than the spec's).
    """
    arith = _cores()
    qs = small_primes(kind, bits, count) if moduli is None else tuple(moduli)
    width = max(16, bits)
    if kind == "barrett":
        return arith.BarrettMul(qs, width, latency, **kw)
    if kind == "montgomery":
        return arith.WordMontgomeryMul(qs, width, 4, latency, **kw)
    if kind == "special-barrett":
        return arith.SpecialBarrettMul(qs, bits, 4, latency, **kw)
    if kind == "ntt-montgomery":
        return arith.NttMontgomeryMul(qs, 4, width, latency, r_bits=kw.pop("r_bits", bits), **kw)
    raise ValueError(kind)


# -- specifications ----------------------------------------------------------------------------------
def _table(values, sel, width):
    if len(values) == 1:
        return Const(values[0], width)
    return Array(Const(v, width) for v in values)[sel]


def operands_below_q(moduli, width):
    """Assumption on the tracked operands: sel < len(moduli), a < q[sel], b < q[sel]."""
    def assume(ops):
        sel = ops.get("sel", 0)
        q = _table(moduli, sel, width)
        cond = (ops["a"] < q) & (ops["b"] < q)
        return cond & (sel < len(moduli)) if "sel" in ops else cond
    return assume


def modmul_spec(moduli, *, radix: int = 1, bits: int | None = None, width: int):
    """The independent specification of a modular multiplier, as a certificate.

    Barrett (``radix`` 1): AnyConst k, r with ``a*b == k*q + r`` and ``r < q``: r = a*b mod q.
    Montgomery (radix R = 2^s): AnyConst M < R, c in {0, 1}, r < q with
    ``a*b + M*q == (r + c*q)*R``: then r*R = a*b (mod q), so r = a*b*R^-1 mod q (M is the
    Montgomery quotient -a*b*q^-1 mod R and c says whether (a*b + M*q)/R was >= q; the unit may
    compute M differently - word by word, or as +q^-1 - the certificate only fixes r).  Per
    prime an ``Assume`` guarded by ``sel``; r is the expected output.
    """
    bits = max(q.bit_length() for q in moduli) if bits is None else bits

    def spec(m, ops):
        a, b = ops["a"][:bits], ops["b"][:bits]
        x = a * b
        sel = ops.get("sel", 0)
        r = Signal(width, name="cert_r")
        m.d.comb += r.eq(AnyConst(width))
        if radix == 1:
            k = Signal(bits + 1, name="cert_k")
            m.d.comb += k.eq(AnyConst(bits + 1))
        else:
            k = Signal(radix.bit_length() - 1, name="cert_m")
            c = Signal(name="cert_c")
            m.d.comb += [k.eq(AnyConst(len(k))), c.eq(AnyConst(1))]
        for i, q in enumerate(moduli):
            if radix == 1:
                cond = (x == k * q + r) & (r < q)
            else:
                cond = (x + k * q == (r + Mux(c, q, 0)) * radix) & (r < q)
            m.d.comb += Assume(cond if len(moduli) == 1 else (sel != i) | cond,
                               f"certificate for prime {i}")
        return r
    return spec


def _unit_spec(dut, moduli=None):
    moduli = dut.moduli if moduli is None else moduli
    radix = dut.models[0].montgomery_radix
    return modmul_spec(moduli, radix=radix, width=dut.width)


def _result(run, note="") -> ProofResult:
    detail = note if run.passed else run.summary()
    return ProofResult(run.status, depth=run.depth, detail=detail, workdir=str(run.workdir))


def _skip_without_cores():
    if _cores() is None:
        return ProofResult("SKIP", detail="hhe_gen.cores.arith is not available")
    return None


# -- proofs of the reducers --------------------------------------------------------------------------
def equivalence(ctx, kind: str, bits: int, extra_latency: int = 0, moduli=None) -> ProofResult:
    """Full functional equivalence of one reducer (see the module docstring).

    ``extra_latency`` registers above the unit's minimum; ``moduli`` builds the unit for other
    primes than the specification's (a mutant).
    """
    if (skip := _skip_without_cores()) is not None:
        return skip
    probe = make_unit(kind, bits)
    probe._MustUse__silence = True          # built only to read its minimum latency
    dut = make_unit(kind, bits, probe.min_latency + extra_latency, moduli=moduli)
    spec_moduli = small_primes(kind, bits)
    harness = pipeline_contract(dut, _unit_spec(dut, spec_moduli),
                                operand_assumption=operands_below_q(spec_moduli, dut.width),
                                stalls=False, issue="first", covers=False)
    run = run_harness(harness, ctx.workdir, f"{kind}_{bits}", mode="bmc", depth=dut.latency + 1,
                      timeout=ctx.timeout)
    return _result(run, f"latency {dut.latency}, primes {list(spec_moduli)}")


def contract(ctx, kind: str, bits: int) -> ProofResult:
    """The contract with stalls and arbitrary other inputs (BMC, depth 2*latency + 3)."""
    if (skip := _skip_without_cores()) is not None:
        return skip
    dut = make_unit(kind, bits)
    harness = pipeline_contract(dut, _unit_spec(dut),
                                operand_assumption=operands_below_q(dut.moduli, dut.width),
                                stalls=True)
    run = run_harness(harness, ctx.workdir, f"{kind}_{bits}_stalls", mode="bmc",
                      depth=2 * dut.latency + 3, timeout=ctx.timeout)
    return _result(run, f"latency {dut.latency}")


# The sizes: the largest that finish in about a minute on a 2-core machine (see the table in
# the report / README of formal/arith); special-barrett cannot go below k = 16 (its form).
# Bit-level sizes (measured on the 2-core machine: Barrett 8 bits ~15 s, 10 bits ~45 s; word
# Montgomery 8 bits (two 4-bit words) 54 s, 12 bits > 10 min; NTT-friendly Montgomery 10 bits 22 s).
# The special-prime Barrett exists only for k >= 16 (its primes' form): at full widths it is
# covered by the z3 proofs, the corrections piece and simulation.
EQUIV_BITS = {"barrett": (10, (0, 1, 3)), "montgomery": (8, (0, 2)), "ntt-montgomery": (10, (0, 2))}
QUICK_BITS = {"barrett": 8}


def _register_reducers():
    variants = [(kind, bits, extra, False) for kind, (bits, extras) in EQUIV_BITS.items() for extra in extras]
    variants += [(kind, bits, 0, True) for kind, bits in QUICK_BITS.items()]
    for kind, bits, extra, quick in variants:
        proof(GROUP, f"rtl-{kind}-{bits}-equiv-lat+{extra}", engine="sby-bmc", quick=quick,
              kind=kind, bits=bits, extra_latency=extra,
              what=f"{kind}: p == a*b{'*R^-1' if 'montgomery' in kind else ''} mod q for all "
                   f"a, b < q and both primes (certificate spec), latency min+{extra}",
              size=f"{bits}-bit primes, two-prime table, port width {max(16, bits)}")(
            _equivalence_proof)


def _equivalence_proof(ctx, kind, bits, extra_latency):
    return equivalence(ctx, kind, bits, extra_latency)


_register_reducers()


# -- modular add / sub at 64 bits ---------------------------------------------------------------------
def _primes64():
    from hhe_gen.params import ntt_primes
    return tuple(ntt_primes(1 << 16, 64, 2))


def _addsub_spec(op, moduli, width):
    """(a + b) mod q / (a - b) mod q as a certificate: AnyConst r < q and c in {0, 1} with
    a + b == r + c*q (add) or a + c*q == b + r (sub), for the selected prime."""
    def spec(m, ops):
        a, b = ops["a"], ops["b"]
        sel = ops.get("sel", 0)
        r = Signal(width, name="cert_r")
        c = Signal(name="cert_c")
        m.d.comb += [r.eq(AnyConst(width)), c.eq(AnyConst(1))]
        for i, q in enumerate(moduli):
            cq = Mux(c, Const(q, width), 0)
            cond = ((a + b == r + cq) if op == "add" else (a + cq == b + r)) & (r < q)
            m.d.comb += Assume(cond if len(moduli) == 1 else (sel != i) | cond,
                               f"certificate for prime {i}")
        return r
    return spec


def _addsub_expr(op, moduli, width):
    """(a + b) % q / (a + (q - b)) % q as a plain expression (the stream scoreboard's spec)."""
    def spec(ops):
        a, b = ops["a"], ops["b"]
        if op == "add":
            vals = [((a + b) % q)[:width] for q in moduli]
        else:
            vals = [((a + (Const(q, width) - b)[:width]) % q)[:width] for q in moduli]
        return vals[0] if len(moduli) == 1 else Array(vals)[ops["sel"]]
    return spec


def addsub(ctx, op: str, latency: int, mode: str, moduli=None) -> ProofResult:
    """ModAdd/ModSub at 64 bits against (a + b) mod q / (a - b) mod q (certificate spec).

    mode "prove": k-induction, no stalls, depth latency + 2; "bmc": stalls and free inputs,
    depth 6; "cover": the check is reached (and while stalled).  ``moduli`` builds the unit for
    other primes than the specification's (a mutant).
    """
    if (skip := _skip_without_cores()) is not None:
        return skip
    arith = _cores()
    spec_moduli = _primes64()
    cls = arith.ModAdd if op == "add" else arith.ModSub
    dut = cls(spec_moduli if moduli is None else moduli, 64, latency=latency)
    harness = pipeline_contract(dut, _addsub_spec(op, spec_moduli, 64),
                                operand_assumption=operands_below_q(spec_moduli, 64),
                                stalls=mode != "prove")
    depth = {"prove": induction_depth(latency), "bmc": 6, "cover": 6}[mode]
    run = run_harness(harness, ctx.workdir, f"mod{op}", mode=mode, depth=depth, timeout=ctx.timeout)
    return _result(run, f"latency {latency}")


for _op in ("add", "sub"):
    for _lat in (0, 1):
        for _mode, _engine in (("prove", "sby-prove"), ("bmc", "sby-bmc")):
            proof(GROUP, f"rtl-mod{_op}-64-lat{_lat}-{_mode}", engine=_engine,
                  quick=_lat == 1 and (_mode == "prove" or _op == "add"), op=_op, latency=_lat,
                  mode=_mode,
                  what=f"Mod{_op.capitalize()}: p == (a {'+' if _op == 'add' else '-'} b) mod q "
                       f"for all a, b < q, both primes, "
                       + ("every cycle from any reachable state (k-induction, no stalls)"
                          if _mode == "prove" else "any stalls and other inputs (BMC)"),
                  size="64-bit ports, two 64-bit primes")(addsub)
proof(GROUP, "rtl-modadd-64-cover", engine="sby-cover", op="add", latency=1, mode="cover",
      what="ModAdd: the checked result is reached, also during a stall",
      size="64 bits, latency 1")(addsub)
proof(GROUP, "mutant-rtl-modadd-64-wrong-prime", engine="sby-bmc", expect="FAIL", op="add",
      latency=1, mode="bmc", moduli=(_primes64()[0], _primes64()[1] - 2 * (1 << 17)),
      what="MUTANT: ModAdd built for another second prime than the specification's",
      size="64 bits, latency 1")(addsub)


# -- stream handshake of StreamPipeline ---------------------------------------------------------------
def _stream_unit(unit: str, latency: int):
    arith = _cores()
    if unit == "modadd":
        return arith.ModAdd(_primes64(), 64, latency=latency)
    if unit == "special-barrett-54":
        from hhe_gen.params import dna_hhe_primes
        qs = [p.q for p in dna_hhe_primes(54, 1 << 13, 10, count=2)]
        return arith.SpecialBarrettMul(qs, 54, 13, latency)
    raise ValueError(unit)


def stream_handshake(ctx, unit: str, latency: int, mode: str, scoreboard: bool = False,
                     tie: bool = True) -> ProofResult:
    """StreamPipeline(unit) under the stream harness of ``formal/common/stream.py``.

    mode "prove": k-induction of the handshake rules and the in-flight counter (tied to the
    popcount of the wrapper's ``valid`` shift register unless ``tie`` is False - then induction
    is expected not to close); "bmc" with ``scoreboard``: one item is followed and must come out
    as (a + b) mod q (ModAdd only); "cover": a result comes out, back-pressure, full pipeline,
    transfer after back-pressure.
    """
    if (skip := _skip_without_cores()) is not None:
        return skip
    from ..common.sby import find_signal
    from ..common.stream import popcount, stream_harness
    arith = _cores()
    inner = _stream_unit(unit, latency)
    dut = arith.StreamPipeline(inner)
    occupancy = None
    if tie and latency > 0:
        occupancy = lambda frag: popcount(find_signal(frag, "valid"))   # noqa: E731
    spec = None
    moduli = inner.moduli
    if scoreboard:
        add = _addsub_expr("add", moduli, 64)
        spec = lambda p: add({"a": p.a, "b": p.b, "sel": p.sel})            # noqa: E731
    assumption = lambda p: operands_below_q(moduli, inner.width)(            # noqa: E731
        {"a": p.a, "b": p.b, "sel": p.sel})
    harness = stream_harness(dut, capacity=latency, occupancy=occupancy, spec=spec,
                             passthrough=latency == 0, input_assumption=assumption)
    depth = {"prove": latency + 2, "bmc": 2 * latency + 6, "cover": 2 * latency + 6}[mode]
    run = run_harness(harness, ctx.workdir, f"stream_{unit}", mode=mode, depth=depth,
                      timeout=ctx.timeout)
    return _result(run, f"{unit}, latency {latency}")


for _unit, _lat, _quick in (("modadd", 0, True), ("modadd", 1, True),
                            ("special-barrett-54", 3, False), ("special-barrett-54", 6, False)):
    proof(GROUP, f"rtl-stream-{_unit}-lat{_lat}-prove", engine="sby-prove", quick=_quick,
          unit=_unit, latency=_lat, mode="prove",
          what="StreamPipeline: valid held and payload stable until taken (asserted on o_stream, "
               "assumed on i_stream), in-flight count <= latency, = popcount(valid), 0 => no "
               "output valid (k-induction)",
          size=f"{_unit} ({'64' if _unit == 'modadd' else '54'} bits), latency {_lat}")(
        stream_handshake)
proof(GROUP, "rtl-stream-modadd-scoreboard", engine="sby-bmc", quick=False, unit="modadd",
      latency=1, mode="bmc", scoreboard=True,
      what="StreamPipeline(ModAdd): a followed item leaves in order as (a + b) mod q, with "
           "random valid gaps and back-pressure (BMC)",
      size="64 bits, latency 1, depth 8")(stream_handshake)
proof(GROUP, "rtl-stream-modadd-cover", engine="sby-cover", unit="modadd", latency=1,
      mode="cover", scoreboard=True,
      what="StreamPipeline covers: a result comes out, back-pressure, full, transfer after "
           "back-pressure, the followed item arrives", size="64 bits, latency 1")(stream_handshake)
proof(GROUP, "control-rtl-stream-modadd-untied", engine="sby-prove", expect="UNKNOWN", quick=False,
      unit="modadd", latency=1, mode="prove", tie=False,
      what="CONTROL: the same handshake proof without the counter tied to the pipeline state "
           "(k-induction must not close: UNKNOWN)", size="64 bits, latency 1")(
    stream_handshake)


# -- the multiplier generator -------------------------------------------------------------------------
@contextlib.contextmanager
def reduced_tiles(target: str, dims):
    """Build ``Multiplier``/``MulPlan`` objects for ``target`` with DSP tiles of ``dims`` bits
    instead of the real 18x18 / 24x17, so that operand splitting, Karatsuba, LUT rows, part
    truncation and the adder tree are all exercised at widths a bit-level proof can handle.
    The plan is computed in the constructor; the patch is undone on exit."""
    from hhe_gen.cores.arith import multiplier
    saved = multiplier.TILE_DIMS[target]
    multiplier.TILE_DIMS[target] = dims
    try:
        yield
    finally:
        multiplier.TILE_DIMS[target] = saved


def _product_spec(a_width, b_width, part, part_bits, is_signed):
    def spec(m, ops):
        a, b = ops["a"], ops["b"]
        prod = (a.as_signed() * b.as_signed()) if is_signed else (a * b)
        full = a_width + b_width
        if part == "low":
            return prod[:part_bits]
        if part == "high":
            return prod[full - part_bits:full]
        return prod[:full]
    return spec


def multiplier_structure(ctx, a_width: int, b_width: int, *, target: str = "ecp5", tile=(3, 3),
                         karatsuba: bool = False, part: str = "full", part_bits=None,
                         signed: bool = False, lut_bits: int = 1, extra_latency: int = 0,
                         mutate_tile=None) -> ProofResult:
    """The Multiplier generator equals a*b (or its part) for all operands (BMC, one checked step).

    ``mutate_tile`` builds the unit with other tile dimensions than ``tile`` - harmless (it must
    still PASS: the result does not depend on the tiling) - kept for experiments; mutants of the
    arithmetic are built by the caller.
    """
    if (skip := _skip_without_cores()) is not None:
        return skip
    arith = _cores()
    with reduced_tiles(target, tile if mutate_tile is None else mutate_tile):
        probe = arith.Multiplier(a_width, b_width, target=target, karatsuba=karatsuba, part=part,
                                 part_bits=part_bits, signed=signed, lut_bits=lut_bits)
        probe._MustUse__silence = True
        dut = arith.Multiplier(a_width, b_width, target=target, karatsuba=karatsuba, part=part,
                               part_bits=part_bits, signed=signed, lut_bits=lut_bits,
                               latency=probe.min_latency + extra_latency)
    harness = pipeline_contract(dut, _product_spec(a_width, b_width, part, part_bits, signed),
                                stalls=False, issue="first", covers=False)
    run = run_harness(harness, ctx.workdir, "mul", mode="bmc", depth=dut.latency + 1,
                      timeout=ctx.timeout)
    return _result(run, f"{dut.tiles} tiles, {dut.lut_rows} LUT rows, latency {dut.latency}")


# Bit-level multiplier equivalence is the hardest kind of SAT problem: measured (2-core machine
# under load) 6x6 with 3x3 tiles 3 s, 8x8 45-60 s, 12x12 > 15 min.  The real tiles are 18x18 /
# 24x17, so the generator is proven with tiles scaled down to 3x3 (4x3 for the asymmetric
# Xilinx shape): 2-3 limbs per operand, the same planning and adder-tree code.
_MUL_VARIANTS = [
    # name, a_width, b_width, kwargs, quick
    ("school-6", 6, 6, dict(tile=(3, 3)), True),
    ("karatsuba-6", 6, 6, dict(tile=(3, 3), karatsuba=True), True),
    ("school-8", 8, 8, dict(tile=(3, 3)), False),
    ("karatsuba-8", 8, 8, dict(tile=(3, 3), karatsuba=True), False),
    ("low-8", 8, 8, dict(tile=(3, 3), part="low", part_bits=9), False),
    ("high-8", 8, 8, dict(tile=(3, 3), part="high", part_bits=9), False),
    ("karatsuba-high-8", 8, 8, dict(tile=(3, 3), karatsuba=True, part="high", part_bits=9), False),
    ("signed-7", 7, 7, dict(tile=(3, 3), signed=True), False),
    ("xilinx-asym-8x7", 8, 7, dict(target="xilinx", tile=(4, 3)), False),
    ("school-8-lat+2", 8, 8, dict(tile=(3, 3), extra_latency=2), False),
    ("lut-rows-8", 8, 8, dict(tile=(3, 3), lut_bits=2), False),
]
for _name, _aw, _bw, _kw, _quick in _MUL_VARIANTS:
    _tile = _kw["tile"]
    proof(GROUP, f"rtl-multiplier-{_name}", engine="sby-bmc", quick=_quick, a_width=_aw,
          b_width=_bw, **_kw,
          what=f"Multiplier generator ({_name}): p == "
               + {"full": "a*b", "low": "low bits of a*b", "high": "high bits of a*b"}[
                   _kw.get("part", "full")] + " for all operands; splitting, "
               + ("Karatsuba, " if _kw.get("karatsuba") else "") + "LUT rows, adder tree",
          size=f"{_aw}x{_bw} bits with {_tile[0]}x{_tile[1]} tiles (the real 18x18 / 24x17 "
               f"scaled down), lut_bits {_kw.get('lut_bits', 1)}")(multiplier_structure)


# -- pieces of the full-width reducers that need no full multiplier ------------------------------------
def probe_relation(ctx, dut, names, relation, *, assumption=None, label: str = "piece",
                   operand_moduli=None) -> ProofResult:
    """A relation between internal values (probes) of a full-width unit, for every input.

    The unit gets its operands (a, b < q, any prime) in the first cycle and ``en`` = 1; each
    probe ``name`` (signal, stage) is captured when the operands' wave passes its stage, and at
    the latest of those stages ``relation(values, sel)`` is asserted (``assumption(values, sel)``
    assumed - a bound proven elsewhere, e.g. r0 < 3q by z3).  BMC of depth max stage + 1.  The
    relation is independent of the unit's product, so the solver need not reason about the wide
    multiplier in front of it.
    """
    from amaranth.asserts import AnySeq
    from amaranth.hdl import Assert, Fragment

    from ..common.sby import formal_module
    frag = Fragment.get(dut, None)
    probes = {n: dut.probes[n] for n in names}
    last = max(stage for _, stage in probes.values())
    m, _ = formal_module()
    m.submodules.dut = frag
    first = Signal(init=1, name="h_first")
    t = Signal(range(last + 2), name="h_t")
    m.d.sync += first.eq(0)
    with m.If(t <= last):
        m.d.sync += t.eq(t + 1)
    ops = {}
    for n in ("a", "b", "sel"):
        if hasattr(dut, n):
            port = getattr(dut, n)
            ops[n] = Signal(port.shape(), name=f"op_{n}")
            m.d.comb += [ops[n].eq(AnyConst(port.shape())),
                         port.eq(Mux(first, ops[n], AnySeq(port.shape())))]
    moduli = dut.moduli if operand_moduli is None else operand_moduli
    m.d.comb += [dut.en.eq(1), Assume(operands_below_q(moduli, dut.width)(ops))]
    values = {}
    for n, (sig, stage) in probes.items():
        reg = Signal(sig.shape(), name=f"h_{n}_reg")
        with m.If(t == stage):
            m.d.sync += reg.eq(sig)
        now = Signal(sig.shape(), name=f"h_{n}")
        m.d.comb += now.eq(Mux(t == stage, sig, reg))
        values[n] = now
    sel = ops.get("sel", Const(0, 1))
    with m.If(t == last):
        if assumption is not None:
            m.d.comb += Assume(assumption(values, sel), "bound proven elsewhere")
        m.d.comb += Assert(relation(values, sel), f"{label} relation")
    run = run_harness(m, ctx.workdir, label, mode="bmc", depth=last + 1, timeout=ctx.timeout)
    stages = ", ".join(f"{n}@{s}" for n, (_, s) in probes.items())
    return _result(run, f"probes {stages}, latency {dut.latency}")


def _per_prime(moduli, sel, fn):
    """fn(q) for the selected prime (an Array over the per-prime expressions)."""
    vals = [fn(q) for q in moduli]
    return vals[0] if len(vals) == 1 else Array(vals)[sel]


def _wide_unit(kind: str, k: int, negated: bool = False):
    arith = _cores()
    from hhe_gen.formal.arith.primes import abc_set, dna_set
    if kind == "special-barrett":
        qs = [p.q for p in dna_set(k, quick=True) if p.log_n == 13][:2]
        return arith.SpecialBarrettMul(qs, k, 13)
    if kind == "ntt-montgomery":
        qs = [p.q for p in abc_set(k, quick=True) if p.log_n == 13][:2]
        return arith.NttMontgomeryMul(qs, 13, k, negated=negated)
    if kind == "barrett":
        from hhe_gen.formal.arith.primes import ntt_set
        return arith.BarrettMul(ntt_set(k, quick=True)[:2], k)
    raise ValueError(kind)


def piece(ctx, kind: str, k: int, which: str, negated: bool = False, mutate=None) -> ProofResult:
    """One full-width piece (see the table ``PIECES``); ``mutate`` = "q" checks against the
    wrong primes (a mutant)."""
    if (skip := _skip_without_cores()) is not None:
        return skip
    dut = _wide_unit(kind, k, negated)
    qs = dut.moduli
    spec_qs = qs if mutate is None else tuple(q + 2 * (2 << 13) for q in qs)

    if which == "corrections":          # any Barrett: r0 in [0, 3q) (z3) -> r = r0 mod q
        names = ("r0", "r")

        def rel(v, s):
            return _per_prime(spec_qs, s, lambda q: (v["r"] < q) & (
                (v["r0"] == v["r"]) | (v["r0"] == v["r"] + q) | (v["r0"] == v["r"] + 2 * q)))

        def assume(v, s):
            return v["r0"] < _per_prime(spec_qs, s, lambda q: Const(3 * q, k + 2))
    elif which == "qinv":               # ABC-FHE: m = t_lo * q^-1 (or -q^-1) mod R
        r = dut.r_bits
        names = ("t_lo", "m")
        if negated:
            rel = lambda v, s: _per_prime(spec_qs, s, lambda q: (v["m"] * q + v["t_lo"])[:r] == 0)  # noqa: E731
        else:
            rel = lambda v, s: _per_prime(spec_qs, s, lambda q: (v["m"] * q)[:r] == v["t_lo"])     # noqa: E731
        assume = None
    elif which == "difference":         # ABC-FHE: d = x - m*q (negated: x + m*q), exact
        names = ("x", "m", "d")
        sg = 1 if negated else -1
        rel = lambda v, s: v["d"].as_unsigned() == _per_prime(                                     # noqa: E731
            spec_qs, s, lambda q: (v["x"] + sg * v["m"] * q)[:len(v["d"])])
        assume = None
    else:
        raise ValueError(which)
    return probe_relation(ctx, dut, names, rel, assumption=assume, label=f"{kind}_{k}_{which}")


PIECES = [
    # kind, which, what
    ("special-barrett", "corrections",
     "the two constant-time corrections: r0 in [0, 3q) (z3) gives r = r0 mod q"),
    ("barrett", "corrections",
     "generic Barrett corrections: r0 in [0, 3q) (z3) gives r = r0 mod q"),
    ("ntt-montgomery", "qinv",
     "ABC-FHE shift-add QInv: m*q = t_lo mod R (m = t_lo*q^-1 mod R) for every t_lo"),
    ("ntt-montgomery", "difference",
     "ABC-FHE shift-add q network in carry-save form: d == x - m*q (negated: x + m*q), exact"),
]


for _kind, _which, _what in PIECES:
    for _k, _quick in ((36, True), (54, False), (64, False)):
        if _kind == "ntt-montgomery" and _k > 36:      # 54 bits: QInv ran > 1200 s under load
            continue
        _neg = (False, True) if _kind == "ntt-montgomery" else (False,)
        for _n in _neg:
            _suffix = "-negated" if _n else ""
            proof(GROUP, f"rtl-piece-{_kind}-{_which}{_suffix}-{_k}", engine="sby-bmc",
                  quick=_quick and not _n, kind=_kind, k=_k, which=_which, negated=_n,
                  what=_what, size=f"{_k}-bit primes of the real form (N = 2^13), two per table, "
                                   "the full-width unit")(piece)
    proof(GROUP, f"mutant-rtl-piece-{_kind}-{_which}-36", engine="sby-bmc", expect="FAIL",
          quick=False, kind=_kind, k=36, which=_which, mutate="q",
          what=f"MUTANT: the {_which} relation checked against the wrong primes",
          size="36-bit primes")(piece)


# -- a miter between two reducers ----------------------------------------------------------------------
def miter_barrett_montgomery(ctx, bits: int = 8, moduli=None) -> ProofResult:
    """Miter: ``BarrettMul(a, b) == WordMontgomeryMul(a, b*R mod q)`` for all a, b < q and both
    primes of the table (word Montgomery with 4-bit words, R = 2^(4*words)).

    The Montgomery operand b*R mod q comes from a certificate (free b_m < q and k with
    b*R == k*q + b_m), so the solver needs no divider; each unit's result is captured at its own
    latency and the two are compared.  No specification of a*b mod q is involved: the two
    generators check each other.  ``moduli`` builds the Montgomery unit for other primes (a
    mutant).
    """
    if (skip := _skip_without_cores()) is not None:
        return skip
    from amaranth.hdl import Assert, Fragment

    from ..common.sby import formal_module
    qs = small_primes("montgomery", bits)
    barrett = make_unit("barrett", bits, moduli=qs)
    mont = make_unit("montgomery", bits, moduli=qs if moduli is None else moduli)
    radix = mont.models[0].montgomery_radix
    width = barrett.width
    m, _ = formal_module()
    m.submodules.barrett = Fragment.get(barrett, None)
    m.submodules.mont = Fragment.get(mont, None)
    last = max(barrett.latency, mont.latency)
    t = Signal(range(last + 2), name="h_t")
    with m.If(t <= last):
        m.d.sync += t.eq(t + 1)
    a, b, sel = (Signal(width, name="op_a"), Signal(width, name="op_b"),
                 Signal(barrett.sel.shape(), name="op_sel"))
    bm, k = Signal(width, name="cert_bm"), Signal(width + radix.bit_length(), name="cert_k")
    m.d.comb += [a.eq(AnyConst(width)), b.eq(AnyConst(width)), sel.eq(AnyConst(sel.shape())),
                 bm.eq(AnyConst(width)), k.eq(AnyConst(len(k)))]
    q = _table(qs, sel, width)
    m.d.comb += Assume((sel < len(qs)) & (a < q) & (b < q) & (bm < q))
    m.d.comb += Assume(b * radix == k * q + bm, "certificate b_m = b*R mod q")
    for unit, opb in ((barrett, b), (mont, bm)):
        m.d.comb += [unit.a.eq(a), unit.b.eq(opb), unit.sel.eq(sel), unit.en.eq(1)]
    results = []
    for name, unit in (("barrett", barrett), ("mont", mont)):
        reg = Signal(width, name=f"h_{name}_p")
        with m.If(t == unit.latency):
            m.d.sync += reg.eq(unit.p)
        now = Signal(width, name=f"h_{name}_now")
        m.d.comb += now.eq(Mux(t == unit.latency, unit.p, reg))
        results.append(now)
    with m.If(t == last):
        m.d.comb += Assert(results[0] == results[1], "Barrett and Montgomery disagree")
    run = run_harness(m, ctx.workdir, f"miter_{bits}", mode="bmc", depth=last + 1, timeout=ctx.timeout)
    return _result(run, f"latencies {barrett.latency} / {mont.latency}, primes {list(qs)}")


MITER_BITS = 7
proof(GROUP, f"miter-barrett-montgomery-{MITER_BITS}", engine="sby-bmc", quick=False, bits=MITER_BITS,
      what="miter: Barrett(a, b) == word Montgomery(a, b*R mod q) for all a, b < q, both primes",
      size=f"{MITER_BITS}-bit primes (q = 1 mod 16), 4-bit words, two-prime table")(miter_barrett_montgomery)
proof(GROUP, f"mutant-miter-barrett-montgomery-{MITER_BITS}", engine="sby-bmc", quick=False, expect="FAIL",
      bits=MITER_BITS, moduli=small_primes("montgomery", MITER_BITS)[::-1],
      what="MUTANT: the Montgomery side's prime table swapped", size=f"{MITER_BITS}-bit primes")(
    miter_barrett_montgomery)

"""The multi-field butterfly (cores/arith/butterfly.py) against hhe_gen.models.butterfly.

Every op x every enabled field, random and corner operands (0, 1, q-1, q-2; complex: max/min
integers, +-1, 1.0, values whose sums and products wrap), op / field / sel switching every cycle,
random clock-enable gaps with garbage on the inputs (run_unit reads each result exactly
``latency`` enabled cycles after its operands, so a wrong or op-dependent latency fails), and
through the stream wrapper with back-pressure.  The hardware of disabled fields is absent (no
signals named for them; the number of ``*`` cells in the design equals the tile count), tile
sharing is counted against the independent per-field units, and bad parameters raise
ParameterError.
"""

import functools
import random
import re

import pytest
from amaranth.back import rtlil

from hhe_gen.cores.arith import modmul
from hhe_gen.cores.arith.butterfly import OP_CODES, Butterfly, ButterflyStream, pack_complex, unpack_complex
from hhe_gen.cores.arith.multiplier import MulPlan
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models.butterfly import MODULAR_OPS, OPS
from hhe_gen.models.fft import FixedPointFormat, butterfly_ct_fixed
from hhe_gen.params import ParameterError, abc_fhe_primes, dna_hhe_primes, ntt_primes
from hhe_gen.sim.stream import run_stream, run_unit

RUBATO_T = (0x3EE0001, 0x1FC0001)          # Par-*S (26 bits) and Par-*M/L (25 bits)


@functools.lru_cache(maxsize=None)
def dna_primes(k, log_n=13, count=3):
    return tuple(p.q for p in dna_hhe_primes(k, 1 << log_n, 10, count=count))


def zq_special(k=54, count=3):
    return dict(kind="special-barrett", moduli=dna_primes(k, count=count), k=k, log_n=13)


def full_bfu(**kw):
    """DNA-HHE's configuration: 54-bit special-prime Z_q (3 primes), Rubato's 26-bit t, 29/26 complex."""
    return Butterfly(zq=zq_special(), zt=dict(moduli=[RUBATO_T[0]], karatsuba=True),
                     complex=FixedPointFormat(29, 26), **kw)


# -- operands -------------------------------------------------------------------------------------------
def _complex_value(rng, fmt):
    corners = [0, 1, -1, fmt.max_int, fmt.min_int, fmt.max_int - 1, fmt.min_int + 1,
               min(fmt.one, fmt.max_int), -min(fmt.one, fmt.max_int), fmt.max_int >> 1]
    pick = lambda: rng.choice(corners) if rng.random() < 0.4 else rng.randint(fmt.min_int, fmt.max_int)  # noqa: E731
    return pack_complex((pick(), pick()), fmt)


def vectors(bf, n, seed, ops=OPS, fields=None):
    """n random vectors switching op, field and sel every cycle (sel random even where unused)."""
    rng = random.Random(seed)
    fields = fields or bf.fields
    out = []
    for _ in range(n):
        f = rng.choice(fields)
        vec = {"op": OP_CODES[rng.choice([o for o in ops if f != "complex" or o not in MODULAR_OPS])]}
        if "field" in bf.signature.members:
            vec["field"] = bf.field_index[f]
        sel = rng.randrange(bf.n_sel)
        if f == "complex":
            vec.update({k: _complex_value(rng, bf.fmt) for k in "abwc"})
        else:
            sel = sel % len(bf.moduli[f])
            q = bf.moduli[f][sel]
            corners = [0, 1, q - 1, q - 2, q >> 1]
            vec.update({k: rng.choice(corners) if rng.random() < 0.4 else rng.randrange(q) for k in "abwc"})
        if bf.n_sel > 1:
            vec["sel"] = sel
        out.append(vec)
    return out


def expected(bf, vec):
    field = bf.fields[vec.get("field", 0)]
    sel = vec.get("sel", 0) if field != "complex" else 0
    return bf.model(vec["op"], field, vec["a"], vec["b"], vec["w"], vec["c"], sel=sel)


def check_unit(bf, vecs, seed=1):
    run = run_unit(bf, vecs, output="x", probes=["y"], en_gaps=seed)
    for vec, x, y in zip(vecs, run.outputs, run.probes["y"]):
        assert (x, y) == expected(bf, vec), (vec, bf.share_plan)
    return run


def mul_cells(dut) -> int:
    return len(re.findall(r"cell \$mul ", rtlil.convert(dut)))


# -- the DNA-HHE configuration ------------------------------------------------------------------------
def test_full_bfu_every_op_and_field_mixed():
    bf = full_bfu()
    assert bf.fields == ("zq", "zt", "complex")
    assert bf.latency == 2 * bf.add_latency + bf.mul_latency == 2 + bf.min_mul_latency + 3
    assert bf.width == 58 and bf.ii == 1
    vecs = vectors(bf, 240, seed=3)
    check_unit(bf, vecs, seed=3)
    # every (op, field) pair was exercised
    assert {(v["op"], v["field"]) for v in vecs} == {(OP_CODES[o], f) for o in OPS for f in range(3)
                                                     if f != 2 or o not in MODULAR_OPS}


def test_full_bfu_stream_back_pressure():
    bf = full_bfu(latency=9)
    vecs = vectors(bf, 60, seed=11)
    want = [dict(zip("xy", expected(bf, v))) for v in vecs]
    full = run_stream(ButterflyStream(bf), vecs)
    assert full.outputs == want
    assert full.latency == bf.latency == 9
    assert full.out_cycles == [c + 9 for c in full.in_cycles]          # full rate, one latency for all
    gappy = run_stream(ButterflyStream(full_bfu(latency=9)), vecs, gaps=4)
    assert gappy.outputs == want


def test_full_bfu_shares_tiles():
    """DNA-HHE's claim at tile level: Z_t and the complex product fit on the Z_q reducer's tiles
    (with the timing bound lifted, so the result does not depend on the delay estimates)."""
    bf = full_bfu(max_stage_ns=1000.0)
    zq = modmul("special-barrett", dna_primes(54), 54, k=54, log_n=13)
    zt = modmul("barrett", RUBATO_T[0], 26, karatsuba=True)
    mark_unused(zq, zt)
    cx = 3 * MulPlan(30, 29, karatsuba=True, part="low", part_bits=55, signed=True).tiles
    assert bf.tiles_by_field == {"zq": zq.tiles, "zt": zt.tiles, "complex": cx}
    assert bf.tiles_separate == zq.tiles + zt.tiles + cx == 12 + 9 + 9
    assert bf.tiles == zq.tiles == 12
    assert mul_cells(bf) == 12
    separate = full_bfu(share=False)
    assert separate.tiles == 30 and mul_cells(separate) == 30
    default = full_bfu()                # the plan within the estimated critical path
    assert zq.tiles <= default.tiles < default.tiles_separate == 30
    assert mul_cells(default) == default.tiles


def test_timing_bound_trades_tiles():
    """A tighter stage-delay bound keeps every unit within it (or its own best) and shares less."""
    loose = full_bfu()
    tight = full_bfu(max_stage_ns=8.0)
    for u in (loose, tight):
        mark_unused(u)
    assert loose.tiles <= tight.tiles <= tight.tiles_separate
    for unit in tight._units:
        best = min(o.delay for o in unit.options)
        assert tight._choice[unit.name].delay <= max(best, 8.0) + 1e-9
    worst = max(min(o.delay for o in unit.options) for unit in loose._units)
    assert all(loose._choice[u.name].delay <= worst + 1e-9 for u in loose._units)


# -- configurations ---------------------------------------------------------------------------------------
def _abc(width=36, log_n=13):
    return tuple(p.q for p in abc_fhe_primes(1 << log_n, width - 1, 3) if p.q < 1 << width)[:2]


CONFIGS = {
    "barrett-zq-zt2": dict(zq=dict(moduli=ntt_primes(16, 36, 3)), zt=dict(moduli=RUBATO_T[:1] + (67043329,))),
    "montgomery-zq": dict(zq=dict(kind="montgomery", moduli=ntt_primes(1 << 17, 36, 2), word_bits=18),
                          complex=FixedPointFormat(16, 13)),
    "ntt-montgomery-zq": dict(zq=dict(kind="ntt-montgomery", moduli=_abc(), log_n=13),
                              zt=dict(moduli=RUBATO_T[1])),
    "special-zq-xilinx": dict(zq=zq_special(36), complex=FixedPointFormat(20, 17), target="xilinx"),
    "generic-all": dict(zq=zq_special(36, 2), zt=dict(moduli=RUBATO_T[0]), complex=FixedPointFormat(12, 9),
                        target="generic"),
    "add0-all": dict(zq=dict(moduli=ntt_primes(16, 30, 2)), zt=dict(moduli=RUBATO_T[0]),
                     complex=FixedPointFormat(16, 14), add_latency=0),
    "zt-only": dict(zt=dict(moduli=RUBATO_T[0])),
    "complex-only-min": dict(complex=FixedPointFormat(29, 26), latency=3),
    # the complex products' rows summed by 3:2 compressors instead of the default adders, and the
    # engine's 38/36 slots (39 x 38 products: LUT rows beyond the two 18-bit limbs) with each
    "complex-csa": dict(complex=dict(fmt=FixedPointFormat(29, 26), reduce="csa"), zt=dict(moduli=RUBATO_T[0])),
    "complex-38-adders": dict(complex=FixedPointFormat(38, 36, "half-even")),
    "complex-38-csa": dict(complex=dict(fmt=FixedPointFormat(38, 36, "half-even"), reduce="csa")),
    "complex-only-add0-lat1": dict(complex=FixedPointFormat(10, 4, "half-even"), add_latency=0, latency=1),
    "tight-all": dict(zq=zq_special(36, 2), zt=dict(moduli=RUBATO_T[1], karatsuba=True),
                      complex=FixedPointFormat(20, 18), max_stage_ns=8.0),
    "noshare-all": dict(zq=dict(moduli=ntt_primes(16, 30, 2)), zt=dict(moduli=RUBATO_T[0]),
                        complex=FixedPointFormat(16, 14), share=False),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_configuration_matches_model(name):
    bf = Butterfly(**CONFIGS[name])
    assert bf.latency == 2 * bf.add_latency + bf.mul_latency
    check_unit(bf, vectors(bf, 90, seed=len(name)), seed=len(name))


@pytest.mark.parametrize("rounding", ["half-up", "half-even", "truncate"])
def test_complex_rounding_modes_ties(rounding):
    """frac_bits = 2: a quarter of all products are exact ties; the GS halving ties half the time."""
    fmt = FixedPointFormat(12, 2, rounding)
    bf = Butterfly(complex=fmt, zt=dict(moduli=RUBATO_T[0]), latency=5)
    check_unit(bf, vectors(bf, 150, seed=7), seed=7)


def test_complex_wrapping_corners():
    """Every op on the extreme values of the format (sums, halvings and products that wrap)."""
    fmt = FixedPointFormat(29, 26)
    bf = Butterfly(complex=fmt)
    ext = [fmt.min_int, fmt.max_int, -1, 1, 0, fmt.one, -fmt.one]
    rng = random.Random(5)
    vecs = []
    for op in range(6):
        for _ in range(12):
            vecs.append({"op": op, **{k: pack_complex((rng.choice(ext), rng.choice(ext)), fmt) for k in "abwc"}})
    vecs.append({"op": 0, "a": pack_complex((fmt.max_int, fmt.max_int), fmt),
                 "b": pack_complex((fmt.min_int, fmt.min_int), fmt),
                 "w": pack_complex((fmt.min_int, fmt.min_int), fmt), "c": 0})
    run = check_unit(bf, vecs, seed=2)
    # an independent check of one wrap: min*min = 2^56, shifted by 26 = 2^30, wraps in 29 bits
    x, y = butterfly_ct_fixed((fmt.max_int, fmt.max_int), (fmt.min_int, fmt.min_int),
                              (fmt.min_int, fmt.min_int), fmt)
    assert run.outputs[-1] == pack_complex(x, fmt)
    assert unpack_complex(pack_complex((fmt.min_int, -1), fmt), fmt) == (fmt.min_int, -1)


@pytest.mark.parametrize("extra", [0, 1, 4])
def test_latency_is_exact_for_every_op(extra):
    bf = full_bfu(latency=5 + extra)
    bf2 = full_bfu(latency=bf.latency)
    assert bf.latency == bf.min_latency + extra == 5 + extra
    vecs = vectors(bf, 30, seed=extra)
    run = run_stream(ButterflyStream(bf2), vecs)
    assert run.out_cycles == [c + bf.latency for c in run.in_cycles]
    check_unit(bf, vecs, seed=extra + 20)


# -- only the enabled fields are generated ---------------------------------------------------------------
@pytest.mark.parametrize("fields", [("zq",), ("zt",), ("complex",), ("zq", "complex"), ("zt", "complex")])
def test_disabled_fields_generate_nothing(fields):
    cfg = {"zq": dict(moduli=ntt_primes(16, 30, 2)), "zt": dict(moduli=RUBATO_T[0]),
           "complex": FixedPointFormat(16, 14)}
    bf = Butterfly({f: cfg[f] for f in fields})
    assert bf.fields == fields
    text = rtlil.convert(bf)
    prefixes = {"zq": r"\bzq_", "zt": r"\bzt_", "complex": r"\bcx_"}
    for f, pat in prefixes.items():
        assert bool(re.search(pat, text)) == (f in fields), f
    assert ("mod_pre_sub" in text) == any(f in fields for f in ("zq", "zt"))
    assert mul_cells(bf) == bf.tiles
    assert ("field" in bf.signature.members) == (len(fields) > 1)
    # the tile count grows with the enabled fields but stays below the separate units' sum
    if len(fields) > 1:
        assert bf.tiles < bf.tiles_separate
        alone = [Butterfly({f: cfg[f]}, latency=bf.latency) for f in fields]
        for u in alone:
            mark_unused(u)
        assert bf.tiles >= max(u.tiles for u in alone)
        assert bf.tiles_separate == sum(u.tiles for u in alone)


# -- parameters ------------------------------------------------------------------------------------------
def test_bad_parameters():
    fmt = FixedPointFormat(16, 14)
    with pytest.raises(ParameterError, match="fields"):
        Butterfly()
    with pytest.raises(ParameterError, match="fields"):
        Butterfly({"zp": fmt})
    with pytest.raises(ParameterError, match="zq"):
        Butterfly(zq=[97])
    with pytest.raises(ParameterError, match="complex"):
        Butterfly(complex=(16, 14))
    with pytest.raises(ParameterError, match="complex"):
        Butterfly({"complex": fmt}, complex=fmt)
    with pytest.raises(ParameterError, match="latency.*>= 5"):
        full_bfu(latency=4)
    with pytest.raises(ParameterError, match="add_latency"):
        Butterfly(complex=fmt, add_latency=2)
    with pytest.raises(ParameterError, match="share"):
        Butterfly(complex=fmt, share="yes")
    with pytest.raises(ParameterError, match="max_stage_ns"):
        Butterfly(complex=fmt, max_stage_ns=0)
    with pytest.raises(ParameterError, match="target"):
        Butterfly(complex=fmt, target="ice40")
    with pytest.raises(ParameterError, match="zt.kind"):
        Butterfly(zt=dict(moduli=RUBATO_T[0], kind="fast"))
    with pytest.raises(ParameterError, match="latency/target"):
        Butterfly(zt=dict(moduli=RUBATO_T[0], latency=3))
    with pytest.raises(ParameterError, match="moduli"):            # an even modulus
        Butterfly(zt=dict(moduli=[RUBATO_T[0], 1 << 25]))
    with pytest.raises(ParameterError, match="log_n"):
        Butterfly(zq=dict(kind="special-barrett", moduli=dna_primes(36), k=36))
    unit = modmul("barrett", RUBATO_T[0], 26)
    mark_unused(unit)
    with pytest.raises(ParameterError, match="unit"):
        ButterflyStream(unit)


def test_model_helper_against_models():
    """Butterfly.model is the golden model with this unit's reducers (spot checks by hand)."""
    bf = full_bfu()
    mark_unused(bf)
    q = bf.moduli["zq"][1]
    a, b, w = 5, q - 1, 3
    assert bf.model(OP_CODES["ct"], "zq", a, b, w, 0, sel=1) == ((a + b * w) % q, (a - b * w) % q)
    assert bf.model("mac", "zt", 7, 9, 0, RUBATO_T[0] - 1) == ((RUBATO_T[0] - 1 + 63) % RUBATO_T[0], 0)
    one = bf.fmt.one
    assert bf.model("mul", "complex", pack_complex((one, 0), bf.fmt), pack_complex((3, -4), bf.fmt)) \
        == (pack_complex((3, -4), bf.fmt), 0)


# -- many vectors (slow) ------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_configuration_many_vectors_slow(name):
    bf = Butterfly(**CONFIGS[name])
    check_unit(bf, vectors(bf, 1500, seed=len(name) + 100), seed=len(name) + 100)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["ecp5", "xilinx", "generic"])
@pytest.mark.parametrize("share", [True, False])
def test_full_bfu_many_vectors_slow(target, share):
    bf = full_bfu(target=target, share=share)
    vecs = vectors(bf, 1500, seed=len(target))
    check_unit(bf, vecs, seed=len(target))
    run = run_stream(ButterflyStream(full_bfu(target=target, share=share)), vecs[:400], gaps=len(target))
    assert run.outputs == [dict(zip("xy", expected(bf, v))) for v in vecs[:400]]

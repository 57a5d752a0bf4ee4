"""Boundary vectors for every modular step of cores/arith (issue 14 section 6).

A comparison or a correction that is off by one at a modular boundary (``<`` for ``<=``, a
value equal to q that must wrap but does not) only shows on operands that land exactly there.
These tests feed exactly those operands and compare the hardware with golden models built here,
independently of the unit (``hhe_gen.models.modarith`` / ``hhe_gen.models.butterfly``):

- ModAdd / ModSub: 0, 1, q-1 and every pair with a+b in {q-1, q, q+1, 2q-2} or a-b in
  {0, -1, 1, -(q-1), q-1}, for a small q in a wide port (q << 2^w), q = 2^w - 1 (the sum needs
  the extra bit) and the largest 64-bit prime, with ``sel`` switching primes;
- the reducers (all four kinds): (q-1)^2, (q-1)*1, 0*x, and pairs chosen so that the result is
  0, 1, 2, q-2 or q-1 - with many first operands each, so that the Barrett remainder
  r0 = x - q_est*q takes every correction count (0, 1 and 2 subtractions of q) on both sides of
  every boundary (the test asserts it did, from the model's trace); Barrett exhaustively for a
  tiny modulus in a 16-bit port;
- the multi-field butterfly (Z_q and Z_t): ct / gs / add / sub / mul / mac with the same sums and
  differences, and w in {0, 1, q-1} (with w = q-1, b*w = -b moves an addition to a subtraction).
"""

import itertools
import random

import pytest

from hhe_gen.cores.arith import ModAdd, ModSub
from hhe_gen.cores.arith.barrett import BarrettMul
from hhe_gen.cores.arith.butterfly import OP_CODES, Butterfly
from hhe_gen.cores.arith.ntt_montgomery import NttMontgomeryMul
from hhe_gen.cores.arith.special_barrett import SpecialBarrettMul
from hhe_gen.cores.arith.word_montgomery import WordMontgomeryMul
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models.butterfly import FieldSpec, butterfly
from hhe_gen.models.modarith import (BarrettReducer, NttFriendlyMontgomery, SpecialPrimeBarrett,
                                     WordMontgomeryReducer, mod_add, mod_sub)
from hhe_gen.params import dna_hhe_primes, is_prime, ntt_primes
from hhe_gen.sim.stream import run_unit

P64 = (1 << 64) - 59                   # the largest 64-bit prime


def addsub_pairs(q: int) -> list[tuple[int, int]]:
    """Operand pairs at every boundary of a modular adder / subtractor for modulus q."""
    h = q // 2
    sums = [(0, q - 1), (q - 1, 0), (1, q - 2), (h, q - 1 - h),                 # a + b = q - 1
            (1, q - 1), (q - 1, 1), (h + 1, q - 1 - h), (h, q - h),             # a + b = q
            (2, q - 1), (q - 1, 2), (h + 1, q - h), (h + 2, q - 1 - h),         # a + b = q + 1
            (q - 1, q - 1), (q - 2, q - 1), (0, 0)]                             # 2q - 2, 2q - 3, 0
    diffs = [(0, 0), (1, 1), (q - 1, q - 1), (h, h),                            # a - b = 0
             (0, 1), (q - 2, q - 1), (h, h + 1),                                # a - b = -1
             (1, 0), (q - 1, q - 2), (h + 1, h),                                # a - b = 1
             (0, q - 1), (q - 1, 0), (1, q - 1), (q - 1, 1)]                    # +-(q-1), +-(q-2)
    return [(a, b) for a, b in sums + diffs if 0 <= a < q and 0 <= b < q]


# -- ModAdd / ModSub ------------------------------------------------------------------------------------
ADDSUB_CASES = [   # moduli, width
    ((97,), 16),                                    # q far below 2^w: the carry bit is never set
    (((1 << 16) - 1,), 16),                         # q = 2^w - 1: a + b needs bit w
    ((P64,), 64),
    ((97, 65521, 40961), 16),                       # sel switches between consecutive inputs
    ((3,), 2),                                      # the smallest unit
]


@pytest.mark.parametrize("cls, op", [(ModAdd, mod_add), (ModSub, mod_sub)])
@pytest.mark.parametrize("moduli, width", ADDSUB_CASES)
@pytest.mark.parametrize("latency", [0, 1])
def test_addsub_boundaries(cls, op, moduli, width, latency):
    per_prime = [[{"a": a, "b": b, "sel": s} for a, b in addsub_pairs(q)] for s, q in enumerate(moduli)]
    vecs = [v for group in itertools.zip_longest(*per_prime) for v in group if v]   # sel switches
    if len(moduli) == 1:
        vecs = [{"a": v["a"], "b": v["b"]} for v in vecs]
    dut = cls(moduli if len(moduli) > 1 else moduli[0], width, latency=latency)
    run = run_unit(dut, vecs, en_gaps=latency + 3)
    want = [op(v["a"], v["b"], moduli[v.get("sel", 0)]) for v in vecs]
    assert run.outputs == want


# -- reducers ------------------------------------------------------------------------------------------
def _abc_prime(width, log_n):
    """The first q = 2^(width-1) + kk*2N + 1 prime with a one-digit kk (an ABC-FHE prime)."""
    e = width - 1
    for j in range(1, e - log_n - 1):
        for kk in (1 << j, -(1 << j)):
            q = (1 << e) + kk * (2 << log_n) + 1
            if is_prime(q) and q < 1 << width:
                return q
    raise AssertionError("no prime")


def reducer_case(kind, width):
    """(unit, independent golden model, Montgomery radix) for one prime of ``kind``."""
    if kind == "barrett":
        q = ntt_primes(16, width, 1)[0]
        return BarrettMul([q], width), BarrettReducer(q, width), 1
    if kind == "special-barrett":
        log_n = 13 if width > 16 else 4
        q = dna_hhe_primes(width, 1 << log_n, 10, count=1)[0].q
        return SpecialBarrettMul([q], width, log_n), SpecialPrimeBarrett(q, width, log_n, width=width), 1
    if kind == "montgomery":
        w = 18 if width > 18 else 8
        q = ntt_primes(1 << (w - 1), width, 1)[0]
        model = WordMontgomeryReducer(q, width, w)
        return WordMontgomeryMul([q], width, w), model, model.montgomery_radix
    log_n = 13 if width > 16 else 4
    q = _abc_prime(width, log_n)
    model = NttFriendlyMontgomery(q, log_n, width)
    return NttMontgomeryMul([q], log_n, width), model, model.montgomery_radix


def reducer_pairs(q: int, radix: int, count: int, seed: int) -> list[tuple[int, int]]:
    """Corner products and pairs whose result is 0, 1, 2, q-2, q-1 (b = target * R / a mod q)."""
    rng = random.Random(seed)
    pairs = [(q - 1, q - 1), (q - 1, 1), (1, q - 1), (0, q - 1), (q - 1, 0), (1, 1), (0, 0),
             (q - 1, q - 2), (q // 2, 2), (q // 2 + 1, 2)]
    for target in (1, 2, q - 2, q - 1):
        for _ in range(count):
            a = rng.randrange(1, q)
            pairs.append((a, target * radix * pow(a, -1, q) % q))
    return pairs


@pytest.mark.parametrize("kind", ["barrett", "special-barrett", "montgomery", "ntt-montgomery"])
@pytest.mark.parametrize("width", [16, 64])
def test_reducer_boundaries(kind, width):
    dut, model, radix = reducer_case(kind, width)
    q = dut.moduli[0]
    pairs = reducer_pairs(q, radix, 10, seed=width)
    want = [a * b * pow(radix, -1, q) % q for a, b in pairs]      # plain integers
    assert [model.mul(a, b) for a, b in pairs] == want
    assert run_unit(dut, [{"a": a, "b": b} for a, b in pairs]).outputs == want


@pytest.mark.parametrize("q", [13, 113, 133, 149])
def test_barrett_every_remainder_boundary(q):
    """Small moduli in a 16-bit port, where the Barrett remainder r0 = x - q_est*q reaches
    [2q, 3q) (two corrections: 113, 149 prime; 133 = 7*19 even gives r0 = 2q exactly, a value
    that must wrap to 0): every product whose r0 lies within 2 of 0, q or 2q (found with the model
    over all pairs), and for q = 13 every pair."""
    model = BarrettReducer(q, 16)
    by_r0 = {}
    for a in range(q):
        for b in range(q):
            r0 = model.trace(a, b)["r0"]
            if q == 13 or min(r0 % q, q - r0 % q) <= 2:
                by_r0.setdefault(r0, []).append((a, b))
    if q != 13:
        assert max(by_r0) >= 2 * q                  # the second correction is needed somewhere
    if q == 133:
        assert 2 * q in by_r0
    pairs = [p for r0 in sorted(by_r0) for p in (by_r0[r0] if q == 13 else by_r0[r0][:3])]
    assert all(model.mul(a, b) == a * b % q for a, b in pairs)
    run = run_unit(BarrettMul([q], 16, latency=4), [{"a": a, "b": b} for a, b in pairs], en_gaps=q)
    assert run.outputs == [a * b % q for a, b in pairs]


# -- the multi-field butterfly ---------------------------------------------------------------------------
def test_butterfly_modular_boundaries():
    zq = ntt_primes(16, 16, 2)
    zt = [65929217]
    bf = Butterfly(zq=dict(kind="barrett", moduli=zq), zt=dict(moduli=zt))
    specs = {"zq": [FieldSpec("zq", BarrettReducer(q, 16)) for q in zq],
             "zt": [FieldSpec("zt", BarrettReducer(q, 32)) for q in zt]}
    vecs, want = [], []
    for field, moduli in (("zq", zq), ("zt", zt)):
        for sel, q in enumerate(moduli):
            pairs = addsub_pairs(q)
            for i, (a, b) in enumerate(pairs):
                for op in ("ct", "gs", "add", "sub", "mul", "mac", "gsh"):
                    w = (0, 1, q - 1)[i % 3]
                    c = (q - 1, 0, 1)[(i + len(op)) % 3]
                    vec = {"op": OP_CODES[op], "a": a, "b": b, "w": w, "c": c}
                    if "field" in bf.signature.members:
                        vec["field"] = bf.field_index[field]
                    if bf.n_sel > 1:
                        vec["sel"] = sel
                    vecs.append(vec)
                    x, y = butterfly(op, specs[field][sel], a, b, w, c)
                    want.append((x, 0 if y is None else y))
    run = run_unit(bf, vecs, output="x", probes=["y"], en_gaps=7)
    assert list(zip(run.outputs, run.probes["y"])) == want


# -- the prime index: only with more than one modulus ------------------------------------------------
def test_sel_port_only_with_several_moduli():
    """A unit for ONE modulus has no ``sel`` port (len(moduli) > 1, not >= 1); two moduli add it."""
    q16 = ntt_primes(16, 16, 2)
    makers = [lambda m: ModAdd(m, 16), lambda m: ModSub(m, 16), lambda m: BarrettMul(m, 16)]
    for make in makers:
        one, two = mark_unused(make(q16[:1])), mark_unused(make(q16))
        assert "sel" not in one.signature.members and "sel" in two.signature.members

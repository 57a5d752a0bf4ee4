"""CKKS special FFT / inverse FFT: float64 (Lattigo v6's algorithm) and the bit-exact fixed point model.

Convention (docs/conventions.md).  N = ring degree, n = number of slots (n = N/2 for full packing;
any power of two n <= N/2 for sparse packing), zeta = exp(i*pi/N).  For a real polynomial m,
slot j is m(zeta^(5^j mod 2N)).  The encoder computes w = special_ifft(slots) (n complex values)
and sets, with gap = N / (2n) (1 for full packing),
    m[k*gap] = Re w_k,   m[(k + n)*gap] = Im w_k,   every other coefficient 0
(then scales by Delta and rounds).  :func:`coefficients_from_w` / :func:`w_from_coefficients` do
this placement; then m(zeta^(5^j)) == slots_j for j < n.  The decoder reads w back and applies
special_fft, the exact inverse (up to float rounding).

Float64 (:func:`special_ifft`, :func:`special_fft`) follow Lattigo v6's ``SpecialiFFTDouble`` /
``SpecialFFTDouble`` operation for operation (same root table built from cosines only, with Go's
cosine re-implemented in :func:`lattigo_cos`; same butterfly order; the same 1/n scaling at the
end of the inverse; the same bit-reversal).  Checked against Lattigo v6.1.1 on amd64 (Go builds
without FMA contraction there): every output bit-identical, N = 2^4 .. 2^13 (tests/models/
test_fft.py, interop marker).  Lattigo's root table is built for M = 2N but only entries at
multiples of 2N/(4n) are used, and those are bit-identical to a table built for M = 4n (scaling
by powers of two is exact), so the transforms depend on n only.

Fixed point (:func:`special_ifft_fixed`, :func:`special_fft_fixed`) is the specification of the
FFT hardware: same butterfly order; complex numbers are (re, im) pairs of ``width``-bit two's
complement integers with ``frac_bits`` fraction bits (:class:`FixedPointFormat`); see
:func:`butterfly_ct_fixed` / :func:`butterfly_gs_fixed` for the exact integer steps.

Measured precision (bits = -log2 of |error| of complex slots vs the originals, uniform random
slots in the unit disc, 2 seeds, frac_bits = width - 3; "A" = fixed IFFT -> float FFT,
"B" = float IFFT -> fixed FFT; mean / max):

=====  =====  ===========  ===========  =====================
N      width  A half-up    B half-up    A half-even
=====  =====  ===========  ===========  =====================
2^10   24     17.1 / 12.5  17.5 / 15.7  17.0 / 15.3
2^10   29     22.1 / 17.5  22.4 / 20.8  22.0 / 20.2
2^10   32     25.1 / 20.4  25.4 / 23.9  25.1 / 23.0
2^10   40     33.1 / 28.4  33.5 / 31.9  33.0 / 31.4
2^13   24     15.7 /  9.5  16.0 / 14.3  15.5 / 13.6
2^13   29     20.7 / 14.5  21.0 / 19.1  20.5 / 18.9
2^13   32     23.7 / 17.5  24.0 / 22.1  23.5 / 21.8
2^13   40     31.7 / 25.5  32.0 / 30.3  31.5 / 29.7
=====  =====  ===========  ===========  =====================

No overflow in any of these.  The mean loses about frac_bits - 4 (N = 2^10) to frac_bits - 5.5
(N = 2^13) bits.  Half-up rounding in the IFFT's halving steps is biased (+1/4 LSB per halving on
average); the bias accumulates into a near-constant offset of w, which the FFT concentrates into
one slot: the max error of path A is 3 (N = 2^10) to 4.5 (N = 2^13) bits worse than with
half-even.  The FFT path (B) is unaffected (its products are rounded once, unbiased on average).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from hhe_gen.params.errors import ParameterError

__all__ = [
    "MIN_SLOTS", "MAX_SLOTS", "lattigo_cos", "rotation_group", "root_table", "bit_reverse_permutation",
    "special_ifft", "special_fft", "coefficients_from_w", "w_from_coefficients",
    "FixedPointFormat", "FixedStats", "ROUNDING_MODES", "quantize", "dequantize",
    "quantize_complex", "dequantize_complex", "twiddle_table", "complex_mul_exact",
    "complex_mul_3mult", "butterfly_ct_fixed", "butterfly_gs_fixed",
    "special_ifft_fixed", "special_fft_fixed",
]

MIN_SLOTS = 1 << 2
MAX_SLOTS = 1 << 15
GALOIS_GEN = 5


def _check_slot_count(n: int, name: str) -> int:
    if n < MIN_SLOTS or n > MAX_SLOTS or n & (n - 1):
        raise ParameterError(name, n, "a power of two in 2^2 .. 2^15 slots (N = 2^3 .. 2^16)")
    return n


# -- Go's cosine ------------------------------------------------------------------------------------
# Lattigo builds its root table with Go's math.Cos, which on amd64/arm64 is the pure-Go port of
# the Cephes library's cos (S. L. Moshier): Cody-Waite reduction by pi/4 split in three parts,
# then a degree-6 polynomial in z^2.  It differs from the C library's cos by one ulp on about 40%
# of the table entries, so it is re-implemented here (the published Cephes coefficients, same
# float64 operations in the same order) to make the tables - and the transforms - bit-identical.
_PI4 = (float.fromhex("0x1.921fb40000000p-1"), float.fromhex("0x1.4442d00000000p-25"),
        float.fromhex("0x1.8469898cc5170p-49"))
_FOUR_OVER_PI = float(4 / Fraction("3.14159265358979323846264338327950288419716939937510582097494"))
_SIN_COEFFS = tuple(float.fromhex(h) for h in (
    "0x1.5d8fd1fd19ccdp-33", "-0x1.ae5e5a9291f5dp-26", "0x1.71de3567d48a1p-19",
    "-0x1.a01a019bfdf03p-13", "0x1.111111110f7d0p-7", "-0x1.5555555555548p-3"))
_COS_COEFFS = tuple(float.fromhex(h) for h in (
    "-0x1.8fa49a0861a9bp-37", "0x1.1ee9d7b4e3f05p-29", "-0x1.27e4f7eac4bc6p-22",
    "0x1.a01a019c844f5p-16", "-0x1.6c16c16c14f91p-10", "0x1.555555555554bp-5"))


def lattigo_cos(x: float) -> float:
    """cos(x) computed exactly as Go's math.Cos does it (|x| < 2^29; Lattigo needs [0, pi/2)).

    Steps: j = floor(|x| * 4/pi) (4/pi rounded once), rounded up to even; z = |x| - j*pi/4 in
    three parts; octant j mod 8 selects the sine or cosine polynomial and the sign.
    """
    x = abs(float(x))
    if not x < 2.0 ** 29:
        raise ParameterError("x", x, "|x| < 2^29 (no Payne-Hanek reduction implemented)")
    j = int(x * _FOUR_OVER_PI)
    y = float(j)
    if j & 1:
        j += 1
        y += 1.0
    j &= 7
    z = ((x - y * _PI4[0]) - y * _PI4[1]) - y * _PI4[2]
    sign = False
    if j > 3:
        j -= 4
        sign = not sign
    if j > 1:
        sign = not sign
    zz = z * z
    if j in (1, 2):
        s = _SIN_COEFFS
        y = z + z * zz * (((((s[0] * zz + s[1]) * zz + s[2]) * zz + s[3]) * zz + s[4]) * zz + s[5])
    else:
        c = _COS_COEFFS
        y = 1.0 - 0.5 * zz + zz * zz * (((((c[0] * zz + c[1]) * zz + c[2]) * zz + c[3]) * zz + c[4]) * zz + c[5])
    return -y if sign else y


# -- tables --------------------------------------------------------------------------------------------
def rotation_group(n: int) -> list[int]:
    """[5^j mod 4n for j < n]: the exponents of the 4n-th roots that slot j evaluates at.

    (Lattigo keeps 5^j mod 2N; every use masks it to fewer bits, so mod 4n is the same.)"""
    _check_slot_count(n, "n")
    m = 4 * n
    out, p = [], 1
    for _ in range(n):
        out.append(p)
        p = p * GALOIS_GEN % m
    return out


def root_table(n: int) -> list[complex]:
    """The 4n+1 roots exp(2*pi*i*k/(4n)), k = 0 .. 4n, computed as Lattigo's GetRootsComplex128.

    Only cosines of the first quadrant are evaluated, cos(angle*k) with angle = 2*pi/(4n) (one
    float rounding for angle*k); the sine of angle*k is taken as cos(angle*(n - k)); the other
    quadrants are sign flips and swaps of those, so the table is exactly conjugate-symmetric:
    table[4n - k] == conj(table[k]).
    """
    _check_slot_count(n, "n")
    m = 4 * n
    quarter = n
    angle = 2 * 3.141592653589793 / float(m)
    cos_q = [lattigo_cos(angle * float(i)) for i in range(quarter)]
    re = [0.0] * (m + 1)
    im = [0.0] * (m + 1)
    for i in range(quarter):
        re[i] = cos_q[i]
    for i in range(quarter):
        im[quarter - i] += cos_q[i]          # im[0] stays 0, im[quarter] = cos(0) = 1
    for i in range(1, quarter + 1):
        re[i + quarter], im[i + quarter] = -re[quarter - i], im[quarter - i]
        re[i + 2 * quarter], im[i + 2 * quarter] = -re[i], -im[i]
        re[i + 3 * quarter], im[i + 3 * quarter] = re[quarter - i], -im[quarter - i]
    re[m], im[m] = re[0], im[0]
    return [complex(a, b) for a, b in zip(re, im)]


def bit_reverse_permutation(values: list) -> list:
    """A new list with element i moved to index bitrev(i) (len(values) a power of two)."""
    n = len(values)
    bits = n.bit_length() - 1
    out = [None] * n
    for i, v in enumerate(values):
        out[int(format(i, f"0{bits}b")[::-1], 2) if bits else 0] = v
    return out


def _stage_params(n: int, log_len: int):
    """(half, mask, gap_shift, lenq) of the butterfly stage with block length 2^log_len."""
    length = 1 << log_len
    lenq = length << 2
    return length >> 1, lenq - 1, (n.bit_length() - 1) - log_len, lenq


# -- float64 -----------------------------------------------------------------------------------------
def special_ifft(slots) -> list[complex]:
    """w = special inverse FFT of ``slots`` (n complex values, n a power of two in 2^2 .. 2^15).

    Algorithm (Lattigo's SpecialiFFTDouble): for block lengths L = n, n/2, ..., 2 and every block,
    for j < L/2 with u = x[k], v = x[k + L/2]:
        x[k] = u + v,  x[k + L/2] = (u - v) * root[(4L - (rot[j] mod 4L)) * (n/L)]
    (Gentleman-Sande butterflies with conjugated twiddles), then every value divided by n, then
    the bit-reversal permutation.

    Returns
    -------
    list of n complex numbers w with  m(zeta^(5^j)) == slots[j], m as in the module docstring.
    """
    x = [complex(z) for z in slots]
    n = _check_slot_count(len(x), "len(slots)")
    rot = rotation_group(n)
    roots = root_table(n)
    for log_len in range(n.bit_length() - 1, 0, -1):
        half, mask, gap, lenq = _stage_params(n, log_len)
        for i in range(0, n, 2 * half):
            for j in range(half):
                k = i + j
                u, v = x[k], x[k + half]
                x[k] = u + v
                x[k + half] = (u - v) * roots[(lenq - (rot[j] & mask)) << gap]
    fn = float(n)
    x = [complex(z.real / fn, z.imag / fn) for z in x]
    return bit_reverse_permutation(x)


def special_fft(w) -> list[complex]:
    """slots = special FFT of ``w`` (the inverse of :func:`special_ifft`).

    Algorithm (Lattigo's SpecialFFTDouble): bit-reversal permutation, then for block lengths
    L = 2, 4, ..., n, every block, j < L/2:
        v = x[k + L/2] * root[(rot[j] mod 4L) * (n/L)];  x[k], x[k + L/2] = x[k] + v, x[k] - v
    (Cooley-Tukey butterflies).  No scaling.
    """
    x = [complex(z) for z in w]
    n = _check_slot_count(len(x), "len(w)")
    rot = rotation_group(n)
    roots = root_table(n)
    x = bit_reverse_permutation(x)
    for log_len in range(1, n.bit_length()):
        half, mask, gap, _ = _stage_params(n, log_len)
        for i in range(0, n, 2 * half):
            for j in range(half):
                k = i + j
                v = x[k + half] * roots[(rot[j] & mask) << gap]
                u = x[k]
                x[k], x[k + half] = u + v, u - v
    return x


def coefficients_from_w(w, n_ring: int) -> list[float]:
    """The N real coefficients (unscaled, unrounded) that carry w: m[k*gap] = Re w_k,
    m[(k+n)*gap] = Im w_k, gap = N/(2n), others 0 (Lattigo's sparse-packing map Y = X^gap)."""
    n = _check_slot_count(len(w), "len(w)")
    if n_ring < 2 * n or n_ring & (n_ring - 1):
        raise ParameterError("n_ring", n_ring, f"a power of two >= 2*len(w) = {2 * n}")
    gap = n_ring // (2 * n)
    m = [0.0] * n_ring
    for k, z in enumerate(w):
        m[k * gap] = complex(z).real
        m[(k + n) * gap] = complex(z).imag
    return m


def w_from_coefficients(m, slots: int) -> list[complex]:
    """Inverse of :func:`coefficients_from_w`: w_k = m[k*gap] + i*m[(k+n)*gap] (other
    coefficients ignored)."""
    n = _check_slot_count(slots, "slots")
    n_ring = len(m)
    if n_ring < 2 * n or n_ring & (n_ring - 1):
        raise ParameterError("len(m)", n_ring, f"a power of two >= 2*slots = {2 * n}")
    gap = n_ring // (2 * n)
    return [complex(m[k * gap], m[(k + n) * gap]) for k in range(n)]


# -- fixed point: format, quantisation -----------------------------------------------------------------
ROUNDING_MODES = ("half-up", "half-even", "truncate")


@dataclass(frozen=True)
class FixedPointFormat:
    """Signed two's complement fixed point: ``width`` bits of which ``frac_bits`` are fraction.

    Parameters
    ----------
    width : int       8 .. 64
    frac_bits : int   1 .. width-1; the value of integer v is v / 2^frac_bits
    rounding : str    how every right shift by s >= 1 bits rounds (:meth:`round_shift`):
                      "half-up"   add 2^(s-1), then arithmetic shift right (ties toward +inf) -
                                  the hardware default, one adder;
                      "half-even" ties to the even result (convergent rounding);
                      "truncate"  arithmetic shift right alone (floor, toward -inf).

    Members
    -------
    min_int, max_int : int   -2^(width-1), 2^(width-1) - 1
    one : int                2^frac_bits (1.0; representable iff frac_bits <= width - 2)
    """

    width: int
    frac_bits: int
    rounding: str = "half-up"

    def __post_init__(self):
        if not isinstance(self.width, int) or isinstance(self.width, bool) or not 8 <= self.width <= 64:
            raise ParameterError("width", self.width, "an integer in 8 .. 64")
        if not isinstance(self.frac_bits, int) or isinstance(self.frac_bits, bool) \
                or not 1 <= self.frac_bits < self.width:
            raise ParameterError("frac_bits", self.frac_bits, f"an integer in 1 .. width-1 = {self.width - 1}")
        if self.rounding not in ROUNDING_MODES:
            raise ParameterError("rounding", self.rounding, "one of " + ", ".join(ROUNDING_MODES))

    @property
    def min_int(self) -> int:
        return -(1 << (self.width - 1))

    @property
    def max_int(self) -> int:
        return (1 << (self.width - 1)) - 1

    @property
    def one(self) -> int:
        return 1 << self.frac_bits

    def wrap(self, x: int) -> int:
        """x reduced to ``width`` bits two's complement (what a register of that width holds)."""
        half = 1 << (self.width - 1)
        return ((x + half) & ((1 << self.width) - 1)) - half

    def round_shift(self, x: int, s: int) -> int:
        """x / 2^s rounded by this format's rule (exact integers; s >= 1)."""
        if self.rounding == "half-up":
            return (x + (1 << (s - 1))) >> s
        if self.rounding == "truncate":
            return x >> s
        q = x >> s
        rem = x - (q << s)
        half = 1 << (s - 1)
        if rem > half or (rem == half and q & 1):
            q += 1
        return q


@dataclass
class FixedStats:
    """Counts what the fixed-point datapath did (pass one to the transforms to collect it).

    Members
    -------
    writes : int      values written back to ``width``-bit registers
    overflows : int   of those, how many did not fit and wrapped around
    max_abs : int     largest |value| before wrapping (headroom check)
    """

    writes: int = 0
    overflows: int = 0
    max_abs: int = 0

    def record(self, x: int, fmt: FixedPointFormat) -> None:
        self.writes += 1
        self.max_abs = max(self.max_abs, abs(x))
        if not fmt.min_int <= x <= fmt.max_int:
            self.overflows += 1


def _store(x: int, fmt: FixedPointFormat, stats: FixedStats | None) -> int:
    if stats is not None:
        stats.record(x, fmt)
    return fmt.wrap(x)


def quantize(x: float, fmt: FixedPointFormat) -> int:
    """round(x * 2^frac_bits), half away from zero, saturated to [min_int, max_int].

    Exact: x * 2^frac_bits is computed without rounding (a power-of-two scaling of a float), and
    its fractional part is compared with 1/2 exactly.  Saturation (not wrap) because this is the
    conversion at the input of the datapath.  NaN raises ParameterError; +-inf saturate.
    """
    x = float(x)
    if math.isnan(x):
        raise ParameterError("x", x, "a number (not NaN)")
    if math.isinf(x):
        return fmt.max_int if x > 0 else fmt.min_int
    y = math.ldexp(abs(x), fmt.frac_bits)
    v = int(y)                                   # truncation, exact
    if y - v >= 0.5:                             # exact: y and v are close floats
        v += 1
    if x < 0:
        v = -v
    return max(fmt.min_int, min(fmt.max_int, v))


def dequantize(v: int, fmt: FixedPointFormat) -> float:
    """v / 2^frac_bits as a float (exact for width <= 53 + frac_bits range of doubles)."""
    return math.ldexp(float(v), -fmt.frac_bits)


def quantize_complex(z: complex, fmt: FixedPointFormat) -> tuple[int, int]:
    """(quantize(Re z), quantize(Im z))."""
    z = complex(z)
    return quantize(z.real, fmt), quantize(z.imag, fmt)


def dequantize_complex(p: tuple[int, int], fmt: FixedPointFormat) -> complex:
    """complex(dequantize(re), dequantize(im))."""
    return complex(dequantize(p[0], fmt), dequantize(p[1], fmt))


def twiddle_table(n: int, fmt: FixedPointFormat) -> list[tuple[int, int]]:
    """The 4n+1 roots of :func:`root_table` quantised once with ``fmt`` (conjugate-symmetric too).
    The hardware stores the entries it indexes (the float root table's quantisation, so 1.0 is
    2^frac_bits, or max_int when frac_bits = width-1)."""
    return [quantize_complex(z, fmt) for z in root_table(n)]


# -- fixed point: products and butterflies -------------------------------------------------------------
def complex_mul_exact(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """(a_re + i a_im)(b_re + i b_im) in exact integers: (ac - bd, ad + bc) with a = x, c = tw."""
    return a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]


def complex_mul_3mult(a: tuple[int, int], c: tuple[int, int]) -> tuple[int, int]:
    """The same exact product with three multipliers (for hardware that uses them):
    with a = (a + bi), c = (c + di): k1 = c*(a + b), k2 = a*(d - c), k3 = b*(c + d),
    re = k1 - k3, im = k1 + k2.  Equal to :func:`complex_mul_exact` for all integers."""
    a_, b_ = a
    c_, d_ = c
    k1 = c_ * (a_ + b_)
    k2 = a_ * (d_ - c_)
    k3 = b_ * (c_ + d_)
    return k1 - k3, k1 + k2


def _twiddle_product(x, tw, fmt, stats):
    """Exact complex product, ONE rounding shift by frac_bits per component, wrapped."""
    re, im = complex_mul_exact(x, tw)
    f = fmt.frac_bits
    return _store(fmt.round_shift(re, f), fmt, stats), _store(fmt.round_shift(im, f), fmt, stats)


def butterfly_ct_fixed(a: tuple[int, int], b: tuple[int, int], tw: tuple[int, int],
                       fmt: FixedPointFormat, stats: FixedStats | None = None):
    """Cooley-Tukey butterfly of the forward special FFT (no scaling).

    Steps (all exact integers until a register write, which wraps to ``width`` bits):
      1. ``v = round_shift(b * tw, frac_bits)``  per component (exact complex product first;
         either :func:`complex_mul_exact` or :func:`complex_mul_3mult`) -> wrap
      2. ``a' = a + v``, ``b' = a - v``   -> wrap

    Returns
    -------
    (a', b') as (re, im) pairs.  Latency in hardware: multiplier pipeline + 1 add stage.
    """
    v = _twiddle_product(b, tw, fmt, stats)
    return ((_store(a[0] + v[0], fmt, stats), _store(a[1] + v[1], fmt, stats)),
            (_store(a[0] - v[0], fmt, stats), _store(a[1] - v[1], fmt, stats)))


def butterfly_gs_fixed(a: tuple[int, int], b: tuple[int, int], tw: tuple[int, int],
                       fmt: FixedPointFormat, stats: FixedStats | None = None):
    """Gentleman-Sande butterfly of the inverse special FFT, halving (so no final 1/n).

    Steps:
      1. ``s = a + b``, ``d = a - b``            exact (width + 1 bits)
      2. ``a' = round_shift(s, 1)``, ``h = round_shift(d, 1)``   -> wrap (they always fit: the
         halved sum of two width-bit values is a width-bit value for every rounding mode)
      3. ``b' = round_shift(h * tw, frac_bits)`` per component, exact product first -> wrap
    The difference is halved *before* the product so the multiplier's data input stays ``width``
    bits wide.

    Returns
    -------
    (a', b') as (re, im) pairs.
    """
    s = (a[0] + b[0], a[1] + b[1])
    d = (a[0] - b[0], a[1] - b[1])
    u = (_store(fmt.round_shift(s[0], 1), fmt, stats), _store(fmt.round_shift(s[1], 1), fmt, stats))
    h = (_store(fmt.round_shift(d[0], 1), fmt, stats), _store(fmt.round_shift(d[1], 1), fmt, stats))
    return u, _twiddle_product(h, tw, fmt, stats)


def _check_fixed_input(values, fmt: FixedPointFormat, name: str) -> list[tuple[int, int]]:
    out = []
    for p in values:
        re, im = p
        for c in (re, im):
            if not isinstance(c, int) or not fmt.min_int <= c <= fmt.max_int:
                raise ParameterError(name, p, f"(re, im) pairs of integers in [{fmt.min_int}, {fmt.max_int}]")
        out.append((re, im))
    return out


def special_ifft_fixed(slots, fmt: FixedPointFormat, stats: FixedStats | None = None) -> list[tuple[int, int]]:
    """Fixed-point special inverse FFT: the same stages and twiddle indices as :func:`special_ifft`
    with :func:`butterfly_gs_fixed` (which halves, so the 1/n is spread over the log2(n) stages),
    then the bit-reversal permutation.

    Parameters
    ----------
    slots : list of (re, im) integer pairs in ``fmt`` (e.g. from :func:`quantize_complex`)
    fmt : FixedPointFormat
    stats : FixedStats or None   collects writes/overflows if given

    Returns
    -------
    list of n (re, im) pairs: w in ``fmt``.
    """
    x = _check_fixed_input(slots, fmt, "slots")
    n = _check_slot_count(len(x), "len(slots)")
    rot = rotation_group(n)
    tw = twiddle_table(n, fmt)
    for log_len in range(n.bit_length() - 1, 0, -1):
        half, mask, gap, lenq = _stage_params(n, log_len)
        for i in range(0, n, 2 * half):
            for j in range(half):
                k = i + j
                x[k], x[k + half] = butterfly_gs_fixed(
                    x[k], x[k + half], tw[(lenq - (rot[j] & mask)) << gap], fmt, stats)
    return bit_reverse_permutation(x)


def special_fft_fixed(w, fmt: FixedPointFormat, stats: FixedStats | None = None) -> list[tuple[int, int]]:
    """Fixed-point special FFT: bit-reversal permutation, then the same stages and twiddle indices
    as :func:`special_fft` with :func:`butterfly_ct_fixed`; no scaling (values grow back to slot
    magnitude: for slots in the unit disc every intermediate stays within it, see the tests).

    Parameters / Returns as :func:`special_ifft_fixed` (input w, output slots, both in ``fmt``).
    """
    x = _check_fixed_input(w, fmt, "w")
    n = _check_slot_count(len(x), "len(w)")
    rot = rotation_group(n)
    tw = twiddle_table(n, fmt)
    x = bit_reverse_permutation(x)
    for log_len in range(1, n.bit_length()):
        half, mask, gap, _ = _stage_params(n, log_len)
        for i in range(0, n, 2 * half):
            for j in range(half):
                k = i + j
                x[k], x[k + half] = butterfly_ct_fixed(x[k], x[k + half], tw[(rot[j] & mask) << gap], fmt, stats)
    return x

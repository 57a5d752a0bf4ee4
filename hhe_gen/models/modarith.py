"""Bit-exact golden models of the modular arithmetic units (adders and every reducer).

Every reducer here is the specification of one hardware pipeline: the hardware must produce the
same final value *and* may be checked against the same intermediate values (``trace``).  The
reducers are frozen dataclasses built for one modulus.  The hardware picks the modulus at run time
from a small table of per-prime constants; ``constants()`` returns one row of that table.

Reducers and the papers they come from
--------------------------------------
======================  ==========================================================  ===============
class                   algorithm                                                   ``mul`` returns
======================  ==========================================================  ===============
BarrettReducer          generic Barrett, two (k+1)x(k+1) products, <= 2 corrections  a*b mod q
WordMontgomeryReducer   word-level Montgomery for q = 1 mod 2^w [M19] (seed 001)    a*b*R^-1 mod q
SpecialPrimeBarrett     DNA-HHE Barrett for q = 2^k - 2N*bnd + 1 (seed 000, III-B)  a*b mod q
NttFriendlyMontgomery   ABC-FHE shift-add Montgomery, q = 2^e + kk*2N + 1 (seed 002)  a*b*R^-1 mod q
======================  ==========================================================  ===============

``reducer_for(name, q, width, **kw)`` builds one by name.  Every reducer has the members ``q``,
``width`` and ``montgomery_radix`` (R for the Montgomery ones, 1 for Barrett, so that
``mul(a, b) == a*b*pow(montgomery_radix, -1, q) % q`` for all of them), and the methods ``mul``,
``trace`` and ``constants``.

Conventions: all values are Python integers; ``trace`` values are exact (signed where a step can
go negative, e.g. a difference before its borrow is tested) - the hardware holds them in the bit
widths stated in each docstring, which the bounds there justify.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hhe_gen.params.errors import ParameterError

__all__ = [
    "mod_add", "mod_sub", "mod_neg", "mod_add_trace", "mod_sub_trace",
    "BarrettReducer", "WordMontgomeryReducer", "SpecialPrimeBarrett", "NttFriendlyMontgomery",
    "reducer_for", "REDUCER_NAMES", "signed_digits",
]

MIN_WIDTH = 16
MAX_WIDTH = 64


# -- validation helpers ----------------------------------------------------------------------------
def _check_width(width, name: str = "width") -> int:
    if not isinstance(width, int) or isinstance(width, bool) or not MIN_WIDTH <= width <= MAX_WIDTH:
        raise ParameterError(name, width, f"an integer in {MIN_WIDTH} .. {MAX_WIDTH}")
    return width


def _check_modulus(q, width: int) -> int:
    if not isinstance(q, int) or isinstance(q, bool) or q < 3 or q % 2 == 0 or q >= 1 << width:
        raise ParameterError("q", q, f"an odd integer with 3 <= q < 2^{width} (width = {width})")
    return q


def _check_operand(name: str, x, q: int) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < q:
        raise ParameterError(name, x, f"an integer with 0 <= {name} < q = {q}")
    return x


def _check_log_n(log_n) -> int:
    if not isinstance(log_n, int) or isinstance(log_n, bool) or not 1 <= log_n <= 17:
        raise ParameterError("log_n", log_n, "an integer in 1 .. 17 (N = 2^log_n)")
    return log_n


def _two_adic_valuation(x: int) -> int:
    """Largest v with 2^v dividing x (x != 0)."""
    return (x & -x).bit_length() - 1


def signed_digits(x: int) -> tuple[tuple[int, int], ...]:
    """Non-adjacent form of the integer ``x``: the signed binary digits of least weight.

    Returns
    -------
    tuple of (sign, shift) pairs, sign in {+1, -1}, shifts increasing, with
    ``sum(s << p for s, p in result) == x``.  No representation of x as a sum of signed powers of
    two has fewer terms, so a shift-add multiplier built from it uses the fewest adders.
    """
    digits = []
    shift = 0
    while x != 0:
        if x & 1:
            d = 2 - (x & 3)          # +1 if x = 1 mod 4, -1 if x = 3 mod 4
            digits.append((d, shift))
            x -= d
        x >>= 1
        shift += 1
    return tuple(digits)


def _shift_add(x: int, terms) -> int:
    """sum(sign * (x << shift)) - what a shift-add constant multiplier computes."""
    return sum(s * (x << p) for s, p in terms)


def _select(borrow: int, when_borrow: int, otherwise: int) -> int:
    """The constant-time multiplexer: both inputs are always computed; borrow (0/1) selects."""
    return when_borrow if borrow else otherwise


# -- modular addition / subtraction ---------------------------------------------------------------
def mod_add_trace(a: int, b: int, q: int) -> dict[str, int]:
    """Constant-time modular addition, step by step.

    Algorithm (a, b in [0, q)):
      1. ``sum = a + b``            in [0, 2q - 2], one bit wider than q
      2. ``diff = sum - q``         in [-q, q - 2]; its sign bit is ``borrow``
      3. ``result = sum if borrow else diff``   in [0, q)
    Both candidates are always computed and one is selected on the borrow bit, so timing and
    power do not depend on the data.  The final single correction is enough because sum < 2q.

    Returns
    -------
    dict with keys, in pipeline order: ``sum``, ``diff`` (signed), ``borrow`` (0/1), ``result``.
    """
    _check_operand("a", a, q)
    _check_operand("b", b, q)
    s = a + b
    d = s - q
    borrow = int(d < 0)
    return {"sum": s, "diff": d, "borrow": borrow, "result": _select(borrow, s, d)}


def mod_sub_trace(a: int, b: int, q: int) -> dict[str, int]:
    """Constant-time modular subtraction, step by step.

    Algorithm (a, b in [0, q)):
      1. ``diff = a - b``           in [-(q-1), q-1]; its sign bit is ``borrow``
      2. ``alt = diff + q``         in [1, 2q - 1]
      3. ``result = alt if borrow else diff``   in [0, q)

    Returns
    -------
    dict with keys, in pipeline order: ``diff`` (signed), ``borrow`` (0/1), ``alt``, ``result``.
    """
    _check_operand("a", a, q)
    _check_operand("b", b, q)
    d = a - b
    borrow = int(d < 0)
    alt = d + q
    return {"diff": d, "borrow": borrow, "alt": alt, "result": _select(borrow, alt, d)}


def mod_add(a: int, b: int, q: int) -> int:
    """(a + b) mod q for a, b in [0, q), constant-time formulation (see :func:`mod_add_trace`)."""
    return mod_add_trace(a, b, q)["result"]


def mod_sub(a: int, b: int, q: int) -> int:
    """(a - b) mod q for a, b in [0, q), constant-time formulation (see :func:`mod_sub_trace`)."""
    return mod_sub_trace(a, b, q)["result"]


def mod_neg(a: int, q: int) -> int:
    """(-a) mod q for a in [0, q): the subtractor with a = 0 (so -0 = 0, never q)."""
    return mod_sub(0, a, q)


# -- generic Barrett -------------------------------------------------------------------------------
def _barrett_tail(x: int, q_est: int, qq: int, q: int, trace: dict) -> dict:
    """Shared last steps of both Barretts: r0 = x - q_est*q in [0, 3q), two corrections."""
    r0 = x - qq
    trace["r0"] = r0
    d1 = r0 - q
    r1 = _select(int(d1 < 0), r0, d1)
    trace["r1"] = r1
    d2 = r1 - q
    r = _select(int(d2 < 0), r1, d2)
    trace["r"] = r
    return trace


@dataclass(frozen=True)
class BarrettReducer:
    """Generic Barrett modular multiplier for one odd modulus q < 2^width.

    Parameters
    ----------
    q : int       the modulus, odd, 3 <= q < 2^width
    width : int   datapath width in bits, 16 .. 64 (operands are < q < 2^width)

    Members
    -------
    k : int       bit length of q, so 2^(k-1) < q < 2^k.  Barrett's error bound needs
                  q >= 2^(k-1) for the shift amounts used, which is why k is bitlen(q) and not
                  ``width``: with k = width and a much smaller q the estimate could be off by a
                  lot.  For a table of moduli of one bit length (the usual RNS basis) k is one
                  design constant; otherwise the hardware selects the shifts per prime.
    mu : int      floor(2^(2k) / q), exactly k+1 bits (2^k < mu < 2^(k+1))
    montgomery_radix : int   1 (``mul`` returns a*b mod q)

    Algorithm (a, b in [0, q)), the names are the ``trace`` keys, in pipeline order:
      1. ``x = a*b``                      x <= (q-1)^2 < 2^(2k)                 (k x k product)
      2. ``x_hi = x >> (k-1)``            x_hi < 2^(k+1)
      3. ``p = x_hi * mu``                p < 2^(2k+2)                   ((k+1) x (k+1) product)
      4. ``q_est = p >> (k+1)``           Q - 2 <= q_est <= Q where Q = floor(x/q); q_est < 2^(k+1)
      5. ``qq = q_est * q``               qq <= x                          ((k+1) x k product;
                                          the hardware needs only its low k+2 bits, see 6)
      6. ``r0 = x - qq``                  0 <= r0 < 3q < 2^(k+2): computed modulo 2^(k+2), so only
                                          the low k+2 bits of x and qq matter
      7. ``r1 = r0 - q if r0 >= q else r0``   0 <= r1 < 2q  (first correction)
      8. ``r  = r1 - q if r1 >= q else r1``   0 <= r  < q   (second correction)
    Corrections are constant time: the difference is always computed, its sign selects.

    Why two corrections (and no more).  Write x = x_hi*2^(k-1) + x_lo (x_lo < 2^(k-1)) and
    mu = 2^(2k)/q - e (0 <= e < 1).  Then
      x_hi*mu / 2^(k+1) = (x - x_lo)/q - e*x_hi/2^(k+1) > x/q - 2^(k-1)/q - x_hi/2^(k+1).
    Since q > 2^(k-1), 2^(k-1)/q < 1; since x < 2^(2k), x_hi < 2^(k+1), so x_hi/2^(k+1) < 1.
    Hence x_hi*mu/2^(k+1) > x/q - 2 and q_est = floor(...) >= Q - 2 (an integer greater than
    x/q - 3 >= Q - 3).  From above, x_hi*mu/2^(k+1) <= (x/2^(k-1))*(2^(2k)/q)/2^(k+1) = x/q,
    so q_est <= Q.  So r0 = x - q_est*q = (x mod q) + (Q - q_est)*q lies in [0, 3q), and two
    conditional subtractions of q are necessary in the worst case and always enough.
    (The bound sum 2^(k-1)/q + q^2/2^(2k) exceeds 1 for every q in (2^(k-1), 2^k), so this
    argument cannot give a single correction; tests observe whether r0 >= 2q actually occurs.)
    """

    q: int
    width: int
    k: int = field(init=False)
    mu: int = field(init=False)

    def __post_init__(self):
        _check_width(self.width)
        _check_modulus(self.q, self.width)
        k = self.q.bit_length()
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "mu", (1 << (2 * k)) // self.q)

    @property
    def montgomery_radix(self) -> int:
        return 1

    def constants(self) -> dict[str, int]:
        """One row of the runtime modulus table: ``q``, ``k``, ``mu``."""
        return {"q": self.q, "k": self.k, "mu": self.mu}

    def trace(self, a: int, b: int) -> dict[str, int]:
        """Every intermediate value of the pipeline (keys and bounds in the class docstring)."""
        _check_operand("a", a, self.q)
        _check_operand("b", b, self.q)
        k = self.k
        x = a * b
        x_hi = x >> (k - 1)
        p = x_hi * self.mu
        q_est = p >> (k + 1)
        qq = q_est * self.q
        t = {"x": x, "x_hi": x_hi, "p": p, "q_est": q_est, "qq": qq}
        return _barrett_tail(x, q_est, qq, self.q, t)

    def mul(self, a: int, b: int) -> int:
        """a*b mod q for a, b in [0, q)."""
        return self.trace(a, b)["r"]


# -- word-level Montgomery ([M19]) ------------------------------------------------------------------
@dataclass(frozen=True)
class WordMontgomeryReducer:
    """Word-level Montgomery multiplier for NTT-friendly primes q = q_hi*2^w + 1 (Mert et al. [M19]).

    The design-time-flexible NTT paper (seeds/001, section on modular multiplication) uses this
    reduction: because q = 1 (mod 2^w), -q^-1 = -1 (mod 2^w), so the Montgomery quotient digit of
    each w-bit word is just the two's complement of that word, and the only multiplier besides
    a*b is the small w x (bitlen(q) - w) product m * q_hi.

    Parameters
    ----------
    q : int          the modulus, odd, q < 2^width, and q = 1 (mod 2^word_bits)
    width : int      datapath width, 16 .. 64
    word_bits : int  w, the word size, 1 <= w < width (typically log2(2N) .. 18 so that the
                     w x (bitlen(q)-w) product maps onto DSP blocks)

    Members
    -------
    words : int      L = ceil(width / w), the number of word steps
    montgomery_radix : int   R = 2^(w*L) (> q); ``mul`` returns a*b*R^-1 mod q
    q_hi : int       q >> w  (so q = q_hi*2^w + 1)

    Algorithm (a, b in [0, q)), names are ``trace`` keys in pipeline order:
      ``x = a*b`` (x < q^2), ``t0 = x``; then for i = 0 .. L-1 (one pipeline stage each):
        ``lo{i}    = t{i} mod 2^w``          the low word
        ``m{i}     = (-lo{i}) mod 2^w``      its two's complement (the quotient digit, since
                                              -q^-1 = -1 mod 2^w); w bits
        ``carry{i} = 1 if lo{i} != 0 else 0``   (hardware: lo[w-1] | m[w-1], because
                                              lo + m is 0 or 2^w)
        ``t{i+1}   = (t{i} >> w) + m{i}*q_hi + carry{i}``
      This equals (t{i} + m{i}*q) / 2^w exactly: m*q = m*q_hi*2^w + m and lo + m = carry*2^w.
      ``r = t{L} - q if t{L} >= q else t{L}``   (one constant-time correction)

    Bounds.  By induction t{i} = (x + M_i*q) / 2^(w*i) with 0 <= M_i < 2^(w*i) (M_i collects
    the digits m), so t{i} < x/2^(w*i) + q.  At the end t{L} < q^2/R + q < 2q because q < 2^width
    <= R; one conditional subtraction gives r in [0, q).  Each t{i} < q^2 + q fits 2*width bits.

    Montgomery form: ``to_mont(a) = a*R mod q`` (hardware: mul(a, R^2 mod q)), ``from_mont(a) =
    mul(a, 1)``.
    """

    q: int
    width: int
    word_bits: int
    words: int = field(init=False)
    q_hi: int = field(init=False)

    def __post_init__(self):
        _check_width(self.width)
        _check_modulus(self.q, self.width)
        w = self.word_bits
        if not isinstance(w, int) or isinstance(w, bool) or not 1 <= w < self.width:
            raise ParameterError("word_bits", w, f"an integer in 1 .. width-1 = {self.width - 1}")
        if self.q % (1 << w) != 1:
            raise ParameterError(
                "q", self.q,
                f"q = 1 (mod 2^word_bits = 2^{w}) for word-level Montgomery (then -q^-1 = -1 mod 2^{w})")
        object.__setattr__(self, "words", -(-self.width // w))
        object.__setattr__(self, "q_hi", self.q >> w)

    @property
    def montgomery_radix(self) -> int:
        return 1 << (self.word_bits * self.words)

    def constants(self) -> dict[str, int]:
        """One row of the runtime modulus table: ``q``, ``q_hi`` and ``r2`` = R^2 mod q
        (the constant that converts into Montgomery form with one ``mul``)."""
        r = self.montgomery_radix
        return {"q": self.q, "q_hi": self.q_hi, "r2": r * r % self.q}

    def trace(self, a: int, b: int) -> dict[str, int]:
        """Every intermediate value (keys and bounds in the class docstring)."""
        _check_operand("a", a, self.q)
        _check_operand("b", b, self.q)
        w = self.word_bits
        mask = (1 << w) - 1
        x = a * b
        t = x
        out = {"x": x, "t0": t}
        for i in range(self.words):
            lo = t & mask
            m = -lo & mask
            carry = int(lo != 0)
            t = (t >> w) + m * self.q_hi + carry
            out[f"lo{i}"] = lo
            out[f"m{i}"] = m
            out[f"carry{i}"] = carry
            out[f"t{i + 1}"] = t
        d = t - self.q
        out["r"] = _select(int(d < 0), t, d)
        return out

    def mul(self, a: int, b: int) -> int:
        """a*b*R^-1 mod q for a, b in [0, q)."""
        return self.trace(a, b)["r"]

    def to_mont(self, a: int) -> int:
        """a*R mod q, computed as the hardware does: mul(a, R^2 mod q)."""
        return self.mul(a, self.constants()["r2"])

    def from_mont(self, a: int) -> int:
        """a*R^-1 mod q = mul(a, 1)."""
        return self.mul(a, 1)


# -- DNA-HHE special-prime Barrett --------------------------------------------------------------------
@dataclass(frozen=True)
class SpecialPrimeBarrett:
    """DSP-efficient Barrett for DNA-HHE primes q = 2^k - 2N*bnd + 1 (seeds/000, section III-B).

    Parameters
    ----------
    q : int           the modulus; must equal 2^k - 2N*bnd + 1 with 1 <= bnd < 2^bnd_bits and
                      q > 2^(k-1) (so bitlen(q) = k)
    k : int           16 .. 64
    log_n : int       N = 2^log_n is the ring degree (1 .. 17); 2N divides 2^k + 1 - q
    bnd_bits : int    width of bnd, 1 .. 16 (the paper: 10)
    delta_shift : int or None   s, the number of zero bits at the bottom of Delta that the
                      hardware drops (Delta = {Delta_hi, s'b0}); default: log_n + 1 if 2N divides
                      Delta (always true when (2N*bnd-1)^2 < q, see below), else the number of
                      trailing zeros of Delta.  The paper uses s = 12 for all its primes.
    width : int or None   datapath width, k .. 64 (default k)

    Members
    -------
    bnd : int         (2^k + 1 - q) / 2N
    mu : int          floor(2^(2k) / q)
    delta : int       Delta = mu - 2^k + 1 (DNA-HHE eq. 3: mu = 2^k + Delta - 1)
    delta_hi : int    Delta >> delta_shift; the mu-product is a (k+1) x bitlen(delta_hi) product
    montgomery_radix : int   1

    Delta in closed form.  With c = 2N*bnd - 1, q = 2^k - c and 2^(2k) = (2^k - c)(2^k + c) + c^2,
    so mu = 2^k + c + floor(c^2 / q) and Delta = 2N*bnd + floor(c^2 / q).  Hence:
      * if c^2 < q (for example k = 54, log_n <= 16, bnd < 2^10: c < 2^27, c^2 < 2^54 - 2^28 < q),
        Delta = 2N*bnd exactly: log_n + 1 trailing zeros and bitlen(bnd) significant bits, so the
        mu-product is a (k+1) x bnd_bits product.  The paper's Delta = {Delta', 12'b0} (24 bits at
        k = 54) is this with s = 12 <= log_n + 1, i.e. Delta' = bnd * 2^(log_n + 1 - 12).
      * otherwise (small k relative to log_n + bnd_bits) the correction floor(c^2/q) >= 1 is
        added, Delta is no longer a multiple of 2N in general and has more significant bits;
        the model still works (delta_shift falls back to the actual trailing zeros).
    DNA-HHE's eq. 4-5 (delta_1 < Delta < delta_2 with delta_2 = delta_1 + 1) express the same
    uniqueness; tests check both forms.

    Algorithm: the generic Barrett of :class:`BarrettReducer` (same k, same mu, same bounds, hence
    the same two corrections) with both constant products rewritten (names = ``trace`` keys):
      1. ``x = a*b``                        x < 2^(2k)
      2. ``x_hi = x >> (k-1)``              x_hi < 2^(k+1)
      3. ``pd = x_hi * delta_hi``           the (k+1) x bitlen(delta_hi) product
      4. ``p = (x_hi << k) + (pd << s) - x_hi``   = x_hi * mu   (shifts and adds)
      5. ``q_est = p >> (k+1)``             Q - 2 <= q_est <= Q
      6. ``pb = q_est * bnd``               the (k+1) x bnd_bits product
      7. ``qq = (q_est << k) - (pb << (log_n+1)) + q_est``   = q_est * q  (shifts and adds)
      8. ``r0 = x - qq``                    [0, 3q), low k+2 bits suffice
      9. ``r1``, ``r``                      two constant-time corrections as in BarrettReducer
    """

    q: int
    k: int
    log_n: int
    bnd_bits: int = 10
    delta_shift: int | None = None
    width: int | None = None
    bnd: int = field(init=False)
    mu: int = field(init=False)
    delta: int = field(init=False)
    delta_hi: int = field(init=False)

    def __post_init__(self):
        _check_width(self.k, "k")
        width = self.k if self.width is None else self.width
        _check_width(width)
        if width < self.k:
            raise ParameterError("width", width, f"at least k = {self.k}")
        object.__setattr__(self, "width", width)
        _check_log_n(self.log_n)
        if not isinstance(self.bnd_bits, int) or isinstance(self.bnd_bits, bool) \
                or not 1 <= self.bnd_bits <= 16:
            raise ParameterError("bnd_bits", self.bnd_bits, "an integer in 1 .. 16")
        _check_modulus(self.q, width)
        k, two_n = self.k, 2 << self.log_n
        c1 = (1 << k) + 1 - self.q                     # = 2N * bnd
        form = (f"q = 2^k - 2N*bnd + 1 with k = {k}, 2N = {two_n}, 1 <= bnd < 2^{self.bnd_bits} "
                f"and q > 2^(k-1)")
        if c1 <= 0 or c1 % two_n != 0 or self.q <= 1 << (k - 1):
            raise ParameterError("q", self.q, form)
        bnd = c1 // two_n
        if bnd >= 1 << self.bnd_bits:
            raise ParameterError("q", self.q, form + f" (here bnd = {bnd})")
        mu = (1 << (2 * k)) // self.q
        delta = mu - (1 << k) + 1
        tz = _two_adic_valuation(delta)
        shift = self.delta_shift
        if shift is None:
            shift = min(tz, self.log_n + 1)
        elif not isinstance(shift, int) or isinstance(shift, bool) or not 0 <= shift <= tz:
            raise ParameterError("delta_shift", shift,
                                 f"0 .. {tz} (Delta = {delta} has {tz} trailing zero bits)")
        object.__setattr__(self, "delta_shift", shift)
        object.__setattr__(self, "bnd", bnd)
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "delta_hi", delta >> shift)

    @property
    def montgomery_radix(self) -> int:
        return 1

    def constants(self) -> dict[str, int]:
        """One row of the runtime modulus table: ``q``, ``bnd``, ``delta_hi`` (per prime) and the
        design constants ``k``, ``log_n``, ``delta_shift`` (equal across a table built for one
        design; listed so that a row is self-contained)."""
        return {"q": self.q, "bnd": self.bnd, "delta_hi": self.delta_hi,
                "k": self.k, "log_n": self.log_n, "delta_shift": self.delta_shift}

    def trace(self, a: int, b: int) -> dict[str, int]:
        """Every intermediate value (keys and bounds in the class docstring)."""
        _check_operand("a", a, self.q)
        _check_operand("b", b, self.q)
        k = self.k
        x = a * b
        x_hi = x >> (k - 1)
        pd = x_hi * self.delta_hi
        p = (x_hi << k) + (pd << self.delta_shift) - x_hi
        q_est = p >> (k + 1)
        pb = q_est * self.bnd
        qq = (q_est << k) - (pb << (self.log_n + 1)) + q_est
        t = {"x": x, "x_hi": x_hi, "pd": pd, "p": p, "q_est": q_est, "pb": pb, "qq": qq}
        return _barrett_tail(x, q_est, qq, self.q, t)

    def mul(self, a: int, b: int) -> int:
        """a*b mod q for a, b in [0, q)."""
        return self.trace(a, b)["r"]


# -- ABC-FHE NTT-friendly shift-add Montgomery --------------------------------------------------------
def _abc_decompose(q: int, log_n: int, max_terms: int):
    """(e, kk, kk_terms) with q = 2^e + kk*2^(log_n+1) + 1, kk of least signed-digit weight."""
    best = None
    for e in (q.bit_length(), q.bit_length() - 1):
        if e <= log_n + 1:
            continue
        rest = q - 1 - (1 << e)
        if rest % (2 << log_n):
            continue
        kk = rest >> (log_n + 1)
        digits = signed_digits(kk)
        if len(digits) <= max_terms and (best is None or len(digits) < len(best[2])):
            best = (e, kk, digits)
    return best


@dataclass(frozen=True)
class NttFriendlyMontgomery:
    """ABC-FHE's NTT-friendly Montgomery multiplier with a shift-add QInv (seeds/002, eq. 4-11).

    Parameters
    ----------
    q : int           the modulus, q = 2^e + kk*2^(log_n+1) + 1 with kk = a signed sum of at most
                      ``max_kk_terms`` powers of two (2^(log_n+1) = 2N) and e > log_n + 1
    log_n : int       N = 2^log_n, 1 .. 17
    width : int       datapath width, 16 .. 64, q < 2^width
    r_bits : int or None   r with R = 2^r; bitlen(q) <= r <= 64; default ``width``
    max_kk_terms : int     1 .. 4 (the paper: 3)
    negated : bool    False: QInv = q^-1 mod R and the paper's t = (T - m*q)/R with "add q if
                      negative" (eq. 5-7); True: QInv = -q^-1 mod R and the classic
                      t = (T + m*q)/R with "subtract q if >= q".

    Members
    -------
    e, kk : int               the decomposition of q
    kk_terms : tuple          signed digits (sign, power) of kk (non-adjacent form)
    series_terms : int        T, the number of terms of the geometric series used for QInv
    qinv : int                QInv (q^-1 or -q^-1 mod R); verified QInv*q = +-1 mod R
    qinv_terms : tuple        (sign, shift) pairs with sum(sign << shift) = QInv (mod R), all
                              shifts < r: the shift-add network computing m = t_lo*QInv mod R
    q_terms : tuple           (sign, shift) pairs with sum(sign << shift) = q: the shift-add
                              network computing m*q
    montgomery_radix : int    R = 2^r; ``mul`` returns a*b*R^-1 mod q

    Exact condition for the shift-add QInv (what eq. 9-11 try to say).  Put x = q - 1 =
    2^e + kk*2N and let v be the 2-adic valuation of x (v = log_n + 1 + v2(kk) when
    e > log_n + 1 + v2(kk), which holds for every useful prime).  Then
        (1 + x) * sum_{i<T} (-x)^i = 1 - (-x)^T,
    so sum_{i<T} (-x)^i is q^-1 modulo R = 2^r exactly when x^T = 0 (mod 2^r), i.e. T*v >= r:
        T = ceil(r / v)  terms:  q^-1 = 1 - x + x^2 - ... +- x^(T-1)  (mod 2^r).
    The paper's eq. 11 (QInv = 1 - x: 2^e and the kk terms negated, plus 1) is the case T = 2,
    valid iff r <= 2v = 2*(log_n + 1 + v2(kk)).  Examples with kk odd: N = 2^16 (v = 17): R = 2^32
    and R = 2^34 need 2 terms, R = 2^36 needs 3; N = 2^13 (v = 14): R = 2^28 needs 2, R = 2^36 and
    2^42 need 3, R = 2^54 needs 4, R = 2^64 needs 5.  The paper's condition on kk does not capture
    this (it ignores r).  The series is expanded, reduced mod R and rewritten in non-adjacent form
    (``qinv_terms``); its weight is at most that of the expanded series.

    Algorithm (a, b in [0, q)), names are ``trace`` keys in pipeline order (``negated=False``):
      1. ``x = a*b``                                 x < q^2 < q*R     (the only real multiplier)
      2. ``t_lo = x mod R``                          r bits
      3. ``m = sum(s * (t_lo << p) for qinv_terms) mod R``   = t_lo*QInv mod R, r bits
      4. ``mq = sum(s * (m << p) for q_terms)``      = m*q, 0 <= mq < R*q
      5. ``d = x - mq``                              -R*q < d < q^2; d = 0 (mod R) by the choice of m
      6. ``t = d >> r``                              exact division, -q < t < q
      7. ``r = t + q if t < 0 else t``               one constant-time correction, [0, q)
    With ``negated=True``: 5. ``d = x + mq`` in [0, q^2 + R*q), 6. ``t = d >> r`` in [0, 2q),
    7. ``r = t - q if t >= q else t``.
    """

    q: int
    log_n: int
    width: int
    r_bits: int | None = None
    max_kk_terms: int = 3
    negated: bool = False
    e: int = field(init=False)
    kk: int = field(init=False)
    kk_terms: tuple = field(init=False)
    series_terms: int = field(init=False)
    qinv: int = field(init=False)
    qinv_terms: tuple = field(init=False)
    q_terms: tuple = field(init=False)

    def __post_init__(self):
        _check_width(self.width)
        _check_modulus(self.q, self.width)
        _check_log_n(self.log_n)
        if not isinstance(self.max_kk_terms, int) or not 1 <= self.max_kk_terms <= 4:
            raise ParameterError("max_kk_terms", self.max_kk_terms, "an integer in 1 .. 4")
        r = self.width if self.r_bits is None else self.r_bits
        if not isinstance(r, int) or isinstance(r, bool) or not self.q.bit_length() <= r <= 64:
            raise ParameterError("r_bits", r, f"an integer in bitlen(q) = {self.q.bit_length()} .. 64")
        object.__setattr__(self, "r_bits", r)
        dec = _abc_decompose(self.q, self.log_n, self.max_kk_terms)
        if dec is None:
            raise ParameterError(
                "q", self.q,
                f"q = 2^e + kk*2N + 1 with 2N = 2^{self.log_n + 1}, e > log_n + 1 and kk a signed sum "
                f"of at most {self.max_kk_terms} powers of two")
        e, kk, kk_terms = dec
        x = self.q - 1
        v = _two_adic_valuation(x)
        terms = -(-r // v)
        big_r = 1 << r
        series = sum((-x) ** i for i in range(terms))
        qinv = (-series if self.negated else series) % big_r
        target = big_r - 1 if self.negated else 1
        if qinv * self.q % big_r != target:      # cannot happen: (1+x)*series = 1 - (-x)^T
            raise ArithmeticError(f"QInv series failed for q = {self.q}, r = {r}")
        qinv_terms = tuple((s, p) for s, p in signed_digits(qinv) if p < r)
        if _shift_add(1, qinv_terms) % big_r != qinv:
            raise ArithmeticError("QInv signed digits do not reproduce QInv")
        for name, value in (("e", e), ("kk", kk), ("kk_terms", kk_terms), ("series_terms", terms),
                            ("qinv", qinv), ("qinv_terms", qinv_terms),
                            ("q_terms", signed_digits(self.q))):
            object.__setattr__(self, name, value)

    @property
    def montgomery_radix(self) -> int:
        return 1 << self.r_bits

    def constants(self) -> dict[str, int]:
        """One row of the runtime modulus table: ``q``, ``qinv`` and the shape ``e``, ``kk`` (from
        which both shift-add networks are generated; ``qinv_terms`` / ``q_terms`` list them)."""
        return {"q": self.q, "qinv": self.qinv, "e": self.e, "kk": self.kk}

    def trace(self, a: int, b: int) -> dict[str, int]:
        """Every intermediate value (keys and bounds in the class docstring)."""
        _check_operand("a", a, self.q)
        _check_operand("b", b, self.q)
        r = self.r_bits
        x = a * b
        t_lo = x & ((1 << r) - 1)
        m = _shift_add(t_lo, self.qinv_terms) & ((1 << r) - 1)
        mq = _shift_add(m, self.q_terms)
        if self.negated:
            d = x + mq
            t = d >> r
            diff = t - self.q
            res = _select(int(diff < 0), t, diff)
        else:
            d = x - mq
            t = d >> r
            res = _select(int(t < 0), t + self.q, t)
        return {"x": x, "t_lo": t_lo, "m": m, "mq": mq, "d": d, "t": t, "r": res}

    def mul(self, a: int, b: int) -> int:
        """a*b*R^-1 mod q for a, b in [0, q)."""
        return self.trace(a, b)["r"]

    def to_mont(self, a: int) -> int:
        """a*R mod q, computed as the hardware does: mul(a, R^2 mod q)."""
        big_r = self.montgomery_radix
        return self.mul(a, big_r * big_r % self.q)

    def from_mont(self, a: int) -> int:
        """a*R^-1 mod q = mul(a, 1)."""
        return self.mul(a, 1)


# -- factory ----------------------------------------------------------------------------------------
REDUCER_NAMES = ("barrett", "montgomery", "special-barrett", "ntt-montgomery")


def reducer_for(name: str, q: int, width: int, **kw):
    """Build a reducer by name.

    Parameters
    ----------
    name : str   one of ``REDUCER_NAMES``:
                 "barrett" -> BarrettReducer(q, width)
                 "montgomery" -> WordMontgomeryReducer(q, width, word_bits=...)  (word_bits required)
                 "special-barrett" -> SpecialPrimeBarrett(q, k=kw.get("k", width), log_n=..., width=width, ...)
                 "ntt-montgomery" -> NttFriendlyMontgomery(q, log_n=..., width=width, ...)
    q, width : int   the modulus and datapath width
    **kw         the remaining constructor arguments of that reducer

    Returns
    -------
    the reducer object.  Raises ParameterError for an unknown name or a missing argument.
    """
    if name == "barrett":
        return BarrettReducer(q, width, **kw)
    if name == "montgomery":
        if "word_bits" not in kw:
            raise ParameterError("word_bits", None, "required for the 'montgomery' reducer")
        return WordMontgomeryReducer(q, width, **kw)
    if name == "special-barrett":
        if "log_n" not in kw:
            raise ParameterError("log_n", None, "required for the 'special-barrett' reducer")
        kw.setdefault("k", width)
        return SpecialPrimeBarrett(q, width=width, **kw)
    if name == "ntt-montgomery":
        if "log_n" not in kw:
            raise ParameterError("log_n", None, "required for the 'ntt-montgomery' reducer")
        return NttFriendlyMontgomery(q, width=width, **kw)
    raise ParameterError("reducer", name, "one of " + ", ".join(repr(n) for n in REDUCER_NAMES))

"""DNA-HHE special-prime Barrett reducer for q = 2^k - 2N*bnd + 1 (seed 000, III-B; golden model)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hhe_gen.params.errors import ParameterError

from .barrett import _barrett_tail
from .common import _check_log_n, _check_modulus, _check_operand, _check_width, _two_adic_valuation


@dataclass(frozen=True)
class SpecialPrimeBarrett:
    """DSP-efficient Barrett for DNA-HHE primes q = 2^k - 2N*bnd + 1 (section III-B).

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

"""ABC-FHE NTT-friendly shift-add Montgomery reducer, q = 2^e + kk*2N + 1 (seed 002; golden model)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hhe_gen.params.errors import ParameterError

from .common import (_check_log_n, _check_modulus, _check_operand, _check_width, _select,
                     _shift_add, _two_adic_valuation, signed_digits)


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
    """ABC-FHE's NTT-friendly Montgomery multiplier with a shift-add QInv (eq. 4-11).

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

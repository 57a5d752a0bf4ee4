"""Generic Barrett reducer (golden model)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hhe_gen.params.errors import ParameterError

from .common import _check_modulus, _check_operand, _check_width, _select


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
    k : int or None   the design's bit length, bitlen(q) .. width (default bitlen(q)).  A table of
                  moduli of different bit lengths (an RNS basis with a wider special prime P) uses
                  the largest one for all: the narrower moduli are scaled (below).

    Members
    -------
    k : int       the reduction's bit length.  Barrett's error bound needs the modulus it reduces
                  by to have exactly k bits (with a much smaller modulus the estimate could be off
                  by a lot), so a modulus narrower than k is scaled to k bits first.
    shift : int   k - bitlen(q): the scaling, 0 for a modulus of k bits
    q_scaled : int   q * 2^shift, the modulus the steps below reduce by: 2^(k-1) < q_scaled < 2^k
    mu : int      floor(2^(2k) / q_scaled), exactly k+1 bits (2^k < mu < 2^(k+1))
    montgomery_radix : int   1 (``mul`` returns a*b mod q)

    Scaling.  (a * b*2^s) mod (q*2^s) = (a*b mod q) * 2^s, so with s = ``shift`` the reduction by
    the k-bit q_scaled of a times ``b_s = b << s`` gives the wanted residue shifted left by s; the
    result is ``r_s >> s``.  Every bound below holds with q_scaled in place of q (a, b_s < q_scaled).
    With s = 0 (one bit length, the usual RNS basis) b_s = b and r = r_s: nothing is added.

    Algorithm (a, b in [0, q)), the names are the ``trace`` keys, in pipeline order (q stands for
    q_scaled and b for b_s where they differ):
      0. ``b_s = b << shift``
      1. ``x = a*b_s``                    x <= (q-1)^2 < 2^(2k)                 (k x k product)
      2. ``x_hi = x >> (k-1)``            x_hi < 2^(k+1)
      3. ``p = x_hi * mu``                p < 2^(2k+2)                   ((k+1) x (k+1) product)
      4. ``q_est = p >> (k+1)``           Q - 2 <= q_est <= Q where Q = floor(x/q); q_est < 2^(k+1)
      5. ``qq = q_est * q``               qq <= x                          ((k+1) x k product;
                                          the hardware needs only its low k+2 bits, see 6)
      6. ``r0 = x - qq``                  0 <= r0 < 3q < 2^(k+2): computed modulo 2^(k+2), so only
                                          the low k+2 bits of x and qq matter
      7. ``r1 = r0 - q if r0 >= q else r0``   0 <= r1 < 2q  (first correction)
      8. ``r_s = r1 - q if r1 >= q else r1``  0 <= r_s < q  (second correction)
      9. ``r = r_s >> shift``
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
    k: int | None = None
    shift: int = field(init=False)
    q_scaled: int = field(init=False)
    mu: int = field(init=False)

    def __post_init__(self):
        _check_width(self.width)
        _check_modulus(self.q, self.width)
        bits = self.q.bit_length()
        k = bits if self.k is None else self.k
        if not isinstance(k, int) or isinstance(k, bool) or not bits <= k <= self.width:
            raise ParameterError("k", self.k, f"an int in [{bits}, {self.width}] (bitlen(q) .. width)")
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "shift", k - bits)
        object.__setattr__(self, "q_scaled", self.q << (k - bits))
        object.__setattr__(self, "mu", (1 << (2 * k)) // self.q_scaled)

    @property
    def montgomery_radix(self) -> int:
        return 1

    def constants(self) -> dict[str, int]:
        """One row of the runtime modulus table: ``q``, ``k``, ``mu``, ``shift``, ``q_scaled``."""
        return {"q": self.q, "k": self.k, "mu": self.mu, "shift": self.shift, "q_scaled": self.q_scaled}

    def trace(self, a: int, b: int) -> dict[str, int]:
        """Every intermediate value of the pipeline (keys and bounds in the class docstring)."""
        _check_operand("a", a, self.q)
        _check_operand("b", b, self.q)
        k, qs = self.k, self.q_scaled
        b_s = b << self.shift
        x = a * b_s
        x_hi = x >> (k - 1)
        p = x_hi * self.mu
        q_est = p >> (k + 1)
        qq = q_est * qs
        t = _barrett_tail(x, q_est, qq, qs, {"b_s": b_s, "x": x, "x_hi": x_hi, "p": p, "q_est": q_est, "qq": qq})
        t["r_s"] = t["r"]
        t["r"] = t["r_s"] >> self.shift
        return t

    def mul(self, a: int, b: int) -> int:
        """a*b mod q for a, b in [0, q)."""
        return self.trace(a, b)["r"]

"""Word-level Montgomery reducer for q = 1 mod 2^w ([M19], seed 001; golden model)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hhe_gen.params.errors import ParameterError

from .common import _check_modulus, _check_operand, _check_width, _select


@dataclass(frozen=True)
class WordMontgomeryReducer:
    """Word-level Montgomery multiplier for NTT-friendly primes q = q_hi*2^w + 1 (Mert et al. [M19]).

    The design-time-flexible NTT paper (section on modular multiplication) uses this
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

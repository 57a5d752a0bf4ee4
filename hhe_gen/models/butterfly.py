"""The multi-field butterfly unit: one operation set over three fields (DNA-HHE's BFU).

Operations (``OPS``), with operands (a, b, w) and an accumulator c for ``mac``:

| op  | outputs (x, y)                  | used by |
|-----|---------------------------------|---------|
| ct  | (a + b*w, a - b*w)              | forward NTT, forward special FFT (Cooley-Tukey) |
| gs  | (a + b, (a - b)*w)              | inverse NTT (Gentleman-Sande), inverse special FFT (halving) |
| gsh | ((a + b)/2, (a - b)*w/2)        | inverse NTT with N^-1 folded in: log2 N halving stages (Z_q, Z_t only) |
| mul | (a*b, -)                        | pointwise products (c1 * s, v * pk) |
| add | (a + b, -)                      | pointwise sums |
| sub | (a - b, -)                      | pointwise differences |
| mac | (c + a*b, -)                    | Rubato's linear layer, ARK's key*rc + x |

Fields (``FIELDS``):
- ``zq``: Z_q for a run-time selected RNS prime; the product is the reducer's ``mul`` (Montgomery
  reducers return a*b*R^-1, so their twiddles and constants are stored in Montgomery form).
- ``zt``: Z_t for Rubato's 25/26-bit moduli, same rules with its own reducer.
- ``complex``: fixed-point complex numbers in :class:`~hhe_gen.models.fft.FixedPointFormat`;
  ct/gs are :func:`~hhe_gen.models.fft.butterfly_ct_fixed` / ``butterfly_gs_fixed`` (the gs form
  halves, as the inverse special FFT needs); mul is the exact complex product with one rounding;
  add/sub wrap; mac = add(c, mul(a, b)).

The hardware (cores/arith butterfly) must equal :func:`butterfly` output for output.
"""

from dataclasses import dataclass

from ..params.errors import ParameterError
from . import fft as fftm
from .modarith import mod_add, mod_sub

__all__ = ["OPS", "MODULAR_OPS", "FIELDS", "FieldSpec", "butterfly", "half_mod"]

OPS = ("ct", "gs", "mul", "add", "sub", "mac", "gsh")
#: operations of the modular fields only (the complex gs already halves)
MODULAR_OPS = ("gsh",)
FIELDS = ("zq", "zt", "complex")


@dataclass(frozen=True)
class FieldSpec:
    """One field of the butterfly.

    Members
    -------
    kind : "zq", "zt" or "complex".
    reducer : for zq/zt, a reducer of :mod:`hhe_gen.models.modarith` (gives q and ``mul``).
    fmt : for complex, the fixed-point format.
    """
    kind: str
    reducer: object = None
    fmt: object = None

    def __post_init__(self):
        if self.kind not in FIELDS:
            raise ParameterError("field", self.kind, "one of " + ", ".join(FIELDS))
        if self.kind == "complex" and not isinstance(self.fmt, fftm.FixedPointFormat):
            raise ParameterError("fmt", self.fmt, "a FixedPointFormat for the complex field")
        if self.kind != "complex" and not hasattr(self.reducer, "mul"):
            raise ParameterError("reducer", self.reducer, "a modarith reducer for the zq/zt fields")


def half_mod(z: int, q: int) -> int:
    """z * 2^-1 mod q for 0 <= z < q, q odd: z / 2, or (z + q) / 2 when z is odd."""
    return (z + (z & 1) * q) >> 1


def _modular(op, a, b, w, c, red):
    q = red.q
    for name, x in (("a", a), ("b", b), ("w", w), ("c", c)):
        if x is not None and not 0 <= x < q:
            raise ParameterError(name, x, f"a residue 0 .. q-1 = {q - 1}")
    if op == "ct":
        t = red.mul(b, w)
        return mod_add(a, t, q), mod_sub(a, t, q)
    if op == "gs":
        return mod_add(a, b, q), red.mul(mod_sub(a, b, q), w)
    if op == "gsh":
        return half_mod(mod_add(a, b, q), q), half_mod(red.mul(mod_sub(a, b, q), w), q)
    if op == "mul":
        return red.mul(a, b), None
    if op == "add":
        return mod_add(a, b, q), None
    if op == "sub":
        return mod_sub(a, b, q), None
    return mod_add(c, red.mul(a, b), q), None


def _complex(op, a, b, w, c, fmt):
    if op == "ct":
        return fftm.butterfly_ct_fixed(a, b, w, fmt)
    if op == "gs":
        return fftm.butterfly_gs_fixed(a, b, w, fmt)
    if op in ("mul", "mac"):
        re, im = fftm.complex_mul_exact(a, b)
        p = (fmt.wrap(fmt.round_shift(re, fmt.frac_bits)), fmt.wrap(fmt.round_shift(im, fmt.frac_bits)))
        if op == "mul":
            return p, None
        return (fmt.wrap(c[0] + p[0]), fmt.wrap(c[1] + p[1])), None
    sign = 1 if op == "add" else -1
    return (fmt.wrap(a[0] + sign * b[0]), fmt.wrap(a[1] + sign * b[1])), None


def butterfly(op: str, field: FieldSpec, a, b, w=None, c=None):
    """One butterfly-unit operation; returns (x, y) with y None for single-output operations."""
    if op not in OPS:
        raise ParameterError("op", op, "one of " + ", ".join(OPS))
    if op in ("ct", "gs", "gsh") and w is None:
        raise ParameterError("w", None, f"a twiddle for the {op} butterfly")
    if op == "mac" and c is None:
        raise ParameterError("c", None, "an accumulator value for mac")
    if field.kind == "complex":
        if op in MODULAR_OPS:
            raise ParameterError("op", op, "one of " + ", ".join(o for o in OPS if o not in MODULAR_OPS)
                                 + " for the complex field")
        return _complex(op, a, b, w, c, field.fmt)
    return _modular(op, a, b, w, c, field.reducer)

"""RNS basis conversions as Lattigo v6 computes them: the fast exact basis extension, the gadget
decomposition of hybrid key switching, the division by P and the division by the last prime.

Every function works on polynomials in coefficient form, one row of residues per prime, and returns
canonical residues in [0, q).  The arithmetic is the mathematics of Lattigo's ``ring`` package
(``basis_extension.go``, ``scaling.go``), including its one inexact step:

- **Basis extension** (``ModUpExact``, Halevi-Polyakov-Shoup, eprint 2018/117): for x given mod
  q_1..q_k (Q = q_1...q_k), y_i = x_i * (Q/q_i)^-1 mod q_i and x = sum y_i * Q/q_i - v*Q with
  v = floor(sum y_i / q_i).  Lattigo computes v in IEEE double precision, as
  ``uint64(sum float64(y_i) / float64(q_i))`` summed in prime order; this module does the same, so a
  v that double precision gets wrong (a prime above 2^53 and y_i within a few hundred of it) is
  wrong here too, by the same multiple of Q.
- **Centred extension** (``ModUpQtoP``, ``ModUpPtoQ``, the decomposer): x + floor(Q/2) is extended,
  then floor(Q/2) is subtracted, which gives the representative in [-floor(Q/2), Q - floor(Q/2)).
- **Gadget decomposition** (``DecomposeAndSplit``): the primes of Q at level L are split into groups
  of ``len(P)`` consecutive primes (the last group may be shorter); digit g is the centred
  extension of x mod the group's product to every prime of Q and P.  A group of one prime q takes
  x itself when x < floor(q/2) and x - q otherwise.
- **Division by P** (``ModDownQPtoQ``): (x - [x]_P) / P mod q_i, where [x]_P is the centred
  extension of x's P residues; a rounded division of x by P.
- **Division by the last prime** (``DivRoundByLastModulus``): with h = (q_L - 1) / 2,
  t = ((x_L + h) mod q_L) - h and the result (x_i - t) * q_L^-1 mod q_i; a rounded division by q_L.
"""

import math

from ..params.errors import ParameterError

__all__ = ["extension_overflow", "mod_up_exact", "mod_up_centered", "gadget_groups", "decompose",
           "mod_down", "div_round_by_last", "CENTRE_KINDS", "centre_threshold", "centre"]


def _check_rows(rows, moduli, name: str) -> None:
    if len(rows) != len(moduli):
        raise ParameterError(name, f"<{len(rows)} rows>", f"{len(moduli)} rows (one per prime {list(moduli)})")
    n = len(rows[0]) if rows else 0
    for i, (row, q) in enumerate(zip(rows, moduli)):
        if len(row) != n:
            raise ParameterError(f"{name}[{i}]", f"<{len(row)} coefficients>", f"{n} coefficients (as row 0)")
        if any(not 0 <= c < q for c in row):
            raise ParameterError(f"{name}[{i}]", "<a residue out of range>", f"residues in [0, {q})")


def extension_overflow(ys, moduli) -> int:
    """v = floor(sum y_i / q_i) as Lattigo computes it: double precision, summed in prime order,
    truncated (``uint64(vi)``)."""
    acc = 0.0
    for y, q in zip(ys, moduli):
        acc += float(y) / float(q)
    return int(acc)


def mod_up_exact(rows, src, dst) -> list[list[int]]:
    """x (residues ``rows`` over the primes ``src``) extended to the primes ``dst`` (Lattigo's
    ``ModUpExact``): sum y_i * (Q/q_i) - v * Q mod p for every p of ``dst``."""
    _check_rows(rows, src, "rows")
    big_q = math.prod(src)
    inv = [pow(big_q // q % q, -1, q) for q in src]
    weights = [[big_q // q % p for q in src] for p in dst]
    q_mod = [big_q % p for p in dst]
    out = [[0] * len(rows[0]) for _ in dst]
    for k in range(len(rows[0])):
        ys = [row[k] * c % q for row, c, q in zip(rows, inv, src)]
        v = extension_overflow(ys, src)
        for j, p in enumerate(dst):
            out[j][k] = (sum(y * w for y, w in zip(ys, weights[j])) - v * q_mod[j]) % p
    return out


def mod_up_centered(rows, src, dst) -> list[list[int]]:
    """The centred extension (Lattigo's ``ModUpQtoP`` / ``ModUpPtoQ``): x + floor(Q/2) extended by
    :func:`mod_up_exact`, minus floor(Q/2)."""
    _check_rows(rows, src, "rows")
    half = math.prod(src) >> 1
    shifted = [[(c + half) % q for c in row] for row, q in zip(rows, src)]
    return [[(c - half) % p for c in row] for row, p in zip(mod_up_exact(shifted, src, dst), dst)]


def gadget_groups(level_q: int, p_count: int) -> list[range]:
    """The prime indices of each digit of Lattigo's RNS gadget decomposition at level ``level_q``
    with ``p_count`` key-switching primes: groups of ``p_count`` consecutive primes of Q."""
    if level_q < 0:
        raise ParameterError("level_q", level_q, "a level >= 0")
    if p_count < 1:
        raise ParameterError("p_count", p_count, ">= 1 key-switching prime")
    return [range(s, min(s + p_count, level_q + 1)) for s in range(0, level_q + 1, p_count)]


def decompose(rows, q_moduli, p_moduli) -> list[list[list[int]]]:
    """Lattigo's gadget decomposition (``DecomposeAndSplit``) of x given by ``rows`` over
    ``q_moduli`` (the ciphertext's level): one digit per group of :func:`gadget_groups`, each as rows
    over ``q_moduli`` then ``p_moduli``."""
    q_moduli, p_moduli = list(q_moduli), list(p_moduli)
    _check_rows(rows, q_moduli, "rows")
    targets = q_moduli + p_moduli
    digits = []
    for group in gadget_groups(len(q_moduli) - 1, len(p_moduli)):
        if len(group) == 1:
            q = q_moduli[group.start]
            half = q >> 1
            signed = [c - q if c >= half else c for c in rows[group.start]]
            digits.append([[c % m for c in signed] for m in targets])
            continue
        own = [q_moduli[i] for i in group]
        others = [m for i, m in enumerate(targets) if i not in group]
        extended = iter(mod_up_centered([rows[i] for i in group], own, others))
        # the group's own rows are x itself (Lattigo copies them): the digit is x mod those primes
        digits.append([list(rows[i]) if i in group else next(extended) for i in range(len(targets))])
    return digits


def mod_down(rows, q_moduli, p_moduli) -> list[list[int]]:
    """x over Q then P (rows over ``q_moduli`` + ``p_moduli``) divided by P, rounded, over Q
    (Lattigo's ``ModDownQPtoQ``): (x - [x]_P) * P^-1 mod q_i."""
    q_moduli, p_moduli = list(q_moduli), list(p_moduli)
    _check_rows(rows, q_moduli + p_moduli, "rows")
    lq = len(q_moduli)
    lifted = mod_up_centered(rows[lq:], p_moduli, q_moduli)
    big_p = math.prod(p_moduli)
    out = []
    for row, low, q in zip(rows[:lq], lifted, q_moduli):
        p_inv = pow(big_p % q, -1, q)
        out.append([(x - t) * p_inv % q for x, t in zip(row, low)])
    return out


def div_round_by_last(rows, moduli) -> list[list[int]]:
    """x (rows over ``moduli``) divided by the last prime, rounded, over the others (Lattigo's
    ``DivRoundByLastModulus``, the rescale)."""
    moduli = list(moduli)
    _check_rows(rows, moduli, "rows")
    if len(moduli) < 2:
        raise ParameterError("rows", "<1 row>", "at least 2 rows: level 0 has no prime left to divide by")
    q_last = moduli[-1]
    h = (q_last - 1) >> 1
    centred = [(c + h) % q_last - h for c in rows[-1]]
    out = []
    for row, q in zip(rows[:-1], moduli[:-1]):
        inv = pow(q_last % q, -1, q)
        out.append([(x - t) * inv % q for x, t in zip(row, centred)])
    return out


# -- one source prime: the centred residue as a threshold -----------------------------------------
CENTRE_KINDS = ("digit", "round", "extend")
"""How a residue x mod q is centred when a single prime is converted to another (Lattigo's three
single-prime cases; x becomes x - q at and above :func:`centre_threshold`, else stays x):

- ``digit``: a one-prime digit of the gadget decomposition (``DecomposeAndSplit``): x - q when
  x >= floor(q/2);
- ``round``: the rescale's rounding (``DivRoundByLastModulus``): x - q when x > (q - 1)/2;
- ``extend``: the centred extension of one prime (``ModUpPtoQ`` in ``ModDown`` with one
  key-switching prime): x - q when x > (q - 1)/2, and also when x + (q - 1)/2 is one of the values
  just below q that double precision rounds to float64(q) (v = 1 in :func:`extension_overflow`;
  only for q > 2^53)."""


def _first_rounding_to(q: int) -> int:
    """The smallest y <= q with float(y) == float(q) (q itself when q is exact in double precision)."""
    target = float(q)
    low, high = max(0, q - (1 << 12)), q        # a double's spacing below 2^64 is at most 2^11
    while low < high:
        mid = (low + high) // 2
        if float(mid) == target:
            high = mid
        else:
            low = mid + 1
    return low


def centre_threshold(q: int, kind: str) -> int:
    """The smallest x in [0, q) that a conversion of ``kind`` (:data:`CENTRE_KINDS`) centres to x - q."""
    if kind not in CENTRE_KINDS:
        raise ParameterError("kind", kind, "one of " + ", ".join(CENTRE_KINDS))
    if kind == "digit":
        return q >> 1
    half_up = (q + 1) >> 1
    if kind == "round":
        return half_up
    return min(half_up, _first_rounding_to(q) - ((q - 1) >> 1))


def centre(x: int, q: int, kind: str) -> int:
    """x in [0, q) centred the way ``kind`` does: x - q at and above the threshold, else x."""
    return x - q if x >= centre_threshold(q, kind) else x

"""Static plan of :class:`~hhe_gen.cores.ntt.IterativeNtt`: parameter checks, the per-butterfly-bit
constants the address generator uses, the twiddle ROM contents and the cycle formulas.

Everything here follows :mod:`hhe_gen.cores.ntt.schedule` (its docstring is the memory plan):
N = 2^n coefficients in 2P banks (B = log2(2P)), bank(i) = XOR of the B-bit chunks of i,
addr(i) = i >> B; stage s works on butterfly bit k (forward k = n-1-s, inverse k = s) and serves,
in its cycle c, the coset ``base(c) | (j << G0)`` for j = 0 .. 2P-1, where G0 is the lowest of the
B consecutive bit positions G containing k and ``base(c)`` deposits c into the other positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from hhe_gen.cores.ntt.schedule import ntt_schedule, stage_starts
from hhe_gen.models.ntt import ntt_tables
from hhe_gen.params import checks
from hhe_gen.params.errors import ParameterError

__all__ = ["check_n", "check_lanes", "check_moduli", "KPlan", "k_plan", "schedule_starts",
           "twiddle_rom", "otf_tables", "rotl", "rotr", "lane_lo_slot", "ButterflyChoice",
           "butterfly_choice", "lane_multiplier"]


def check_n(n) -> int:
    """N must be a power of two 2^3 .. 2^16; returns log2(N)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 8 or n > 1 << 16 or n & (n - 1):
        raise ParameterError("n", n, "a power of two 2^3 .. 2^16")
    return n.bit_length() - 1


def check_lanes(lanes, n: int) -> int:
    """P must be a power of two 1 .. N/2; returns log2(P)."""
    return checks.check_lanes(lanes, n // 2, of=f"N/2 = {n // 2}").bit_length() - 1


def check_moduli(moduli, n: int) -> tuple[int, ...]:
    """A prime or a non-empty list of distinct primes q = 1 (mod 2N), each below 2^64."""
    return checks.check_moduli(moduli, checks.ntt_prime(n, 64),
                               allowed=f"a prime q = 1 (mod 2N = {2 * n}) or a list of them")


def rotl(x: int, r: int, bits: int) -> int:
    """Rotate the ``bits``-bit value x left by r."""
    r %= bits
    return ((x << r) | (x >> (bits - r))) & ((1 << bits) - 1) if r else x


def rotr(x: int, r: int, bits: int) -> int:
    return rotl(x, bits - r % bits, bits)


def lane_lo_slot(lane: int, kpos: int) -> int:
    """Slot (offset inside the coset, in units of 2^G0) of lane ``lane``'s lower index: the lane
    number deposited into the B coset bits other than ``kpos`` (the schedule's lane order)."""
    return (lane & ((1 << kpos) - 1)) | ((lane >> kpos) << (kpos + 1))


@dataclass(frozen=True)
class KPlan:
    """Constants of the stage working on butterfly bit k.

    Members
    -------
    k : the butterfly bit (pairs (j, j + 2^k)).
    g0 : lowest coset bit position (G = g0 .. g0+B-1).
    rot : g0 mod B: slot j of the coset sits in bank bank(base) XOR rotl(j, rot).
    kpos : k - g0, the position of the pair bit inside a slot number.
    tw_offset : per lane, its twiddle index minus lane 0's (non-zero only when k < B-1).
    """
    k: int
    g0: int
    rot: int
    kpos: int
    tw_offset: tuple[int, ...]


def k_plan(k: int, n_log: int, lanes: int) -> KPlan:
    b = (2 * lanes).bit_length() - 1
    g0 = k - b + 1 if k >= b - 1 else 0
    offs = tuple((lane >> k) if k < b - 1 else 0 for lane in range(lanes))
    return KPlan(k, g0, g0 % b, k - g0, offs)


@lru_cache(maxsize=64)
def schedule_starts(n: int, lanes: int, inverse: bool, depth: int,
                    write_first: bool = True) -> tuple[tuple[int, ...], int]:
    """:func:`hhe_gen.cores.ntt.schedule.stage_starts` of the schedule (cached): (start cycle of
    every stage, transform cycles) for a read-to-write depth of ``depth`` cycles (``write_first``:
    the banks' reads see a write in its cycle)."""
    starts, total = stage_starts(ntt_schedule(n, lanes, inverse), depth, write_first)
    return tuple(starts), total


def twiddle_rom(n: int, lanes: int, moduli, factors) -> list[list[int]]:
    """Contents of the P twiddle ROM banks.

    ROM bank m, address ``((sel * 2 + inverse) << (n_log - log2 P)) | (t >> log2 P)`` holds twiddle
    index t = m (mod P) of prime ``sel``: psi_brv[t] (forward) or psi_inv_brv[t] (inverse), times
    the reducer's factor (R mod q for Montgomery kinds, 1 otherwise) so a*w*R^-1 = a*w.
    Index 0 is never used (t >= 1).
    """
    rows = n // lanes
    banks = [[0] * (rows * 2 * len(moduli)) for _ in range(lanes)]
    for p, (q, f) in enumerate(zip(moduli, factors)):
        t = ntt_tables(n, q)
        for d, table in enumerate((t.psi_brv, t.psi_inv_brv)):
            base = (p * 2 + d) * rows
            for i, w in enumerate(table):
                banks[i % lanes][base + i // lanes] = w * f % q
    return banks


def otf_tables(n: int, moduli, factors) -> tuple[list[int], list[int]]:
    """The two small tables of ``twiddles="otf"``: a twiddle psi^e (e = brv(t) forward, 2N - brv(t)
    inverse, so psi^-brv(t); e < 2N has n+1 bits) is hi[e >> h] * lo[e mod 2^h] (h = (n+1) // 2)
    formed by one modular multiplication: hi[x] = psi^(x * 2^h) * f, lo[y] = psi^y * f (f = the
    reducer's factor, so hi*lo*f^-1 = psi^e * f).  Prime ``sel``'s rows start at sel * len / count.
    2^(n+1-h) + 2^h words per prime (N = 2^13: 128 + 128) instead of the ROM's 2N."""
    n_log = n.bit_length() - 1
    h = (n_log + 1) // 2
    hi, lo = [], []
    for q, f in zip(moduli, factors):
        psi = ntt_tables(n, q).psi
        hi += [pow(psi, x << h, q) * f % q for x in range(1 << (n_log + 1 - h))]
        lo += [pow(psi, y, q) * f % q for y in range(1 << h)]
    return hi, lo


@dataclass(frozen=True)
class ButterflyChoice:
    """The lanes' Z_q butterfly of an NTT core (both architectures use one per lane / stage).

    Members
    -------
    zq : dict         the Butterfly's ``zq`` configuration (kind, moduli, reducer parameters,
                      ``log_n`` for the special-prime and NTT-friendly kinds)
    latency : int     the butterfly's latency
    width : int       its port width
    qbits : int       the widest prime's bits
    factors : tuple   per prime, the constant that undoes the reducer's factor: mul(1, 1)^-1 mod q
                      (R for Montgomery kinds, 1 otherwise); constants are stored times it
    plan : the butterfly's :class:`~hhe_gen.cores.arith.butterfly.ButterflyPlan`
    """
    zq: dict
    latency: int
    width: int
    qbits: int
    factors: tuple
    plan: object = field(default=None, compare=False, repr=False)


def butterfly_choice(n_log: int, moduli, kind: str, target: str, latency, reducer: dict) -> ButterflyChoice:
    """Build (and check) the butterfly configuration of an NTT core with these parameters."""
    from hhe_gen.cores.arith.butterfly import ButterflyPlan
    zq = dict(kind=kind, moduli=list(moduli), **reducer)
    if kind in ("special-barrett", "ntt-montgomery"):
        zq.setdefault("log_n", n_log)
    proto = ButterflyPlan(zq=zq, target=target, latency=latency)
    qbits = max(q.bit_length() for q in moduli)
    if qbits > proto.width:
        raise ParameterError("width", reducer.get("width"), f">= {qbits} (the primes' width)")
    factors = tuple(pow(proto.model("mul", "zq", 1, 1, sel=i)[0], -1, q) for i, q in enumerate(moduli))
    return ButterflyChoice(zq, proto.latency, proto.width, qbits, factors, proto)


def lane_multiplier(zq: dict, width: int, target: str, *, plan: bool = False):
    """The raw modular multiplier of the butterfly's reducer (``zq`` of :class:`ButterflyChoice`)
    at its minimum latency: the iterative core's on-the-fly twiddle multiplier; ``plan``: its plan only (:func:`~hhe_gen.cores.arith.reducer_plan`:
    the latency, no hardware).  The special-prime Barrett takes ``bnd_luts=True`` unless ``zq``
    says otherwise (q_est*bnd as LUT rows: 9 tiles instead of 12 at 54 bits, one register less;
    a lane's one multiplier, not the butterfly's shared one)."""
    from hhe_gen.cores.arith import modmul, reducer_plan
    kw = {k: v for k, v in zq.items() if k not in ("kind", "moduli", "width")}
    if zq["kind"] == "special-barrett":
        kw.setdefault("bnd_luts", True)
    return (reducer_plan if plan else modmul)(zq["kind"], list(zq["moduli"]), width, None, target=target, **kw)

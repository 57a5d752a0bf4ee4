"""Named CKKS parameter presets for the configurations of the papers hhe-gen implements.

Each preset is built on demand (prime search is deterministic), so the primes are exactly what
:mod:`hhe_gen.params.primes` finds; ``hhe-gen params NAME`` prints them.

| preset | source | N | Q |
|---|---|---|---|
| dna-hhe | DNA-HHE, the default | 2^13 | 3 x 54-bit primes q = 2^54 - 2N*bnd + 1 |
| flexible-218 | design-time-flexible paper | 2^13 | 6 x 31-bit + P = 1 x 32-bit: 218 bits |
| abc-fhe | ABC-FHE | 2^16 | 24 x 36-bit q = 2^35 + kk*2N + 1, kk sparse |
| kv260-n12 .. kv260-n16 | KV260 / Full-RNS HEAAN (table I) | 2^12..2^16 | 1, 2, 4, 7, 10 x 61-bit |
| race-n10 .. race-n14 | RACE: (N, logQ) = (2^10, 27), (2^11, 30), (2^12, 90), (2^13, 180), (2^14, 390) | | 30-bit primes (one 27-bit for 2^10) |
| n14-36bit | 36-bit primes at N = 2^14 (interop check of narrow primes) | 2^14 | 4 x 36-bit |
| toy | small, for tests and the simulator | 2^6 | 2 x 30-bit |

The design-time-flexible paper gives only N = 8192 and ceil(log2 q) = 218 with 32-bit words; the
split into six 31-bit data primes and one 32-bit special prime is hhe-gen's reading.  RACE's table
lists (8192, 130) once where its figures say (8192, 180); the figures are used.
"""

from functools import lru_cache

from .ckks import CKKSParams, RingParams
from .errors import ParameterError
from .primes import abc_fhe_primes, dna_hhe_primes, ntt_primes

__all__ = ["PRESETS", "preset", "preset_names", "DEFAULT_PRESET"]

DEFAULT_PRESET = "dna-hhe"


def _ntt(n, bits, count, log_scale, name, special=0, special_bits=None):
    q = ntt_primes(n, bits, count)
    p = ntt_primes(n, special_bits or bits, special, exclude=q) if special else []
    return CKKSParams(RingParams(n, tuple(q)), log_scale, tuple(p), name=name)


def _dna_hhe():
    n = 1 << 13
    q = [p.q for p in dna_hhe_primes(54, n, count=3)]
    p = ntt_primes(n, 61, 1)
    return CKKSParams(RingParams(n, tuple(q)), 50, tuple(p), name="dna-hhe")


def _abc_fhe():
    n = 1 << 16
    cands = [p.q for p in abc_fhe_primes(n, 35) if p.q.bit_length() == 36]
    return CKKSParams(RingParams(n, tuple(cands[:24])), 35, name="abc-fhe")


PRESETS = {
    "dna-hhe": (_dna_hhe, "DNA-HHE client: N=2^13, 3 x 54-bit special primes, Delta=2^50"),
    "flexible-218": (lambda: _ntt(1 << 13, 31, 6, 30, "flexible-218", 1, 32),
                     "design-time-flexible paper: N=2^13, logQP=218 (6 x 31-bit + 32-bit P)"),
    "abc-fhe": (_abc_fhe, "ABC-FHE client: N=2^16, 24 x 36-bit sparse primes, Delta=2^35"),
    **{f"kv260-n{ln}": ((lambda ln=ln, c=c: _ntt(1 << ln, 61, c, 50, f"kv260-n{ln}")),
                        f"KV260/HEAAN: N=2^{ln}, {c} x 61-bit")
       for ln, c in zip(range(12, 17), (1, 2, 4, 7, 10))},
    **{f"race-n{ln}": ((lambda ln=ln, b=b, c=c: _ntt(1 << ln, b, c, b - 5, f"race-n{ln}")),
                       f"RACE: (N, logQ) = (2^{ln}, {b * c}), {c} x {b}-bit")
       for ln, b, c in ((10, 27, 1), (11, 30, 1), (12, 30, 3), (13, 30, 6), (14, 30, 13))},
    "n14-36bit": (lambda: _ntt(1 << 14, 36, 4, 33, "n14-36bit", 1, 40),
                  "N=2^14, 4 x 36-bit primes, Delta=2^33 (+ 40-bit P)"),
    "toy": (lambda: _ntt(1 << 6, 30, 2, 20, "toy", 1, 31), "toy: N=2^6, 2 x 30-bit, Delta=2^20"),
}


def preset_names() -> list[str]:
    return list(PRESETS)


@lru_cache(maxsize=None)
def preset(name: str) -> CKKSParams:
    """The named preset (see the module docstring); unknown names raise ParameterError."""
    key = str(name).strip().lower()
    if key not in PRESETS:
        raise ParameterError("preset", name, "one of " + ", ".join(PRESETS))
    return PRESETS[key][0]()

"""Validated, immutable parameters of the polynomial ring and of RNS-CKKS.

Every check raises :class:`~hhe_gen.params.errors.ParameterError` naming the parameter, the value
given and what is allowed.  Objects are frozen dataclasses: build a new one with
``dataclasses.replace`` to change anything (the change is validated again).
"""

from dataclasses import dataclass, field

from .errors import ParameterError
from .checks import check_moduli, ntt_prime

__all__ = [
    "MIN_LOG_N", "MAX_LOG_N", "MAX_MODULUS_BITS",
    "RingParams", "SecretDistribution", "ErrorDistribution", "CKKSParams",
]

MIN_LOG_N, MAX_LOG_N = 3, 16
MAX_MODULUS_BITS = 64


def check_ring_degree(n, name: str = "N") -> int:
    """Return log2(N); raise unless N is a power of two in 2^3 .. 2^16."""
    allowed = f"a power of two in 2^{MIN_LOG_N} .. 2^{MAX_LOG_N} ({1 << MIN_LOG_N} .. {1 << MAX_LOG_N})"
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0 or n & (n - 1):
        raise ParameterError(name, n, allowed)
    log_n = n.bit_length() - 1
    if not MIN_LOG_N <= log_n <= MAX_LOG_N:
        raise ParameterError(name, n, allowed)
    return log_n


def _check_moduli(moduli, n: int, name: str) -> tuple[int, ...]:
    return check_moduli(moduli, ntt_prime(n, MAX_MODULUS_BITS), name=name, single=False,
                        allowed="a non-empty list of distinct primes")


@dataclass(frozen=True)
class RingParams:
    """The ring Z_Q[X]/(X^N + 1) in RNS form.

    Members
    -------
    n : ring degree N, a power of two 2^3 .. 2^16.
    moduli : the RNS primes q_0, q_1, ... (each q = 1 mod 2N, at most 64 bits, distinct).
    """
    n: int
    moduli: tuple[int, ...]

    def __post_init__(self):
        check_ring_degree(self.n)
        object.__setattr__(self, "moduli", _check_moduli(self.moduli, self.n, "Q"))

    @property
    def log_n(self) -> int:
        return self.n.bit_length() - 1

    @property
    def max_bits(self) -> int:
        """Width of the widest modulus: the datapath width the hardware needs."""
        return max(q.bit_length() for q in self.moduli)

    @property
    def log_q(self) -> float:
        from math import log2
        return sum(log2(q) for q in self.moduli)


@dataclass(frozen=True)
class SecretDistribution:
    """Distribution of the secret key s.

    Members
    -------
    kind : ``"ternary"`` (uniform over {-1, 0, 1}) or ``"hamming"`` (exactly ``hamming_weight``
        non-zero entries, each +-1).
    hamming_weight : h for ``"hamming"``, 1 .. N; ignored for ``"ternary"``.
    """
    kind: str = "ternary"
    hamming_weight: int = 0

    def __post_init__(self):
        if self.kind not in ("ternary", "hamming"):
            raise ParameterError("secret", self.kind, "'ternary' or 'hamming'")
        if self.kind == "hamming" and (not isinstance(self.hamming_weight, int) or self.hamming_weight < 1):
            raise ParameterError("hamming_weight", self.hamming_weight, "1 .. N non-zero coefficients")


@dataclass(frozen=True)
class ErrorDistribution:
    """Discrete Gaussian error: standard deviation ``sigma``, cut at ``bound_sigmas * sigma``.

    Members
    -------
    sigma : 0.5 .. 64 (Lattigo and the HE standard use 3.2).
    bound_sigmas : 1 .. 20 (6 in Lattigo).
    """
    sigma: float = 3.2
    bound_sigmas: float = 6.0

    def __post_init__(self):
        if not 0.5 <= float(self.sigma) <= 64:
            raise ParameterError("sigma", self.sigma, "a standard deviation in 0.5 .. 64")
        if not 1 <= float(self.bound_sigmas) <= 20:
            raise ParameterError("bound_sigmas", self.bound_sigmas, "1 .. 20 standard deviations")

    @property
    def bound(self) -> int:
        """Largest magnitude a sample may take: ceil(bound_sigmas * sigma)."""
        from math import ceil
        return ceil(self.bound_sigmas * self.sigma)


@dataclass(frozen=True)
class CKKSParams:
    """RNS-CKKS parameters.

    Members
    -------
    ring : the ring (N and the ciphertext primes Q; the level of a fresh ciphertext is len(Q) - 1).
    log_scale : log2 of the default scale Delta, 1 .. 62 and below the bit length of Q.
    special_moduli : key-switching primes P (only used by peers that relinearise, e.g. Lattigo);
        may be empty.
    secret, error : key and noise distributions.
    name : the preset's name, or "" for user-built parameters.
    """
    ring: RingParams
    log_scale: int
    special_moduli: tuple[int, ...] = ()
    secret: SecretDistribution = field(default_factory=SecretDistribution)
    error: ErrorDistribution = field(default_factory=ErrorDistribution)
    name: str = ""

    def __post_init__(self):
        if not isinstance(self.ring, RingParams):
            raise ParameterError("ring", self.ring, "a RingParams")
        if isinstance(self.log_scale, bool) or not isinstance(self.log_scale, int) or not 1 <= self.log_scale <= 62:
            raise ParameterError("log_scale", self.log_scale, "an integer 1 .. 62 (Delta = 2^log_scale)")
        if self.log_scale >= sum(q.bit_length() for q in self.ring.moduli):
            raise ParameterError(
                "log_scale", self.log_scale,
                f"below the bit length of Q ({sum(q.bit_length() for q in self.ring.moduli)} bits)")
        if self.special_moduli:
            p = _check_moduli(self.special_moduli, self.ring.n, "P")
            if set(p) & set(self.ring.moduli):
                raise ParameterError("P", p, "primes distinct from those of Q")
            object.__setattr__(self, "special_moduli", p)
        if self.secret.kind == "hamming" and self.secret.hamming_weight > self.ring.n:
            raise ParameterError("hamming_weight", self.secret.hamming_weight, f"1 .. N = {self.ring.n}")

    # -- convenience views ------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.ring.n

    @property
    def log_n(self) -> int:
        return self.ring.log_n

    @property
    def slots(self) -> int:
        return self.ring.n // 2

    @property
    def moduli(self) -> tuple[int, ...]:
        return self.ring.moduli

    @property
    def max_level(self) -> int:
        return len(self.ring.moduli) - 1

    @property
    def scale(self) -> int:
        return 1 << self.log_scale

    def check_level(self, level) -> int:
        """Return ``level`` (None means the top level) after checking it is 0 .. max_level."""
        if level is None:
            return self.max_level
        if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= self.max_level:
            raise ParameterError("level", level, f"0 .. {self.max_level} (len(Q) - 1)")
        return level

    def interchange(self) -> dict:
        """The parameters in the JSON interchange format (docs/interchange.md)."""
        out = {"LogN": self.log_n, "Q": list(self.moduli), "LogDefaultScale": self.log_scale}
        if self.special_moduli:
            out["P"] = list(self.special_moduli)
        return out

    def summary(self) -> dict:
        return {
            "name": self.name or "(custom)", "N": self.n, "slots": self.slots,
            "primes": len(self.moduli), "bits": [q.bit_length() for q in self.moduli],
            "logQ": round(self.ring.log_q, 2), "log_scale": self.log_scale,
            "P": list(self.special_moduli), "secret": self.secret.kind
            + (f" h={self.secret.hamming_weight}" if self.secret.kind == "hamming" else ""),
            "sigma": self.error.sigma, "error_bound": self.error.bound,
        }

    @classmethod
    def from_interchange(cls, d: dict, name: str = "") -> "CKKSParams":
        """Parameters from the interchange JSON ``{"LogN", "Q", "LogDefaultScale"[, "P"]}``."""
        if not isinstance(d, dict):
            raise ParameterError("parameters", f"<JSON {type(d).__name__}>",
                                 'a JSON object {"LogN", "Q", "LogDefaultScale"}')
        for key in ("LogN", "Q", "LogDefaultScale"):
            if key not in d:
                raise ParameterError(key, None, "a field of the parameters JSON (LogN, Q, LogDefaultScale)")
        log_n = d["LogN"]
        if isinstance(log_n, bool) or not isinstance(log_n, int) or not MIN_LOG_N <= log_n <= MAX_LOG_N:
            raise ParameterError("LogN", log_n, f"an integer {MIN_LOG_N} .. {MAX_LOG_N}")
        return cls(RingParams(1 << log_n, d["Q"]), d["LogDefaultScale"], d.get("P") or (), name=name)

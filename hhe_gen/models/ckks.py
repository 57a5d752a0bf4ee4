"""RNS-CKKS client operations: encode, key generation, encryption (public and secret key),
decryption and decoding - the golden model of the hardware's data flow (docs/conventions.md section 5).

Conventions (docs/conventions.md, docs/interchange.md):
- encoding: w = special IFFT of the slots; m_k = round(Delta * Re w_k), m_{k+N/2} = round(Delta * Im w_k),
  rounding half away from zero; the signed polynomial m is reduced modulo every prime of the level.
- keys: s ternary (or fixed Hamming weight); pk = (-a*s + e, a) per prime, a uniform, e Gaussian.
- public-key encryption: v ternary, e0, e1 Gaussian, all sampled once and shared by every prime:
  c0_i = NTT(v)*NTT(pk0_i) + NTT(m + e0),  c1_i = NTT(v)*NTT(pk1_i) + NTT(e1).
- secret-key encryption: a_i uniform, sampled directly in the NTT domain from a seed,
  c0_i = -a_i*NTT(s) + NTT(m + e),  c1_i = a_i  (so c1 can travel as its seed).
- decryption: m_i = INTT(c0_i + c1_i * NTT(s)); decoding centres the residues (CRT over the
  level's primes) and applies the special FFT to (m_k + i m_{k+N/2}) / Delta.

All randomness comes from :mod:`hhe_gen.models.sampler` (SHAKE256 streams, domain-separated), so a
seed reproduces keys and ciphertexts bit for bit, as the on-chip samplers will.
"""

import math
from dataclasses import dataclass
from fractions import Fraction

from ..params.ckks import CKKSParams
from ..params.errors import ParameterError
from . import fft as fftm
from . import sampler
from .ntt import intt, ntt

__all__ = [
    "Plaintext", "Ciphertext", "KeyPair", "seed_bytes", "round_half_away",
    "encode", "decode", "keygen", "encrypt_pk", "encrypt_sk", "decrypt",
    "encrypt_slots", "decrypt_slots", "to_rns", "crt_centered", "precision_bits",
    "noise_bound", "coefficient_bound", "slot_bound",
]


# -- data ---------------------------------------------------------------------------------------
def _rows(rows, moduli, name):
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise ParameterError(name, f"<JSON {type(rows).__name__}>", "a list of rows (one per prime of Q)")
    rows = [list(r) for r in rows]
    if not 1 <= len(rows) <= len(moduli):
        raise ParameterError(name, f"<{len(rows)} rows>", f"1 .. {len(moduli)} rows (one per prime of Q)")
    return rows


@dataclass
class Plaintext:
    """A plaintext polynomial: one row of residues per prime of its level, coefficient form."""
    rows: list[list[int]]
    scale: int

    @property
    def level(self) -> int:
        return len(self.rows) - 1


@dataclass
class Ciphertext:
    """(c0, c1), or (c0, c1, c2) for a tensor product before relinearisation; one row per prime;
    ``form`` is "coeff" or "ntt" (Lattigo's bit-reversed order)."""
    c0: list[list[int]]
    c1: list[list[int]]
    scale: int
    form: str = "coeff"
    c2: list[list[int]] | None = None

    @property
    def level(self) -> int:
        return len(self.c0) - 1

    @property
    def degree(self) -> int:
        return 1 if self.c2 is None else 2

    @property
    def components(self) -> list[list[list[int]]]:
        return [self.c0, self.c1] + ([] if self.c2 is None else [self.c2])

    def to_json(self) -> dict:
        out = {"scale": self.scale, "form": self.form, "c0": self.c0, "c1": self.c1}
        if self.c2 is not None:
            out["c2"] = self.c2
        return out

    @classmethod
    def from_json(cls, d: dict, params: CKKSParams) -> "Ciphertext":
        if not isinstance(d, dict):
            raise ParameterError("ciphertext", f"<JSON {type(d).__name__}>",
                                 'a JSON object {"scale", "form", "c0", "c1", "c2"?}')
        for key in ("scale", "c0", "c1"):
            if key not in d:
                raise ParameterError(key, None, "a field of the ciphertext JSON (scale, form, c0, c1)")
        form = d.get("form", "coeff")
        if form not in ("coeff", "ntt"):
            raise ParameterError("form", form, "'coeff' or 'ntt'")
        names = ["c0", "c1"] + (["c2"] if d.get("c2") is not None else [])
        comps = [_rows(d[name], params.moduli, name) for name in names]
        for name, rows in zip(names, comps):
            if len(rows) != len(comps[0]):
                raise ParameterError(name, f"<{len(rows)} rows>", f"as many rows as c0 ({len(comps[0])})")
            _check_residues(rows, params, name)
        return cls(comps[0], comps[1], _scale(d["scale"]), form, comps[2] if len(comps) == 3 else None)

    def to_form(self, params: CKKSParams, form: str) -> "Ciphertext":
        if form == self.form:
            return self
        f = ntt if form == "ntt" else intt
        qs = params.moduli
        c0, c1, *c2 = [[f(r, qs[i]) for i, r in enumerate(comp)] for comp in self.components]
        return Ciphertext(c0, c1, self.scale, form, c2[0] if c2 else None)


@dataclass
class KeyPair:
    """Secret key (signed coefficients) and public key (pk0, pk1) = (-a*s + e, a), coefficient form."""
    sk: list[int]
    pk0: list[list[int]]
    pk1: list[list[int]]

    def to_json(self, params: CKKSParams) -> dict:
        return {"N": params.n, "Q": list(params.moduli), "sk": self.sk, "pk0": self.pk0, "pk1": self.pk1}

    @classmethod
    def from_json(cls, d: dict, params: CKKSParams) -> "KeyPair":
        if not isinstance(d, dict):
            raise ParameterError("keys", f"<JSON {type(d).__name__}>", 'a JSON object {"N", "Q", "sk", "pk0", "pk1"}')
        if d.get("N", params.n) != params.n or list(d.get("Q", params.moduli)) != list(params.moduli):
            raise ParameterError("keys", f"N={d.get('N')} Q={d.get('Q')}",
                                 f"keys made for these parameters (N={params.n}, Q={list(params.moduli)})")
        sk = _check_secret(d.get("sk"), params)
        pk0, pk1 = d.get("pk0") or [], d.get("pk1") or []
        if pk0 or pk1:
            for name, rows in (("pk0", pk0), ("pk1", pk1)):
                if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
                    raise ParameterError(name, f"<JSON {type(rows).__name__}>", "a list of rows (one per prime of Q)")
                if len(rows) != len(params.moduli):
                    raise ParameterError(name, f"<{len(rows)} rows>", f"{len(params.moduli)} rows (one per prime of Q)")
            _check_residues(pk0, params, "pk0")
            _check_residues(pk1, params, "pk1")
        return cls(sk, [list(r) for r in pk0], [list(r) for r in pk1])


def _scale(s):
    """A scale: an int when integral (2^LogDefaultScale), else a float (e.g. after a rescale)."""
    if isinstance(s, float) and s.is_integer():
        s = int(s)
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not 1 <= s < math.inf:
        raise ParameterError("scale", s, "a finite number >= 1 (usually 2^LogDefaultScale)")
    return s


def _check_secret(sk, params: CKKSParams) -> list[int]:
    if not isinstance(sk, list) or len(sk) != params.n or \
            any(isinstance(x, bool) or not isinstance(x, int) or x not in (-1, 0, 1) for x in sk):
        raise ParameterError("sk", "<secret key>", f"N = {params.n} coefficients in {{-1, 0, 1}}")
    return list(sk)


def _check_residues(rows, params: CKKSParams, name: str):
    """Each row i holds N residues mod q_i."""
    for i, r in enumerate(rows):
        q = params.moduli[i]
        if len(r) != params.n:
            raise ParameterError(f"{name}[{i}]", f"<{len(r)} coefficients>", f"exactly N = {params.n} coefficients")
        if any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < q for x in r):
            raise ParameterError(f"{name}[{i}]", "<out-of-range residue>", f"integers 0 .. q_{i} - 1 = {q - 1}")


# -- helpers ------------------------------------------------------------------------------------
def seed_bytes(seed) -> bytes:
    """A 32-byte seed from an int (0 .. 2^256-1, little-endian) or 32 bytes."""
    if isinstance(seed, (bytes, bytearray)):
        if len(seed) != 32:
            raise ParameterError("seed", f"<{len(seed)} bytes>", "exactly 32 bytes")
        return bytes(seed)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 256:
        raise ParameterError("seed", seed, "an integer 0 .. 2^256 - 1 or 32 bytes")
    return seed.to_bytes(32, "little")


def round_half_away(x: float) -> int:
    """Round a float to the nearest integer, ties away from zero (Lattigo's math.Round); exact."""
    a = abs(x)
    r = math.floor(a)
    if a - r >= 0.5:
        r += 1
    return int(r) if x >= 0 else -int(r)


def to_rns(coeffs, moduli) -> list[list[int]]:
    """Reduce a signed integer polynomial modulo every prime."""
    return [[c % q for c in coeffs] for q in moduli]


def crt_centered(rows, moduli) -> list[int]:
    """The signed polynomial in (-Q/2, Q/2] whose residues are ``rows`` (Q = product of the moduli)."""
    moduli = moduli[:len(rows)]
    big_q = math.prod(moduli)
    weights = []
    for q in moduli:
        qi = big_q // q
        weights.append(qi * pow(qi, -1, q))
    half = big_q // 2
    out = []
    for k in range(len(rows[0])):
        x = sum(w * r[k] for w, r in zip(weights, rows)) % big_q
        out.append(x - big_q if x > half else x)
    return out


def _check_slots(slots, params: CKKSParams) -> list[complex]:
    slots = [complex(z) for z in slots]
    if not 1 <= len(slots) <= params.slots:
        raise ParameterError("slots", f"<{len(slots)} values>", f"1 .. N/2 = {params.slots} values")
    for z in slots:
        if not (math.isfinite(z.real) and math.isfinite(z.imag)):
            raise ParameterError("slots", z, "finite complex numbers")
    return slots + [0j] * (params.slots - len(slots))


# -- value range ----------------------------------------------------------------------------------
# Decryption recovers m + e centred in (-Q/2, Q/2] (Q = product of the primes of the level, odd), so
# it is exact whenever every coefficient satisfies |m_k + e_k| <= (Q - 1)/2.  encode() refuses a
# plaintext unless max |m_k| <= coefficient_bound = (Q - 1)/2 - noise_bound, i.e. it keeps room for the
# noise of a fresh encryption.  The special IFFT divides by N/2, so |Re w_k|, |Im w_k| <= |w_k| <=
# max_j |z_j|: every slot vector with max |z_j| <= slot_bound (about coefficient_bound / Delta) passes;
# larger slots pass only when the encoded coefficients still fit (the check is on m, exactly).

def noise_bound(params: CKKSParams) -> int:
    """Largest |e_k| a fresh encryption adds to a coefficient (the public-key case, the larger one).

    c0 + c1*s = m + v*e + e0 + e1*s with v, s ternary and |e|, |e0|, |e1| <= B (the sampler's cut,
    ``params.error.bound``), so |e_k| <= N*B (v*e) + h*B (e1*s; h = N, or the Hamming weight) + B (e0).
    Secret-key encryption adds only e (<= B).
    """
    b = params.error.bound
    h = params.secret.hamming_weight if params.secret.kind == "hamming" else params.n
    return b * (params.n + h + 1)


def coefficient_bound(params: CKKSParams, level=None) -> int:
    """Largest |m_k| encode() accepts at ``level`` (default: top): (Q_level - 1)/2 - noise_bound."""
    level = params.check_level(level)
    return (math.prod(params.moduli[:level + 1]) - 1) // 2 - noise_bound(params)


def slot_bound(params: CKKSParams, level=None, scale=None) -> float:
    """Largest max |slot| that always encodes at ``level`` and ``scale`` (defaults: top, Delta).

    (coefficient_bound - 1/2) / Delta, less 2^-40 relative for the float64 IFFT's rounding: a
    sufficient condition (one large slot among many small ones may go further, see encode()).
    """
    scale = _scale(scale if scale is not None else params.scale)
    bound = Fraction(2 * coefficient_bound(params, level) - 1, 2) / Fraction(scale)
    return max(0.0, float(bound) * (1 - 2.0 ** -40))


def _check_coefficients(coeffs, params: CKKSParams, level: int, scale, values):
    """Refuse a plaintext whose coefficients (None: not finite) leave no room for the noise."""
    limit = coefficient_bound(params, level)
    if all(c is not None and abs(c) <= limit for c in coeffs):
        return
    biggest = max(abs(z) for z in values)
    log_q = sum(math.log2(q) for q in params.moduli[:level + 1])
    delta = f"2^{scale.bit_length() - 1}" if isinstance(scale, int) and scale & (scale - 1) == 0 else f"{scale:g}"
    raise ParameterError(
        "slots", f"max |slot| = {biggest:.10g}",
        f"|slot| <= {_floor_digits(slot_bound(params, level, scale))} at level {level} (Delta = {delta}): the encoded "
        f"coefficients round(Delta * w) plus the encryption noise ({noise_bound(params)}) must stay "
        f"below Q/2 = 2^{log_q - 1:.1f}")


def _floor_digits(x: float, digits: int = 6) -> str:
    """x rounded down to ``digits`` significant digits (a bound shown in a message stays a bound)."""
    if not x > 0:
        return "0"
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return f"{math.floor(x * (1 - 1e-12) / step) * step:.{digits}g}"


# -- encode / decode ------------------------------------------------------------------------------
def encode(params: CKKSParams, slots, level=None, scale=None, fmt=None) -> Plaintext:
    """Slots (<= N/2 complex values; missing ones are 0) -> plaintext at ``level`` (default: top).

    ``fmt`` (a :class:`hhe_gen.models.fft.FixedPointFormat`) selects the fixed-point IFFT the hardware
    uses instead of float64; then Delta * w is computed exactly from the fixed-point value and rounded
    half away from zero.

    Raises ParameterError ("slots") unless every coefficient |m_k| <= :func:`coefficient_bound`
    ((Q - 1)/2 of the level less the fresh-encryption noise), so that decryption is exact; the message
    gives :func:`slot_bound`, the slot magnitude that always fits.  NaN and infinities are refused too.
    """
    level = params.check_level(level)
    scale = _scale(scale if scale is not None else params.scale)
    values = _check_slots(slots, params)
    n2 = params.slots
    coeffs = [0] * params.n
    if fmt is None:
        w = fftm.special_ifft(values)
        for k in range(n2):
            coeffs[k] = _round_finite(w[k].real * scale)
            coeffs[k + n2] = _round_finite(w[k].imag * scale)
    else:
        wq = fftm.special_ifft_fixed([(fftm.quantize(z.real, fmt), fftm.quantize(z.imag, fmt)) for z in values], fmt)
        for k in range(n2):
            coeffs[k] = _scale_fixed(wq[k][0], fmt.frac_bits, scale)
            coeffs[k + n2] = _scale_fixed(wq[k][1], fmt.frac_bits, scale)
    _check_coefficients(coeffs, params, level, scale, values)
    return Plaintext(to_rns(coeffs, params.moduli[:level + 1]), scale)


def _round_finite(x: float):
    """round_half_away(x), or None when Delta * w overflowed float64 (refused by _check_coefficients)."""
    return round_half_away(x) if math.isfinite(x) else None


def _scale_fixed(value: int, frac_bits: int, scale: int) -> int:
    """round(value * scale / 2^frac_bits), half away from zero, exact rational arithmetic."""
    x = Fraction(abs(value)) * Fraction(scale) / (1 << frac_bits)
    r = math.floor(x + Fraction(1, 2))
    return r if value >= 0 else -r


def decode(params: CKKSParams, pt: Plaintext, fmt=None) -> list[complex]:
    """Plaintext -> N/2 slots (float64 FFT, or the fixed-point FFT with ``fmt``)."""
    m = crt_centered(pt.rows, params.moduli)
    n2 = params.slots
    if fmt is None:
        w = [complex(m[k] / pt.scale, m[k + n2] / pt.scale) for k in range(n2)]
        return fftm.special_fft(w)
    wq = [(fftm.quantize(m[k] / pt.scale, fmt), fftm.quantize(m[k + n2] / pt.scale, fmt)) for k in range(n2)]
    return [complex(fftm.dequantize(a, fmt), fftm.dequantize(b, fmt))
            for a, b in fftm.special_fft_fixed(wq, fmt)]


# -- keys and encryption -------------------------------------------------------------------------
def _secret(params: CKKSParams, seed: bytes) -> list[int]:
    xof = sampler.seeded_xof(seed, sampler.Domain.SECRET)
    if params.secret.kind == "hamming":
        return sampler.ternary_hamming(xof, params.n, params.secret.hamming_weight)
    return sampler.ternary_uniform(xof, params.n)


def _gaussian(params: CKKSParams, seed: bytes, domain) -> list[int]:
    xof = sampler.seeded_xof(seed, domain)
    return sampler.gaussian_cdt(xof, params.n, params.error.sigma, params.error.bound_sigmas)


def _uniform_ntt(params: CKKSParams, seed: bytes, level: int) -> list[list[int]]:
    """a_i uniform mod q_i, sampled directly in the NTT domain (one XOF stream per prime)."""
    return [sampler.uniform_mod_q(sampler.seeded_xof(seed, sampler.Domain.UNIFORM_A, i), q, params.n)
            for i, q in enumerate(params.moduli[:level + 1])]


def keygen(params: CKKSParams, seed=0) -> KeyPair:
    """Secret key s and public key pk = (-a*s + e, a) over every prime of Q."""
    seed = seed_bytes(seed)
    s = _secret(params, seed)
    e = _gaussian(params, seed, sampler.Domain.KEY_ERROR)
    a_hat = _uniform_ntt(params, seed, params.max_level)
    pk0, pk1 = [], []
    for i, q in enumerate(params.moduli):
        s_hat, e_hat = ntt([x % q for x in s], q), ntt([x % q for x in e], q)
        pk0.append(intt([(-a * b + c) % q for a, b, c in zip(a_hat[i], s_hat, e_hat)], q))
        pk1.append(intt(a_hat[i], q))
    return KeyPair(s, pk0, pk1)


def encrypt_pk(params: CKKSParams, keys: KeyPair, pt: Plaintext, seed=0, form="coeff") -> Ciphertext:
    """Public-key encryption of a plaintext (three NTTs per prime: v, m + e0, e1)."""
    seed = seed_bytes(seed)
    if not keys.pk0:
        raise ParameterError("keys", "<no public key>", "keys with pk0 and pk1 for public-key encryption")
    v = sampler.ternary_uniform(sampler.seeded_xof(seed, sampler.Domain.EPHEMERAL), params.n)
    e0 = _gaussian(params, seed, sampler.Domain.ERROR0)
    e1 = _gaussian(params, seed, sampler.Domain.ERROR1)
    c0, c1 = [], []
    for i, row in enumerate(pt.rows):
        q = params.moduli[i]
        v_hat = ntt([x % q for x in v], q)
        me_hat = ntt([(m + e) % q for m, e in zip(row, e0)], q)
        e1_hat = ntt([x % q for x in e1], q)
        p0, p1 = ntt(keys.pk0[i], q), ntt(keys.pk1[i], q)
        c0.append([(a * b + c) % q for a, b, c in zip(v_hat, p0, me_hat)])
        c1.append([(a * b + c) % q for a, b, c in zip(v_hat, p1, e1_hat)])
    return Ciphertext(c0, c1, pt.scale, "ntt").to_form(params, form)


def encrypt_sk(params: CKKSParams, sk, pt: Plaintext, seed=0, form="coeff") -> Ciphertext:
    """Secret-key encryption: c0 = -a*s + m + e, c1 = a, a drawn in the NTT domain from ``seed``."""
    seed = seed_bytes(seed)
    sk = _check_secret(sk, params)
    e = _gaussian(params, seed, sampler.Domain.ERROR0)
    a_hat = _uniform_ntt(params, seed, pt.level)
    c0 = []
    for i, row in enumerate(pt.rows):
        q = params.moduli[i]
        s_hat = ntt([x % q for x in sk], q)
        me_hat = ntt([(m + x) % q for m, x in zip(row, e)], q)
        c0.append([(-a * b + c) % q for a, b, c in zip(a_hat[i], s_hat, me_hat)])
    return Ciphertext(c0, a_hat, pt.scale, "ntt").to_form(params, form)


def decrypt(params: CKKSParams, sk, ct: Ciphertext) -> Plaintext:
    """m_i = INTT(c0_i + c1_i * NTT(s) [+ c2_i * NTT(s)^2]) for every prime of the ciphertext's level."""
    sk = _check_secret(sk, params)
    ct = ct.to_form(params, "ntt")
    rows = []
    for i in range(ct.level + 1):
        q = params.moduli[i]
        s_hat = ntt([x % q for x in sk], q)
        acc = [0] * params.n
        for comp in reversed(ct.components):        # Horner in s: ((c2 s) + c1) s + c0
            acc = [(a * s + c) % q for a, s, c in zip(acc, s_hat, comp[i])]
        rows.append(intt(acc, q))
    return Plaintext(rows, ct.scale)


def encrypt_slots(params: CKKSParams, keys: KeyPair, slots, seed=0, mode="pk", level=None,
                  form="coeff") -> Ciphertext:
    """Encode then encrypt (``mode`` "pk" or "sk")."""
    pt = encode(params, slots, level)
    if mode == "pk":
        return encrypt_pk(params, keys, pt, seed, form)
    if mode == "sk":
        return encrypt_sk(params, keys.sk, pt, seed, form)
    raise ParameterError("mode", mode, "'pk' (public key) or 'sk' (secret key)")


def decrypt_slots(params: CKKSParams, sk, ct: Ciphertext) -> list[complex]:
    """Decrypt then decode."""
    return decode(params, decrypt(params, sk, ct))


def precision_bits(expected, got) -> dict:
    """-log2 of the mean and of the max absolute error between two slot vectors."""
    errs = [abs(complex(a) - complex(b)) for a, b in zip(expected, got)]
    mean, worst = sum(errs) / len(errs), max(errs)
    inf = float("inf")
    return {"mean_bits": -math.log2(mean) if mean else inf, "min_bits": -math.log2(worst) if worst else inf}

"""Bit-exact specification of the on-chip samplers (golden model of ``cores/sampler``).

Every sampler reads a byte stream from an XOF object (anything with ``squeeze(n) -> bytes``,
normally a :class:`~hhe_gen.models.keccak.Shake`) and consumes it in the exact order described in
its docstring, so the hardware, which reads the same stream, must produce the same values and
leave the stream at the same position.  "Word of k bytes" always means k consecutive stream bytes
read as an unsigned little-endian integer (first byte = least significant).

Two families live here:

* the CKKS-side samplers (secret/ephemeral ternary, error Gaussian, uniform ``a``), keyed by
  :func:`seeded_xof` (SHAKE256 of seed || domain byte || nonce), with the domains of
  :class:`Domain`;
* the Rubato samplers exactly as the authors' reference computes them (``docs/rubato.md``
  sections 3 and 4): round constants and the CDF-table noise, defect included.

Signed samples are Python ints; :func:`to_residues` maps them into ``[0, q)`` for any RNS prime,
so one sample serves every prime of the modulus chain.
"""

from __future__ import annotations

import decimal
import math
from enum import IntEnum
from fractions import Fraction
from typing import Protocol, Sequence

from hhe_gen.params.errors import ParameterError

from .keccak import Shake

__all__ = [
    "ByteStream", "Domain", "seeded_xof", "uniform_mod_q", "ternary_uniform", "ternary_hamming",
    "gaussian_bound", "gaussian_cdt_table", "gaussian_cdt_sample", "gaussian_cdt", "to_residues",
    "RUBATO_XOFS", "Aes128CtrStream", "rubato_xof", "rubato_xof_input", "rubato_noise_xof_input",
    "rubato_round_constants", "rubato_noise_from_words", "rubato_noise",
]

U64 = (1 << 64) - 1


class ByteStream(Protocol):
    """What a sampler needs from an XOF: the next ``n`` bytes of its output stream."""

    def squeeze(self, n: int) -> bytes: ...


def _words(xof: ByteStream, count: int, nbytes: int) -> list[int]:
    raw = xof.squeeze(count * nbytes)
    return [int.from_bytes(raw[i:i + nbytes], "little") for i in range(0, len(raw), nbytes)]


def _check_count(count: int) -> None:
    if not isinstance(count, int) or count < 0:
        raise ParameterError("count", count, "a non-negative integer")


def _check_u64(name: str, value: int) -> None:
    if not isinstance(value, int) or not 0 <= value <= U64:
        raise ParameterError(name, value, "an unsigned 64-bit integer (0 .. 2^64-1)")


# --------------------------------------------------------------------------------------------
# Seeded XOF and domain separation
# --------------------------------------------------------------------------------------------

class Domain(IntEnum):
    """Domain-separation byte of :func:`seeded_xof`: one value per independent sample vector.

    SECRET = 1       secret key s (ternary)
    EPHEMERAL = 2    public-key encryption's ephemeral v (ternary)
    ERROR0 = 3       e0 of public-key encryption (Gaussian), or e of secret-key encryption
    ERROR1 = 4       e1 of public-key encryption (Gaussian)
    UNIFORM_A = 5    the uniform polynomial a (secret-key encryption's c1, key generation's a)
    KEY_ERROR = 6    the error e of key generation (pk0 = -a*s + e)

    0 and 7..255 are reserved.
    """

    SECRET = 1
    EPHEMERAL = 2
    ERROR0 = 3
    ERROR1 = 4
    UNIFORM_A = 5
    KEY_ERROR = 6


def seeded_xof(seed: bytes, domain: int, nonce: int = 0) -> Shake:
    """A fresh SHAKE256 instance for one sample vector.

    Absorbed message (41 bytes, nothing else, no length prefix)::

        seed (32 bytes) || domain (1 byte) || nonce (8 bytes, little-endian)

    Parameters
    ----------
    seed : bytes
        Exactly 32 bytes of secret seed.
    domain : int
        0..255, normally a :class:`Domain` member.
    nonce : int
        0 .. 2^64-1, e.g. a ciphertext counter or the RNS/polynomial index.

    Returns
    -------
    Shake
        A SHAKE256 object that has absorbed the message and is ready to squeeze.
    """
    if not isinstance(seed, (bytes, bytearray)) or len(seed) != 32:
        length = len(seed) if isinstance(seed, (bytes, bytearray)) else type(seed).__name__
        raise ParameterError("seed", f"<{length} bytes>", "exactly 32 bytes")
    if not isinstance(domain, int) or not 0 <= domain <= 255:
        raise ParameterError("domain", domain, "one byte, 0..255 (see sampler.Domain)")
    _check_u64("nonce", nonce)
    return Shake(256).absorb(bytes(seed) + bytes([int(domain)]) + nonce.to_bytes(8, "little"))


# --------------------------------------------------------------------------------------------
# Uniform mod q
# --------------------------------------------------------------------------------------------

def uniform_mod_q(xof: ByteStream, q: int, count: int) -> list[int]:
    """``count`` values uniform in ``[0, q)`` by rejection sampling.

    Let ``b = bitlen(q)`` and ``k = ceil(b/8)``.  Candidates are consecutive k-byte words of the
    stream; each is ANDed with ``2^b - 1`` and accepted if the result is ``< q``, otherwise it is
    dropped (its k bytes are consumed) and the next word is taken.  Accepted values are output in
    stream order.  The acceptance rate is ``q / 2^b``, which is above 1/2 for every q; for an
    NTT prime q = c*2^m + 1 just above 2^(b-1) it is close to 1/2, for q just below 2^b close to 1.
    Output is exactly uniform.

    Parameters
    ----------
    xof : ByteStream
    q : int       modulus, >= 2
    count : int   number of values

    Returns
    -------
    list[int]   residues in [0, q)
    """
    if not isinstance(q, int) or q < 2:
        raise ParameterError("q", q, "an integer modulus >= 2")
    _check_count(count)
    b = q.bit_length()
    k = (b + 7) // 8
    mask = (1 << b) - 1
    out: list[int] = []
    while len(out) < count:
        # Read just enough words for the values still missing; rejected ones are re-read.
        for w in _words(xof, count - len(out), k):
            w &= mask
            if w < q:
                out.append(w)
    return out


# --------------------------------------------------------------------------------------------
# Ternary
# --------------------------------------------------------------------------------------------

_TERNARY_OF_PIECE = (0, 1, -1, None)


def ternary_uniform(xof: ByteStream, count: int) -> list[int]:
    """``count`` values uniform over {-1, 0, 1}.

    The stream is read one byte at a time.  Each byte gives four 2-bit pieces, least significant
    first (bits 1:0, 3:2, 5:4, 7:6).  Piece 0 -> 0, 1 -> +1, 2 -> -1, 3 -> rejected (skipped).
    Values are taken in that order until ``count`` are accepted; the unused pieces of the last
    byte read are discarded (the next call starts on a fresh byte).  Acceptance rate 3/4, so on
    average ``count/3`` bytes are read.  Output is exactly uniform.

    Returns
    -------
    list[int]   values in {-1, 0, 1}
    """
    _check_count(count)
    out: list[int] = []
    while len(out) < count:
        # A byte gives at most 4 values, so every byte of a batch of ceil(missing/4) is needed:
        # the stream position after the call is exactly the one the byte-by-byte rule gives.
        for byte in xof.squeeze((count - len(out) + 3) // 4):
            for shift in (0, 2, 4, 6):
                v = _TERNARY_OF_PIECE[(byte >> shift) & 3]
                if v is not None and len(out) < count:
                    out.append(v)
    return out


def ternary_hamming(xof: ByteStream, count: int, h: int) -> list[int]:
    """``count`` values in {-1, 0, 1} with exactly ``h`` non-zero entries.

    Positions are a uniformly random h-subset and signs are uniform and independent (the
    "sample in a ball" shuffle of CRYSTALS-Dilithium, generalised).  Stream order:

    1. **Signs:** ``ceil(h/8)`` bytes.  Sign number t (t = 0..h-1) is bit ``t mod 8`` of byte
       ``t div 8``: 0 means +1, 1 means -1.
    2. **Positions:** start with ``c = [0]*count``.  For ``i = count-h, ..., count-1`` (t = i -
       (count-h)): draw ``j`` uniform in ``[0, i]`` by rejection: candidates are consecutive words
       of ``k = max(1, ceil(bitlen(count-1)/8))`` bytes (fixed for the call), masked to
       ``bitlen(i)`` bits, rejected while ``> i`` (for ``i = 0`` the mask is 0 and the first word
       is accepted as j = 0).  Then ``c[i] = c[j]`` and ``c[j] = sign_t``.

    Each candidate's acceptance rate is ``(i+1) / 2^bitlen(i) > 1/2``.

    Parameters
    ----------
    count : int   length of the vector, >= 1
    h : int       Hamming weight, 0 <= h <= count

    Returns
    -------
    list[int]
    """
    if not isinstance(count, int) or count < 1:
        raise ParameterError("count", count, "a positive integer")
    if not isinstance(h, int) or not 0 <= h <= count:
        raise ParameterError("h", h, f"an integer with 0 <= h <= count = {count}")
    sign_bytes = xof.squeeze((h + 7) // 8)
    signs = [-1 if (sign_bytes[t // 8] >> (t % 8)) & 1 else 1 for t in range(h)]
    k = max(1, ((count - 1).bit_length() + 7) // 8)
    c = [0] * count
    for t, i in enumerate(range(count - h, count)):
        mask = (1 << i.bit_length()) - 1
        while True:
            j = int.from_bytes(xof.squeeze(k), "little") & mask
            if j <= i:
                break
        c[i] = c[j]
        c[j] = signs[t]
    return c


# --------------------------------------------------------------------------------------------
# Discrete Gaussian by a cumulative distribution table
# --------------------------------------------------------------------------------------------

def _exact(x, name: str) -> Fraction:
    """A number as an exact fraction; floats are read as the decimal their repr shows."""
    try:
        f = Fraction(repr(x)) if isinstance(x, float) else Fraction(x)
    except (TypeError, ValueError):
        raise ParameterError(name, x, "a positive real number") from None
    if not f > 0:
        raise ParameterError(name, x, "a positive real number")
    return f


def gaussian_bound(sigma=3.2, bound_sigmas=6) -> int:
    """B = ceil(bound_sigmas * sigma), computed exactly (20 for sigma 3.2 and 6 sigmas).

    ``sigma`` and ``bound_sigmas`` given as floats are read as the decimal numbers they print as
    (3.2 means 16/5), so the bound does not depend on binary rounding.
    """
    return math.ceil(_exact(sigma, "sigma") * _exact(bound_sigmas, "bound_sigmas"))


def gaussian_cdt_table(sigma=3.2, bound_sigmas=6, bits: int = 63) -> tuple[int, ...]:
    """The CDT of the discrete Gaussian used by :func:`gaussian_cdt`.

    Distribution: X on the integers ``-B..B`` (``B = gaussian_bound(sigma, bound_sigmas)``) with
    ``P(X = x)`` proportional to ``rho(x) = exp(-x^2 / (2 sigma^2))`` (sigma is the standard
    deviation before truncation, as in CKKS; sigma 3.2, 6 sigma bound 20).

    Entry ``k`` for ``k = 0 .. B-1``::

        T[k] = round(2^bits * P(|X| <= k)) - 1

    computed with 100-digit decimal arithmetic (exact enough that the integer is correctly
    rounded, round half to even), so ``T[k] < u`` for a uniform ``bits``-bit ``u`` holds with
    probability ``1 - round(2^bits P(|X| <= k)) / 2^bits``.  ``P(|X| <= B) = 1`` needs no entry.
    The "minus one" makes the comparison rule "count entries strictly below u" the same as in
    Rubato's noise sampler (docs/rubato.md §4), so one comparator design serves both.

    Parameters
    ----------
    sigma : float         standard deviation, > 0
    bound_sigmas : float  tail cut in standard deviations, > 0
    bits : int            precision of the entries; ``bits + 1`` must be a multiple of 8 (the
                          sample word is ``(bits+1)/8`` bytes: one sign bit plus ``bits`` bits),
                          7 <= bits <= 127; default 63 (64-bit words)

    Returns
    -------
    tuple[int, ...]   B strictly increasing entries, each < 2^bits - 1
    """
    if not isinstance(bits, int) or not 7 <= bits <= 127 or (bits + 1) % 8:
        raise ParameterError("bits", bits, "7, 15, 31, 63 or 127 (bits+1 a multiple of 8)")
    bound = gaussian_bound(sigma, bound_sigmas)
    s = _exact(sigma, "sigma")
    ctx = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_EVEN)
    two_sigma_sq = ctx.divide(decimal.Decimal(2 * s.numerator ** 2), decimal.Decimal(s.denominator ** 2))
    rho = [ctx.exp(ctx.divide(decimal.Decimal(-k * k), two_sigma_sq)) for k in range(bound + 1)]
    total = rho[0] + 2 * sum(rho[1:])
    scale = decimal.Decimal(1 << bits)
    table = []
    mass = decimal.Decimal(0)
    for k in range(bound):
        mass = ctx.add(mass, rho[0] if k == 0 else 2 * rho[k])
        table.append(int(ctx.multiply(scale, ctx.divide(mass, total)).to_integral_value(
            rounding=decimal.ROUND_HALF_EVEN)) - 1)
    if any(a >= b for a, b in zip(table, table[1:])) or table[-1] >= (1 << bits) - 1 or table[0] < 0:
        raise ParameterError("bits", bits,
                             f"enough precision for a strictly increasing table at sigma={sigma}, B={bound}")
    return tuple(table)


def gaussian_cdt_sample(word: int, table: Sequence[int]) -> int:
    """Map one sample word to a signed value: the constant-time CDT scan.

    ``sign = word & 1``, ``u = word >> 1``, ``|e| = #{k : table[k] < u}`` over the WHOLE table
    (every entry is compared for every sample), ``e = -|e|`` if ``sign`` else ``|e|``.  A zero
    magnitude gives 0 for either sign, so P(0) = (T[0]+1)/2^bits and P(+k) = P(-k) =
    (T[k]-T[k-1])/2^(bits+1): the distribution is exactly symmetric.
    """
    u = word >> 1
    magnitude = 0
    for t in table:
        magnitude += t < u
    return -magnitude if word & 1 else magnitude


def gaussian_cdt(xof: ByteStream, count: int, sigma=3.2, bound_sigmas=6, bits: int = 63) -> list[int]:
    """``count`` samples of the discrete Gaussian of :func:`gaussian_cdt_table`.

    Each sample consumes one word of ``(bits+1)/8`` bytes (8 bytes for the default 63-bit table)
    and maps it with :func:`gaussian_cdt_sample` (bit 0 = sign, bits 1.. = u, ``B`` comparisons).
    No word is ever rejected, so the stream position after the call is ``count*(bits+1)/8``.

    Returns
    -------
    list[int]   signed values in [-B, B]
    """
    _check_count(count)
    table = gaussian_cdt_table(sigma, bound_sigmas, bits)
    return [gaussian_cdt_sample(w, table) for w in _words(xof, count, (bits + 1) // 8)]


def to_residues(values: Sequence[int], q: int) -> list[int]:
    """Signed values as residues ``value mod q`` in ``[0, q)`` (one sample serves every prime)."""
    if not isinstance(q, int) or q < 2:
        raise ParameterError("q", q, "an integer modulus >= 2")
    return [v % q for v in values]


# --------------------------------------------------------------------------------------------
# Rubato (docs/rubato.md sections 3 and 4)
# --------------------------------------------------------------------------------------------

RUBATO_XOFS = ("shake256", "aes128-ctr")
"""XOF builds of the reference: SHAKE256 (``ref/`` default, the KATs' main vectors) and
AES-128-CTR (``avx2/`` default, the KATs' ``alternative_xof_vectors``)."""


class Aes128CtrStream:
    """AES-128 in CTR mode as a byte stream (the reference's ``XOF_AES``, docs/rubato.md §3).

    The stream is the encryption of zero bytes: block i is AES_key(IV + i) with the 128-bit
    counter block incremented big-endian (OpenSSL CTR).  Needs the ``cryptography`` package
    (imported lazily; ``ImportError`` if absent).

    Parameters
    ----------
    key : bytes   16 bytes
    iv : bytes    16 bytes, the initial counter block
    """

    def __init__(self, key: bytes, iv: bytes):
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        if len(key) != 16 or len(iv) != 16:
            raise ParameterError("key/iv", (len(key), len(iv)), "16 bytes each")
        self._encryptor = Cipher(algorithms.AES(bytes(key)), modes.CTR(bytes(iv))).encryptor()

    def squeeze(self, n: int) -> bytes:
        """The next ``n`` keystream bytes."""
        return self._encryptor.update(bytes(n))


def rubato_xof_input(nonce: int, counter: int) -> bytes:
    """The 16 bytes absorbed for the round constants: nonce LE64 || counter LE64."""
    _check_u64("nonce", nonce)
    _check_u64("counter", counter)
    return nonce.to_bytes(8, "little") + counter.to_bytes(8, "little")


def rubato_noise_xof_input(nonce: int, counter: int, seed: int) -> bytes:
    """The 32 bytes absorbed for the noise: nonce LE64 || counter LE64 || seed LE64 || 0^8."""
    _check_u64("seed", seed)
    return rubato_xof_input(nonce, counter) + seed.to_bytes(8, "little") + bytes(8)


def rubato_xof(data: bytes, xof: str = "shake256") -> ByteStream:
    """A fresh Rubato XOF instance on the absorbed bytes ``data`` (16 or 32 bytes).

    ``"shake256"``: SHAKE256(data).  ``"aes128-ctr"``: AES-128-CTR with key ``data[0:16]`` and
    initial counter block ``data[16:32]`` (all zero for 16-byte inputs).
    """
    if xof == "shake256":
        return Shake(256).absorb(data)
    if xof == "aes128-ctr":
        return Aes128CtrStream(data[:16], (bytes(data[16:32]) + bytes(16))[:16])
    raise ParameterError("xof", xof, "one of " + ", ".join(RUBATO_XOFS))


def rubato_round_constants(params, nonce: int, counter: int, *, xof: str = "shake256"):
    """Rubato's round constants for one keystream block (docs/rubato.md §3).

    A fresh XOF absorbs ``nonce LE64 || counter LE64`` (16 bytes, no key, no domain byte).
    Candidates are consecutive 4-byte little-endian words, ANDed with ``2^q_bits - 1``; a
    candidate ``< q`` is accepted (zero included), otherwise dropped.  Accepted values fill
    ``rc[0][0..n-1]``, then ``rc[1][0..n-1]``, ..., ``rc[r][0..n-1]``: (r+1)*n values.
    Acceptance rate q/2^q_bits (about 0.982 for the 26-bit q, 0.992 for the 25-bit q).

    Parameters
    ----------
    params : RubatoParams
    nonce, counter : int   unsigned 64-bit
    xof : str              "shake256" (default) or "aes128-ctr"

    Returns
    -------
    (rc, words_read, words_rejected)
        rc: list of r+1 lists of n residues; words_read: 4-byte words consumed up to and
        including the last accepted one; words_rejected: how many of those were dropped.
    """
    stream = rubato_xof(rubato_xof_input(nonce, counter), xof)
    needed = params.round_constant_count
    accepted: list[int] = []
    read = 0
    while len(accepted) < needed:
        w = int.from_bytes(stream.squeeze(4), "little") & params.mask
        read += 1
        if w < params.q:
            accepted.append(w)
    n = params.n
    rc = [accepted[j * n:(j + 1) * n] for j in range(params.rounds + 1)]
    return rc, read, read - needed


def rubato_noise_from_words(words: Sequence[int], table: Sequence[int]) -> list[int]:
    """Rubato's CDF-table noise for given 32-bit words (docs/rubato.md §4).

    For each word w: ``b = w & 1``, ``u = w >> 1`` (31 bits), ``|e| = #{k : table[k] < u}``
    (strictly less, every entry compared, the table used exactly as given even if not
    monotone), ``e = -|e|`` if b else ``+|e|``.
    """
    return [gaussian_cdt_sample(w, table) for w in words]


def rubato_noise(params, nonce: int, counter: int, seed: int, *, xof: str = "shake256",
                 table: Sequence[int] | None = None) -> list[int]:
    """Rubato's Gaussian noise for one block: all n values (only the first l are added).

    A second, fresh XOF absorbs ``nonce LE64 || counter LE64 || seed LE64 || 8 zero bytes``;
    its first 4n bytes are n little-endian 32-bit words, mapped by
    :func:`rubato_noise_from_words` with ``params.cdf_table`` (defect included for Par-128M/L).

    Parameters
    ----------
    params : RubatoParams
    nonce, counter, seed : int   unsigned 64-bit
    xof : str                    "shake256" or "aes128-ctr"
    table : sequence of int      override of the CDF table (e.g. a corrected one); default
                                 ``params.cdf_table``

    Returns
    -------
    list[int]   n signed values
    """
    stream = rubato_xof(rubato_noise_xof_input(nonce, counter, seed), xof)
    words = _words(stream, params.n, 4)
    return rubato_noise_from_words(words, params.cdf_table if table is None else table)

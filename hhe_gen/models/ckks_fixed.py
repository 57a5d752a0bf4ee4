"""Fixed-point CKKS encode / decode in exact integers: the golden model of ``hhe_gen.cores.ckks``.

Encoder (full packing, n = N/2 slots, Delta = 2^log_scale)::

    slots (fixed point, fmt) -> special_ifft_fixed -> w (fmt)
    m_k = scale_up(Re w_k),  m_{k+n} = scale_up(Im w_k)       k < n
    scale_up(v) = round(v * 2^log_scale / 2^F), half away from zero
                = v << (log_scale - F)                                     when log_scale >= F
                = (v + 2^(r-1) - [v < 0]) >> r,  r = F - log_scale         otherwise
    row_i = [m mod q_i]  (|m| < q_i: one conditional add of q_i)

Decoder (L = 1 .. 8 pairwise coprime moduli q_i, Q = prod q_i; a fresh plaintext also decodes from
its first prime alone as long as |m| < q_0/2)::

    c = crt_centre(r_0 .. r_{L-1}):                        (the hardware's CRT, cores/ckks/crt.py)
        y_i = r_i * ((Q/q_i)^-1 mod q_i) mod q_i
        x   = sum_i y_i * (Q/q_i)  mod Q                    (sum < L*Q: L-1 conditional subtractions)
        c   = x - Q if x > floor(Q/2) else x               (centred into (-Q/2, Q/2])
    scale_down(c) = round(c * 2^F / 2^log_scale), half away from zero, saturated to fmt
    w_k = (scale_down(c_k), scale_down(c_{k+n}))  -> special_fft_fixed -> slots (fmt)

These equal :func:`hhe_gen.models.ckks.encode` / :func:`~hhe_gen.models.ckks.decode` with ``fmt``
(tests/cores/ckks check it; those quantise the float slots with :func:`hhe_gen.models.fft.quantize`
first, which is what the driver of the hardware does).

Parameter rules (:func:`check_codec_params`, ParameterError naming the parameter):

* N a power of two 2^4 .. 2^16;
* frac_bits >= log2(N): the IFFT divides by n = N/2, so a slot of magnitude 1 must keep at least
  one bit in every w_k - with fewer fraction bits the encoder rounds whole slots to zero ("too few
  fraction bits");
* log_scale 1 .. 62 with 2^(W-1-F+log_scale) < q for every prime (every encodable coefficient,
  |m| <= 2^(W-1-F) * Delta, is below each prime, so one conditional add reduces it; a larger
  scale needs more than the fixed point's integer range and is refused, "scale too large");
* primes odd, 3 .. 2^64.

The decoder (:func:`check_decoder_params`) takes 1 .. 8 pairwise coprime odd moduli and needs
2^(W-1-F+log_scale) < Q (the product) instead of below every prime.
"""

from __future__ import annotations

import math

from ..params.errors import ParameterError
from . import fft as fftm

MAX_DECODER_PRIMES = 8

__all__ = ["check_codec_params", "encode_integers", "check_decoder_params", "scale_up", "scale_down", "centre", "crt_constants",
           "crt_centre", "encode_fixed", "decode_fixed",
           "encode_slots", "decode_slots", "precision_bits"]


def check_codec_params(n_ring: int, fmt: fftm.FixedPointFormat, log_scale: int, moduli,
                       *, bound=None) -> tuple[int, ...]:
    """Validate (see the module docstring); returns the moduli as a tuple.  ``bound``: the number
    2^(W-1-F+log_scale) must stay below (default: the smallest prime; the decoder passes Q)."""
    if isinstance(n_ring, bool) or not isinstance(n_ring, int) or n_ring < 16 or n_ring > 1 << 16 \
            or n_ring & (n_ring - 1):
        raise ParameterError("N", n_ring, "a power of two 2^4 .. 2^16")
    if not isinstance(fmt, fftm.FixedPointFormat):
        raise ParameterError("fmt", fmt, "a hhe_gen.models.fft.FixedPointFormat")
    log_n = n_ring.bit_length() - 1
    if fmt.frac_bits < log_n:
        raise ParameterError("frac_bits", fmt.frac_bits,
                             f">= log2(N) = {log_n} (the IFFT divides by N/2; fewer fraction bits round "
                             f"slots away)")
    if isinstance(moduli, int):
        moduli = (moduli,)
    try:
        moduli = tuple(moduli)
    except TypeError:
        raise ParameterError("moduli", moduli, "a prime or a list of odd primes") from None
    if not moduli or any(isinstance(q, bool) or not isinstance(q, int) or q < 3 or q % 2 == 0 or q >= 1 << 64
                         for q in moduli):
        raise ParameterError("moduli", moduli, "one or more odd moduli 3 .. 2^64 - 1")
    if isinstance(log_scale, bool) or not isinstance(log_scale, int) or not 1 <= log_scale <= 62:
        raise ParameterError("log_scale", log_scale, "an integer 1 .. 62 (Delta = 2^log_scale)")
    top = fmt.width - 1 - fmt.frac_bits + log_scale
    q_min = min(moduli) if bound is None else bound(moduli)
    what = "the smallest prime" if bound is None else "the product Q of the moduli"
    if not 1 << top < q_min:                     # q_min odd: 2^(bits-1) < q_min < 2^bits
        raise ParameterError("log_scale", log_scale,
                             f"1 .. {min(62, q_min.bit_length() - 1 - (fmt.width - 1 - fmt.frac_bits))} "
                             f"(2^(W-1-F+log_scale) below {what}, here 2^{top} >= {q_min})")
    return moduli


def check_decoder_params(n_ring: int, fmt: fftm.FixedPointFormat, log_scale: int, moduli) -> tuple[int, ...]:
    """:func:`check_codec_params` for the decoder: 1 .. 8 pairwise coprime odd moduli, and
    2^(W-1-F+log_scale) < Q = their product.  Returns the moduli as a tuple."""
    if isinstance(moduli, int) and not isinstance(moduli, bool):
        moduli = (moduli,)
    try:
        count = len(moduli)
    except TypeError:
        raise ParameterError("moduli", moduli, "a prime or a list of 1 .. 8 odd pairwise coprime moduli") from None
    if not 1 <= count <= MAX_DECODER_PRIMES:
        raise ParameterError("moduli", f"<{count} moduli>", f"1 .. {MAX_DECODER_PRIMES} moduli")
    moduli = check_codec_params(n_ring, fmt, log_scale, moduli, bound=math.prod)
    for i, a in enumerate(moduli):
        for b in moduli[:i]:
            if math.gcd(a, b) != 1:
                raise ParameterError("moduli", moduli, f"pairwise coprime moduli ({a} and {b} are not)")
    return moduli


def scale_up(v: int, fmt: fftm.FixedPointFormat, log_scale: int) -> int:
    """round(v * 2^log_scale / 2^F), half away from zero (exact integers)."""
    f = fmt.frac_bits
    if log_scale >= f:
        return v << (log_scale - f)
    r = f - log_scale
    return (v + (1 << (r - 1)) - (1 if v < 0 else 0)) >> r


def scale_down(c: int, fmt: fftm.FixedPointFormat, log_scale: int) -> int:
    """round(c * 2^F / 2^log_scale), half away from zero, saturated to [min_int, max_int]."""
    f = fmt.frac_bits
    if f >= log_scale:
        v = c << (f - log_scale)
    else:
        r = log_scale - f
        v = (c + (1 << (r - 1)) - (1 if c < 0 else 0)) >> r
    return max(fmt.min_int, min(fmt.max_int, v))


def centre(r: int, q: int) -> int:
    """The residue r mod q as a signed value in (-q/2, q/2] (crt_centered with one prime)."""
    return r - q if r > q // 2 else r


def crt_constants(moduli) -> tuple[int, list[int], list[int]]:
    """(Q, [(Q/q_i)^-1 mod q_i], [Q/q_i]): the constants of :func:`crt_centre`."""
    big_q = math.prod(moduli)
    cofactors = [big_q // q for q in moduli]
    return big_q, [pow(m % q, -1, q) for m, q in zip(cofactors, moduli)], cofactors


def crt_centre(residues, moduli) -> int:
    """The integer in (-Q/2, Q/2] congruent to residues[i] mod moduli[i] (the hardware's steps:
    y_i = r_i * inv_i mod q_i, x = sum y_i * Q/q_i < L*Q reduced by conditional subtractions of Q,
    centred by one more).  With one modulus it is :func:`centre`."""
    big_q, invs, cofactors = crt_constants(moduli)
    x = sum((r * inv % q) * m for r, inv, q, m in zip(residues, invs, moduli, cofactors))
    for k in range(len(moduli) - 1, 0, -1):        # constant time in hardware: compare with k*Q
        if x >= k * big_q:
            x -= k * big_q
            break
    return x - big_q if x > big_q // 2 else x


def encode_integers(slots, fmt: fftm.FixedPointFormat, log_scale: int) -> list[int]:
    """n = N/2 fixed-point slots ((re, im) pairs in fmt) -> the N rounded integer coefficients
    round(Delta * IFFT(slots)) (real parts, then imaginary parts), signed, before any reduction;
    |m| < 2^(W-1-F+log_scale)."""
    w = fftm.special_ifft_fixed(list(slots), fmt)
    return [scale_up(z[0], fmt, log_scale) for z in w] + [scale_up(z[1], fmt, log_scale) for z in w]


def encode_fixed(slots, fmt: fftm.FixedPointFormat, log_scale: int, moduli) -> list[list[int]]:
    """n = N/2 fixed-point slots ((re, im) pairs in fmt) -> one row of N residues per prime."""
    moduli = check_codec_params(2 * len(slots), fmt, log_scale, moduli)
    m = encode_integers(slots, fmt, log_scale)
    return [[c % q for c in m] for q in moduli]


def decode_fixed(rows, moduli, fmt: fftm.FixedPointFormat, log_scale: int) -> list[tuple[int, int]]:
    """N residues mod each modulus -> n = N/2 fixed-point slots.

    ``moduli`` an int q: ``rows`` is one row of N residues mod q; a list of L moduli: ``rows`` is
    L rows (row i mod moduli[i]), combined by :func:`crt_centre`."""
    if isinstance(moduli, int) and not isinstance(moduli, bool):
        moduli, rows = (moduli,), [rows]
    moduli = check_decoder_params(len(rows[0]) if rows else 0, fmt, log_scale, moduli)
    rows = [list(r) for r in rows]
    n_ring = len(rows[0])
    if len(rows) != len(moduli) or any(len(r) != n_ring for r in rows):
        raise ParameterError("rows", f"<{len(rows)} rows>", f"{len(moduli)} rows of N = {n_ring} residues")
    for row, q in zip(rows, moduli):
        if any(isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < q for r in row):
            raise ParameterError("row", "<residues>", f"integers 0 .. q - 1 = {q - 1}")
    n = n_ring // 2
    c = [scale_down(crt_centre(res, moduli), fmt, log_scale) for res in zip(*rows)]
    return fftm.special_fft_fixed(list(zip(c[:n], c[n:])), fmt)


def encode_slots(slots, fmt, log_scale, moduli) -> list[list[int]]:
    """Complex slots -> quantised (:func:`hhe_gen.models.fft.quantize`) -> :func:`encode_fixed`."""
    return encode_fixed([fftm.quantize_complex(z, fmt) for z in slots], fmt, log_scale, moduli)


def decode_slots(rows, moduli, fmt, log_scale) -> list[complex]:
    """:func:`decode_fixed` -> complex slots."""
    return [fftm.dequantize_complex(p, fmt) for p in decode_fixed(rows, moduli, fmt, log_scale)]


def precision_bits(expected, got) -> tuple[float, float]:
    """(-log2 mean |error|, -log2 max |error|) of complex slot vectors."""
    errs = [abs(complex(a) - complex(b)) for a, b in zip(expected, got)]
    mean, worst = sum(errs) / len(errs), max(errs)
    return (-math.log2(mean) if mean else math.inf, -math.log2(worst) if worst else math.inf)

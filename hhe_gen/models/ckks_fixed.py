"""Fixed-point CKKS encode / decode in exact integers: the golden model of ``hhe_gen.cores.ckks``.

Encoder (full packing, n = N/2 slots, Delta = 2^log_scale)::

    slots (fixed point, fmt) -> special_ifft_fixed -> w (fmt)
    m_k = scale_up(Re w_k),  m_{k+n} = scale_up(Im w_k)       k < n
    scale_up(v) = round(v * 2^log_scale / 2^F), half away from zero
                = v << (log_scale - F)                                     when log_scale >= F
                = (v + 2^(r-1) - [v < 0]) >> r,  r = F - log_scale         otherwise
    row_i = [m mod q_i]  (|m| < q_i: one conditional add of q_i)

Decoder (one prime q; the CRT over several primes is not implemented in hardware: a fresh
plaintext decodes from its first prime alone as long as |m| < q_0/2)::

    c = r - q if r > floor(q/2) else r                     (centred, as crt_centered with one prime)
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
"""

from __future__ import annotations

import math

from ..params.errors import ParameterError
from . import fft as fftm

__all__ = ["check_codec_params", "scale_up", "scale_down", "centre", "encode_fixed", "decode_fixed",
           "encode_slots", "decode_slots", "precision_bits"]


def check_codec_params(n_ring: int, fmt: fftm.FixedPointFormat, log_scale: int, moduli) -> tuple[int, ...]:
    """Validate (see the module docstring); returns the moduli as a tuple."""
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
    q_min = min(moduli)
    if not 1 << top < q_min:                     # q_min odd: 2^(bits-1) < q_min < 2^bits
        raise ParameterError("log_scale", log_scale,
                             f"1 .. {q_min.bit_length() - 1 - (fmt.width - 1 - fmt.frac_bits)} "
                             f"(2^(W-1-F+log_scale) below the smallest prime, here 2^{top} >= {q_min})")
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


def encode_fixed(slots, fmt: fftm.FixedPointFormat, log_scale: int, moduli) -> list[list[int]]:
    """n = N/2 fixed-point slots ((re, im) pairs in fmt) -> one row of N residues per prime."""
    n = len(slots)
    moduli = check_codec_params(2 * n, fmt, log_scale, moduli)
    w = fftm.special_ifft_fixed(list(slots), fmt)
    m = [scale_up(z[0], fmt, log_scale) for z in w] + [scale_up(z[1], fmt, log_scale) for z in w]
    return [[c % q for c in m] for q in moduli]


def decode_fixed(row, q: int, fmt: fftm.FixedPointFormat, log_scale: int) -> list[tuple[int, int]]:
    """N residues mod q -> n = N/2 fixed-point slots."""
    n_ring = len(row)
    check_codec_params(n_ring, fmt, log_scale, (q,))
    if any(isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < q for r in row):
        raise ParameterError("row", "<residues>", f"integers 0 .. q - 1 = {q - 1}")
    n = n_ring // 2
    c = [scale_down(centre(r, q), fmt, log_scale) for r in row]
    return fftm.special_fft_fixed(list(zip(c[:n], c[n:])), fmt)


def encode_slots(slots, fmt, log_scale, moduli) -> list[list[int]]:
    """Complex slots -> quantised (:func:`hhe_gen.models.fft.quantize`) -> :func:`encode_fixed`."""
    return encode_fixed([fftm.quantize_complex(z, fmt) for z in slots], fmt, log_scale, moduli)


def decode_slots(row, q, fmt, log_scale) -> list[complex]:
    """:func:`decode_fixed` -> complex slots."""
    return [fftm.dequantize_complex(p, fmt) for p in decode_fixed(row, q, fmt, log_scale)]


def precision_bits(expected, got) -> tuple[float, float]:
    """(-log2 mean |error|, -log2 max |error|) of complex slot vectors."""
    errs = [abs(complex(a) - complex(b)) for a, b in zip(expected, got)]
    mean, worst = sum(errs) / len(errs), max(errs)
    return (-math.log2(mean) if mean else math.inf, -math.log2(worst) if worst else math.inf)

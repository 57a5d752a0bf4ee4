"""Golden model of the Rubato keystream generator, layer by layer (``docs/rubato.md``).

What the authors' reference (github.com/KAIST-CryptLab/Rubato, commit 145ee37) computes, in the
reference loop's time order, from the constant initial state ``x = (1, 2, ..., n)``::

    for j = 0 .. r-1:  ARK(rc[j]); MixColumns; MixRows; Feistel
    MixColumns; MixRows; ARK(rc[r])                      # finalisation
    z   = first l words                                  # truncation, "keystream_before_noise"
    out = (z + e) mod q                                  # optional noise, "final_keystream"

All arithmetic is in Z_q on canonical residues.  The state is ``x[row*v + col]`` (row-major).
Each layer is its own function so hardware can be compared after every layer; the
:class:`RubatoTrace` records exactly the states the KAT JSON files record, under the same names.

Messages (docs/rubato.md §5, the *intended* scheme; the reference's avx2 bit-cast defect is not
modelled): ``c_i = (out_i + floor(fl32(fl32(Delta * m_i) + 0.5))) mod q`` with
``Delta = float32(q)/16``, and decryption ``m'_i = centre((c_i - z_i) mod q) / Delta``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import RubatoParams, rubato_params

from .sampler import rubato_noise, rubato_round_constants

__all__ = [
    "RubatoTrace", "initial_state", "round_keys", "ark", "mix_columns", "mix_rows", "feistel",
    "finalisation", "truncation", "add_noise", "keystream", "corrected_cdf_table",
    "noise_defect_affected_words", "scale_message", "encrypt", "decrypt",
    "decryption_error_bound",
]

# docs/rubato.md §4: "entry 4 of the shared table is 2147483647 (2^31-1) instead of about 2136316068".
# 2136316068 = floor(2^31 * P(|X| <= 4)) for the width s = 4.1 of Par-128M/L.
_CORRECTED_ENTRY_4 = 2136316068


@dataclass
class RubatoTrace:
    """Everything one keystream block computes, with the KAT JSON's field names.

    Pass an empty ``RubatoTrace()`` to :func:`keystream`; it is filled in.

    Members
    -------
    round_constants : list[list[int]]   rc[j][i], j = 0..r
    rc_xof_words_read : int             4-byte XOF words consumed for the round constants
    rc_xof_words_rejected : int         how many of those were rejected
    round_keys : list[list[int]]        rk[j][i] = key[i]*rc[j][i] mod q
    steps : list[dict]                  the KAT "trace" entries: for iteration j (1-based)
        ``{"step": "iteration j of r", "round_constant_index": j-1, "after_ARK": [...],
        "after_MixColumns": [...], "after_MixRows": [...], "after_Feistel": [...]}``, then
        ``{"step": "finalization", "round_constant_index": r, "after_MixColumns": [...],
        "after_MixRows": [...], "after_ARK": [...]}`` (full n-word states)
    keystream_before_noise : list[int]  the first l words of the final state
    noise_values_all_n_words : list[int] | None   all n noise values (None without a seed)
    noise_values : list[int] | None     the first l of them, the ones added
    final_keystream : list[int]         what :func:`keystream` returned
    """

    round_constants: list = field(default_factory=list)
    rc_xof_words_read: int = 0
    rc_xof_words_rejected: int = 0
    round_keys: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    keystream_before_noise: list = field(default_factory=list)
    noise_values_all_n_words: list | None = None
    noise_values: list | None = None
    final_keystream: list = field(default_factory=list)


def _params(params) -> RubatoParams:
    return params if isinstance(params, RubatoParams) else rubato_params(params)


def _check_vector(name: str, values, length: int, q: int) -> list[int]:
    values = list(values)
    if len(values) != length:
        raise ParameterError(name, f"<{len(values)} words>", f"exactly {length} words")
    for i, x in enumerate(values):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= x < q:
            raise ParameterError(f"{name}[{i}]", x, f"an integer in [0, q) = [0, {q})")
    return [int(x) for x in values]


def initial_state(params) -> list[int]:
    """The constant initial state x[i] = i + 1 (independent of key, nonce and counter)."""
    return list(range(1, _params(params).n + 1))


def round_keys(params, key: Sequence[int], rc: Sequence[Sequence[int]]) -> list[list[int]]:
    """rk[j][i] = key[i] * rc[j][i] mod q for every row j of round constants."""
    p = _params(params)
    return [[k * c % p.q for k, c in zip(key, row)] for row in rc]


def ark(params, state: Sequence[int], round_key: Sequence[int]) -> list[int]:
    """AddRoundKey: x[i] + rk[i] mod q (``rk`` one row of :func:`round_keys`)."""
    q = _params(params).q
    return [(x + k) % q for x, k in zip(state, round_key)]


def mix_columns(params, state: Sequence[int]) -> list[int]:
    """Y = M_v X: ``y[i][col] = sum_k c_k * x[(i+k) mod v][col] mod q`` for every column."""
    p = _params(params)
    v, c, q = p.v, p.circulant, p.q
    return [sum(c[k] * state[((i + k) % v) * v + col] for k in range(v)) % q
            for i in range(v) for col in range(v)]


def mix_rows(params, state: Sequence[int]) -> list[int]:
    """Y = X M_v^T: ``y[row][j] = sum_k c_k * x[row][(j+k) mod v] mod q`` for every row."""
    p = _params(params)
    v, c, q = p.v, p.circulant, p.q
    return [sum(c[k] * state[row * v + (j + k) % v] for k in range(v)) % q
            for row in range(v) for j in range(v)]


def feistel(params, state: Sequence[int]) -> list[int]:
    """y[0] = x[0]; y[i] = x[i] + x[i-1]^2 mod q over the flat row-major index (old values)."""
    q = _params(params).q
    return [state[0]] + [(state[i] + state[i - 1] * state[i - 1]) % q for i in range(1, len(state))]


def finalisation(params, state: Sequence[int], last_round_key: Sequence[int],
                 trace: RubatoTrace | None = None) -> list[int]:
    """MixColumns, MixRows, ARK(rk[r]) with no Feistel; records the "finalization" trace step."""
    p = _params(params)
    after_mc = mix_columns(p, state)
    after_mr = mix_rows(p, after_mc)
    after_ark = ark(p, after_mr, last_round_key)
    if trace is not None:
        trace.steps.append({"step": "finalization", "round_constant_index": p.rounds,
                            "after_MixColumns": after_mc, "after_MixRows": after_mr,
                            "after_ARK": after_ark})
    return after_ark


def truncation(params, state: Sequence[int]) -> list[int]:
    """The first l words of the state, in row-major order."""
    return list(state[:_params(params).l])


def add_noise(params, z: Sequence[int], noise: Sequence[int]) -> list[int]:
    """out[i] = (z[i] + e[i]) mod q for i < l (noise is added after truncation)."""
    p = _params(params)
    return [(a + e) % p.q for a, e in zip(z[:p.l], noise[:p.l])]


def keystream(params, key: Sequence[int], nonce: int, counter: int, *,
              noise_seed: int | None = None, trace: RubatoTrace | None = None,
              xof: str = "shake256") -> list[int]:
    """One Rubato keystream block.

    Parameters
    ----------
    params : RubatoParams or a set name ("Par-128S", "128s", ...)
    key : sequence of int      n words in [0, q)
    nonce, counter : int       unsigned 64-bit
    noise_seed : int or None   None: the noiseless keystream z (the ``ref/`` output); else the
                               64-bit noise seed, and the result is (z + e) mod q (``avx2/``)
    trace : RubatoTrace or None  filled with every intermediate value if given
    xof : str                  "shake256" (default) or "aes128-ctr" (the avx2 build's XOF_AES)

    Returns
    -------
    list[int]   l words in [0, q)
    """
    p = _params(params)
    key = _check_vector("key", key, p.n, p.q)
    rc, read, rejected = rubato_round_constants(p, nonce, counter, xof=xof)
    rk = round_keys(p, key, rc)
    if trace is not None:
        trace.round_constants, trace.round_keys = rc, rk
        trace.rc_xof_words_read, trace.rc_xof_words_rejected = read, rejected
    x = initial_state(p)
    for j in range(p.rounds):
        after_ark = ark(p, x, rk[j])
        after_mc = mix_columns(p, after_ark)
        after_mr = mix_rows(p, after_mc)
        x = feistel(p, after_mr)
        if trace is not None:
            trace.steps.append({"step": f"iteration {j + 1} of {p.rounds}", "round_constant_index": j,
                                "after_ARK": after_ark, "after_MixColumns": after_mc,
                                "after_MixRows": after_mr, "after_Feistel": x})
    x = finalisation(p, x, rk[p.rounds], trace)
    z = truncation(p, x)
    out = z
    if noise_seed is not None:
        noise = rubato_noise(p, nonce, counter, noise_seed, xof=xof)
        out = add_noise(p, z, noise)
        if trace is not None:
            trace.noise_values_all_n_words, trace.noise_values = noise, noise[:p.l]
    if trace is not None:
        trace.keystream_before_noise, trace.final_keystream = z, out
    return out


def corrected_cdf_table(params) -> tuple[int, ...]:
    """The noise table with the Par-128M/L defect repaired (entry 4 = 2136316068, docs/rubato.md §4).

    For the four sets without the defect this is ``params.cdf_table`` itself.  The reference
    does NOT use this table; it exists to find the words the defect affects.
    """
    p = _params(params)
    if not p.cdf_table_defect:
        return p.cdf_table
    table = list(p.cdf_table)
    table[4] = _CORRECTED_ENTRY_4
    return tuple(table)


def noise_defect_affected_words(params, nonce: int, counter: int, seed: int, *,
                                xof: str = "shake256") -> list[dict]:
    """The noise words (of all n) whose value the table defect changes.

    Returns
    -------
    list[dict]
        ``{"word": i, "reference_value": e_i, "value_with_corrected_table": e'_i}`` for each i
        where the reference table and :func:`corrected_cdf_table` disagree (the KAT field
        ``noise_cdf_defect_affected_words``); empty for sets without the defect.
    """
    p = _params(params)
    reference = rubato_noise(p, nonce, counter, seed, xof=xof)
    if not p.cdf_table_defect:
        return []
    corrected = rubato_noise(p, nonce, counter, seed, xof=xof, table=corrected_cdf_table(p))
    return [{"word": i, "reference_value": a, "value_with_corrected_table": b}
            for i, (a, b) in enumerate(zip(reference, corrected)) if a != b]


def scale_message(params, message: Sequence[float]) -> list[int]:
    """round(Delta * m_i) as the reference intends it: floor(fl32(fl32(Delta * fl32(m_i)) + 0.5)).

    Every step is float32 (numpy.float32): the message word is a C ``float``, the product and
    the +0.5 are rounded to float32, then floor.  Raises ParameterError for non-finite values.
    """
    p = _params(params)
    delta = np.float32(p.delta)
    half = np.float32(0.5)
    out = []
    for i, m in enumerate(message):
        m32 = np.float32(m)
        if not np.isfinite(m32):
            raise ParameterError(f"message[{i}]", m, "a finite real number (|m| < 8 decrypts)")
        out.append(int(np.floor(np.float32(np.float32(delta * m32) + half))))
    return out


def encrypt(params, keystream_with_noise: Sequence[int], message: Sequence[float]) -> list[int]:
    """Intended Rubato encryption: c_i = (out_i + scale_message(m)_i) mod q, i < l.

    Parameters
    ----------
    params : RubatoParams or set name
    keystream_with_noise : l words in [0, q) (:func:`keystream` with a noise seed; the noiseless
        keystream also works, it then simply has no noise)
    message : l reals; |m_i| < 8 keeps Delta*m inside (-q/2, q/2) so decryption recovers it
        (with the noise, |m_i| must stay below 8 - decryption_error_bound: m = -8.0, which the
        KAT messages contain, can wrap around to +8 when the noise is negative)

    Returns
    -------
    list[int]   l words in [0, q)
    """
    p = _params(params)
    ks = _check_vector("keystream_with_noise", keystream_with_noise, p.l, p.q)
    if len(message) != p.l:
        raise ParameterError("message", f"<{len(message)} values>", f"exactly l = {p.l} values")
    return [(k + s) % p.q for k, s in zip(ks, scale_message(p, message))]


def decrypt(params, key: Sequence[int], nonce: int, counter: int,
            ciphertext: Sequence[int]) -> list[float]:
    """Decryption (docs/rubato.md §5): m'_i = centre((c_i - z_i) mod q) / Delta, z the noiseless keystream.

    ``centre`` maps to (-q/2, q/2] (q is odd: values above (q-1)/2 lose q).  The result is
    ``m_i + (e_i + rounding)/Delta``: approximate by design, within
    :func:`decryption_error_bound` of the message.

    Returns
    -------
    list[float]   l values
    """
    p = _params(params)
    ct = _check_vector("ciphertext", ciphertext, p.l, p.q)
    z = keystream(p, key, nonce, counter)
    half = p.q // 2
    out = []
    for c, k in zip(ct, z):
        d = (c - k) % p.q
        if d > half:
            d -= p.q
        out.append(d / p.delta)
    return out


def decryption_error_bound(params, max_abs_message: float = 8.0) -> float:
    """An upper bound on |decrypt(encrypt(m)) - m| for |m| <= max_abs_message < 8 (no wrap-around).

    Contributions: the noise, at most ``len(cdf_table)`` in magnitude (the sampler counts table
    entries); float32 rounding of Delta*m (|Delta*m| < 2^25, so at most 1, half an ulp of 2);
    rounding by floor(x + 0.5) with the float32 +0.5 (at most 1); and the float32 conversion of m
    itself (|m| * 2^-24 relative, times Delta).  Divided by Delta.
    """
    p = _params(params)
    return (len(p.cdf_table) + 2 + max_abs_message * p.delta * 2.0 ** -24) / p.delta


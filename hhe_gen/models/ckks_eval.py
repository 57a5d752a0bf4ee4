"""Server-side RNS-CKKS: the tensor product of two ciphertexts, relinearisation by hybrid key
switching and rescale, bit for bit as Lattigo v6's evaluator computes them (docs/evaluation.md).

- **tensor**: (a0, a1) x (b0, b1) -> (a0 b0, a0 b1 + a1 b0, a1 b1) mod (X^N + 1, q_i) at the lower of
  the two levels; scale = scale_a * scale_b (Lattigo's ``Mul`` without relinearisation).
- **relinearize**: (d0, d1, d2) -> (d0, d1) + ModDown(sum_g D_g(d2) * rlk_g) where D_g is digit g of
  Lattigo's gadget decomposition (:func:`hhe_gen.models.rns_basis.decompose`) extended to Q and P,
  rlk_g = (b_g, a_g) over QP, and ModDown the rounded division by P
  (:func:`hhe_gen.models.rns_basis.mod_down`).  Lattigo's ``Relinearize`` / ``GadgetProduct``.
- **rescale**: every component divided (rounded) by the last prime of its level
  (:func:`hhe_gen.models.rns_basis.div_round_by_last`); scale / q_L.  Lattigo's ``Rescale`` with one
  level per rescale.

A relinearisation key has Lattigo's structure: digit g is b_g = -a_g s + P e_g s^2 + err_g,
where e_g is 1 modulo the primes of the digit's group and 0 modulo the other primes of Q (nothing is
added modulo P).  :func:`relin_keygen` makes one from the project's own samplers; keys exported by
Lattigo (``LattigoPeer.rlk``) load with :meth:`RelinKey.from_json`.

Every product is exact modulo each prime, so the NTT domain, lazy reductions and Montgomery forms
Lattigo works in do not change a residue; the only places where the result depends on how it is
computed are the basis extensions' overflow estimate and the rounding divisions, which
:mod:`hhe_gen.models.rns_basis` computes Lattigo's way.
"""

import math
from dataclasses import dataclass
from fractions import Fraction

from ..params.ckks import CKKSParams
from ..params.errors import ParameterError
from . import sampler
from .ckks import Ciphertext, _check_secret, seed_bytes
from .ntt import intt, ntt
from .rns_basis import decompose, div_round_by_last, gadget_groups, mod_down

__all__ = ["RelinKey", "relin_keygen", "tensor", "relinearize", "rescale", "mul_relin_rescale",
           "key_switch"]

RELIN_A = 7        # sampler domains of the relinearisation key (sampler.Domain reserves 7..255)
RELIN_ERROR = 8


def _key_moduli(params: CKKSParams) -> list[int]:
    if not params.special_moduli:
        raise ParameterError("params.P", "()", "at least one key-switching prime P for relinearisation")
    return list(params.moduli) + list(params.special_moduli)


@dataclass
class RelinKey:
    """A relinearisation key: ``digits[g] = (b_g, a_g)``, each rows over Q then P, coefficient form.

    Members
    -------
    level_q, level_p : the key's levels (Lattigo's: the top level of Q and of P).
    digits : one (b, a) pair per group of :func:`hhe_gen.models.rns_basis.gadget_groups`.
    """
    level_q: int
    level_p: int
    digits: list[tuple[list[list[int]], list[list[int]]]]

    def to_json(self) -> dict:
        return {"levelQ": self.level_q, "levelP": self.level_p,
                "digits": [{"b": b, "a": a} for b, a in self.digits]}

    @classmethod
    def from_json(cls, d: dict, params: CKKSParams) -> "RelinKey":
        moduli = _key_moduli(params)
        if not isinstance(d, dict) or not isinstance(d.get("digits"), list):
            raise ParameterError("rlk", f"<JSON {type(d).__name__}>", 'a JSON object {"levelQ", "levelP", "digits"}')
        level_q, level_p = d.get("levelQ"), d.get("levelP")
        if (level_q, level_p) != (params.max_level, len(params.special_moduli) - 1):
            want = f"levelQ={params.max_level} levelP={len(params.special_moduli) - 1} (these parameters)"
            raise ParameterError("rlk levels", f"levelQ={level_q} levelP={level_p}", want)
        groups = gadget_groups(level_q, level_p + 1)
        if len(d["digits"]) != len(groups):
            raise ParameterError("rlk digits", f"<{len(d['digits'])} digits>", f"{len(groups)} (one per gadget group)")
        digits = []
        for g, digit in enumerate(d["digits"]):
            pair = []
            for part in ("b", "a"):
                rows = digit.get(part) if isinstance(digit, dict) else None
                name = f"rlk.digits[{g}].{part}"
                if not isinstance(rows, list) or len(rows) != len(moduli):
                    raise ParameterError(name, "<malformed>", f"{len(moduli)} rows (Q then P)")
                for i, (row, q) in enumerate(zip(rows, moduli)):
                    if not isinstance(row, list) or len(row) != params.n or any(
                            isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < q for c in row):
                        raise ParameterError(f"{name}[{i}]", "<malformed row>", f"{params.n} residues in [0, {q})")
                pair.append([list(r) for r in rows])
            digits.append((pair[0], pair[1]))
        return cls(level_q, level_p, digits)


def _poly_mul_ntt(rows_hat, other_hat, moduli):
    return [[x * y % q for x, y in zip(r, o)] for r, o, q in zip(rows_hat, other_hat, moduli)]


def relin_keygen(params: CKKSParams, sk, seed=0) -> RelinKey:
    """A relinearisation key for ``sk`` in Lattigo's structure, from the project's samplers:
    a_g uniform over QP (one SHAKE256 stream per prime, nonce g * len(QP) + i), err_g Gaussian
    (nonce g)."""
    seed = seed_bytes(seed)
    sk = _check_secret(sk, params)
    moduli = _key_moduli(params)
    lq = len(params.moduli)
    big_p = math.prod(params.special_moduli)
    s_hat = [ntt([x % m for x in sk], m) for m in moduli]
    digits = []
    for g, group in enumerate(gadget_groups(params.max_level, len(params.special_moduli))):
        err = sampler.gaussian_cdt(sampler.seeded_xof(seed, RELIN_ERROR, g), params.n, params.error.sigma,
                                   params.error.bound_sigmas)
        b_rows, a_rows = [], []
        for i, m in enumerate(moduli):
            a_hat = sampler.uniform_mod_q(sampler.seeded_xof(seed, RELIN_A, g * len(moduli) + i), m, params.n)
            gadget = big_p % m if i < lq and i in group else 0
            e_hat = ntt([x % m for x in err], m)
            b_rows.append(intt([(-a * s + gadget * s * s + e) % m for a, s, e in zip(a_hat, s_hat[i], e_hat)], m))
            a_rows.append(intt(a_hat, m))
        digits.append((b_rows, a_rows))
    return RelinKey(params.max_level, len(params.special_moduli) - 1, digits)


def _level_pair(a: Ciphertext, b: Ciphertext) -> int:
    return min(a.level, b.level)


def tensor(params: CKKSParams, a: Ciphertext, b: Ciphertext) -> Ciphertext:
    """The degree-2 product (a0 b0, a0 b1 + a1 b0, a1 b1), coefficient form, scale_a * scale_b."""
    if a.degree != 1 or b.degree != 1:
        raise ParameterError("ciphertext degree", f"{a.degree} and {b.degree}", "two degree-1 ciphertexts")
    level = _level_pair(a, b)
    a, b = a.to_form(params, "ntt"), b.to_form(params, "ntt")
    qs = params.moduli[:level + 1]
    a0, a1, b0, b1 = (comp[:level + 1] for comp in (a.c0, a.c1, b.c0, b.c1))
    d0 = _poly_mul_ntt(a0, b0, qs)
    d2 = _poly_mul_ntt(a1, b1, qs)
    d1 = [[(x0 * y1 + x1 * y0) % q for x0, x1, y0, y1 in zip(r0, r1, s0, s1)]
          for r0, r1, s0, s1, q in zip(a0, a1, b0, b1, qs)]
    return Ciphertext(d0, d1, a.scale * b.scale, "ntt", d2).to_form(params, "coeff")


def key_switch(params: CKKSParams, x_rows, rlk: RelinKey) -> tuple[list[list[int]], list[list[int]]]:
    """Lattigo's ``GadgetProduct``: (sum_g D_g(x) b_g, sum_g D_g(x) a_g) over QP, divided by P;
    ``x_rows`` coefficient form over the ciphertext's level."""
    level = len(x_rows) - 1
    qs = list(params.moduli[:level + 1])
    ps = list(params.special_moduli)
    lq_key = rlk.level_q + 1
    moduli = qs + ps
    acc = [[[0] * params.n for _ in moduli] for _ in range(2)]
    for g, digit in enumerate(decompose(x_rows, qs, ps)):
        d_hat = [ntt(row, m) for row, m in zip(digit, moduli)]
        for part in range(2):
            key = rlk.digits[g][part]
            key_rows = key[:level + 1] + key[lq_key:]
            for i, m in enumerate(moduli):
                k_hat = ntt(key_rows[i], m)
                acc[part][i] = [(s + d * k) % m for s, d, k in zip(acc[part][i], d_hat[i], k_hat)]
    out = []
    for part in range(2):
        coeff = [intt(row, m) for row, m in zip(acc[part], moduli)]
        out.append(mod_down(coeff, qs, ps))
    return out[0], out[1]


def relinearize(params: CKKSParams, ct: Ciphertext, rlk: RelinKey) -> Ciphertext:
    """(d0, d1, d2) -> (d0, d1) + key_switch(d2): a degree-1 ciphertext, coefficient form."""
    if ct.degree != 2:
        raise ParameterError("ciphertext degree", ct.degree, "2 (a tensor product: c0, c1, c2)")
    ct = ct.to_form(params, "coeff")
    k0, k1 = key_switch(params, ct.c2, rlk)
    qs = params.moduli[:ct.level + 1]
    c0 = [[(x + y) % q for x, y in zip(r, s)] for r, s, q in zip(ct.c0, k0, qs)]
    c1 = [[(x + y) % q for x, y in zip(r, s)] for r, s, q in zip(ct.c1, k1, qs)]
    return Ciphertext(c0, c1, ct.scale)


def _divided_scale(scale, q: int):
    exact = Fraction(scale) / q
    return int(exact) if exact.denominator == 1 else float(exact)


def rescale(params: CKKSParams, ct: Ciphertext) -> Ciphertext:
    """Every component divided (rounded) by the last prime of its level; one level down."""
    if ct.level < 1:
        raise ParameterError("ciphertext level", ct.level, ">= 1: level 0 has no prime left to divide by")
    ct = ct.to_form(params, "coeff")
    qs = params.moduli[:ct.level + 1]
    c0, c1, *c2 = [div_round_by_last(comp, qs) for comp in ct.components]
    return Ciphertext(c0, c1, _divided_scale(ct.scale, qs[-1]), "coeff", c2[0] if c2 else None)


def mul_relin_rescale(params: CKKSParams, a: Ciphertext, b: Ciphertext, rlk: RelinKey) -> Ciphertext:
    """Homomorphic multiplication as a server runs it: tensor, relinearize, rescale."""
    return rescale(params, relinearize(params, tensor(params, a, b), rlk))

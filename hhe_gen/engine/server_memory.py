"""Where the server-side programs (:mod:`hhe_gen.engine.server_programs`) keep their data in the
engine's memory, and how the host writes keys and ciphertexts there and reads results back.

Layout: blocks of N 64-bit words from ``base``, one residue per word, every row in NTT form
(Lattigo's bit-reversed order).  L is the number of primes of Q; there is one key-switching prime P.

| region | rows | content |
|---|---|---|
| ``a0``, ``a1``, ``b0``, ``b1`` | L each | the operands of ``hmult``: ciphertexts a and b, row i mod q_i |
| ``d0``, ``d1``, ``d2`` | L each | ``hmult``'s degree-2 product, read by ``relinearize`` |
| ``c0``, ``c1`` | L each | ``relinearize``'s degree-1 result, read by ``rescale`` |
| ``r0``, ``r1`` | L each | ``rescale``'s result (rows 0 .. level - 1) |
| ``rlk`` | L x 2 x (L + 1) | the relinearisation key: digit g, part (0: b, 1: a), rows q_0 .. q_{L-1} then P |
| ``p_inv`` | L | the constant P^-1 mod q_i in every word (ModDown's factor) |
| ``ql_inv`` | L (L - 1) / 2 | for l = 1 .. L - 1 and i < l: the constant q_l^-1 mod q_i (rescale's factor) |

The relinearisation key is streamed from this memory one row at a time while it is used: it is
L x 2 x (L + 1) rows, far more than the engine's buffers hold at N = 2^13.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import MutableMapping

from hhe_gen.models import ckks
from hhe_gen.models.ckks_eval import RelinKey
from hhe_gen.models.ntt import ntt
from hhe_gen.params.checks import check_int
from hhe_gen.params.ckks import CKKSParams
from hhe_gen.params.errors import ParameterError

from .memory_map import read_words, write_words

__all__ = ["ServerMemoryMap", "write_server_ciphertext", "read_server_ciphertext", "write_relin_key",
           "write_constants", "check_server_params"]

_CIPHERTEXT_REGIONS = ("a0", "a1", "b0", "b1", "d0", "d1", "d2", "c0", "c1", "r0", "r1")


def check_server_params(params: CKKSParams) -> CKKSParams:
    """The engine's server programs need exactly one key-switching prime (single-prime gadget
    digits and a single-prime ModDown are what ``conv`` converts); more is the model's alone."""
    if not isinstance(params, CKKSParams):
        raise ParameterError("params", params, "a hhe_gen.params.CKKSParams")
    if len(params.special_moduli) != 1:
        raise ParameterError("P", list(params.special_moduli),
                             "exactly one key-switching prime (the engine's conv converts one prime; "
                             "hhe_gen.models.ckks_eval handles more)")
    return params


@dataclass(frozen=True)
class ServerMemoryMap:
    """The word addresses of the server programs' data (module docstring).

    Parameters
    ----------
    n : int        ring degree N (block size in words)
    primes : int   L, the number of primes of Q
    base : int     address of the first block
    """
    n: int
    primes: int
    base: int = 0

    def __post_init__(self):
        check_int("N", self.n, 8, 1 << 16)
        check_int("primes", self.primes, 1, 7, "1 .. 7 primes of Q (with P: at most 8 prime slots)")
        check_int("base", self.base, 0, (1 << 32) - self.size, f"0 .. 2^32 - {self.size} (the map must fit)")

    @classmethod
    def for_params(cls, params: CKKSParams, base: int = 0) -> "ServerMemoryMap":
        return cls(params.n, len(check_server_params(params).moduli), base)

    def _rows(self) -> dict[str, int]:
        lq = self.primes
        rows = {name: lq for name in _CIPHERTEXT_REGIONS}
        rows.update(rlk=lq * 2 * (lq + 1), p_inv=lq, ql_inv=lq * (lq - 1) // 2)
        return rows

    @property
    def blocks(self) -> int:
        return sum(self._rows().values())

    @property
    def size(self) -> int:
        return self.blocks * self.n

    def address(self, name: str, row: int = 0) -> int:
        """The address of row ``row`` of region ``name``."""
        rows = self._rows()
        if name not in rows:
            raise ParameterError("region", name, "one of " + ", ".join(rows))
        check_int("row", row, 0, rows[name] - 1, f"0 .. {rows[name] - 1} (rows of {name})")
        block = 0
        for region, count in rows.items():
            if region == name:
                return self.base + (block + row) * self.n
            block += count
        raise AssertionError(name)

    def rlk_address(self, digit: int, part: int, row: int) -> int:
        """The key's digit ``digit``, part ``part`` (0: b, 1: a), row ``row`` (< L: q_row, L: P)."""
        lq = self.primes
        check_int("digit", digit, 0, lq - 1)
        check_int("part", part, 0, 1)
        check_int("row", row, 0, lq)
        return self.address("rlk", (digit * 2 + part) * (lq + 1) + row)

    def ql_inv_address(self, level: int, row: int) -> int:
        """The row of q_level^-1 mod q_row (1 <= level < L, row < level)."""
        check_int("level", level, 1, self.primes - 1)
        check_int("row", row, 0, level - 1)
        return self.address("ql_inv", level * (level - 1) // 2 + row)


def write_server_ciphertext(memory: MutableMapping[int, int], layout: ServerMemoryMap, params: CKKSParams,
                            ct: ckks.Ciphertext, names) -> None:
    """Write ``ct`` (any form) in NTT form into the regions ``names`` (one per component)."""
    ct = ct.to_form(params, "ntt")
    if len(names) != len(ct.components):
        raise ParameterError("names", names, f"{len(ct.components)} region names (one per component)")
    for name, comp in zip(names, ct.components):
        for i, row in enumerate(comp):
            write_words(memory, layout.address(name, i), row)


def read_server_ciphertext(memory, layout: ServerMemoryMap, params: CKKSParams, names, rows: int,
                           scale) -> ckks.Ciphertext:
    """The ciphertext in regions ``names`` (rows 0 .. rows - 1 of each), NTT form."""
    comps = [[read_words(memory, layout.address(name, i), params.n) for i in range(rows)] for name in names]
    return ckks.Ciphertext(comps[0], comps[1], scale, "ntt", comps[2] if len(comps) == 3 else None)


def write_relin_key(memory: MutableMapping[int, int], layout: ServerMemoryMap, params: CKKSParams,
                    rlk: RelinKey) -> None:
    """The key, NTT form, into ``rlk`` (the host transforms it once; the programs stream it)."""
    check_server_params(params)
    moduli = list(params.moduli) + list(params.special_moduli)
    for g, parts in enumerate(rlk.digits):
        for part, rows in enumerate(parts):
            for i, (row, m) in enumerate(zip(rows, moduli)):
                write_words(memory, layout.rlk_address(g, part, i), ntt(row, m))


def write_constants(memory: MutableMapping[int, int], layout: ServerMemoryMap, params: CKKSParams) -> None:
    """The constant rows ``p_inv`` and ``ql_inv`` (a constant polynomial is the same in NTT form)."""
    check_server_params(params)
    qs, p = params.moduli, params.special_moduli[0]
    for i, q in enumerate(qs):
        write_words(memory, layout.address("p_inv", i), [pow(p, -1, q)] * params.n)
    for level in range(1, len(qs)):
        for i in range(level):
            write_words(memory, layout.ql_inv_address(level, i), [pow(qs[level], -1, qs[i])] * params.n)



"""Boundary vectors for the samplers' modular steps (issue 14 section 6), hardware against
hhe_gen.models.sampler:

- Residues: values exactly -bound, +bound, 0, +-1, for the smallest modulus allowed (q = bound + 1:
  -bound -> 1, +bound -> q - 1) and wide primes, at the default bound of the value shape too;
- the rejection filter (UniformModQ, RejectionFilter, Rubato's round constants): candidate words
  whose masked value is exactly q (must be rejected), q - 1 (kept), q + 1, 0, the mask, and the
  same values with garbage above the mask;
- the CDT scan (GaussianCDT, Rubato's noise): words whose u equals a table entry (does not count),
  entry + 1 (counts), entry - 1, u = 0 and the largest u (the largest noise, +-B), both signs;
  with residues, the largest noise -B lands on q - B for q = B + 1.
"""

import pytest
from amaranth.hdl import signed

from hhe_gen.cores.sampler import CDTScan, GaussianCDT, Residues, RubatoNoise, RubatoRoundConstants, UniformModQ
from hhe_gen.models.sampler import (gaussian_cdt_sample, gaussian_cdt_table, rubato_noise_from_words, to_residues,
                                    uniform_mod_q)
from hhe_gen.params import ntt_primes, rubato_params
from hhe_gen.sim.stream import run_stream

from ._helpers import beats


class _Bytes:
    """A byte stream (the models' ByteStream) over fixed bytes."""

    def __init__(self, data: bytes):
        self.data, self.at = bytes(data), 0

    def squeeze(self, n: int) -> bytes:
        out = self.data[self.at:self.at + n]
        assert len(out) == n, "the model read past the chosen words"
        self.at += n
        return out


# -- residues -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("width, bound, moduli", [
    (8, 5, (6, 7, 12289)),                                  # q = bound + 1, the smallest allowed
    (8, None, (129, 257, 65537)),                           # the shape's own bound, 128
    (20, (1 << 19) - 1, (1 << 19, ntt_primes(1 << 13, 54, 1)[0])),
])
def test_residues_at_the_bound(width, bound, moduli):
    b = (1 << (width - 1)) if bound is None else bound
    low = -b
    high = min(b, (1 << (width - 1)) - 1)
    values = [low, low + 1, -1, 0, 1, high - 1, high, 0, low, high]
    run = run_stream(Residues(moduli, signed(width), bound), values, gaps=width)
    assert [o["value"] for o in run.outputs] == values
    for i, q in enumerate(moduli):
        assert [o["residues"][i] for o in run.outputs] == to_residues(values, q)


@pytest.mark.parametrize("q", [256, 255, 257, 2])
def test_residue_field_holds_q_minus_1(q):
    """Residues are < q: the field has exactly bitlen(q - 1) bits (8 for q = 256, not 9)."""
    dut = Residues((q,), signed(10), q - 1)
    assert dut.layout["residues"].shape.elem_shape.width == max(q - 1, 1).bit_length()
    values = [-(q - 1), q - 1, 0, -1]
    run = run_stream(dut, values)
    assert [o["residues"][0] for o in run.outputs] == to_residues(values, q)


# -- rejection ------------------------------------------------------------------------------------------
def _candidates(q: int) -> list[int]:
    bits = q.bit_length()
    mask = (1 << bits) - 1
    k = -(-bits // 8)
    top = 1 << bits if 8 * k > bits else 0            # a garbage bit above the mask, where one exists
    words = [q, q - 1, q + 1, 0, mask, mask - 1, q, q - 1, 1, q - 2]
    words += [w | top for w in (q, q - 1, 0, mask)] if top else []
    return [w for w in words if w < 1 << (8 * k)]


@pytest.mark.parametrize("q", [3, 257, 12289, 65929217, 2**31 - 1, ntt_primes(1 << 13, 54, 1)[0]])
def test_rejection_at_q(q):
    words = _candidates(q)
    k = -(-q.bit_length() // 8)
    data = b"".join(w.to_bytes(k, "little") for w in words)
    mask = (1 << q.bit_length()) - 1
    kept = [w & mask for w in words if w & mask < q]             # the rule, spelled out
    assert uniform_mod_q(_Bytes(data), q, len(kept)) == kept
    run = run_stream(UniformModQ(q, in_bytes=1), beats(data, 1), len(kept), gaps=q % 11)
    assert run.outputs == kept


def test_rubato_round_constants_at_q():
    p = rubato_params("Par-80S")
    words = [p.q, p.q - 1, p.q + 1, p.mask, 0, p.q | 1 << p.q_bits, (p.q - 1) | 1 << 31, p.q - 2]
    data = b"".join(w.to_bytes(4, "little") for w in words)
    kept = uniform_mod_q(_Bytes(data), p.q, 4)
    assert kept == [p.q - 1, 0, p.q - 1, p.q - 2]
    run = run_stream(RubatoRoundConstants(p, in_bytes=4), beats(data, 4), len(kept), gaps=1)
    assert run.outputs == kept


# -- CDT scan -------------------------------------------------------------------------------------------
def _cdt_words(table, word_bits: int) -> list[int]:
    umax = (1 << (word_bits - 1)) - 1
    us = {0, 1, umax, umax - 1}
    for t in table:
        us |= {t - 1, t, t + 1}
    us = sorted(u for u in us if 0 <= u <= umax)
    return [(u << 1) | s for u in us for s in (0, 1)]


@pytest.mark.parametrize("comparators", [None, 3])
def test_cdt_scan_at_table_entries(comparators):
    table = gaussian_cdt_table(3.2, 6, 31)
    words = _cdt_words(table, 32)
    run = run_stream(CDTScan(table, 32, comparators), words, gaps=5)
    want = [gaussian_cdt_sample(w, table) for w in words]
    assert run.outputs == want
    assert max(want) == len(table) and min(want) == -len(table)      # the largest noise, both signs


def test_gaussian_largest_noise_into_residues():
    """GaussianCDT with residues mod q = B + 1 (the smallest modulus): -B -> 1, +B -> q - 1 = B."""
    table = gaussian_cdt_table(3.2, 6, 31)
    b = len(table)
    moduli = (b + 1, 12289)
    words = _cdt_words(table, 32)
    data = b"".join(w.to_bytes(4, "little") for w in words)
    run = run_stream(GaussianCDT(bits=31, in_bytes=4, moduli=moduli), beats(data, 4), len(words), gaps=3)
    want = [gaussian_cdt_sample(w, table) for w in words]
    assert [o["value"] for o in run.outputs] == want
    for i, q in enumerate(moduli):
        assert [o["residues"][i] for o in run.outputs] == to_residues(want, q)


@pytest.mark.parametrize("name", ["Par-80S", "Par-128M"])
def test_rubato_noise_at_table_entries(name):
    p = rubato_params(name)
    words = _cdt_words(p.cdf_table, 32)
    data = b"".join(w.to_bytes(4, "little") for w in words)
    run = run_stream(RubatoNoise(p, in_bytes=4, moduli=(p.q,)), beats(data, 4), len(words), gaps=2)
    want = rubato_noise_from_words(words, p.cdf_table)
    assert [o["value"] for o in run.outputs] == want
    assert [o["residues"][0] for o in run.outputs] == to_residues(want, p.q)

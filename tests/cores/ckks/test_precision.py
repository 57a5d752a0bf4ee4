"""Precision of the fixed-point encode/decode (the cores equal hhe_gen.models.ckks_fixed bit for bit,
so the model measures the hardware): bits = -log2 mean |error| of the complex slots against the
float64 originals, uniform random slots in the unit disc and real-only slots, Delta = 2^50.

Paths: A hardware encode -> float64 decode, B float64 (Lattigo) encode -> hardware decode,
E hardware encode -> hardware decode.  Targets: N = 2^13 at 29/26 >= 20 bits (E); at N = 2^16 the
narrowest width keeping >= 24 bits is 33 bits with 31 fraction bits (32/30 falls short)."""

import pytest

from hhe_gen.apps.bench.fft import precision


@pytest.mark.parametrize("kind", ["disc", "real"])
def test_dna_hhe_width_at_2_13(kind):
    r = precision(13, 29, 26, kind)
    assert r["E_mean_bits"] >= 20 and r["A_mean_bits"] >= 20 and r["B_mean_bits"] >= 20


def test_more_fraction_bits_more_precision():
    a, b = precision(10, 24, 21), precision(10, 32, 29)
    assert 7 <= b["E_mean_bits"] - a["E_mean_bits"] <= 9          # about one bit per fraction bit


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["disc", "real"])
def test_narrowest_width_for_24_bits_at_2_16(kind):
    assert precision(16, 33, 31, kind)["E_mean_bits"] >= 24
    assert precision(16, 32, 30, kind)["E_mean_bits"] < 24

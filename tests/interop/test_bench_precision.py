"""``hhe-gen bench accel`` precision cases: the accelerator's ciphertext (the ISA model's, bit-exact
with the RTL) decrypted by Lattigo against Lattigo's own encryption of the same slots, per slot
format and rounding."""

import pytest

from hhe_gen.apps.bench.accel_precision import lattigo_precision


def test_the_toy_precision_case_compares_with_lattigos_own(lattigo_peer):
    got = lattigo_precision("toy")
    assert (got["slot_format"], got["rounding"]) == ("38/36", "half-even")
    # toy: Delta = 2^log_scale is small, so both encryptions are noise-bound near the same bits
    assert 8 < got["worst_slot_bits"] <= got["mean_bits"] < 20
    assert abs(got["below_lattigo_mean"] - (got["lattigo_mean_bits"] - got["mean_bits"])) < 0.011
    assert got["within_lattigo_margin"] == (got["below_lattigo_mean"] <= 2)


def test_a_format_refused_by_the_configuration_is_an_error():
    from hhe_gen.params import ParameterError
    with pytest.raises(ParameterError, match="'slot_format'"):
        lattigo_precision("dna-hhe", width=40, frac_bits=30)

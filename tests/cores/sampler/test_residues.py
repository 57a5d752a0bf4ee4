"""Residues: a signed value as its residue mod every prime, equal to the model's to_residues."""

import random

import pytest
from amaranth.hdl import signed, unsigned

from hhe_gen.cores.sampler import Residues
from hhe_gen.models.sampler import to_residues
from hhe_gen.params import ntt_primes
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream


@pytest.mark.parametrize("moduli", [(3,), (12289, 65929217), tuple(ntt_primes(1 << 13, 54, 3)) + (97,)])
def test_residues_match_the_model(moduli):
    bound = min(moduli) - 1 if min(moduli) < 128 else 127
    rng = random.Random(len(moduli))
    values = [rng.randint(-bound, bound) for _ in range(200)] + [-bound, bound, 0, -1, 1]
    shape = signed(8)
    run = run_stream(Residues(moduli, shape, bound), values, gaps=len(moduli))
    assert [o["value"] for o in run.outputs] == values
    for i, q in enumerate(moduli):
        assert [o["residues"][i] for o in run.outputs] == to_residues(values, q)
    full = run_stream(Residues(moduli, shape, bound), values)
    assert full.latency == 1 and full.out_cycles == [c + 1 for c in full.in_cycles]


@pytest.mark.parametrize("args,name", [
    (((), signed(8)), "moduli"), (((100,), signed(8)), "moduli"), (((1000,), unsigned(8)), "value_shape"),
    (((5,), signed(4), 5), "moduli"), ((("q",), signed(4)), "moduli"),
])
def test_bad_parameters(args, name):
    with pytest.raises(ParameterError) as err:
        Residues(*args)
    assert err.value.name.partition("[")[0] == name       # a bad element i is named name[i]

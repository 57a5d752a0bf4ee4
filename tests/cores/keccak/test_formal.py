"""The Keccak/SHAKE proofs (SymbiYosys): they pass on the cores, and fail on broken ones."""

import pytest
from amaranth import Mux

from hhe_gen.cores.keccak import ShakeXof
from hhe_gen.cores.keccak import permutation
from hhe_gen.formal import keccak as formal_keccak
from hhe_gen.params.errors import ParameterError

pytestmark = pytest.mark.toolchain


def _check(results):
    assert results
    for task, res in results.items():
        assert res.passed, f"{task}: {res.status}\n{res.log[-4000:]}"


def test_round_equals_model_quick(tmp_path):
    """Round groups 0, 1 and 23 (k = 1): hardware round == the model's keccak_round."""
    _check(formal_keccak.prove("round", tmp_path, steps=(0, 1, 23)))


@pytest.mark.slow
@pytest.mark.parametrize("k,steps", [(1, None), (2, (0, 11)), (24, None)])
def test_round_equals_model_all(tmp_path, k, steps):
    """All 24 rounds one by one (k = 1), two chained rounds (k = 2), the whole permutation
    unrolled (k = 24)."""
    _check(formal_keccak.prove("round", tmp_path, rounds_per_cycle=k, steps=steps))


def test_sponge_proof(tmp_path):
    _check(formal_keccak.prove("sponge", tmp_path, variant=256, beat_bytes=8, rounds_per_cycle=24))


def test_sponge_proof_runtime_variant(tmp_path):
    _check(formal_keccak.prove("sponge", tmp_path, tasks=("prove",), variant="both",
                               beat_bytes=8, rounds_per_cycle=3))


@pytest.mark.slow
@pytest.mark.parametrize("variant,w,k", [(128, 1, 24), (256, 2, 1), (128, 4, 6), ("both", 1, 12),
                                         ("both", 8, 1)])
def test_sponge_proof_more_configurations(tmp_path, variant, w, k):
    _check(formal_keccak.prove("sponge", tmp_path, variant=variant, beat_bytes=w,
                               rounds_per_cycle=k))


# -- the proofs can fail -------------------------------------------------------------------------

def test_round_proof_catches_a_wrong_rotation(tmp_path, monkeypatch):
    offsets = list(permutation.RHO_OFFSETS)
    offsets[7] = (offsets[7] + 1) % 64
    monkeypatch.setattr(permutation, "RHO_OFFSETS", tuple(offsets))
    res = formal_keccak.prove("round", tmp_path, steps=(0,))["prove"]
    assert res.status == "FAIL"


@pytest.mark.slow
def test_round_proof_catches_a_wrong_round_constant(tmp_path, monkeypatch):
    constants = list(permutation.ROUND_CONSTANTS)
    constants[23] ^= 1 << 31
    monkeypatch.setattr(permutation, "ROUND_CONSTANTS", tuple(constants))
    res = formal_keccak.prove("round", tmp_path, steps=(0, 23))["prove"]
    assert res.status == "FAIL"


class _DirtyRestart(ShakeXof):
    """Restart keeps the state register (the rest of the control is reset)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.restart):
            m.d.sync += self.state.eq(self.state)
        return m


class _EarlyOutput(ShakeXof):
    """Offers output during the last permutation cycle instead of after it."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        from hhe_gen.cores.keccak.xof import Phase
        early = (self.phase == Phase.PERM_SQUEEZE) & (self.step == self.perm_cycles - 1)
        m.d.comb += self.o_stream.valid.eq(Mux(self.restart, 0, early | (self.phase == Phase.SQUEEZE)))
        return m


class _UnstableOutput(ShakeXof):
    """Moves to the next beat even when the consumer did not take the offered one."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        from hhe_gen.cores.keccak.xof import Phase
        with m.If((self.phase == Phase.SQUEEZE) & ~self.o_stream.ready & ~self.restart &
                  (self.pos != 0)):
            m.d.sync += self.pos.eq(0)
        return m


@pytest.mark.parametrize("broken", [
    _DirtyRestart,
    pytest.param(_EarlyOutput, marks=pytest.mark.slow),
    pytest.param(_UnstableOutput, marks=pytest.mark.slow),
])
def test_sponge_proof_catches_broken_cores(tmp_path, monkeypatch, broken):
    from hhe_gen.formal.keccak import sponge
    monkeypatch.setattr(sponge, "ShakeXof", broken)
    res = formal_keccak.prove("sponge", tmp_path, tasks=("prove",), variant=256, beat_bytes=8,
                              rounds_per_cycle=12)["prove"]
    assert res.status == "FAIL"


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_bad_names_and_steps():
    with pytest.raises(ParameterError):
        formal_keccak.harness("nope")
    with pytest.raises(ParameterError):
        formal_keccak.harness("round", steps=(24,))

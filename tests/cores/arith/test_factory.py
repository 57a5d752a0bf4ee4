"""modmul() factory, its errors, and a Verilog export smoke test."""

import pytest

from hhe_gen.cores.arith import (BarrettMul, NttMontgomeryMul, SpecialBarrettMul, StreamPipeline,
                                 WordMontgomeryMul, modmul)
from hhe_gen.cores.unused import mark_unused
from hhe_gen.params import ParameterError, abc_fhe_primes, dna_hhe_primes, ntt_primes
from hhe_gen.sim.stream import run_unit

def _quiet(dut):
    mark_unused(dut)
    return dut


def _cases():
    q36 = ntt_primes(16, 36, 2)
    return [
        ("barrett", q36, 36, {}, BarrettMul, 3),
        ("montgomery", ntt_primes(1 << 17, 36, 2), 36, {"word_bits": 18}, WordMontgomeryMul, 3),
        ("special-barrett", [p.q for p in dna_hhe_primes(36, 1 << 13, 10, count=2)], 36, {"log_n": 13},
         SpecialBarrettMul, 3),
        ("ntt-montgomery", [p.q for p in abc_fhe_primes(1 << 13, 35, 3, count=2)], 36, {"log_n": 13},
         NttMontgomeryMul, 1),
    ]


@pytest.mark.parametrize("kind, moduli, width, kw, cls, minimum", _cases())
def test_modmul_builds_each_kind(kind, moduli, width, kw, cls, minimum):
    dut = modmul(kind, moduli, width, **kw)
    assert type(dut) is cls and dut.kind == kind and dut.latency == dut.min_latency == minimum
    q = moduli[1]
    vecs = [{"a": q - 1, "b": q - 2, "sel": 1}, {"a": 1, "b": moduli[0] - 1, "sel": 0}]
    assert run_unit(dut, vecs).outputs == [dut.models[v["sel"]].mul(v["a"], v["b"]) for v in vecs]
    with pytest.raises(ParameterError, match=f"latency.*>= {minimum}"):
        modmul(kind, moduli, width, latency=minimum - 1, **kw)
    _quiet(modmul(kind, moduli, width, latency=minimum + 2, target="xilinx", **kw))


def test_modmul_errors():
    q36 = ntt_primes(16, 36, 2)
    with pytest.raises(ParameterError, match="kind"):
        modmul("montgomery-ladder", q36, 36)
    with pytest.raises(ParameterError, match="word_bits"):
        modmul("montgomery", q36, 36)
    with pytest.raises(ParameterError, match="log_n"):
        modmul("special-barrett", q36, 36)
    with pytest.raises(ParameterError, match="log_n"):
        modmul("ntt-montgomery", q36, 36)
    with pytest.raises(ParameterError, match="bogus"):
        modmul("barrett", q36, 36, bogus=1)
    with pytest.raises(ParameterError, match="width"):
        modmul("barrett", [97], 8)
    with pytest.raises(ParameterError, match="width"):
        modmul("barrett", q36, 65)
    with pytest.raises(ParameterError, match="q"):            # not of the DNA-HHE form
        modmul("special-barrett", q36, 36, log_n=13)
    with pytest.raises(ParameterError, match="q"):            # not 1 mod 2^18
        modmul("montgomery", q36, 36, word_bits=18)
    with pytest.raises(ParameterError, match="target"):
        modmul("barrett", q36, 36, target="asic")


@pytest.mark.toolchain
def test_verilog_export_54_bit_special_barrett(tmp_path):
    from amaranth.back import verilog

    from hhe_gen.flow.environment import configure_amaranth
    configure_amaranth()
    ps = [p.q for p in dna_hhe_primes(54, 1 << 13, 10, count=2)]
    dut = SpecialBarrettMul(ps, 54, 13, latency=6)
    text = verilog.convert(StreamPipeline(dut), name="special_barrett54")
    assert "module special_barrett54" in text and "i_stream__payload" in text
    # every tile is one '*' of operands no wider than 18 bits (a MULT18X18D each)
    assert text.count(" * ") == dut.tiles


@pytest.mark.parametrize("kind, moduli, width, kw, cls, minimum", _cases())
def test_modmul_passes_dsp_mode(kind, moduli, width, kw, cls, minimum):
    """dsp="model" through the factory (the ecp5 primitive wiring, simulated); "primitive" builds
    MULT18X18D instances (one per tile) and no '*'."""
    from amaranth.back import rtlil
    dut = modmul(kind, moduli, width, latency=minimum + 2, dsp="model", **kw)
    assert dut.dsp == "model"
    q = moduli[1]
    vecs = [{"a": q - 1, "b": q - 2, "sel": 1}, {"a": 1, "b": moduli[0] - 1, "sel": 0}, {"a": 3, "b": q - 1, "sel": 1}]
    assert run_unit(dut, vecs).outputs == [dut.models[v["sel"]].mul(v["a"], v["b"]) for v in vecs]
    prim = modmul(kind, moduli, width, latency=minimum + 2, dsp="primitive", **kw)
    text = rtlil.convert(prim)
    assert text.count("cell \\MULT18X18D ") == prim.tiles and "$mul" not in text
    with pytest.raises(ParameterError, match="dsp"):
        modmul(kind, moduli, width, dsp="primitive", target="xilinx", **kw)


def test_modmul_special_barrett_bnd_luts():
    ps = [p.q for p in dna_hhe_primes(54, 1 << 13, 10, count=3)]
    dut = _quiet(modmul("special-barrett", ps, 54, 8, log_n=13, karatsuba=False, bnd_luts=True))
    assert dut.tiles == 12 and dut.min_latency == 2 and dut.bnd_luts

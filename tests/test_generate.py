"""hhe-gen generate: Verilog + manifest + vectors of the NTT core, checked independently."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hhe_gen

from hhe_gen.apps import cli
from hhe_gen.apps.generate import generate_ntt, ntt_primes_for
from hhe_gen.models.ntt import evaluate_at
from hhe_gen.params import ParameterError, is_prime, primitive_root


def _psi(n, q):
    """A primitive 2N-th root of unity, found here by brute force over the group (independent of
    hhe_gen.models.ntt's tables); the NTT's output set is {a(psi^(2j+1))} for any such root."""
    g = primitive_root(q)
    return pow(g, (q - 1) // (2 * n), q)


def test_generate_ntt_files_and_manifest(tmp_path):
    res = generate_ntt(16, 2, tmp_path, bits=20, count=2, vectors=1, seed=5)
    man = json.loads((tmp_path / "ntt_n16_p2.json").read_text())
    text = (tmp_path / "ntt_n16_p2.v").read_text()
    assert re.search(r"^module ntt_n16_p2\(", text, re.M)
    # every port of the manifest is a port of the Verilog module, with its width
    header = text[text.index("module ntt_n16_p2("):text.index(");")]
    for port in man["ports"]:
        assert port["name"] in header
        decl = re.search(rf"^\s*(input|output)\s+(\[(\d+):0\]\s+)?{re.escape(port['name'])};", text, re.M)
        assert decl, port["name"]
        assert decl.group(1) == {"in": "input", "out": "output"}[port["dir"]]
        assert (int(decl.group(3)) + 1 if decl.group(3) else 1) == port["width"]
    assert man["primes"] == res["manifest"]["primes"] and len(man["primes"]) == 2
    for p in man["primes"]:
        assert is_prime(p["q"]) and p["q"] % 32 == 1 and p["bits"] == 20
    cyc = man["cycles"]
    assert cyc["bound"] == 16 // 2 * 4 // 2
    assert cyc["transform_forward"] >= cyc["bound"]
    assert cyc["command_forward"] == 1 + cyc["load"] + cyc["transform_forward"] + cyc["unload"]


def test_generate_ntt_vectors_are_the_negacyclic_transform(tmp_path):
    """Forward vectors: the outputs are the evaluations a(psi^(2j+1)) at every odd power of a
    primitive 2N-th root psi (compared as multisets: independent of which root and which order);
    inverse vectors return the forward input."""
    generate_ntt(16, 4, tmp_path, bits=24, count=1, vectors=2, seed=9)
    vec = json.loads((tmp_path / "ntt_n16_p4_vectors.json").read_text())
    q = json.loads((tmp_path / "ntt_n16_p4.json").read_text())["primes"][0]["q"]
    psi = _psi(16, q)
    fwd = [c for c in vec["cases"] if not c["inverse"]]
    inv = [c for c in vec["cases"] if c["inverse"]]
    assert len(fwd) == len(inv) == 2
    for f, i in zip(fwd, inv):
        evals = sorted(evaluate_at(f["input"], pow(psi, 2 * j + 1, q), q) for j in range(16))
        assert sorted(f["output"]) == evals
        assert i["input"] == f["output"] and i["output"] == f["input"]


def test_generate_ntt_special_primes(tmp_path):
    res = generate_ntt(64, 2, tmp_path, bits=36, count=2, reducer="special-barrett", vectors=0)
    qs = [p["q"] for p in res["manifest"]["primes"]]
    assert all(q % 128 == 1 and q.bit_length() == 36 and ((1 << 36) - q + 1) % 128 == 0 for q in qs)
    assert res["paths"]["vectors"] is None


@pytest.mark.parametrize("kw, name", [
    (dict(arch="r22sdf"), "arch"), (dict(arch="sdf", direction="up"), "direction"),
    (dict(arch="mdc", lanes=1), "lanes"), (dict(reducer="nope"), "reducer"), (dict(vectors=-1), "vectors"),
    (dict(bits=None), "bits"), (dict(name="1bad"), "name"), (dict(count=0), "count"),
    (dict(primes=[]), "primes"),
])
def test_generate_ntt_bad_parameters(tmp_path, kw, name):
    args = dict(bits=20, count=1, lanes=2)
    args.update(kw)
    lanes = args.pop("lanes")
    with pytest.raises(ParameterError, match=name):
        generate_ntt(16, lanes, tmp_path, **args)


def test_generate_cli(tmp_path, capsys):
    assert cli.main(["generate", "ntt", "--n", "32", "--lanes", "2", "--bits", "20", "--vectors", "0",
                     "-o", str(tmp_path)]) == 0
    assert (tmp_path / "ntt_n32_p2.v").exists()
    assert cli.main(["generate", "ntt", "--n", "33", "--bits", "20", "-o", str(tmp_path)]) == 2
    assert "n" in capsys.readouterr().err


def test_ntt_primes_for_too_many():
    with pytest.raises(ParameterError, match="count"):
        ntt_primes_for("special-barrett", 1 << 13, 20, 60)


def test_generate_ntt_twiddle_memory(tmp_path):
    """The manifest's twiddle storage equals what the core's tables hold."""
    from hhe_gen.cores.ntt import otf_tables
    otf = generate_ntt(256, 4, tmp_path, bits=20, vectors=0, twiddles="otf")["manifest"]
    q = otf["primes"][0]["q"]
    hi, lo = otf_tables(256, [q], [1])
    assert otf["memories"]["twiddles"]["words_per_prime"] == len(hi) + len(lo)
    rom = generate_ntt(256, 4, tmp_path, bits=20, vectors=0)["manifest"]
    assert rom["memories"]["twiddles"]["words_per_prime"] == 2 * 256


@pytest.mark.parametrize("arch", ["sdf", "mdc"])
def test_generate_pipelined(tmp_path, arch):
    """--arch sdf / mdc: two modules (forward, inverse) with manifests and vectors; the vectors are
    the negacyclic transform (checked by evaluation at the odd powers of an independently found
    root), and the simulated cores emit exactly the vectors' output streams."""
    from hhe_gen.cores.ntt import PipelinedNtt
    from hhe_gen.sim.ntt_pipelined import simulate_pipelined
    res = generate_ntt(16, 2, tmp_path, bits=20, count=2, arch=arch, vectors=1, seed=3)
    assert set(res["paths"]) == {"verilog", "manifest", "vectors", "testbench", "verilog_inverse",
                                 "manifest_inverse", "vectors_inverse", "testbench_inverse", "fusesoc",
                                 "fusesoc_inverse"}
    for inv, tag in ((False, "fwd"), (True, "inv")):
        stem = f"ntt_{arch}_n16_p2_{tag}"
        man = json.loads((tmp_path / f"{stem}.json").read_text())
        text = (tmp_path / f"{stem}.v").read_text()
        assert re.search(rf"^module {stem}\(", text, re.M)
        assert {p["name"] for p in man["ports"]} >= {"i_stream__payload", "i_stream__valid", "i_stream__ready",
                                                       "o_stream__payload", "o_stream__valid", "o_stream__ready"}
        assert man["arch"] == arch and man["direction"] == ("inverse" if inv else "forward")
        qs = [p["q"] for p in man["primes"]]
        core = PipelinedNtt(16, 2, qs, arch=arch, inverse=inv)
        assert man["cycles"]["latency"] == core.latency and man["cycles"]["cycles_per_polynomial"] == 8
        assert man["memories"]["delay_words"] == core.delay_words
        vec = json.loads((tmp_path / f"{stem}_vectors.json").read_text())
        assert len(vec["cases"]) == 2
        for case in vec["cases"]:
            q = qs[case["sel"]]
            if inv:
                psi = _psi(16, q)
                evals = sorted(evaluate_at(case["output"], pow(psi, 2 * j + 1, q), q) for j in range(16))
                assert sorted(case["input"]) == evals
            else:
                psi = _psi(16, q)
                evals = sorted(evaluate_at(case["input"], pow(psi, 2 * j + 1, q), q) for j in range(16))
                assert sorted(case["output"]) == evals
        out = simulate_pipelined(core, [(c["input"], c["sel"]) for c in vec["cases"]])
        for case, r in zip(vec["cases"], out):
            assert r.output == case["output"]
            assert [r.output[j] for j in core.output_positions()] == case["output_stream"]


def test_generate_pipelined_one_direction(tmp_path):
    res = generate_ntt(32, 4, tmp_path, bits=20, arch="sdf", direction="inverse", vectors=0)
    assert res["paths"]["verilog"].endswith("ntt_sdf_n32_p4.v") and "verilog_inverse" not in res["paths"]
    assert res["manifest"]["direction"] == "inverse" and res["manifest"]["output_positions"] == "identity"


def test_generate_cli_pipelined(tmp_path):
    assert cli.main(["generate", "ntt", "--n", "16", "--lanes", "2", "--bits", "20", "--vectors", "0",
                     "--arch", "mdc", "-o", str(tmp_path)]) == 0
    assert (tmp_path / "ntt_mdc_n16_p2_fwd.v").exists() and (tmp_path / "ntt_mdc_n16_p2_inv.v").exists()


# -- reproducible output (issue 14 section 2) and the testbench files --------------------------------

# a path of this machine: the source tree, the Python installation, the home directory, /tmp
_MACHINE = [str(Path(hhe_gen.__file__).resolve().parents[1]), sys.prefix, str(Path.home()), "/tmp/"]
# anything that looks like an absolute path of two components or more
_ABS_PATH = re.compile(r"(?<![\w.*])/(?:[\w.+-]+/)+[\w.+-]+")


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir()) if p.is_file()}


def test_generate_is_reproducible(tmp_path):
    """Default output: no src attribute, no absolute path, anywhere (Verilog, manifest, vectors,
    testbench, hex, README); a second generation - another process, another hash seed, another
    working directory, another output path - writes byte-identical files."""
    a, b = tmp_path / "a", tmp_path / "elsewhere" / "b"
    generate_ntt(16, 2, a, bits=20, count=2, vectors=1, seed=5)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = dict(os.environ, PYTHONHASHSEED="12345")
    subprocess.run([sys.executable, "-m", "hhe_gen.apps.cli", "generate", "ntt", "--n", "16", "--lanes", "2",
                    "--bits", "20", "--count", "2", "--vectors", "1", "--seed", "5", "-o", str(b)],
                   cwd=cwd, env=env, check=True, capture_output=True)
    fa, fb = _files(a), _files(b)
    assert set(fa) == {"ntt_n16_p2.v", "ntt_n16_p2.json", "ntt_n16_p2_vectors.json", "ntt_n16_p2_tb.v",
                       "ntt_n16_p2_tb_cmd_in.hex", "ntt_n16_p2_tb_i_stream_in.hex",
                       "ntt_n16_p2_tb_o_stream_out.hex", "ntt_n16_p2_README.txt", "ntt_n16_p2.core"}
    assert fa == fb
    for name, data in fa.items():
        text = data.decode()
        assert "src =" not in text, name
        assert not _ABS_PATH.search(text), (name, _ABS_PATH.search(text))
        for path in _MACHINE:
            assert path not in text, (name, path)
    first = fa["ntt_n16_p2.v"].decode().split("\n", 1)[0]
    assert re.fullmatch(r"/\* Generated by Yosys [^\s(]+( \(git sha1 [0-9a-f]+\))? \*/", first), first
    man = json.loads(fa["ntt_n16_p2.json"])
    assert man["verilog"]["src_attributes"] is False
    assert not any(re.search(r"time|date", k) for k in man)


def test_generate_keep_src(tmp_path):
    assert cli.main(["generate", "ntt", "--n", "16", "--lanes", "2", "--bits", "20", "--vectors", "0",
                     "--keep-src", "-o", str(tmp_path)]) == 0
    text = (tmp_path / "ntt_n16_p2.v").read_text()
    attrs = re.findall(r'\(\* src = "([^"]*)" \*\)', text)
    assert len(attrs) > 100 and any(a.startswith("/") and ".py:" in a for a in attrs)
    man = json.loads((tmp_path / "ntt_n16_p2.json").read_text())
    assert man["verilog"]["src_attributes"] is True
    assert "testbench" not in man and not (tmp_path / "ntt_n16_p2_tb.v").exists()     # no vectors, no testbench


def _hex(path):
    return [int(x, 16) for x in Path(path).read_text().split()]


def test_generate_ntt_testbench_files(tmp_path):
    """The testbench's hex files are the vectors in the port encoding: one cmd (inverse, sel) and
    N/P input beats per case, P coefficients of qbits per beat; the manifest documents the run."""
    res = generate_ntt(16, 2, tmp_path, bits=20, count=2, vectors=2, seed=7)
    man = json.loads((tmp_path / "ntt_n16_p2.json").read_text())
    vec = json.loads((tmp_path / "ntt_n16_p2_vectors.json").read_text())
    tb = man["testbench"]
    assert res["paths"]["testbench"].endswith("ntt_n16_p2_tb.v") and tb["file"] == "ntt_n16_p2_tb.v"
    cases = vec["cases"]
    assert tb["inputs"] == {"cmd": len(cases), "i_stream": 8 * len(cases)}
    assert tb["outputs"] == {"o_stream": 8 * len(cases)}
    assert tb["full_rate_cycles"] == sum(man["cycles"]["command_inverse" if c["inverse"] else "command_forward"]
                                         for c in cases)
    assert tb["max_cycles"] > tb["full_rate_cycles"]
    cmds = _hex(tmp_path / tb["hex"]["inputs"]["cmd"])
    assert cmds == [c["inverse"] | c["sel"] << 1 for c in cases]
    mask = (1 << 20) - 1
    ins = _hex(tmp_path / tb["hex"]["inputs"]["i_stream"])
    outs = _hex(tmp_path / tb["hex"]["outputs"]["o_stream"])
    unpack = [[w >> (20 * lane) & mask for w in words for lane in range(2)] for words in (ins, outs)]
    assert unpack[0] == [x for c in cases for x in c["input"]]
    assert unpack[1] == [x for c in cases for x in c["output"]]
    readme = (tmp_path / tb["readme"]).read_text()
    assert "iverilog" in readme and "verilator --binary" in readme and "PASS" in readme


def test_generate_pipelined_testbench_files(tmp_path):
    """Pipelined: the input beats carry sel above the data, the expected beats sel and last."""
    generate_ntt(16, 2, tmp_path, bits=20, count=2, arch="mdc", direction="forward", vectors=1, seed=3)
    man = json.loads((tmp_path / "ntt_mdc_n16_p2.json").read_text())
    vec = json.loads((tmp_path / "ntt_mdc_n16_p2_vectors.json").read_text())
    tb = man["testbench"]
    outs = _hex(tmp_path / tb["hex"]["outputs"]["o_stream"])
    ins = _hex(tmp_path / tb["hex"]["inputs"]["i_stream"])
    assert len(ins) == len(outs) == 8 * len(vec["cases"])
    for k, (i, o) in enumerate(zip(ins, outs)):
        case, beat = vec["cases"][k // 8], k % 8
        assert i >> 40 == case["sel"] and o >> 40 & 1 == case["sel"] and o >> 41 == (beat == 7)
        assert [o >> (20 * lane) & 0xFFFFF for lane in range(2)] == case["output_stream"][2 * beat:2 * beat + 2]

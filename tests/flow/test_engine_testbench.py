"""hhe_gen.flow.engine_testbench: the accelerator's self-checking testbench ends with exit status 0
after PASS and 1 after FAIL ($fatal) in Icarus Verilog and in Verilator, and lints clean.

The engine here is a stand-in with the engine's ports that takes every instruction, is busy for a
few cycles and never touches the memory, so the memory afterwards is the memory before: an expected image equal to it
passes, one word changed fails.  (tests/apps/test_generate_accel.py runs the real engine.)"""

import os
import shutil
import subprocess

import pytest

from hhe_gen.flow.engine_testbench import write_engine_testbench
from hhe_gen.flow.tools import find_tool

pytestmark = pytest.mark.toolchain

PORTS = [("clk", "in", 1), ("rst", "in", 1), ("abort", "in", 1), ("i_instr__payload", "in", 64),
         ("i_instr__valid", "in", 1), ("i_instr__ready", "out", 1), ("mem__cmd__payload", "out", 50),
         ("mem__cmd__valid", "out", 1), ("mem__cmd__ready", "in", 1), ("mem__wdata__payload", "out", 65),
         ("mem__wdata__valid", "out", 1), ("mem__wdata__ready", "in", 1), ("mem__rdata__payload", "in", 65),
         ("mem__rdata__valid", "in", 1), ("mem__rdata__ready", "out", 1), ("busy", "out", 1),
         ("notify", "out", 1), ("o_udp__ready", "in", 1)]

STUB = """module stub(clk, rst, abort, i_instr__payload, i_instr__valid, i_instr__ready, mem__cmd__payload,
    mem__cmd__valid, mem__cmd__ready, mem__wdata__payload, mem__wdata__valid, mem__wdata__ready,
    mem__rdata__payload, mem__rdata__valid, mem__rdata__ready, busy, notify, o_udp__ready);
  /* verilator lint_off UNUSEDSIGNAL */
  input clk, rst, abort, i_instr__valid, mem__cmd__ready, mem__wdata__ready, mem__rdata__valid, o_udp__ready;
  input [63:0] i_instr__payload;
  input [64:0] mem__rdata__payload;
  /* verilator lint_on UNUSEDSIGNAL */
  output i_instr__ready, mem__cmd__valid, mem__wdata__valid, mem__rdata__ready, busy, notify;
  output [49:0] mem__cmd__payload;
  output [64:0] mem__wdata__payload;
  assign i_instr__ready = 1'b1;
  assign mem__cmd__valid = 1'b0;
  assign mem__cmd__payload = 50'd0;
  assign mem__wdata__valid = 1'b0;
  assign mem__wdata__payload = 65'd0;
  assign mem__rdata__ready = 1'b1;
  reg [2:0] left;                     // busy for a few cycles after reset
  always @(posedge clk) left <= rst ? 3'd5 : left - {2'd0, left != 3'd0};
  assign busy = left != 3'd0;
  assign notify = 1'b0;
endmodule
"""


def _files(folder, expected_change=False):
    folder.mkdir()
    ports = [{"name": n, "dir": d, "width": w} for n, d, w in PORTS]
    memory = {a: 0x1111 * (a + 1) for a in range(8)}
    expected = dict(memory)
    if expected_change:
        expected[5] ^= 1
    write_engine_testbench(folder, "stub", ports, [1, 2, 3], memory, expected, 8, latency=2, max_cycles=500)
    (folder / "stub.v").write_text(STUB)
    return folder


def _verilator(folder):
    tool = find_tool("verilator")
    env = {**os.environ, **tool.env}
    flags = ["-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include", "-MAKEFLAGS", "CFG_CXXFLAGS_STD=-std=gnu++20",
             "-MAKEFLAGS", "CFG_CXXFLAGS_COROUTINES=-fcoroutines", "-MAKEFLAGS", "CFG_LDLIBS_THREADS=-pthread",
             "-MAKEFLAGS", "OPT_FAST=-O0", "-MAKEFLAGS", "OPT_SLOW=-O0", "-MAKEFLAGS", "OPT_GLOBAL=-O0"]
    subprocess.run([*tool.argv, "--binary", "-j", "2", "-Wall", "--top-module", "stub_tb", "stub.v", "stub_tb.v",
                    *flags], cwd=folder, env=env, check=True, capture_output=True, timeout=600)
    return subprocess.run(["./obj_dir/Vstub_tb"], cwd=folder, capture_output=True, text=True, timeout=60)


def _icarus(folder):
    subprocess.run(["iverilog", "-g2005", "-o", "tb.vvp", "stub.v", "stub_tb.v"], cwd=folder, check=True)
    return subprocess.run(["vvp", "-n", "tb.vvp"], cwd=folder, capture_output=True, text=True, timeout=60)


def test_the_engine_testbench_lints_clean(tmp_path):
    folder = _files(tmp_path / "tb")
    tool = find_tool("verilator")
    res = subprocess.run([*tool.argv, "--lint-only", "-Wall", "--top-module", "stub_tb", "stub.v", "stub_tb.v"],
                         cwd=folder, env={**os.environ, **tool.env}, capture_output=True, text=True)
    assert res.returncode == 0 and "%Warning" not in res.stderr, res.stderr


@pytest.mark.parametrize("simulator", ["icarus", "verilator"])
def test_pass_exits_0_and_fail_exits_1(tmp_path, simulator):
    if simulator == "icarus" and (shutil.which("iverilog") is None or shutil.which("vvp") is None):
        pytest.skip("Icarus Verilog (iverilog, vvp) is not installed: apt-get install iverilog")
    run = _icarus if simulator == "icarus" else _verilator
    good = run(_files(tmp_path / "good"))
    assert good.returncode == 0 and "PASS: " in good.stdout and "FAIL" not in good.stdout, good.stdout + good.stderr
    bad = run(_files(tmp_path / "bad", expected_change=True))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "mismatch at word 5" in bad.stdout and "FAIL: 1 mismatches in 8 words" in bad.stdout

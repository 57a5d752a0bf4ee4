"""Long SHAKE runs in Verilator: multi-kilobyte messages and outputs, restarts, random gaps.

Amaranth's simulator manages a few thousand cycles per second on this 1600-bit design, so the
long runs are done in Verilator through the generic runner (:mod:`hhe_gen.flow.verilator`: Verilog
export, generated C++ driver, cached build); the results are compared with hashlib.  Marked
slow (a build takes about a minute).
"""

import hashlib
import random

import pytest

from hhe_gen.cores.keccak import ShakeXof

pytestmark = [pytest.mark.toolchain, pytest.mark.slow]


def script(dut, ops, seed):
    """The generic Verilator driver's script (hhe_gen.flow.verilator) for ``ops``: ("M", message,
    variant) absorbs a message beat by beat, ("T", beats) takes output beats, ("R",) is one
    restart cycle.  ``seed`` != 0 idles a random 30 % of the cycles on both streams (valid or
    ready low for a cycle); 0 runs at full rate.  Ends with the cycle count."""
    rng = random.Random(seed)
    w = dut.beat_bytes
    lines = []

    def gap():
        if seed and rng.random() < 0.3:
            lines.append("T 1")
    for op in ops:
        if op[0] == "M":
            msg = op[1]
            if dut.variant == "both":
                lines.append(f"S shake256 {int(op[2] == 256)}")
            nbeats = max(1, -(-len(msg) // w))
            for b in range(nbeats):
                chunk = msg[b * w:(b + 1) * w]
                last = b + 1 == nbeats
                payload = int.from_bytes(chunk, "little") | (int(last) << 8 * w) \
                    | ((len(chunk) if last else 0) << (8 * w + 1))
                gap()
                lines.append(f"PUT i_stream {payload:x}")
        elif op[0] == "T":
            for _ in range(op[1]):
                gap()
                lines.append("GET o_stream")
        else:
            lines += ["S abort 1", "T 1", "S abort 0"]
    return lines + ["C"]


def run_ops(model, dut, ops, seed):
    """Run ``ops`` on the built model; return (one bytes object per T, cycles since reset)."""
    lines = model.run(script(dut, ops, seed))
    beats = iter(lines[:-1])
    outs = []
    for op in ops:
        if op[0] == "T":
            outs.append(b"".join(int(next(beats).split()[1], 16).to_bytes(dut.beat_bytes, "little")
                                 for _ in range(op[1])))
    return outs, int(lines[-1])


@pytest.mark.parametrize("variant,w,k", [("both", 8, 4), (256, 1, 24), (128, 4, 1)])
def test_long_messages_and_outputs(tmp_path, variant, w, k):
    from hhe_gen.flow.verilator import build
    dut = ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k)
    model = build(dut, "shake", progress="verilator build of the SHAKE core")
    rng = random.Random(f"{variant}{w}{k}")
    ops, want = [], []
    for length, out_beats in [(0, 40), (10_000, 2_000 // w), (167, 9_000 // w), (3 * 168, 50),
                              (rng.randrange(20_000), rng.randrange(1, 20_000 // w))]:
        v = rng.choice((128, 256)) if variant == "both" else variant
        msg = rng.randbytes(length)
        ops += [("M", msg, v), ("T", out_beats), ("R",)]
        want.append(getattr(hashlib, f"shake_{v}")(msg).digest(out_beats * w))
    for seed in (0, 12345):
        outs, cycles = run_ops(model, dut, ops, seed)
        assert outs == want
        if seed == 0:      # full rate: every cycle is accounted for by the documented formulas
            assert cycles == expected_cycles(ops, w, 24 // k)


def expected_cycles(ops, w, n):
    """Cycles of a full-rate run of ``ops`` by the documented latencies (ShakeXof docstring):
    one cycle per beat, n after every beat that completes a block, the first output n + 2 cycles
    after the last beat (2n + 2 if that beat completed a block), n after every R/W output beats,
    one cycle per restart (counted from the first cycle after reset)."""
    from hhe_gen.cores.keccak import RATES
    total, first_out, slots = 0, None, None
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

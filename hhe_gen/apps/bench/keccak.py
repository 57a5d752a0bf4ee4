"""Benchmarks of the Keccak core and the SHAKE XOF (``hhe-gen bench keccak``).

Quick cases simulate the cores (Amaranth's simulator, full-rate producer, always-ready consumer)
and report measured cycle counts next to the documented formulas: cycles per permutation, the
steady-state squeeze rate of SHAKE128 and SHAKE256 in bytes per cycle (over whole blocks, so the
permutation between blocks is included), and the cycles from the first beat of the 41-byte
seeding message (``hhe_gen.models.sampler.seeded_xof``'s size) to the first output beat.  The
``-ecp5`` cases (not quick) add the ECP5-85F area (``hhe_gen.flow.synth.synth_ecp5``, LUTs mapped by
the classic ABC: :data:`ECP5_ABC9`) with post-place-and-route Fmax up to :data:`PNR_MAX_ROUNDS`
rounds per cycle, and Yosys' Xilinx 7-series LUT/FF counts (classic ABC LUT mapping,
``synth_xilinx(abc9=False)``).

What the ``-ecp5`` cases measured (LUTs of both families per rounds-per-cycle setting, the ECP5
Fmax of k = 1, the routing of k = 2, the ABC9 and classic mappings compared) is in docs/figures.md,
table ``keccak-area``.  k = 2 did not route on the 85F, so place and route stops at k = 1
(:data:`PNR_MAX_ROUNDS`): the unrolled full-state rounds have no locality (rho / pi move every
lane), so the placed cluster cannot be routed.
"""

from __future__ import annotations

import hashlib

from hhe_gen.apps.bench import bench_case

ROUNDS = (1, 2, 3, 4, 6, 8, 12, 24)
_SEED_MESSAGE_BYTES = 41


def _beats(msg: bytes, w: int) -> list[dict]:
    beats = [{"data": int.from_bytes(msg[i:i + w], "little"), "last": 0, "nbytes": 0}
             for i in range(0, len(msg), w)] or [{"data": 0, "last": 0, "nbytes": 0}]
    beats[-1]["last"] = 1
    beats[-1]["nbytes"] = len(msg) - w * (len(beats) - 1)
    return beats


def _squeeze(variant, w, k, blocks=2, p=5, ring=False):
    """Simulate SHAKE``variant`` on the seeding-message size; return (rate measured over whole
    blocks in bytes/cycle, cycles first beat -> first output, output equal to hashlib)."""
    from hhe_gen.cores.keccak import RATES, ShakeXof
    from hhe_gen.sim.stream import run_stream
    msg = bytes(range(_SEED_MESSAGE_BYTES))
    slots = RATES[variant] // w
    n_out = slots * blocks + 1
    xof = ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k, planes_per_cycle=p, ring=ring)
    run = run_stream(xof, _beats(msg, w), n_out)
    got = b"".join(x.to_bytes(w, "little") for x in run.outputs)
    ok = got == getattr(hashlib, f"shake_{variant}")(msg).digest(len(got))
    span = run.out_cycles[-1] - run.out_cycles[0]          # exactly `blocks` whole blocks
    return slots * blocks * w / span, run.out_cycles[0] - run.in_cycles[0], ok


@bench_case("keccak", "k1-w8", k=1, w=8)
@bench_case("keccak", "k2-w8", k=2, w=8)
@bench_case("keccak", "k3-w8", k=3, w=8)
@bench_case("keccak", "k4-w8", k=4, w=8)
@bench_case("keccak", "k6-w8", k=6, w=8)
@bench_case("keccak", "k8-w8", k=8, w=8)
@bench_case("keccak", "k12-w8", k=12, w=8)
@bench_case("keccak", "k24-w8", k=24, w=8)
@bench_case("keccak", "k1-w1", k=1, w=1)
@bench_case("keccak", "k4-w1", k=4, w=1)
@bench_case("keccak", "k24-w1", k=24, w=1, quick=False)
@bench_case("keccak", "k4-w4", k=4, w=4)
def keccak_throughput(k, w):
    import random

    from hhe_gen.cores.keccak import KeccakF1600, squeeze_bytes_per_cycle
    from hhe_gen.models.keccak import keccak_f1600
    from hhe_gen.sim.stream import run_stream
    rng = random.Random(k)
    states = [[rng.getrandbits(64) for _ in range(25)] for _ in range(2)]
    pack = lambda s: sum(v << (64 * i) for i, v in enumerate(s))   # noqa: E731
    perm = run_stream(KeccakF1600(k), [pack(s) for s in states])
    assert perm.outputs == [pack(keccak_f1600(s)) for s in states]
    res = {"perm_cycles": perm.latency, "perm_ii": perm.in_cycles[1] - perm.in_cycles[0]}
    for variant in (128, 256):
        rate, first, ok = _squeeze(variant, w, k)
        assert ok, f"SHAKE{variant} output differs from hashlib"
        res[f"shake{variant}_B_per_cycle"] = round(rate, 3)
        res[f"shake{variant}_doc"] = round(squeeze_bytes_per_cycle(variant, w, k), 3)
        res[f"shake{variant}_first_out"] = first
    return res


def _xof(variant, w, k):
    from hhe_gen.cores.keccak import ShakeXof
    return ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k)


#: ``synth_ecp5``'s default ABC9 mapping builds LUT5..LUT7 from LUT4 + PFUMX / L6MUX21; on the
#: Keccak round's XOR networks that doubles the LUT4 count (the classic ``abc -lut 4`` against ABC9
#: with and without ``-nowidelut``: docs/figures.md, keccak-area), and ABC9 takes hours on the
#: unrolled rounds, so the XOF is mapped by classic ABC.
ECP5_ABC9 = False

#: place and route (Fmax) up to this many rounds per cycle; above it the ECP5 figures are Yosys'
#: area only (k = 2 did not route: docs/figures.md, keccak-area)
PNR_MAX_ROUNDS = 1


@bench_case("keccak", "xof256-w8-k1-ecp5", quick=False, variant=256, w=8, k=1)
@bench_case("keccak", "xof256-w8-k2-ecp5", quick=False, variant=256, w=8, k=2)
@bench_case("keccak", "xof256-w8-k3-ecp5", quick=False, variant=256, w=8, k=3)
@bench_case("keccak", "xof256-w8-k4-ecp5", quick=False, variant=256, w=8, k=4)
@bench_case("keccak", "xof256-w8-k6-ecp5", quick=False, variant=256, w=8, k=6)
@bench_case("keccak", "xof256-w8-k8-ecp5", quick=False, variant=256, w=8, k=8)
@bench_case("keccak", "xof256-w8-k12-ecp5", quick=False, variant=256, w=8, k=12)
@bench_case("keccak", "xof256-w8-k24-ecp5", quick=False, variant=256, w=8, k=24)
@bench_case("keccak", "xofboth-w8-k1-ecp5", quick=False, variant="both", w=8, k=1)
@bench_case("keccak", "xof256-w1-k1-ecp5", quick=False, variant=256, w=1, k=1)
def keccak_synth(variant, w, k):
    """ECP5-85F (Yosys, classic ABC; nextpnr for k <= :data:`PNR_MAX_ROUNDS`) and Xilinx
    7-series (Yosys, classic ABC) area of the XOF; the bytes/cycle of the documented formula and
    the resulting MB/s at the measured Fmax."""
    from hhe_gen.cores.keccak import squeeze_bytes_per_cycle
    from hhe_gen.flow.synth import synth_ecp5, synth_xilinx
    ecp5 = synth_ecp5(_xof(variant, w, k), name="shake", abc9=ECP5_ABC9,
                      place_and_route=k <= PNR_MAX_ROUNDS, timeout=5400)
    # the classic ABC LUT mapper: ABC9 spends hours on the larger k's full-state XOR networks,
    # classic ABC minutes, for about as many LUTs (docs/figures.md, keccak-area)
    xc7 = synth_xilinx(_xof(variant, w, k), name="shake", abc9=False, timeout=5400)
    rate = squeeze_bytes_per_cycle(256 if variant == "both" else variant, w, k)
    res = {key: ecp5.get(key) for key in ("LUT4", "FF", "CCU2C", "fmax_mhz")}
    res["B_per_cycle"] = round(rate, 3)
    if ecp5.get("fmax_mhz"):
        res["MB_per_s"] = round(rate * ecp5["fmax_mhz"], 1)
    res.update({f"xc7_{key}": v for key, v in xc7.items() if key in ("LUT", "FF", "CARRY4")})
    return res


@bench_case("keccak", "xof256-w8-p1-ecp5", quick=False, p=1)
@bench_case("keccak", "xof256-w8-p2-ecp5", quick=False, p=2)
@bench_case("keccak", "xof256-w8-p3-ecp5", quick=False, p=3)
@bench_case("keccak", "xof256-w8-p5-ecp5", quick=False, p=5)
@bench_case("keccak", "xof256-w8-ring-ecp5", quick=False, p=5, ring=True)
def keccak_planes(p, ring=False):
    """The narrow XOF (``planes_per_cycle`` p, k = 1; p = 5 is whole rounds), or the ring XOF
    (``ring=True``: the slots of the rate turn, no slot multiplexers) as the accelerator maps it:
    ECP5 with the board build's options (:data:`hhe_gen.flow.synth.ECP5_BOARD_SYNTH_ARGS`, Yosys only) and Xilinx 7 (Yosys, classic ABC); the squeeze rate measured in simulation (two
    whole blocks of SHAKE256 after the seeding message, against hashlib) beside the formula's, and
    the cycles from the first beat to the first output."""
    from hhe_gen.cores.keccak import ShakeXof, permutation_cycles, squeeze_bytes_per_cycle
    from hhe_gen.flow.synth import ECP5_BOARD_SYNTH_ARGS, synth_ecp5, synth_xilinx
    rate, first, ok = _squeeze(256, 8, 1, p=p, ring=ring)
    assert ok, "SHAKE256 output differs from hashlib"
    xof = lambda: ShakeXof(256, beat_bytes=8, planes_per_cycle=p, ring=ring)   # noqa: E731
    ecp5 = synth_ecp5(xof(), name="shake", place_and_route=False, synth_args=ECP5_BOARD_SYNTH_ARGS, timeout=5400)
    xc7 = synth_xilinx(xof(), name="shake", abc9=False, timeout=5400)
    res = {key: ecp5.get(key) for key in ("LUT4", "FF", "CCU2C")}
    res.update({f"xc7_{key}": v for key, v in xc7.items() if key in ("LUT", "FF")})
    res.update(ring=ring, perm_cycles=permutation_cycles(1, p), B_per_cycle=round(rate, 3),
               B_per_cycle_doc=round(squeeze_bytes_per_cycle(256, 8, 1, p), 3), first_out=first)
    return res

"""``hhe-gen bench soc``: the SoC end to end in simulation (:mod:`hhe_gen.apps.soc_sim`).

Per parameter set: the accelerator's cycles for each step as the SoC runs it (memory at LiteX's
Wishbone DMA rate, packets through LiteEth's PHY model at one byte per cycle), the near-network
encryption against the CPU-driven path (the ciphertext stored over the bus, then sent by the
firmware through the CPU's MAC), and the wire time of the ciphertext at 1 GbE reported apart: the
bytes of its frames (payload + UDP, IPv4, Ethernet headers, FCS, preamble and inter-frame gap) at
8 ns each.  Not in ``--quick``: each case builds a SoC (minutes) and runs it.
"""

from __future__ import annotations

from . import bench_case

__all__ = ["soc_end_to_end", "wire_ns"]

FRAME_OVERHEAD = 8 + 14 + 20 + 8 + 4 + 12
"""Bytes on a 1 GbE wire per UDP payload beyond the payload: preamble + SFD, Ethernet header, IPv4,
UDP, FCS, inter-frame gap."""


def wire_ns(n: int, rows: int, segment: int) -> float:
    """Nanoseconds at 1 Gb/s of a ciphertext of 2 x ``rows`` rows of ``n`` coefficients in packets
    of ``segment`` coefficients."""
    from hhe_gen.models.wire import payload_bytes
    full, rest = divmod(n, segment)
    per_row = full * (payload_bytes(segment) + FRAME_OVERHEAD) + (payload_bytes(rest) + FRAME_OVERHEAD
                                                                  if rest else 0)
    return 2 * rows * per_row * 8.0


@bench_case("soc", "sim-toy", quick=False, params="toy")
@bench_case("soc", "sim-dna-hhe", quick=False, params="dna-hhe")
def soc_end_to_end(params: str, lanes: int = 2, rubato: str = "128s") -> dict:
    from hhe_gen.apps.soc_sim import run_soc_sim
    from hhe_gen.models.wire import MAX_COUNT
    from hhe_gen.params.presets import preset
    r = run_soc_sim(params, lanes, rubato)
    p = preset(params)
    c = r["cpu_driven"]
    ns = wire_ns(p.n, len(p.moduli), MAX_COUNT)
    return {"ok": r["ok"], "key_setup": r["key_setup"]["busy_cycles"],
            "encrypt_pk_nearnet": r["encrypt_pk"]["busy_cycles"], "encrypt_sk_nearnet": r["encrypt_sk"]["busy_cycles"],
            "encrypt_pk_stored": c["store_cycles"], "cpu_send": c["send_cycles"], "cpu_path_s": c["total_seconds"],
            "speedup_vs_cpu": c["speedup"], "dna_hhe_speedup": "1.15 - 1.43",
            "decrypt_recv": r["decrypt_network"]["busy_cycles"], "rubato": r.get("rubato", {}).get("busy_cycles"),
            "wire_us_1gbe": round(ns / 1000, 2), "wire_cycles_75mhz": round(ns * 0.075),
            "precision_bits": r["encrypt_pk"].get("precision", {}).get("mean_bits"),
            "build_s": r["build"]["seconds"], "run_s": round(r["seconds"] - r["build"]["seconds"], 1)}


@bench_case("soc", "ecpix5-dna-hhe", quick=False, params="dna-hhe", accel_mhz=50.0)
@bench_case("soc", "ecpix5-dna-hhe-1-lane", quick=False, params="dna-hhe", accel_mhz=50.0, lanes=1)
@bench_case("soc", "ecpix5-toy", quick=False, params="toy", accel_mhz=60.0)
@bench_case("soc", "ecpix5-toy-1-lane", quick=False, params="toy", accel_mhz=60.0, lanes=1)
def soc_on_ecpix5(params: str, accel_mhz: float, lanes: int = 2) -> dict:
    """The SoC's bitstream for the ECPIX-5 (:func:`hhe_gen.boards.build.build_board`, cached): the
    post-route clocks against LiteX's ECPIX-5 default of 75 MHz and the goal of 100 MHz, the
    utilisation of the LFE5UM5G-85F, the modules on the critical path of each missed clock, and,
    when it does not route, where router2 found the routing congested (the three modules with the
    most overuse in its last congested iteration)."""
    from hhe_gen.boards.build import build_board
    from hhe_gen.params.presets import preset
    r = build_board("ecpix5", preset(params), lanes, None, accel_clk_freq=accel_mhz * 1e6)
    util = {k: f"{v['used']}/{v['available']}" for k, v in r["utilisation"].items()
            if k in ("TRELLIS_COMB", "TRELLIS_FF", "DP16KD", "MULT18X18D", "TRELLIS_RAMW")}
    fmax = {name: c["achieved"] for name, c in r["clocks"].items()}
    congestion = (r.get("congestion") if not r.get("routed") else None) or {"modules": []}
    congested = ", ".join(f"{m['module']} {100 * m['share']:.0f} %" for m in congestion["modules"][:3])
    paths = {name: f"{cp['ns']:.1f} ns through {', '.join(cp['modules'][:3])}"
             for name, cp in r.get("critical_paths", {}).items() if not r["clocks"][name]["met"]}
    return {"lanes": lanes, "fits": r["fits"], "routed": r.get("routed"), "timing_met": r["timing_met"],
            "fmax_mhz": fmax, "sys_target_mhz": 75, "goal_mhz": 100, "accel_clk_mhz": accel_mhz, **util,
            "most_congested": congested or None, "critical_paths": paths or None, "yosys_s": r["yosys_s"],
            "nextpnr_s": r["nextpnr_s"]}

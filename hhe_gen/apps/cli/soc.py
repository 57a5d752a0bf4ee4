"""``hhe-gen soc``: the LiteX SoC with the accelerator.

    hhe-gen soc sim [--params toy|dna-hhe|...] [--lanes L] [--rubato SET|none] [--no-lattigo] [--accel-clock HZ]
                    [--json FILE]
    hhe-gen soc build --board ecpix5|arty-a7 [--params P] [--lanes L] [--rubato SET|none] [--sys-mhz F]
                      [--accel-mhz F] [--seed S] [--placer heap|static] [--router router1|router2] [--no-pnr]
                      [--timeout MIN] [-o DIR] [--json FILE]

``soc sim`` builds the SoC (VexRiscv, LiteEth, the accelerator; cached) in Verilator and runs it with
Ethernet in a network namespace of its own (root, no sudo): keys and a message over Etherbone, the
ciphertext back as UDP packets that Lattigo decrypts, Rubato, and a ciphertext sent to the SoC that
comes back as a message (:mod:`hhe_gen.apps.soc_sim`).  Exit status 1 when a check fails.

``soc build`` builds the SoC for a board (:mod:`hhe_gen.boards.build`): the ECPIX-5's bitstream with
its timing report (Yosys, nextpnr-ecp5, ecppack), or the Arty A7's Yosys utilisation and LiteX's
Vivado script; it prints the clocks reached, the utilisation and the openFPGALoader command.  Exit
status 1 when a clock misses its constraint.
"""

from __future__ import annotations

from .common import write_json_output

__all__ = ["register"]


def register(sub) -> None:
    """Add ``soc sim``."""
    p = sub.add_parser("soc", help="the LiteX SoC with the accelerator (simulation)")
    ops = p.add_subparsers(dest="soc_op", required=True, metavar="sim|build",
                           help="simulate the SoC end to end, or build it for a board")
    q = ops.add_parser("sim", help="build and run the SoC in Verilator with Ethernet, end to end")
    q.add_argument("--params", default="toy", help="parameter preset (default toy; dna-hhe: N = 2^13, 3 x 54)")
    q.add_argument("--lanes", type=int, default=2, help="butterfly lanes (default 2)")
    q.add_argument("--rubato", default="128s", help="Rubato set of the dual-mode accelerator, or none (default 128s)")
    q.add_argument("--no-lattigo", action="store_true", help="decrypt with the model instead of Lattigo")
    q.add_argument("--accel-clock", type=int, metavar="HZ",
                   help="run the accelerator on a clock of its own (the system clock is 1 MHz in simulation; "
                        "e.g. 800000): the clock crossing a board uses")
    q.add_argument("--json", help="write the report as JSON")
    q.set_defaults(func=_sim)
    b = ops.add_parser("build", help="build the SoC for a board: a bitstream (ECPIX-5) or a synthesis report (Arty)")
    b.add_argument("--board", required=True, help="ecpix5 (ECP5 bitstream) or arty-a7 (Artix-7 synthesis, scripts)")
    b.add_argument("--params", default="dna-hhe", help="parameter preset (default dna-hhe)")
    b.add_argument("--lanes", type=int, default=2, help="butterfly lanes (default 2)")
    b.add_argument("--rubato", default="none", help="Rubato set of a dual-mode accelerator, or none (default none)")
    b.add_argument("--sys-mhz", type=float, help="system clock (default: the board's, 75 MHz / 100 MHz)")
    b.add_argument("--accel-mhz", type=float, help="the accelerator's own clock (default: the system clock)")
    b.add_argument("--seed", type=int, default=1, help="nextpnr seed (default 1)")
    b.add_argument("--placer", choices=("heap", "static"), help="nextpnr-ecp5's placer (default: the flow's, "
                   "hhe_gen.boards.build.ECP5_NEXTPNR_ARGS)")
    b.add_argument("--router", choices=("router1", "router2"), help="nextpnr-ecp5's router (default: the flow's)")
    b.add_argument("--no-pnr", action="store_true", help="stop after writing the SoC's gateware")
    b.add_argument("--timeout", type=float, default=360, metavar="MIN",
                   help="minutes per tool run (default 360: a design that does not route keeps nextpnr going)")
    b.add_argument("-o", "--out", help="copy the bitstream, report.json, soc.json and csr.csv here")
    b.add_argument("--json", help="write the report as JSON")
    b.set_defaults(func=_build)


def _sim(args) -> int:
    from hhe_gen.flow.extras import require
    require("soc", "hhe-gen soc sim")
    from hhe_gen.apps.report import console, print_table
    from hhe_gen.apps.soc_sim import run_soc_sim
    from hhe_gen.params.presets import preset
    from hhe_gen.soc.sim_build import sim_support
    preset(args.params)                       # a bad name fails here, before any build
    reason = sim_support()
    if reason is not None:
        console.print(f"hhe-gen soc sim: cannot run: {reason}")
        return 2
    rubato = None if args.rubato.lower() == "none" else args.rubato
    r = run_soc_sim(args.params, args.lanes, rubato, use_lattigo=not args.no_lattigo, accel_clk_freq=args.accel_clock)
    rows = [("build", "cached" if r["build"]["cached"] else "built", "", f"{r['build']['seconds']:.0f}"),
            ("upload over Etherbone", f"{r['upload']['words32']} words", "", f"{r['upload']['seconds']:.1f}"),
            ("firmware PING / KEYCHECK", f"version {r['firmware']['version']}, N = {r['firmware']['n']}",
             f"key upload {r['firmware']['keycheck']} ({r['firmware']['vault_words']} words)", ""),
            ("key_setup (firmware RUN)", f"{r['key_setup']['busy_cycles']} cycles", r["key_setup"]["status"], ""),
            ("secret key read back (CSRs, vault, RAM)",
             f"{r['secrecy']['csrs_read']} CSRs, {r['secrecy']['vault_words_read']} vault words",
             "none found" if r["secrecy"]["ok"] else "KEY VISIBLE", "")]
    for name in ("encrypt_pk", "encrypt_sk"):
        e = r[name]
        prec = e.get("precision", {})
        rows.append((f"{name} -> UDP -> host ({prec.get('by', '-')} decrypts)",
                     f"{e['busy_cycles']} cycles, {e['packets']} packets",
                     ("= model" if e["equal_to_model"] else "DIFFERS") + f", {prec.get('mean_bits', 0):.1f} bits", ""))
    c = r["cpu_driven"]
    rows.append(("CPU-driven: store over the bus, CPU sends (SEND)",
                 f"{c['store_cycles']} + {c['send_cycles']} cycles",
                 ("= model" if c["equal_to_model"] else "DIFFERS") + f"; near-network {c['speedup']} x faster", ""))
    b = r["bad_input"]
    rows.append(("bad input: unknown command, empty program, bad word",
                 f"{b['unknown_command']}; {b['empty_program']}; {b['malformed_word']}",
                 "next program " + b["next_program"], ""))
    if "rubato" in r:
        e = r["rubato"]
        rows.append((f"Rubato {e['set']} -> UDP -> host", f"{e['busy_cycles']} cycles, {e['blocks']} blocks",
                     ("= model" if e["equal_to_model"] else "DIFFERS") + f", error {e['max_abs_error']:.1e}", ""))
    if "decrypt_network" in r:
        e = r["decrypt_network"]
        rows.append(("host -> UDP -> decrypt (recv)", f"{e['busy_cycles']} cycles",
                     ("= model" if e["equal_to_model"] else "DIFFERS") + f", {e['precision_bits']:.1f} bits", ""))
    title = f"SoC simulation: {r['params']}, {r['lanes']} lanes" + (f", Rubato {r['rubato_set']}" if rubato else "")
    if args.accel_clock:
        title += f", accelerator at {args.accel_clock / 1e6:g} MHz against the system's 1 MHz"
    print_table(title, ["step", "result", "check", "s"], rows)
    console.print(("all checks passed" if r["ok"] else "a check FAILED") + f" in {r['seconds']:.0f} s")
    if args.json:
        write_json_output(r, args.json)
    return 0 if r["ok"] else 1


def _build(args) -> int:
    from hhe_gen.flow.extras import require
    require("soc", "hhe-gen soc build")
    if args.board == "ecpix5" and not args.no_pnr:
        require("pnr", "hhe-gen soc build --board ecpix5 (without --no-pnr)")
    from hhe_gen.apps.report import console, print_table
    from hhe_gen.boards.build import build_board, nextpnr_options
    from hhe_gen.params.presets import preset
    p = preset(args.params)
    rubato = None if args.rubato.lower() == "none" else args.rubato
    r = build_board(args.board, p, args.lanes, rubato, sys_clk_freq=args.sys_mhz and args.sys_mhz * 1e6,
                    accel_clk_freq=args.accel_mhz and args.accel_mhz * 1e6, seed=args.seed,
                    place_and_route=not args.no_pnr, out_dir=args.out, timeout=args.timeout * 60,
                    nextpnr_args=nextpnr_options(placer=args.placer, router=args.router))
    title = f"SoC for {r['board']} ({r['fpga']}): {r['params']}, {r['lanes']} lanes" + (
        f", Rubato {rubato}" if rubato else "")
    if "fits" in r:
        if r["clocks"]:
            rows = [(name, f"{c['constraint']:.1f}", f"{c['achieved']:.1f}", "met" if c["met"] else "MISSED")
                    for name, c in sorted(r["clocks"].items())]
            print_table(title + ": post-route clocks (MHz)", ["clock", "constraint", "achieved", ""], rows)
            paths = r.get("critical_paths", {})
            rows = [(name, f"{cp['ns']:.2f}", f"{cp['routing_ns']:.2f}", str(cp["lut"] + cp["carry"] + cp["dsp"]),
                     ", ".join(cp["modules"][:6]) + (" ..." if len(cp["modules"]) > 6 else ""))
                    for name, cp in sorted(paths.items()) if not r["clocks"].get(name, {}).get("met", True)]
            if rows:
                print_table("the critical path of each missed clock (nextpnr)",
                            ["clock", "ns", "routing ns", "logic levels", "through"], rows)
        rows = [(k, str(v["used"]), str(v["available"]), f"{100 * v['used'] / v['available']:.1f} %"
                 + (" OVER" if v["used"] > v["available"] else ""))
                for k, v in sorted(r["utilisation"].items()) if v["available"] and v["used"]]
        print_table("utilisation (nextpnr-ecp5)" + ("" if r["fits"] else ": DOES NOT FIT, nothing placed"),
                    ["cell", "used", "available", ""], rows)
        congestion = r.get("congestion")
        if congestion and not r["routed"]:
            rows = [(m["module"], f"{m['overuse']:,}", f"{100 * m['share']:.1f} %", f"{m['nets']:,}")
                    for m in congestion["modules"]]
            print_table(f"where routing is congested (router2 iteration {congestion['iteration']}, "
                        f"{congestion['overuse']:,} overused wire uses)", ["module", "overuse", "share", "nets"], rows)
        if r["fits"] and not r["routed"]:
            console.print(f"DOES NOT ROUTE: {r.get('route_failure')}; no bitstream (try --placer, --router or "
                          "--seed, or make the modules above smaller)")
        elif r["fits"]:
            console.print(f"bitstream: {r['bitstream']}\nload it: {r['load']}")
    elif "area" in r:
        rows = [(k, f"{v['used']:g}", str(v["available"]), f"{100 * v['used'] / v['available']:.1f} %")
                for k, v in r["utilisation"].items()]
        print_table(title + ": Yosys synth_xilinx (Vivado's own synthesis differs)",
                    ["cell", "used", "available", ""], rows)
        console.print("place and route with: " + ", ".join(r.get("scripts", [])) + f"\nthen: {r['load']}")
    else:
        console.print(f"{title}: gateware written to {r['folder']}/gateware")
    if args.json:
        write_json_output(r, args.json)
    return 0 if r.get("fits", True) and r.get("routed", True) and r.get("timing_met", True) else 1

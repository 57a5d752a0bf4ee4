"""``hhe-gen soc``: the LiteX SoC with the accelerator.

    hhe-gen soc sim [--params toy|dna-hhe|...] [--lanes L] [--rubato SET|none] [--no-lattigo] [--json FILE]

``soc sim`` builds the SoC (VexRiscv, LiteEth, the accelerator; cached) in Verilator and runs it with
Ethernet in a network namespace of its own (root, no sudo): keys and a message over Etherbone, the
ciphertext back as UDP packets that Lattigo decrypts, Rubato, and a ciphertext sent to the SoC that
comes back as a message (:mod:`hhe_gen.apps.soc_sim`).  Exit status 1 when a check fails.
"""

from __future__ import annotations

from .common import write_json_output

__all__ = ["register"]


def register(sub) -> None:
    """Add ``soc sim``."""
    p = sub.add_parser("soc", help="the LiteX SoC with the accelerator (simulation)")
    ops = p.add_subparsers(dest="soc_op", required=True, metavar="sim", help="simulate the SoC end to end")
    q = ops.add_parser("sim", help="build and run the SoC in Verilator with Ethernet, end to end")
    q.add_argument("--params", default="toy", help="parameter preset (default toy; dna-hhe: N = 2^13, 3 x 54)")
    q.add_argument("--lanes", type=int, default=2, help="butterfly lanes (default 2)")
    q.add_argument("--rubato", default="128s", help="Rubato set of the dual-mode accelerator, or none (default 128s)")
    q.add_argument("--no-lattigo", action="store_true", help="decrypt with the model instead of Lattigo")
    q.add_argument("--json", help="write the report as JSON")
    q.set_defaults(func=_sim)


def _sim(args) -> int:
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
    r = run_soc_sim(args.params, args.lanes, rubato, use_lattigo=not args.no_lattigo)
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
    print_table(title, ["step", "result", "check", "s"], rows)
    console.print(("all checks passed" if r["ok"] else "a check FAILED") + f" in {r['seconds']:.0f} s")
    if args.json:
        write_json_output(r, args.json)
    return 0 if r["ok"] else 1

"""The measured figures of docs/*.md, rendered from one committed bench snapshot.

Docstrings hold contracts, formulas and latencies; the figures measured on them (cycles, areas,
post-route Fmax) live in ``docs/figures/bench-snapshot.json`` and are rendered by
:func:`markdown_tables` into the blocks between ``<!-- figures:NAME -->`` and
``<!-- /figures:NAME -->`` of the documents (``tests/test_docs_figures.py`` checks that every block
equals its rendering, and ``python tests/test_docs_figures.py`` rewrites them).

The snapshot is ``{"tables": {NAME: [row, ...]}}``; a row is

``case``      the bench case that measures it (``group/name`` of ``hhe-gen bench``), or, for a
              figure no case measures as such, what was run;
``values``    the figures, by the column keys of :data:`TABLES`;
``commit``    ``git rev-parse --short HEAD`` when it was measured, ``date`` that day;
``remeasured`` False for a figure taken over from earlier docs text without running it again
              (its commit is the one that wrote the figure); such rows say "not re-measured";
``note``      optional: why a row is stale or what it is.

:func:`rows_from_bench` turns a ``hhe-gen bench --json`` results file into rows (the commit and
date given), so a table is brought up to date by running its cases and replacing its rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SNAPSHOT", "TABLES", "Layout", "load_snapshot", "markdown_tables", "render_table", "rows_from_bench"]

SNAPSHOT = Path(__file__).resolve().parents[2] / "docs" / "figures" / "bench-snapshot.json"
"""The committed snapshot (in the source checkout)."""


@dataclass(frozen=True)
class Layout:
    """How one table is drawn: ``columns`` as (header, key of ``values``; "case" for the row's case),
    ``command`` the bench invocation that measures its rows (said under the table)."""
    columns: tuple
    command: str


TABLES: dict[str, Layout] = {
    "rubato-cycles": Layout(
        (("case", "case"), ("set", "set"), ("lanes", "lanes"), ("cycles per block", "cycles_per_block"),
         ("without rejection", "cycles_no_rejection"), ("simulated", "simulated_cycles"),
         ("DNA-HHE (Table III)", "dna_hhe_cycles"), ("ratio", "ratio_to_dna_hhe")),
        "hhe-gen bench rubato --quick"),
    "rubato-ecp5": Layout(
        (("case", "case"), ("design", "design"), ("LUT4", "LUT4"), ("FF", "FF"), ("MULT18X18D", "MULT18X18D"),
         ("Fmax MHz", "fmax_mhz"), ("cycles per block", "cycles_per_block"), ("blocks/s", "blocks_per_s"),
         ("critical path", "critical_path")),
        "hhe-gen bench fmax --only rubato-128s-l2 rubato-128s-l8; hhe-gen bench rubato (not quick)"),
    "rubato-area": Layout(
        (("case", "case"), ("design", "design"), ("LUT4", "LUT4"), ("FF", "FF"), ("CCU2C", "CCU2C"),
         ("MULT18X18D", "MULT18X18D"), ("fits the 85F", "fits_85f")),
        "hhe-gen bench rubato --only 128s-l16-area (Yosys synth_ecp5 only)"),
    "rubato-multipliers": Layout(
        (("case", "case"), ("multiplier", "multiplier"), ("ECP5 LUT4", "LUT4"), ("FF", "FF"),
         ("MULT18X18D", "MULT18X18D"), ("CCU2C", "CCU2C"), ("xc7 LUT", "xc7_LUT"), ("xc7 FF", "xc7_FF"),
         ("SRL", "xc7_SRL"), ("DSP48E1", "xc7_DSP48E1"), ("CARRY4", "xc7_CARRY4")),
        "hhe-gen bench rubato --only 128s-l2-multipliers"),
    "ntt-cycles": Layout(
        (("case", "case"), ("N", "n"), ("P", "lanes"), ("D", "depth"), ("bound", "bound"), ("T", "cycles"),
         ("T - bound", "over_bound"), ("command", "command"), ("single-port T", "single_cycles"),
         ("twiddles on the fly T", "otf_cycles")),
        "hhe-gen bench ntt --quick --only cycles-..."),
    "ntt-ecp5": Layout(
        (("case", "case"), ("design", "design"), ("LUT4", "LUT4"), ("FF", "FF"), ("MULT18X18D", "MULT18X18D"),
         ("DP16KD", "DP16KD"), ("Fmax MHz", "fmax_mhz"), ("T", "cycles"), ("us per NTT", "us_per_ntt"),
         ("critical path", "crit"), ("xc7", "xc7"), ("run time", "run_time")),
        "hhe-gen bench ntt --only synth-n12-p2-32b synth-n13-p2-54b (Yosys 0.70 + nextpnr-ecp5, LFE5U-85F, seed 1)"),
    "ntt-ecp5-area": Layout(
        (("case", "case"), ("design", "design"), ("LUT4", "LUT4"), ("PFUMX", "PFUMX"), ("L6MUX21", "L6MUX21"),
         ("FF", "FF"), ("MULT18X18D", "MULT18X18D"), ("DP16KD", "DP16KD"), ("CCU2C", "CCU2C"),
         ("fits the 85F", "fits_85f"), ("write side (LUT4)", "write"), ("read side (LUT4)", "read"),
         ("twiddle multiplexer", "twiddle_mux"), ("butterflies", "butterflies"), ("run time", "run_time")),
        "hhe-gen bench ntt --only area-n13-p8-54b (Yosys 0.70 synth_ecp5 only)"),
    "ntt-ecp5-route": Layout(
        (("case", "case"), ("design", "design"), ("flow", "flow"), ("LUT4", "LUT4"), ("FF", "FF"),
         ("MULT18X18D", "MULT18X18D"), ("DP16KD", "DP16KD"), ("TRELLIS_COMB", "comb"),
         ("router2's overused wires", "overused"), ("run time", "run_time")),
        "hhe-gen bench ntt --only synth-n13-p8-54b (Yosys 0.70 + nextpnr-ecp5, LFE5U-85F, seed 1)"),
    "keccak-area": Layout(
        (("case", "case"), ("rounds/cycle", "k"), ("LUT mapping", "mapping"), ("bytes/cycle", "B_per_cycle"),
         ("xc7 LUT", "xc7_LUT"), ("ECP5 LUT4", "LUT4"), ("FF", "FF"), ("PFUMX", "PFUMX"), ("L6MUX21", "L6MUX21"),
         ("ECP5 Fmax MHz", "fmax_mhz"), ("MB/s", "MB_per_s"), ("critical path", "crit"), ("run time", "run_time")),
        "hhe-gen bench keccak --only xof256-w8-k<k>-ecp5 (SHAKE256, 8-byte beats; Yosys 0.70, nextpnr-ecp5 seed 1)"),
    "keccak-planes": Layout(
        (("case", "case"), ("planes/cycle", "p"), ("ring", "ring"), ("cycles per permutation", "perm_cycles"),
         ("bytes/cycle (simulated)", "B_per_cycle"), ("formula", "B_per_cycle_doc"), ("first output", "first_out"),
         ("ECP5 LUT4", "LUT4"), ("FF", "FF"), ("CCU2C", "CCU2C"), ("xc7 LUT", "xc7_LUT"), ("xc7 FF", "xc7_FF")),
        "hhe-gen bench keccak --only xof256-w8-p1-ecp5 xof256-w8-p2-ecp5 xof256-w8-p3-ecp5 xof256-w8-p5-ecp5 xof256-w8-ring-ecp5 "
        "(SHAKE256, 8-byte beats, k = 1; Yosys synth_ecp5 -nowidelut, synth_xilinx classic ABC)"),
    "fft-ecp5": Layout(
        (("case", "case"), ("design", "design"), ("LUT4", "LUT4"), ("FF", "FF"), ("CCU2C", "CCU2C"),
         ("MULT18X18D", "MULT18X18D"), ("DP16KD", "DP16KD"), ("Fmax MHz", "fmax_mhz"), ("critical path", "crit")),
        "hhe-gen bench fft --only synth-... (29/26; Yosys 0.70 + nextpnr-ecp5, LFE5U-85F, seed 1)"),
    "fft-precision": Layout(
        (("case", "case"), ("N", "n"), ("F", "f"), ("W = 24", "w24"), ("W = 26", "w26"), ("W = 28", "w28"),
         ("W = 29", "w29"), ("W = 30", "w30"), ("W = 32", "w32"), ("W = 33", "w33"), ("W = 34", "w34"),
         ("W = 36", "w36"), ("W = 38", "w38"), ("W = 40", "w40"),
         ("narrowest W/F with >= 24 bits", "narrowest")),
        "hhe-gen bench fft --only precision-plot (E mean bits; disc slots, seed 1, Delta = 2^50)"),
    "butterfly-ecp5": Layout(
        (("case", "case"), ("fields", "fields"), ("MULT18X18D", "MULT18X18D"), ("LUT4", "LUT4"), ("FF", "FF"),
         ("Fmax MHz", "fmax_mhz"), ("note", "what")),
        "hhe-gen bench butterfly --only synth-..."),
    "barrett-ecp5": Layout(
        (("case", "case"), ("form", "form"), ("latency", "latency"), ("MULT18X18D", "MULT18X18D"),
         ("LUT4", "LUT4"), ("FF", "FF"), ("Fmax MHz", "fmax_mhz")),
        "hhe-gen bench arith --only ecp5-special-barrett-54-..."),
    "fmax": Layout(
        (("case", "case"), ("row", "row"), ("Fmax MHz", "fmax_mhz"), ("to 100", "to_target_mhz"), ("LUT4", "LUT4"),
         ("MULT18X18D", "MULT18X18D"), ("DP16KD", "DP16KD"), ("critical path (ns, of it routing)", "crit")),
        "hhe-gen bench fmax --only CASE"),
    "task-manager": Layout(
        (("case", "case"), ("design", "design"), ("LUT4", "LUT4"), ("CCU2C", "CCU2C"), ("FF", "FF"),
         ("DPR16X4", "DPR16X4"), ("Fmax MHz", "fmax_mhz")),
        "Yosys synth_ecp5 -nowidelut (classic ABC) of the unit alone; nextpnr-ecp5 on the 85F"),
    "earlier-designs": Layout(
        (("case", "case"), ("design (not the current one)", "design"), ("figures", "figures"),
         ("replaced by", "replaced_by")),
        "each row's case on the commit it names (run today, a case measures the current design)"),
    "accel-cycles": Layout(
        (("case", "case"), ("program", "program"), ("lanes", "lanes"), ("out-of-order", "out_of_order"),
         ("in-order", "in_order"), ("ratio", "ratio"), ("goal", "goal"), ("goal's source", "goal_source"),
         ("DNA-HHE (Table II, 2 butterflies)", "dna_hhe")),
        "hhe-gen bench accel --only cycles-dna-hhe-... (Verilator)"),
    "accel-cycles-by-task": Layout(
        (("case", "case"), ("program", "program"), ("lanes", "lanes"), ("part of the run", "what"),
         ("cycles", "cycles")),
        "the per-task dispatch and completion records of hhe-gen bench accel --only cycles-dna-hhe-... (Verilator)"),
    "accel-area": Layout(
        (("case", "case"), ("tool", "tool"), ("LUT", "lut"), ("FF", "ff"), ("multipliers", "multipliers"),
         ("block RAM", "block_ram")),
        "hhe-gen bench accel --only area-dna-hhe-2lanes (Yosys synth_ecp5 / synth_xilinx)"),
    "accel-area-by-unit": Layout(
        (("case", "case"), ("unit", "unit"), ("LUT4", "lut4"), ("CCU2C", "ccu2c"), ("FF", "ff"),
         ("MULT18X18D", "mult18x18d"), ("DP16KD", "dp16kd"), ("DPR16X4", "dpr16x4")),
        "hhe-gen bench accel --only area-by-unit-dna-hhe-2lanes (Yosys synth_ecp5, the hierarchy kept, classic ABC)"),
    "accel-area-by-unit-shared": Layout(
        (("case", "case"), ("unit", "unit"), ("LUT4", "lut4"), ("CCU2C", "ccu2c"), ("FF", "ff"),
         ("MULT18X18D", "mult18x18d"), ("DP16KD", "dp16kd"), ("DPR16X4", "dpr16x4"),
         ("LUT4 with the indexed XOF", "before")),
        "hhe-gen bench accel --only area-by-unit-dna-hhe-2lanes-dual-128s-shared (Yosys synth_ecp5, the hierarchy "
        "kept, classic ABC; the crypto unit's parts from the same run's stat.json; the last column the same case "
        "on the commit its note names)"),
    "accel-earlier-designs": Layout(
        (("case", "case"), ("design (not the current one)", "design"), ("ECP5 LUT4", "lut4"), ("FF", "ff"),
         ("MULT18X18D", "mult18x18d"), ("DP16KD", "dp16kd"), ("xc7 LUT", "xc7_lut"), ("xc7 FF", "xc7_ff"),
         ("xc7 block RAM", "xc7_block_ram"), ("replaced by", "replaced_by")),
        "hhe-gen bench accel --only area-dna-hhe-2lanes on the commit of the row (Yosys synth_ecp5 / synth_xilinx)"),
    "nearnet-send": Layout(
        (("case", "case"), ("program", "program"), ("lanes", "lanes"), ("near-network", "near_network"),
         ("stored", "stored"), ("store-then-send, Wishbone", "store_then_send_wishbone"), ("gain", "gain_wishbone"),
         ("store-then-send, LiteDRAM", "store_then_send_litedram"), ("gain", "gain_litedram")),
        "hhe-gen bench accel --only nearnet-dna-hhe-... (Verilator)"),
    "nearnet-recv": Layout(
        (("case", "case"), ("program", "program"), ("lanes", "lanes"), ("near-network", "near_network"),
         ("loaded", "loaded"), ("receive-then-load, Wishbone", "receive_then_load_wishbone"), ("gain", "gain_wishbone"),
         ("receive-then-load, LiteDRAM", "receive_then_load_litedram"), ("gain", "gain_litedram")),
        "hhe-gen bench accel --only nearnet-dna-hhe-ct-to-m-l0-... (Verilator)"),
    "accel-rubato": Layout(
        (("case", "case"), ("set", "set"), ("engine", "engine"), ("core alone", "core_alone"),
         ("DNA-HHE (Table III, 200 MHz)", "dna_hhe"), ("engine / DNA-HHE", "ratio")),
        "hhe-gen bench accel --only rubato-128s-2lanes rubato-128m-2lanes rubato-128l-2lanes (Amaranth simulation)"),
    "accel-precision": Layout(
        (("case", "case"), ("slot format", "slot_format"), ("rounding", "rounding"), ("mean bits", "mean_bits"),
         ("worst slot bits", "worst_slot_bits"), ("Lattigo's own: mean", "lattigo_mean_bits"),
         ("worst slot", "lattigo_worst_slot_bits"), ("below Lattigo's mean", "below_lattigo_mean")),
        "hhe-gen bench accel --only precision-dna-hhe-lattigo precision-dna-hhe-lattigo-half-up "
        "precision-dna-hhe-lattigo-42bits precision-dna-hhe-lattigo-46bits precision-dna-hhe-lattigo-54bits "
        "(m-to-ct on the ISA model, which the RTL equals bit for bit; Lattigo v6 decrypting)"),
    "accel-dual-area": Layout(
        (("case", "case"), ("design", "design"), ("LUT4", "lut4"), ("FF", "ff"), ("MULT18X18D", "mult18x18d"),
         ("DP16KD", "dp16kd")),
        "hhe-gen bench accel --only area-dna-hhe-2lanes area-dna-hhe-2lanes-dual-128s area-dna-hhe-2lanes-dual-128s-shared "
        "area-dna-hhe-2lanes-dual-128s-shared-42bits; hhe-gen bench rubato --only 128s-l2-multipliers (Yosys synth_ecp5)"),
    "soc-ecpix5-area": Layout(
        (("case", "case"), ("configuration", "configuration"), ("logic", "logic"), ("flip-flops", "flip_flops"),
         ("multipliers", "multipliers"), ("block RAM", "block_ram"), ("Yosys", "yosys"),
         ("placed and routed", "placed_and_routed")),
        "hhe-gen bench soc --only ecpix5-dna-hhe ecpix5-dna-hhe-1-lane (packed by nextpnr-ecp5); "
        "hhe-gen soc build --board arty-a7 --params dna-hhe (Yosys synth_xilinx)"),
    "soc-earlier-designs": Layout(
        (("case", "case"), ("SoC (not the current one)", "design"), ("logic", "logic"), ("flip-flops", "flip_flops"),
         ("multipliers", "multipliers"), ("block RAM", "block_ram"), ("Yosys", "yosys")),
        "hhe-gen bench soc --only ecpix5-dna-hhe ecpix5-dna-hhe-1-lane on the commit of the row (packed by nextpnr-ecp5)"),
    "soc-ecpix5-route": Layout(
        (("case", "case"), ("SoC", "soc"), ("placer", "placer"), ("packed", "packed"), ("placed", "placed"),
         ("router", "router"), ("router2's overused wires", "overused"), ("routed", "routed")),
        "hhe-gen soc build --board ecpix5 --params P --lanes L [--placer heap|static] [--router router1|router2] "
        "(nextpnr-ecp5, seed 1); hhe-gen bench soc --only ecpix5-..."),
    "soc-congestion": Layout(
        (("case", "case"), ("run", "run"), ("iteration", "iteration"), ("overused wire uses", "uses"),
         ("module", "module"), ("share of the overuse", "share"), ("nets", "nets")),
        "hhe-gen soc build --board ecpix5 --params dna-hhe --lanes 1 --placer heap (router2's heat map summed by "
        "module: the report's congestion)"),
    "soc-toy-clocks": Layout(
        (("case", "case"), ("clock", "clock"), ("constraint", "constraint"), ("post-route", "post_route"),
         ("critical path", "critical_path")),
        "hhe-gen bench soc --only ecpix5-toy-1-lane (static placer, router2, seed 1)"),
    "soc-toy-clocks-earlier": Layout(
        (("case", "case"), ("SoC (not the current one)", "design"), ("sys", "sys"), ("accelerator", "accel"),
         ("critical path", "critical_path"), ("replaced by", "replaced_by")),
        "hhe-gen bench soc --only ecpix5-toy-1-lane on the commit of the row (static placer, router2, seed 1)"),
    "soc-sim-toy": Layout(
        (("case", "case"), ("step", "step"), ("accelerator cycles", "accelerator_cycles"), ("check", "check")),
        "hhe-gen soc sim (hhe-gen bench soc --only sim-toy)"),
    "soc-sim-dna-hhe": Layout(
        (("case", "case"), ("step", "step"), ("accelerator cycles", "accelerator_cycles"), ("check", "check")),
        "hhe-gen soc sim --params dna-hhe (hhe-gen bench soc --only sim-dna-hhe)"),
    "server-barrett-scaling": Layout(
        (("case", "case"), ("reducer", "reducer"), ("LUT4", "LUT4"), ("FF", "FF"), ("MULT18X18D", "MULT18X18D"),
         ("Fmax MHz", "fmax_mhz")),
        "Yosys synth_ecp5 + nextpnr-ecp5 (LFE5U-85F, seed 1) of cores/arith/barrett.py's reducer alone at latency 6"),
    "server-cycles": Layout(
        (("case", "case"), ("params", "params"), ("lanes", "lanes"), ("port (bits)", "port"), ("HMult", "hmult"),
         ("vs paper", "hmult_vs_paper"), ("HMult arithmetic", "hmult_arithmetic"),
         ("vs paper", "arithmetic_vs_paper"), ("key switch", "key_switch"), ("vs paper", "key_switch_vs_paper"),
         ("key words", "key_words"), ("rescale", "rescale"), ("mul_relin_rescale", "mul_relin_rescale")),
        "hhe-gen bench accel --only server-dna-hhe-... server-flexible-218-... (Verilator, N = 2^13, bit-exact)"),
    "server-cycles-parts": Layout(
        (("case", "case"), ("params", "params"), ("lanes", "lanes"), ("port (bits)", "port"),
         ("program", "program"), ("part of the run", "what"), ("cycles", "cycles"), ("memory words", "memory_words")),
        "the task records and memory counts of hhe-gen bench accel --only server-dna-hhe-... (Verilator, N = 2^13)"),
    "server-area-basis": Layout(
        (("case", "case"), ("params", "params"), ("lanes", "lanes"), ("LUT4", "LUT4"), ("CCU2C", "CCU2C"),
         ("FF", "FF"), ("MULT18X18D", "MULT18X18D")),
        "hhe-gen bench accel --only server-area-basis-... (Yosys synth_ecp5, no place and route)"),
    "server-area-basis-earlier": Layout(
        (("case", "case"), ("params", "params"), ("lanes", "lanes"), ("basis unit (not the current one)", "design"),
         ("LUT4", "LUT4"), ("CCU2C", "CCU2C"), ("FF", "FF"), ("MULT18X18D", "MULT18X18D"),
         ("replaced by", "replaced_by")),
        "hhe-gen bench accel --only server-area-basis-... on the commit of the row (Yosys synth_ecp5, no place and "
        "route)"),
}
"""Every generated table: its name (the docs marker) -> :class:`Layout`."""


def load_snapshot(path=None) -> dict:
    return json.loads(Path(path or SNAPSHOT).read_text())


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v).replace("|", "\\|")


def _measured(row: dict) -> str:
    text = f"`{row['commit']}` ({row['date']})"
    return text if row.get("remeasured", True) else text + ", not re-measured"


def render_table(name: str, rows: list[dict]) -> list[str]:
    """The markdown lines of table ``name``: the header, a line per row, then the commit the rows were
    measured on (one line when they share it, else a "measured on" column) and their notes."""
    layout = TABLES[name]
    shared = len({_measured(r) for r in rows}) == 1
    notes = [r for r in rows if r.get("note")]
    headers = [h for h, _ in layout.columns] + ([] if shared else ["measured on"]) + (["note"] if notes else [])
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for r in rows:
        cells = [f"`{r['case']}`" if key == "case" else _cell(r["values"].get(key)) for _, key in layout.columns]
        if not shared:
            cells.append(_measured(r))
        if notes:
            cells.append(_cell(r.get("note", "")))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    where = f"Measured on commit {_measured(rows[0])}" if shared else "Measured on the commit of each row"
    lines.append(f"{where}: `{layout.command}`; generated from docs/figures/bench-snapshot.json.")
    return lines


def markdown_tables(snapshot: dict | None = None) -> dict[str, list[str]]:
    """Every table of the snapshot, rendered: name -> markdown lines."""
    snapshot = load_snapshot() if snapshot is None else snapshot
    unknown = set(snapshot["tables"]) - set(TABLES)
    if unknown:
        raise KeyError(f"snapshot tables without a layout: {sorted(unknown)}")
    return {name: render_table(name, rows) for name, rows in snapshot["tables"].items()}


def rows_from_bench(results: list[dict], *, commit: str, date: str, values=None) -> list[dict]:
    """Snapshot rows from ``hhe-gen bench --json`` results (``{"results": [...]}``'s list): one per
    case without error, its metrics (``values(result)`` when given) measured on ``commit``."""
    return [{"case": f"{r['group']}/{r['name']}", "values": values(r) if values else dict(r["metrics"]),
             "commit": commit, "date": date, "remeasured": True}
            for r in results if not r.get("error")]

"""``hhe-gen bench | prove | mutate | demo | doctor``: the long runs and the tool check."""

import sys

from hhe_gen.params import ParameterError

from .common import SEED_RULE


def _check_selection(selected, args, what: str):
    """An empty selection (only --quick can make one) is an error, not a run of nothing."""
    if not selected:
        where = "the groups " + ", ".join(args.groups) if args.groups else "all groups"
        raise ParameterError("--quick", True, f"a selection with {what}: {where} have none under --quick "
                             "(run without --quick, or name them with --only)")


def _written(written, count: int, what: str):
    from hhe_gen.apps.report import console, err_console
    if written.backup is not None:
        err_console.print(f"[yellow]{written.path} was no results file any more: moved to {written.backup}[/]")
    console.print(f"results written to {written.path}: {count} {what} of this run ({written.replaced} "
                  f"replaced), {written.kept} earlier kept")


def cmd_bench(args):
    from hhe_gen.apps import bench as benchmarks
    from hhe_gen.apps.report import bench_tables, console, read_results, show, write_results
    selected = benchmarks.cases(args.groups or None, quick=args.quick, names=args.only)
    if args.list:
        from hhe_gen.apps.report import print_table
        print_table("benchmark cases", ["group", "case", "quick"],
                    [(c.group, c.name, "yes" if c.quick else "no") for c in selected])
        return 0
    _check_selection(selected, args, "cases")
    from hhe_gen.flow.extras import require
    require("plots", "hhe-gen bench")           # its plots, drawn after the runs
    read_results(args.json)              # a results file that does not parse: refused before any work
    results = []
    from rich.progress import Progress
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("benchmarks", total=len(selected))
        for case in selected:
            progress.update(task, description=f"{case.group}/{case.name}")
            results.append(benchmarks.run_case(case))
            progress.advance(task)
    for t in bench_tables(results):
        show(t)
    written = write_results(args.json, results)
    _written(written, len(results), "rows")
    ran = {r["group"] for r in results}        # the plots of these groups, from all their rows in the file
    for plot in benchmarks.summarise([r for r in written.rows if r["group"] in ran], written.path.parent):
        console.print(f"plot written to {plot}")
    return 1 if any("error" in r for r in results) else 0


def cmd_prove(args):
    import math

    from hhe_gen.flow.extras import require
    require("formal", "hhe-gen prove")
    from hhe_gen.apps import prove
    from hhe_gen.apps.report import read_results, show, write_results
    if args.timeout is not None and not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise ParameterError("--timeout", args.timeout, "a positive number of seconds")
    selected = prove.proofs(args.groups or None, quick=args.quick, names=args.only)
    _check_selection(selected, args, "proofs")
    read_results(args.json)              # a results file that does not parse: refused before any work
    records = prove.run_proofs(args.groups or None, quick=args.quick, workdir=args.workdir,
                               timeout=args.timeout, names=args.only)
    show(prove.summary_table(records))
    _written(write_results(args.json, records), len(records), "records")
    return 0 if all(r["ok"] for r in records) else 1


def cmd_mutate(args):
    """Mutation testing of the generators in cores/ (see :mod:`hhe_gen.apps.mutate`); the results
    are added to the --json file (a mutant run again replaces its record, the others stay:
    :mod:`hhe_gen.apps.mutate.report`), which is refused before the run when it is no such file.
    A run that cannot give every mutant a verdict (:class:`hhe_gen.apps.mutate.MutationError`) ends
    with one error line and exit status 2, and writes nothing."""
    from hhe_gen.apps import mutate
    from hhe_gen.apps.report import console, err_console, print_table
    ops = tuple(o.strip() for o in args.ops.split(",") if o.strip())
    if not ops or set(ops) - set(mutate.OPERATORS):
        raise ParameterError("--ops", args.ops, "a comma-separated list of " + ", ".join(mutate.OPERATORS))
    for name, value, low in (("--sample", args.sample, 1), ("--jobs", args.jobs, 1)):
        if value is not None and value < low:
            raise ParameterError(name, value, f"an integer >= {low}")
    if args.timeout is not None and not args.timeout > 0:
        raise ParameterError("--timeout", args.timeout, "a positive number of seconds")
    root = mutate.find_root(args.root)
    muts = mutate.enumerate_tree(root, args.targets or None, ops, checks=args.checks)
    if args.match:
        muts = [m for m in muts if any(t in m.id or t in m.function or t in m.text for t in args.match)]
    total = len(muts)
    muts = mutate.sample(muts, args.sample, 0 if args.seed is None else args.seed)
    if args.list:
        console.print(mutate.mutants_table(muts, f"{len(muts)} of {total} mutants"))
        return 0
    if not muts:
        raise ParameterError("--match" if args.match else "FAMILY", " ".join(args.match or args.targets or ()),
                             "a selection with at least one mutant (--list shows them)")
    mutate.read_results(args.json)       # a results file that does not parse: refused before any work
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task("mutants", total=len(muts))

        def note(event, **info):
            if event == "baseline":
                bar.update(task, description=f"baseline ({len(info['tests'])} test files)")
            elif event == "start":
                bar.update(task, description=info["mutant"].id)
            elif event == "done":
                r = info["result"]
                bar.console.print(f"{r.status:9s} {r.seconds:6.1f} s  {r.mutant.id}")
                bar.advance(task)
        try:
            results, baselines = mutate.run_mutants(root, muts, tests=args.tests, timeout=args.timeout,
                                                    jobs=args.jobs, keep=args.keep, progress=note)
        except mutate.MutationError as exc:      # no verdict: nothing written, the results file kept
            error = " ".join(str(exc).split())
        else:
            error = None
    if error is not None:
        print(f"hhe-gen: error: mutate: {error}", file=sys.stderr)
        return 2
    console.print(mutate.results_table(results, f"hhe-gen mutate: {len(muts)} of {total} mutants"))
    summary = mutate.summarize(results)
    print_table("per family", ["family", "mutants", "killed", "of which timeouts", "survived", "seconds"],
                [(f, s["mutants"], s["killed"], s["timeout"], s["survived"], s["seconds"])
                 for f, s in summary.items()])
    for b in baselines.values():
        if b.failures or b.dropped:
            console.print("[yellow]already failing without a mutant (deselected):[/] "
                          + ", ".join(b.failures + b.dropped))
    run = {"targets": list(args.targets or []), "operators": list(ops), "checks": bool(args.checks),
           "match": args.match, "tests": args.tests, "sample": args.sample, "seed": args.seed,
           "root": str(root), "total_mutants": total}      # targets []: every family
    _written(mutate.write_results(args.json, mutate.to_json(results, baselines, **run)), len(results), "mutants")
    return 0


def cmd_demo(args):
    from hhe_gen.apps.demo import run_demo
    return run_demo(preset_name=args.preset, use_lattigo=not args.no_lattigo, seed=args.seed)


def cmd_doctor(args):
    """The external tools, the pip extras and the Lattigo peer; a missing tool's or extra's note
    names what installs it (the extra's ``pip install "hhe-gen[...]"``, or the core install).
    Exit status 1 when a tool or an extra is missing."""
    from rich.markup import escape          # the notes' [soc] / [pnr] are text, not markup

    from hhe_gen.apps.report import print_table
    from hhe_gen.flow.doctor import check, check_extras
    statuses = check()
    print_table("toolchain", ["tool", "found", "kind", "version", "compiled (YoWASP)", "note"],
                [(s.name, "yes" if s.found else "NO", s.kind or "-", s.version or "-",
                  {True: "yes", False: "not yet (first use compiles it)", None: "-"}.get(s.warm, "-"),
                  escape(s.hint if not s.found else s.detail)) for s in statuses])
    for s in statuses:
        if not s.found:                     # where it was searched: the table's note is the remedy
            print(f"{s.name}: {s.detail}")
    extras = check_extras()
    print_table("pip extras", ["extra", "installed", "missing", "install"],
                [(e.name, "NO" if e.absent else "yes", ", ".join(e.absent) or "-", escape(e.hint) or "-")
                 for e in extras])
    from hhe_gen.host.lattigo import LATTIGO_VERSION, go_available
    reason = go_available()
    print_table("Lattigo peer", ["item", "status"],
                [("go", "found" if reason is None else reason), ("lattigo", LATTIGO_VERSION)])
    return 0 if all(s.found for s in statuses) and not any(e.absent for e in extras) else 1


def register(sub) -> None:
    """Add this module's sub-commands to the ``hhe-gen`` parser."""
    p = sub.add_parser("bench", help="run benchmarks, write JSON and a table")
    p.add_argument("groups", nargs="*", help="benchmark groups (default: all)")
    p.add_argument("--quick", action="store_true", help="only the CI-sized cases")
    p.add_argument("--json", default="bench-results/bench.json",
                   help="results file, added to: a case run again replaces its row (default: %(default)s)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these cases (name or group/name)")
    p.add_argument("--list", action="store_true", help="list the selected cases and stop")
    p.set_defaults(func=cmd_bench)
    p = sub.add_parser("prove", help="run the formal proofs (z3 bounds, SymbiYosys harnesses), print a table")
    p.add_argument("groups", nargs="*", help="proof groups (default: all)")
    p.add_argument("--quick", action="store_true", help="only the CI-sized proofs")
    p.add_argument("--json", default="prove-results/prove.json",
                   help="results file, added to: a proof run again replaces its record (default: %(default)s)")
    p.add_argument("--workdir", default="prove-results/work", help="harnesses, .sby files and traces")
    p.add_argument("--timeout", type=float, help="seconds per tool run (> 0)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these proofs (name or group/name)")
    p.set_defaults(func=cmd_prove)
    p = sub.add_parser("demo", help="the main job: keys, CKKS encryption, decryption by Lattigo, a Rubato block")
    p.add_argument("--preset", default="dna-hhe", help="CKKS preset (default: dna-hhe)")
    p.add_argument("--no-lattigo", action="store_true", help="decrypt with the model even if Go is present")
    p.add_argument("--seed", default=2026, help=f"seed of keys and sample data, {SEED_RULE} (default 2026)")
    p.set_defaults(func=cmd_demo)
    p = sub.add_parser("mutate", help="mutation testing: boundary mutants of cores/ against their family's tests",
                       description="Enumerate boundary mutants of the generators in cores/ (comparisons, "
                                   "bound-like integer constants +-1, + <-> - in modular steps) and run the "
                                   "family's tests on each, in a temporary copy of the source tree.")
    p.add_argument("targets", nargs="*", metavar="FAMILY",
                   help="families (arith ntt fft keccak sampler rubato ckks) or files under cores/ (default: all)")
    p.add_argument("--sample", type=int, help="run a random sample of K mutants")
    p.add_argument("--seed", help=f"seed of --sample, {SEED_RULE} (default 0)")
    p.add_argument("--json", default="mutate-results/mutate.json",
                   help="results file, added to: a mutant run again replaces its record (default: %(default)s)")
    p.add_argument("--timeout", type=float, help="seconds per mutant (default: 2.5 x the unmutated run + 30)")
    p.add_argument("--ops", default="cmp,const,arith", help="mutation operators (default: %(default)s)")
    p.add_argument("--checks", action="store_true", help="also mutate parameter-check code")
    p.add_argument("--match", nargs="+", metavar="TEXT",
                   help="only mutants whose id, function or source line contains TEXT")
    p.add_argument("--tests", nargs="+", metavar="FILE", help="test files for every mutant (default: the family's)")
    p.add_argument("--jobs", type=int, default=1, help="parallel workers, one tree copy each (default 1)")
    p.add_argument("--root", help="source checkout (default: the one hhe-gen is installed from)")
    p.add_argument("--keep", action="store_true", help="keep the temporary tree copies")
    p.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    p.set_defaults(func=cmd_mutate)
    p = sub.add_parser("doctor", help="check the external tools and the pip extras")
    p.set_defaults(func=cmd_doctor)

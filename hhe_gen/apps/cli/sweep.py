"""``hhe-gen sweep``: a design-space sweep on Dask (docs/sweep.md).

    hhe-gen sweep SPEC.yaml|SPEC.json -o DIR [--scheduler tcp://HOST:PORT | --workers K]
                  [--connect-timeout S] [--no-progress]

Checks the whole spec (:mod:`hhe_gen.apps.sweep.spec`), then runs every point not already ``ok``
in ``DIR/sweep.json`` on a LocalCluster (``--workers``, default the machine's cores) or on the
Dask cluster of ``--scheduler``, with a progress bar on standard error; writes every record to
``DIR/sweep.json`` as it arrives (with place and route also each design's best result to
``DIR/best.json`` and its reports to ``DIR/best/<design>/``), prints a table (and the best per
design), and draws ``DIR/pareto_lut_vs_time.png``, ``DIR/pareto_dsp_vs_throughput.png`` and (with
place and route) ``DIR/fmax_by_seed.png``.
Exit status 0 when every point is ok, 1 when some failed or timed out (their records say why),
2 for a bad spec or option.
"""

from __future__ import annotations

__all__ = ["register"]


def register(sub) -> None:
    """Add ``sweep``."""
    p = sub.add_parser("sweep", help="run a design-space sweep (synthesis / place and route jobs) on Dask")
    p.add_argument("spec", metavar="SPEC", help="the sweep spec, YAML or JSON (docs/sweep.md)")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="folder of sweep.json, best.json, best/ and the "
                   "plots; a re-run skips the points already ok there")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="use this running Dask scheduler (its workers "
                   "need hhe-gen and the YoWASP tools) instead of a LocalCluster")
    p.add_argument("--workers", type=int, metavar="K", help="LocalCluster worker processes, one job each (default: "
                   "the machine's cores)")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="S", help="seconds to reach --scheduler "
                   "before giving up (default 10)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_sweep)


def _sweep(args) -> int:
    from pathlib import Path

    from hhe_gen.apps.report import console
    from hhe_gen.apps.sweep.plots import write_plots
    from hhe_gen.apps.sweep.runner import run_sweep
    from hhe_gen.apps.sweep.spec import check_scheduler_address, load_spec
    from hhe_gen.apps.sweep.summary import print_best, print_summary
    from hhe_gen.params.errors import ParameterError
    from hhe_gen.flow.extras import require
    require("sweep", "hhe-gen sweep")
    if args.scheduler is not None:
        check_scheduler_address(args.scheduler)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ParameterError("-o", args.out, "a folder (this is a file)")
    spec = load_spec(args.spec)
    if spec.place_and_route:
        require("pnr", "hhe-gen sweep with place_and_route")
    store = run_sweep(spec, out, scheduler=args.scheduler, workers=args.workers,
                      connect_timeout=args.connect_timeout, spec_file=str(args.spec), progress=not args.no_progress)
    counts = print_summary(store)
    print_best(store)
    written, notes = write_plots(store.records.values(), out)
    for note in notes:
        console.print(note)
    for path in written:
        console.print(f"plot: {path}")
    return 0 if counts["ok"] == len(store.records) else 1

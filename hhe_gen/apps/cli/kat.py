"""``hhe-gen kat rubato``: known-answer files on the model or the simulated RTL core."""

import sys
from pathlib import Path

from hhe_gen.params import ParameterError

from .common import check_on


def cmd_kat(args):
    from hhe_gen.host.kat import (KatFileError, KatReport, check_rubato_kat_file, load_rubato_kat_file,
                                  shipped_kat_files)
    if args.cipher != "rubato":
        raise ParameterError("cipher", args.cipher, "'rubato'")
    check_on(args.on, ("model", "rtl"))
    if args.on == "rtl":
        if args.check_derivation:
            raise ParameterError("--check-derivation", True,
                                 "only with --on model (the RTL check takes each vector's inputs from the file)")
        from hhe_gen.host.kat_rtl import check_rubato_kat_file_rtl
        lanes = 2 if args.lanes is None else args.lanes

        def check(path):
            return check_rubato_kat_file_rtl(path, trace=args.trace, lanes=lanes,
                                             multiplier=args.multiplier or "barrett")
    else:
        if args.trace or args.lanes is not None or args.multiplier is not None:
            raise ParameterError("--trace/--lanes/--multiplier", "given",
                                 "only with --on rtl (the model always checks every layer)")

        def check(path):
            return check_rubato_kat_file(path, check_derivation=args.check_derivation)

    files = [Path(f) for f in args.files] or shipped_kat_files()
    if not files:
        print("hhe-gen: error: the shipped Rubato KAT files are missing from the installation "
              "(hhe_gen/data/kat/rubato); reinstall hhe-gen or name KAT files", file=sys.stderr)
        return 2
    try:
        for path in files:                       # every file usable before the (long) checks start
            load_rubato_kat_file(path)
    except KatFileError as exc:
        print(f"hhe-gen: error: {exc}", file=sys.stderr)
        return 2
    if not args.files:
        print(f"the {len(files)} shipped Rubato KAT files: {', '.join(f.name for f in files)}")
    report = KatReport()
    for path in files:
        one = check(path)
        report.merge(one)
        if args.verbose:
            print(f"{path if args.files else path.name}: {one.summary()}")
    shown = report.mismatches if args.verbose else report.mismatches[:50]
    for m in shown:
        print(f"mismatch: {m}")
    if len(shown) < len(report.mismatches):
        print(f"... and {len(report.mismatches) - len(shown)} more mismatches (--verbose lists them all)")
    for sentence in report.skip_sentences():
        print(sentence)
    print(f"{report.vectors_checked} vectors checked, {report.mismatch_count} mismatches")
    return 1 if report.mismatches else 0


def register(sub) -> None:
    """Add this module's sub-commands to the ``hhe-gen`` parser."""
    p = sub.add_parser("kat", help="check known-answer-test files (default: the shipped Rubato set) on the model or RTL",
                       description="Check Rubato known-answer-test files: every field of every vector is "
                                   "recomputed from the vector's own key, nonce, counter and noise seed. "
                                   "Without FILE the set shipped with hhe-gen is checked. Exit status: 0 all "
                                   "agree, 1 mismatches, 2 unusable file or option.")
    p.add_argument("cipher", choices=["rubato"], help="the cipher of the files (rubato)")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="KAT JSON files (format rubato-kat/1); default: the shipped set, one file per parameter set")
    p.add_argument("--on", default="model",
                   help="model (default): the golden model | rtl: the Rubato core in Amaranth simulation")
    p.add_argument("--check-derivation", action="store_true",
                   help="model: also require the inputs (key, nonce, counter, noise seed, message) to be "
                        "the ones the shipped set's label rule derives; default: take them from the file")
    p.add_argument("--trace", action="store_true",
                   help="rtl: compare the state after every layer too (the model always does)")
    p.add_argument("--lanes", type=int, help="rtl: lanes of the Rubato core, a divisor of n (default 2)")
    p.add_argument("--multiplier",
                   help="rtl: the core's multipliers, barrett (default) or butterfly "
                        "(the multi-field butterfly's Z_t mode)")
    p.add_argument("--verbose", action="store_true",
                   help="print one result line per file and every mismatch (default: at most 50 mismatches)")
    p.set_defaults(func=cmd_kat)
    # "kat rubato --on rtl FILE...": argparse (before Python 3.12.7) fills an optional positional
    # list before the first option and then leaves later words unrecognised; they are files too.
    kat_parse_known_args = p.parse_known_args

    def kat_parse_files_after_options(args=None, namespace=None):
        namespace, extras = kat_parse_known_args(args, namespace)
        namespace.files = list(namespace.files or []) + [a for a in extras if not a.startswith("-")]
        return namespace, [a for a in extras if a.startswith("-")]
    p.parse_known_args = kat_parse_files_after_options

"""``hhe-gen``: the command line of hhe-gen.

    hhe-gen params [PRESET] [--json]
    hhe-gen primes --n N --bits B --count C [--form ntt|dna-hhe|abc-fhe] [--json]
    hhe-gen kat rubato [FILE...] [--on model|rtl] [--check-derivation] [--trace] [--lanes L]
                       [--multiplier M] [--verbose]
    hhe-gen ckks keygen  [--params P] [--seed S] -o keys.json
    hhe-gen ckks encrypt [--params P] --keys keys.json --in slots.json [--mode pk|sk] [--seed S] -o ct.json
    hhe-gen ckks decrypt [--params P] --keys keys.json --in ct.json -o slots.json
    hhe-gen generate ntt --n N --lanes P [--bits W --count C | --primes q,...] [--reducer KIND]
                         [--banking dual|single] [--twiddles rom|otf] [--arch iterative|sdf|mdc [--direction D]] -o DIR
    hhe-gen generate ifft|fft|encoder|decoder --n N --lanes P [--width W --frac-bits F]
                         [--log-scale S] [--bits B --count L | --primes q,...] -o DIR
                         (both: [--vectors K] [--seed S] [--keep-src]; vectors come with a testbench)
    hhe-gen bench [GROUP...] [--quick] [--json FILE]
    hhe-gen prove [GROUP...] [--quick] [--json FILE] [--workdir DIR] [--timeout S] [--only NAME...]
    hhe-gen mutate [FAMILY...] [--sample K] [--seed S] [--json FILE]
    hhe-gen demo [--preset P] [--no-lattigo] [--seed S]
    hhe-gen doctor

Every bad parameter ends the command with a one-line error naming it and exit status 2; so does a
file that cannot be read or written.  Output files are written whole or not at all (a temporary file
beside them, renamed when complete).

- ``--seed``: the same rule for every command (:func:`parse_seed`): an integer 0 .. 2^256 - 1,
  decimal or 0x hex.
- ``ckks encrypt`` / ``decrypt`` take N and Q from the keys file (the scale from its
  LogDefaultScale, which keygen writes, or from the preset with these N and Q); ``--params``, if
  given, must match the keys.  ``encrypt`` refuses slot values too large for Delta and Q
  (:func:`hhe_gen.models.ckks.encode`).
"""

import argparse
import json
import sys
from pathlib import Path

from hhe_gen.params import ParameterError

__all__ = ["main"]


# -- helpers ---------------------------------------------------------------------------------------
def _load_json(path: str, what: str):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ParameterError(what, path, "an existing JSON file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParameterError(what, path, f"valid JSON ({exc})") from None
    except OSError as exc:
        raise ParameterError(what, path, f"a readable JSON file ({exc.strerror or exc})") from None


def _params(spec: str):
    """A preset name or a parameters JSON file in the interchange format."""
    from hhe_gen.params import CKKSParams, preset
    if spec.endswith(".json") or Path(spec).is_file():
        d = _load_json(spec, "--params")
        if not isinstance(d, dict) or ("LogN" not in d and any(k in d for k in ("sk", "c0", "re"))):
            raise ParameterError("--params", spec, 'a parameters JSON object {"LogN", "Q", "LogDefaultScale"} '
                                 f"({_what_file(d)})")
        return CKKSParams.from_interchange(d, name=Path(spec).stem)
    return preset(spec)


def _check_output(out: str | None):
    """Refuse an output file that cannot be written before any work is done."""
    if out in (None, "-"):
        return
    path = Path(out)
    if path.is_dir():
        raise ParameterError("-o", out, "a file name (this is a directory)")
    if not path.parent.is_dir():
        raise ParameterError("-o", out, f"a file in an existing directory ({path.parent} does not exist)")


def _write(data, out: str | None):
    """JSON to stdout, or to ``out`` atomically: a temporary file beside it, renamed when complete."""
    text = json.dumps(data) + "\n"
    if out in (None, "-"):
        sys.stdout.write(text)
        return
    import os
    import tempfile
    _check_output(out)
    path = Path(out)
    tmp = None
    try:
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp",
                                         delete=False) as f:
            tmp = f.name
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise ParameterError("-o", out, f"a writable file ({exc.strerror or exc})") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


SEED_RULE = "an integer 0 .. 2^256 - 1 (decimal or 0x hex)"


def parse_seed(text, option: str = "--seed") -> int | None:
    """The one rule of every ``--seed`` option: an integer 0 .. 2^256 - 1, decimal or 0x hex.

    ``None`` (option not given) stays ``None``; an int (an argparse default) is range-checked.
    """
    if text is None:
        return None
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        s = str(text).strip()
        try:
            value = int(s[2:], 16) if s[:2].lower() == "0x" else int(s, 10)
        except ValueError:
            raise ParameterError(option, text, SEED_RULE) from None
    if not 0 <= value < 1 << 256:
        raise ParameterError(option, text, SEED_RULE)
    return value


def _seed_or_fresh(seed: int | None) -> int:
    if seed is None:
        import secrets
        return secrets.randbits(256)
    return seed


def _check_on(on: str, allowed=("model",)):
    if on not in allowed:
        raise ParameterError("--on", on, " or ".join(repr(a) for a in allowed)
                             + ("" if "rtl" in allowed else " (the RTL path arrives with the hardware cores)"))


# -- commands --------------------------------------------------------------------------------------
def cmd_params(args):
    from hhe_gen.params import PRESETS, preset
    from hhe_gen.apps.report import print_table
    if not args.preset:
        rows = [(name, desc) for name, (_, desc) in PRESETS.items()]
        if args.json:
            _write({name: preset(name).summary() for name in PRESETS}, None)
        else:
            print_table("CKKS presets (hhe-gen params NAME for the primes)", ["name", "description"], rows)
        return 0
    p = preset(args.preset)
    if args.json:
        _write({**p.summary(), **p.interchange()}, None)
        return 0
    s = p.summary()
    print_table(f"preset {p.name}", ["field", "value"], [(k, v) for k, v in s.items()])
    print_table("primes", ["i", "q", "bits", "q mod 2N"],
                [(i, q, q.bit_length(), q % (2 * p.n)) for i, q in enumerate(p.moduli)])
    print(json.dumps(p.interchange()))
    return 0


def cmd_primes(args):
    from hhe_gen.params import abc_fhe_primes, dna_hhe_primes, ntt_primes
    from hhe_gen.apps.report import print_table
    if args.form == "ntt":
        rows = [{"q": q, "bits": q.bit_length()} for q in ntt_primes(args.n, args.bits, args.count)]
    elif args.form == "dna-hhe":
        found = dna_hhe_primes(args.bits, args.n)[:args.count]
        rows = [{"q": p.q, "bits": p.q.bit_length(), "bnd": p.bnd, "delta": p.delta, "mu": p.mu} for p in found]
    else:
        found = [p for e in (args.bits - 1, args.bits) for p in abc_fhe_primes(args.n, e)
                 if p.q.bit_length() == args.bits]
        found = sorted({p.q: p for p in found}.values(), key=lambda p: p.q)[:args.count]
        rows = [{"q": p.q, "bits": p.q.bit_length(), "exponent": p.exponent,
                 "kk": " ".join(f"{'+' if s > 0 else '-'}2^{e}" for s, e in p.kk_terms)} for p in found]
    if len(rows) < args.count:
        raise ParameterError("--count", args.count,
                             f"at most {len(rows)} primes of form {args.form} with {args.bits} bits at N = {args.n}")
    if args.json:
        _write(rows, None)
    else:
        print_table(f"{len(rows)} primes, form {args.form}, N = {args.n}", list(rows[0]),
                    [list(r.values()) for r in rows])
    return 0


def cmd_kat(args):
    from hhe_gen.host.kat import (KatFileError, KatReport, check_rubato_kat_file, load_rubato_kat_file,
                                  shipped_kat_files)
    if args.cipher != "rubato":
        raise ParameterError("cipher", args.cipher, "'rubato'")
    _check_on(args.on, ("model", "rtl"))
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


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _int_rows(value, field: str, where: str, optional: bool = False):
    """A JSON list of rows of integers (the shape only; the model checks counts and ranges)."""
    if optional and value in (None, []):
        return
    if not isinstance(value, list) or not all(isinstance(r, list) for r in value):
        raise ParameterError(field, f"<{type(value).__name__}>", f"a list of rows of integers (in {where})")
    for i, row in enumerate(value):
        bad = next((x for x in row if not _is_int(x)), None)
        if bad is not None:
            raise ParameterError(f"{field}[{i}]", bad, f"integer residues (in {where})")


def _what_file(d) -> str:
    if not isinstance(d, dict):
        return f"this file holds a JSON {type(d).__name__}"
    if "sk" in d:
        return "this file holds keys"
    if "c0" in d:
        return "this file holds a ciphertext"
    if "re" in d:
        return "this file holds slot values"
    if "LogN" in d:
        return "this file holds parameters"
    return "fields: " + ", ".join(list(d)[:6])


def _check_keys_json(d, path: str):
    if not isinstance(d, dict) or "sk" not in d:
        raise ParameterError("--keys", path, 'a keys JSON object {"N", "Q", "sk", "pk0", "pk1"} '
                             f"({_what_file(d)})")
    if "N" in d and not _is_int(d["N"]):
        raise ParameterError("N", d["N"], f"the ring degree, an integer (in {path})")
    if "Q" in d and (not isinstance(d["Q"], list) or not all(_is_int(q) for q in d["Q"])):
        raise ParameterError("Q", "<not a list of integers>", f"the list of primes (in {path})")
    sk = d["sk"]
    if not isinstance(sk, list) or not all(_is_int(x) for x in sk):
        raise ParameterError("sk", f"<{type(sk).__name__}>", f"a list of N integers -1, 0 or 1 (in {path})")
    _int_rows(d.get("pk0"), "pk0", path, optional=True)
    _int_rows(d.get("pk1"), "pk1", path, optional=True)


def _check_ciphertext_json(d, path: str):
    if not isinstance(d, dict) or "c0" not in d:
        hint = "; encrypt it first" if isinstance(d, dict) and "re" in d else ""
        raise ParameterError("--in", path, 'a ciphertext JSON object {"scale", "form", "c0", "c1"} '
                             f"({_what_file(d)}{hint})")
    _int_rows(d["c0"], "c0", path)
    _int_rows(d.get("c1"), "c1", path)


def _slots_json(d, path: str) -> list[complex]:
    """Slot values {"re": [...], "im": [...]}: JSON numbers, finite; im missing / null / [] = 0."""
    import math
    if not isinstance(d, dict) or "re" not in d:
        raise ParameterError("--in", path, f'slot values {{"re": [...], "im": [...]}} ({_what_file(d)})')
    re_, im_ = d["re"], d.get("im") or []
    for field, values in (("re", re_), ("im", im_)):
        if not isinstance(values, list):
            raise ParameterError(field, f"<{type(values).__name__}>", f"a list of numbers (in {path})")
        for i, x in enumerate(values):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise ParameterError(f"{field}[{i}]", x, f"a JSON number (in {path})")
            if not math.isfinite(x):
                raise ParameterError(f"{field}[{i}]", x, f"a finite number (in {path})")
    im_ = im_ or [0.0] * len(re_)
    if len(im_) != len(re_):
        raise ParameterError("im", f"<{len(im_)} values>", f"as many values as re ({len(re_)}) (in {path})")
    return [complex(a, b) for a, b in zip(re_, im_)]


def _describe(n, q) -> str:
    q = list(q) if isinstance(q, (list, tuple)) else q
    if isinstance(q, list) and len(q) > 4:
        return f"N={n}, Q=[{q[0]}, {q[1]}, ... {len(q)} primes]"
    return f"N={n}, Q={q}"


def _params_for_keys(spec: str | None, keys: dict, path: str):
    """--params if given (it must match the keys' N and Q), else the keys' own N and Q, with the scale
    from the keys' LogDefaultScale or from the preset with these N and Q."""
    from hhe_gen.params import PRESETS, CKKSParams, RingParams, preset
    n, q = keys.get("N"), keys.get("Q")
    if spec is not None:
        p = _params(spec)
        if (n is not None and n != p.n) or (q is not None and list(q) != list(p.moduli)):
            raise ParameterError("keys", _describe(n, q if q is not None else p.moduli),
                                 f"keys made for --params {spec} ({_describe(p.n, p.moduli)}): --params must "
                                 "match the keys (or leave --params out to use the keys' own N and Q)")
        return p
    if n is None or q is None:
        raise ParameterError("--keys", path, 'keys with "N" and "Q" (or give --params)')
    try:
        ring = RingParams(n, tuple(q))
    except ParameterError as exc:
        raise ParameterError(exc.name, exc.value, f"{exc.allowed} (in {path})") from None
    log_scale = keys.get("LogDefaultScale")
    for name in PRESETS:
        p = preset(name)
        if p.ring == ring and log_scale in (None, p.log_scale):
            return p
    if log_scale is None:
        raise ParameterError("--params", None, f"a preset or parameters file for these keys ({_describe(n, q)}): "
                             "the keys carry no LogDefaultScale and match no preset")
    try:
        return CKKSParams(ring, log_scale, name=Path(path).stem)
    except ParameterError as exc:
        raise ParameterError(exc.name, exc.value, f"{exc.allowed} (in {path})") from None


def _in_file(read, data, params, path: str):
    """``read(data, params)``; a ParameterError says which file held the bad field."""
    try:
        return read(data, params)
    except ParameterError as exc:
        raise ParameterError(exc.name, exc.value, f"{exc.allowed} (in {path})") from None


def cmd_ckks(args):
    from hhe_gen.models import ckks
    from hhe_gen.params import DEFAULT_PRESET
    _check_on(args.on)
    _check_output(args.output)
    if args.op == "keygen":
        p = _params(args.params or DEFAULT_PRESET)
        keys = ckks.keygen(p, _seed_or_fresh(args.seed))
        _write({**keys.to_json(p), "LogDefaultScale": p.log_scale}, args.output)
        return 0
    keys_json = _load_json(args.keys, "--keys")
    _check_keys_json(keys_json, args.keys)
    p = _params_for_keys(args.params, keys_json, args.keys)
    keys = _in_file(ckks.KeyPair.from_json, keys_json, p, path=args.keys)
    data = _load_json(args.input, "--in")
    if args.op == "encrypt":
        slots = _slots_json(data, args.input)
        if args.level is not None:
            try:
                p.check_level(args.level)
            except ParameterError as exc:
                raise ParameterError("--level", args.level, exc.allowed) from None
        ct = ckks.encrypt_slots(p, keys, slots, _seed_or_fresh(args.seed), args.mode, args.level, args.form)
        _write(ct.to_json(), args.output)
        return 0
    _check_ciphertext_json(data, args.input)
    ct = _in_file(ckks.Ciphertext.from_json, data, p, path=args.input)
    if args.level is not None and args.level != ct.level:
        raise ParameterError("--level", args.level, f"the ciphertext's own level, {ct.level} (decrypt reads the "
                             "level from the ciphertext: leave --level out)")
    slots = ckks.decrypt_slots(p, keys.sk, ct)
    _write({"re": [z.real for z in slots], "im": [z.imag for z in slots]}, args.output)
    return 0


def _int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x, 0) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(what, text, "comma-separated integers (decimal or 0x hex)") from None


def cmd_generate(args):
    if args.core != "ntt":
        return _generate_fft(args)
    from hhe_gen.apps.generate import generate_ntt
    from hhe_gen.apps.report import console, print_table
    from hhe_gen.params.ckks import check_ring_degree
    check_ring_degree(args.n, "--n")   # the NTT core's N rule, before any prime search
    primes = _int_list(args.primes, "--primes") if args.primes else None
    res = generate_ntt(args.n, args.lanes, args.output, bits=args.bits, count=args.count, primes=primes,
                       reducer=args.reducer, banking=args.banking, twiddles=args.twiddles, arch=args.arch,
                       direction=args.direction, latency=args.latency, target=args.target, vectors=args.vectors,
                       seed=args.seed, name=args.name, keep_src=args.keep_src)
    m = res["manifest"]
    cyc = m["cycles"]
    rows = [("primes", ", ".join(str(p["q"]) for p in m["primes"]))]
    if "cycles_per_polynomial" in cyc:
        rows += [("cycles per polynomial (N/P)", cyc["cycles_per_polynomial"]),
                 ("bound (N/2)log2(N)/P", cyc["bound"]),
                 ("latency first in -> first out (fwd / inv)", f"{cyc['transform_forward']} / {cyc['transform_inverse']}")]
    elif "transform_forward" in cyc:
        rows += [("transform cycles (fwd / inv)", f"{cyc['transform_forward']} / {cyc['transform_inverse']}"),
                 ("bound (N/2)log2(N)/P", cyc["bound"]), ("ratio", cyc["ratio_to_bound"]),
                 ("command cycles (fwd)", cyc["command_forward"])]
    else:
        rows += [(k.replace("_", " "), v) for k, v in cyc.items() if isinstance(v, (int, float, str))]
    print_table(f"{m['core']} {args.arch} N={m['parameters']['n']} P={m['parameters']['lanes']} "
                f"({m['parameters']['reducer']})",
                ["item", "value"], [*rows, *[(k, v) for k, v in res["paths"].items() if v]])
    console.print(f"written to {args.output}")
    return 0


def _generate_fft(args):
    from hhe_gen.apps.generate_fft import generate_fft
    from hhe_gen.apps.report import console, print_table
    primes = _int_list(args.primes, "--primes") if args.primes else None
    res = generate_fft(args.core, args.n, args.lanes, args.output, width=args.width, frac_bits=args.frac_bits,
                       rounding=args.rounding, log_scale=args.log_scale, bits=args.bits,
                       count=args.count, primes=primes, latency=args.latency, target=args.target,
                       vectors=args.vectors, seed=args.seed, name=args.name, keep_src=args.keep_src)
    m = res["manifest"]
    cyc = m["cycles"]
    rows = [(k.replace("_", " "), v) for k, v in cyc.items() if isinstance(v, (int, float))]
    print_table(f"{args.core} N={args.n} P={args.lanes}", ["item", "value"],
                [*rows, *[(k, v) for k, v in res["paths"].items() if v]])
    console.print(f"written to {args.output}")
    return 0


def cmd_bench(args):
    from hhe_gen.apps import bench as benchmarks
    from hhe_gen.apps.report import bench_tables, console, show, write_json
    selected = benchmarks.cases(args.groups or None, quick=args.quick)
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
    path = write_json(args.json, {"results": results})
    console.print(f"results written to {path}")
    return 1 if any("error" in r for r in results) else 0


def cmd_prove(args):
    from hhe_gen.apps import prove
    from hhe_gen.apps.report import console, show, write_json
    records = prove.run_proofs(args.groups or None, quick=args.quick, workdir=args.workdir,
                               timeout=args.timeout, names=args.only or None)
    show(prove.summary_table(records))
    path = write_json(args.json, {"results": records})
    console.print(f"results written to {path}")
    return 0 if all(r["ok"] for r in records) else 1


def cmd_demo(args):
    from hhe_gen.apps.demo import run_demo
    return run_demo(preset_name=args.preset, use_lattigo=not args.no_lattigo, seed=args.seed)


def cmd_doctor(args):
    from hhe_gen.apps.report import print_table
    from hhe_gen.flow.doctor import check
    statuses = check()
    print_table("toolchain", ["tool", "found", "kind", "version", "compiled (YoWASP)", "note"],
                [(s.name, "yes" if s.found else "NO", s.kind or "-", s.version or "-",
                  {True: "yes", False: "not yet (first use compiles it)", None: "-"}.get(s.warm, "-"),
                  s.detail or "") for s in statuses])
    from hhe_gen.host.lattigo import LATTIGO_VERSION, go_available
    reason = go_available()
    print_table("Lattigo peer", ["item", "status"],
                [("go", "found" if reason is None else reason), ("lattigo", LATTIGO_VERSION)])
    return 0 if all(s.found for s in statuses) else 1


def cmd_mutate(args):
    """Mutation testing of the generators in cores/ (see :mod:`hhe_gen.apps.mutate`)."""
    from hhe_gen.apps import mutate
    from hhe_gen.apps.report import console, err_console, print_table, write_json
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
    if args.list or not muts:
        console.print(mutate.mutants_table(muts, f"{len(muts)} of {total} mutants"))
        return 0
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
        results, baselines = mutate.run_mutants(root, muts, tests=args.tests, timeout=args.timeout,
                                                jobs=args.jobs, keep=args.keep, progress=note)
    console.print(mutate.results_table(results, f"hhe-gen mutate: {len(muts)} of {total} mutants"))
    summary = mutate.summarize(results)
    print_table("per family", ["family", "mutants", "killed", "of which timeouts", "survived", "seconds"],
                [(f, s["mutants"], s["killed"], s["timeout"], s["survived"], s["seconds"])
                 for f, s in summary.items()])
    for b in baselines.values():
        if b.failures or b.dropped:
            console.print("[yellow]already failing without a mutant (deselected):[/] "
                          + ", ".join(b.failures + b.dropped))
    path = write_json(args.json, mutate.to_json(results, baselines, root=str(root), operators=list(ops),
                                                sample=args.sample, seed=args.seed, total_mutants=total))
    console.print(f"results written to {path}")
    return 0


# -- parser ----------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="hhe-gen", description="Generator of client-side HHE hardware (RNS-CKKS + Rubato).")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("params", help="list presets, or show one preset's parameters and primes")
    p.add_argument("preset", nargs="?", help="preset name (default: list every preset)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(func=cmd_params)

    p = sub.add_parser("primes", help="search primes of a given form")
    p.add_argument("--n", type=int, required=True, help="ring degree N")
    p.add_argument("--bits", type=int, required=True, help="bit length of the primes (k for dna-hhe)")
    p.add_argument("--count", type=int, default=4, help="number of primes (default 4)")
    p.add_argument("--form", choices=["ntt", "dna-hhe", "abc-fhe"], default="ntt",
                   help="ntt: any q = 1 mod 2N | dna-hhe: 2^k - 2N*bnd + 1 | abc-fhe: 2^e + kk*2N + 1, kk sparse")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_primes)

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

    p = sub.add_parser("ckks", help="CKKS key generation, encryption and decryption on interchange JSON")
    p.add_argument("op", choices=["keygen", "encrypt", "decrypt"], help="keygen | encrypt | decrypt")
    p.add_argument("--params", help="preset name or parameters JSON file (keygen default: dna-hhe; encrypt and "
                   "decrypt default: the keys' N and Q, and --params, if given, must match them)")
    p.add_argument("--keys", help="keys JSON (encrypt, decrypt)")
    p.add_argument("--in", dest="input", help="slots JSON (encrypt) or ciphertext JSON (decrypt)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument("--seed", help=f"seed for reproducible randomness, {SEED_RULE} (default: fresh)")
    p.add_argument("--mode", choices=["pk", "sk"], default="pk", help="public- or secret-key encryption")
    p.add_argument("--form", choices=["coeff", "ntt"], default="coeff", help="ciphertext form")
    p.add_argument("--level", type=int, help="encryption level 0 .. len(Q) - 1 (default: top); decrypt: "
                   "must equal the ciphertext's level")
    p.add_argument("--on", default="model", help="model (rtl arrives with the hardware)")
    p.set_defaults(func=cmd_ckks)

    p = sub.add_parser("generate", help="write a core's Verilog, JSON manifest and model test vectors")
    p.add_argument("core", choices=["ntt", "ifft", "fft", "encoder", "decoder"], help="the core to generate")
    p.add_argument("--n", type=int, required=True, help="ring degree N (NTT 2^3 .. 2^16; FFT/codec 2^4 .. 2^16)")
    p.add_argument("--lanes", type=int, default=2, help="butterfly lanes P (power of two)")
    p.add_argument("--bits", type=int, help="prime width (search --count primes of the reducer's form)")
    p.add_argument("--count", type=int, default=1, help="number of primes to search")
    p.add_argument("--primes", help="explicit primes, comma-separated (instead of --bits/--count)")
    p.add_argument("--reducer", default="barrett", help="barrett | montgomery | special-barrett | ntt-montgomery")
    p.add_argument("--banking", default="dual", help="dual | single")
    p.add_argument("--twiddles", default="rom", help="rom | otf (two small tables per prime and lane)")
    p.add_argument("--arch", default="iterative", help="NTT: iterative | sdf | mdc (pipelined, N/P cycles "
                   "per polynomial)")
    p.add_argument("--direction", default="both", help="sdf/mdc: both | forward | inverse (a pipelined core "
                   "has one direction: both writes <name>_fwd and <name>_inv)")
    p.add_argument("--width", type=int, default=29, help="FFT/codec: fixed-point width W")
    p.add_argument("--frac-bits", type=int, default=26, help="FFT/codec: fraction bits")
    p.add_argument("--rounding", default="half-up", help="FFT/codec: half-up | half-even")
    p.add_argument("--log-scale", type=int, help="encoder/decoder: Delta = 2^log_scale")
    p.add_argument("--latency", type=int, help="butterfly latency (default: the butterfly's)")
    p.add_argument("--target", default="ecp5", help="ecp5 | xilinx | generic (DSP tile size)")
    p.add_argument("--vectors", type=int, default=2, help="test polynomials per prime and direction")
    p.add_argument("--seed", default=1, help=f"seed of the test vectors, {SEED_RULE} (default 1)")
    p.add_argument("--name", help="Verilog module name")
    p.add_argument("--keep-src", action="store_true", help="keep Amaranth's src attributes (absolute paths of "
                   "this machine) in the Verilog; default: reproducible output without them")
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("bench", help="run benchmarks, write JSON and a table")
    p.add_argument("groups", nargs="*", help="benchmark groups (default: all)")
    p.add_argument("--quick", action="store_true", help="only the CI-sized cases")
    p.add_argument("--json", default="bench-results/bench.json", help="results file (default: %(default)s)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("prove", help="run the formal proofs (z3 bounds, SymbiYosys harnesses), print a table")
    p.add_argument("groups", nargs="*", help="proof groups (default: all)")
    p.add_argument("--quick", action="store_true", help="only the CI-sized proofs")
    p.add_argument("--json", default="prove-results/prove.json", help="results file (default: %(default)s)")
    p.add_argument("--workdir", default="prove-results/work", help="harnesses, .sby files and traces")
    p.add_argument("--timeout", type=float, help="seconds per tool run")
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
    p.add_argument("--json", default="mutate-results/mutate.json", help="results file (default: %(default)s)")
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

    p = sub.add_parser("doctor", help="check the external tools")
    p.set_defaults(func=cmd_doctor)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "op", None) in ("encrypt", "decrypt") and (not args.keys or not args.input):
        print(f"hhe-gen ckks {args.op}: error: --keys and --in are required", file=sys.stderr)
        return 2
    try:
        if hasattr(args, "seed"):   # one rule for every --seed option
            args.seed = parse_seed(args.seed)
        return args.func(args)
    except ParameterError as exc:
        print(f"hhe-gen: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:   # a file or folder that cannot be read or written: one line, not a traceback
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"hhe-gen: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

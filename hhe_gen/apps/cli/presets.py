"""``hhe-gen params`` and ``hhe-gen primes``: the parameter presets and the prime search."""

import json

from hhe_gen.params import ParameterError

from .common import write_json_output


def cmd_params(args):
    from hhe_gen.params import PRESETS, preset
    from hhe_gen.apps.report import print_table
    if not args.preset:
        rows = [(name, desc) for name, (_, desc) in PRESETS.items()]
        if args.json:
            write_json_output({name: preset(name).summary() for name in PRESETS}, None)
        else:
            print_table("CKKS presets (hhe-gen params NAME for the primes)", ["name", "description"], rows)
        return 0
    p = preset(args.preset)
    if args.json:
        write_json_output({**p.summary(), **p.interchange()}, None)
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
        write_json_output(rows, None)
    else:
        print_table(f"{len(rows)} primes, form {args.form}, N = {args.n}", list(rows[0]),
                    [list(r.values()) for r in rows])
    return 0


def register(sub) -> None:
    """Add this module's sub-commands to the ``hhe-gen`` parser."""
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

"""``hhe-gen ckks keygen | encrypt | decrypt | rlk | mul`` on interchange JSON files (``rlk`` makes a
relinearisation key, ``mul`` multiplies two ciphertexts, relinearises and rescales: the server side,
docs/evaluation.md).

``rlk`` writes the parameters' ``N``, ``Q``, ``P`` and ``LogDefaultScale`` beside the key's own
fields (``RelinKey.from_json`` and the Lattigo peer ignore them), and ``mul`` takes its parameters
from them when --params is not given.
"""

from pathlib import Path

from hhe_gen.host.interchange import (check_ciphertext_json, check_keys_json, describe, in_file, load_json,
                                      params_for_keys, params_from, slots_json, what_file)
from hhe_gen.params import ParameterError

from .common import SEED_RULE, check_on, check_output, params_input, seed_or_fresh, write_json_output


def cmd_ckks(args):
    from hhe_gen.models import ckks
    from hhe_gen.params import DEFAULT_PRESET
    check_on(args.on)
    check_output(args.output, ("--keys", args.keys), ("--in", args.input), ("--times", args.times),
                 ("--rlk", args.rlk), params_input(args.params))
    if args.op == "keygen":
        p = params_from(args.params or DEFAULT_PRESET)
        keys = ckks.keygen(p, seed_or_fresh(args.seed))
        write_json_output({**keys.to_json(p), "LogDefaultScale": p.log_scale}, args.output)
        return 0
    if args.op == "mul":
        return _mul(args)
    keys_json = load_json(args.keys, "--keys")
    check_keys_json(keys_json, args.keys)
    p = params_for_keys(args.params, keys_json, args.keys)
    keys = in_file(ckks.KeyPair.from_json, keys_json, p, path=args.keys)
    if args.op == "rlk":
        from hhe_gen.models import ckks_eval
        rlk = ckks_eval.relin_keygen(p, keys.sk, seed_or_fresh(args.seed))
        write_json_output({**rlk.to_json(), **_rlk_params_json(p)}, args.output)
        return 0
    data = load_json(args.input, "--in")
    if args.op == "encrypt":
        slots = slots_json(data, args.input)
        if args.level is not None:
            try:
                p.check_level(args.level)
            except ParameterError as exc:
                raise ParameterError("--level", args.level, exc.allowed) from None
        ct = ckks.encrypt_slots(p, keys, slots, seed_or_fresh(args.seed), args.mode, args.level, args.form)
        write_json_output(ct.to_json(), args.output)
        return 0
    check_ciphertext_json(data, args.input)
    ct = in_file(ckks.Ciphertext.from_json, data, p, path=args.input)
    if args.level is not None and args.level != ct.level:
        raise ParameterError("--level", args.level, f"the ciphertext's own level, {ct.level} (decrypt reads the "
                             "level from the ciphertext: leave --level out)")
    slots = ckks.decrypt_slots(p, keys.sk, ct)
    write_json_output({"re": [z.real for z in slots], "im": [z.imag for z in slots]}, args.output)
    return 0


def _mul(args):
    """``mul``: --in times --times, relinearised with --rlk and rescaled (no secret key needed)."""
    from hhe_gen.models import ckks, ckks_eval
    inputs = []
    for path, flag in ((args.input, "--in"), (args.times, "--times")):
        if path is None:
            raise ParameterError(flag, None, "a ciphertext JSON file (mul multiplies --in by --times)")
        data = load_json(path, flag)
        check_ciphertext_json(data, path)
        inputs.append((path, data))
    if args.rlk is None:
        raise ParameterError("--rlk", None, "a relinearisation key JSON file (hhe-gen ckks rlk)")
    rlk_json = load_json(args.rlk, "--rlk")
    if not isinstance(rlk_json, dict) or not isinstance(rlk_json.get("digits"), list):
        raise ParameterError("--rlk", args.rlk, 'a relinearisation key JSON object {"levelQ", "levelP", "digits"} '
                             f"(hhe-gen ckks rlk; {what_file(rlk_json)})")
    p = params_from(args.params) if args.params else _params_of(inputs, args.rlk, rlk_json)
    own = [rlk_json.get(k) for k in ("N", "Q", "P")]
    if args.params and None not in own and own != [p.n, list(p.moduli), list(p.special_moduli)]:
        raise ParameterError("--rlk", f"{describe(own[0], own[1])}, P={own[2]}",
                             f"a key made for --params {args.params} ({describe(p.n, p.moduli)}, "
                             f"P={list(p.special_moduli)}): --params must match the key (or leave --params out "
                             "to use the key's own N, Q and P)")
    cts = [in_file(ckks.Ciphertext.from_json, data, p, path=path) for path, data in inputs]
    rlk = in_file(ckks_eval.RelinKey.from_json, rlk_json, p, path=args.rlk)
    if cts[0].level != cts[1].level or cts[0].level < 1:
        raise ParameterError("--times", f"level {cts[1].level}", f"a ciphertext at the level of --in ({cts[0].level}), "
                             "which must be >= 1 (the rescale divides by the last prime)")
    write_json_output(ckks_eval.mul_relin_rescale(p, *cts, rlk).to_json(), args.output)
    return 0


def _rlk_params_json(p) -> dict:
    """What ``ckks rlk`` writes beside the key so that ``mul`` needs no --params."""
    return {"N": p.n, "Q": list(p.moduli), "P": list(p.special_moduli), "LogDefaultScale": p.log_scale}


def _params_of(inputs, rlk_path: str, rlk_json):
    """Without --params: the parameters of the relinearisation key's own ``N``, ``Q`` and ``P``
    (which ``ckks rlk`` writes; the preset with them if there is one), else, for a key without
    them (e.g. the Lattigo peer's), the one preset with key-switching primes under which both
    ciphertexts and the key are well formed; when none or several fit, --params must say."""
    from hhe_gen.models import ckks, ckks_eval
    from hhe_gen.params import PRESETS, CKKSParams, RingParams, preset
    if all(k in rlk_json for k in ("N", "Q", "P")):
        n, q, special = rlk_json["N"], rlk_json["Q"], rlk_json["P"]
        for name in PRESETS:
            p = preset(name)
            if (p.n, list(p.moduli), list(p.special_moduli)) == (n, q, special):
                return p
        try:
            return CKKSParams(RingParams(n, tuple(q)), rlk_json.get("LogDefaultScale"), tuple(special),
                              name=Path(rlk_path).stem)
        except (ParameterError, TypeError) as exc:
            allowed = exc.allowed if isinstance(exc, ParameterError) else "integers"
            raise ParameterError("--rlk", rlk_path, f"a key whose N, Q, P and LogDefaultScale are parameters "
                                 f"({allowed}), or give --params") from None
    first = inputs[0][1]["c0"]
    n = len(first[0]) if first and isinstance(first[0], list) else None
    fits, seen = [], set()
    for name in PRESETS:
        p = preset(name)
        ring = (p.n, p.moduli, p.special_moduli)
        if p.n != n or not p.special_moduli or ring in seen:
            continue
        seen.add(ring)
        try:
            for _, data in inputs:
                ckks.Ciphertext.from_json(data, p)
            ckks_eval.RelinKey.from_json(rlk_json, p)
        except ParameterError:
            continue
        fits.append(name)
    if len(fits) == 1:
        return preset(fits[0])
    what = f"N = {n}, levelQ = {rlk_json.get('levelQ')}, levelP = {rlk_json.get('levelP')}, no N, Q and P in the key"
    why = "no preset fits them" if not fits else f"the presets {', '.join(fits)} all fit them"
    raise ParameterError("--params", None, f"the parameters of --in, --times and --rlk {rlk_path} ({what}): {why}; "
                         "give --params PRESET or a parameters JSON file (the one the key was made with)")


def register(sub) -> None:
    """Add this module's sub-commands to the ``hhe-gen`` parser."""
    p = sub.add_parser("ckks", help="CKKS key generation, encryption and decryption on interchange JSON")
    p.add_argument("op", choices=["keygen", "encrypt", "decrypt", "rlk", "mul"],
                   help="keygen | encrypt | decrypt | rlk (relinearisation key) | mul (multiply, relinearise, "
                   "rescale)")
    p.add_argument("--params", help="preset name or parameters JSON file (keygen default: dna-hhe; encrypt, "
                   "decrypt and rlk default: the keys' N and Q, and --params, if given, must match them; mul "
                   "default: the one preset the ciphertexts and the rlk fit)")
    p.add_argument("--keys", help="keys JSON (encrypt, decrypt, rlk)")
    p.add_argument("--in", dest="input", help="slots JSON (encrypt) or ciphertext JSON (decrypt, mul)")
    p.add_argument("--times", help="mul: the second ciphertext JSON")
    p.add_argument("--rlk", help="mul: the relinearisation key JSON (hhe-gen ckks rlk; needs parameters with P)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument("--seed", help=f"seed for reproducible randomness, {SEED_RULE} (default: fresh)")
    p.add_argument("--mode", choices=["pk", "sk"], default="pk", help="public- or secret-key encryption")
    p.add_argument("--form", choices=["coeff", "ntt"], default="coeff", help="ciphertext form")
    p.add_argument("--level", type=int, help="encryption level 0 .. len(Q) - 1 (default: top); decrypt: "
                   "must equal the ciphertext's level")
    p.add_argument("--on", default="model", help="model, the only engine of these commands (the accelerator: "
                   "hhe-gen accel run --on amaranth|rtl|soc-sim)")
    p.set_defaults(func=cmd_ckks)

"""Reading the interchange files a user hands to hhe-gen (docs/interchange.md): parameters, keys,
ciphertexts and slot values, each checked for its shape with a one-line ``ParameterError`` that
names the field and the file, before the models check counts and ranges."""

import json
from pathlib import Path

from hhe_gen.params import ParameterError

__all__ = ["load_json", "params_from", "check_keys_json", "check_ciphertext_json", "slots_json",
           "params_for_keys", "in_file", "what_file"]


def load_json(path: str, what: str):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ParameterError(what, path, "an existing JSON file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParameterError(what, path, f"valid JSON ({exc})") from None
    except OSError as exc:
        raise ParameterError(what, path, f"a readable JSON file ({exc.strerror or exc})") from None


def params_from(spec: str):
    """A preset name or a parameters JSON file in the interchange format."""
    from hhe_gen.params import CKKSParams, preset
    if spec.endswith(".json") or Path(spec).is_file():
        d = load_json(spec, "--params")
        if not isinstance(d, dict) or ("LogN" not in d and any(k in d for k in ("sk", "c0", "re"))):
            raise ParameterError("--params", spec, 'a parameters JSON object {"LogN", "Q", "LogDefaultScale"} '
                                 f"({what_file(d)})")
        return CKKSParams.from_interchange(d, name=Path(spec).stem)
    return preset(spec)


def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def int_rows(value, field: str, where: str, optional: bool = False):
    """A JSON list of rows of integers (the shape only; the model checks counts and ranges)."""
    if optional and value in (None, []):
        return
    if not isinstance(value, list) or not all(isinstance(r, list) for r in value):
        raise ParameterError(field, f"<{type(value).__name__}>", f"a list of rows of integers (in {where})")
    for i, row in enumerate(value):
        bad = next((x for x in row if not is_int(x)), None)
        if bad is not None:
            raise ParameterError(f"{field}[{i}]", bad, f"integer residues (in {where})")


def what_file(d) -> str:
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


def check_keys_json(d, path: str):
    if not isinstance(d, dict) or "sk" not in d:
        raise ParameterError("--keys", path, 'a keys JSON object {"N", "Q", "sk", "pk0", "pk1"} '
                             f"({what_file(d)})")
    if "N" in d and not is_int(d["N"]):
        raise ParameterError("N", d["N"], f"the ring degree, an integer (in {path})")
    if "Q" in d and (not isinstance(d["Q"], list) or not all(is_int(q) for q in d["Q"])):
        raise ParameterError("Q", "<not a list of integers>", f"the list of primes (in {path})")
    sk = d["sk"]
    if not isinstance(sk, list) or not all(is_int(x) for x in sk):
        raise ParameterError("sk", f"<{type(sk).__name__}>", f"a list of N integers -1, 0 or 1 (in {path})")
    int_rows(d.get("pk0"), "pk0", path, optional=True)
    int_rows(d.get("pk1"), "pk1", path, optional=True)


def check_ciphertext_json(d, path: str):
    if not isinstance(d, dict) or "c0" not in d:
        hint = "; encrypt it first" if isinstance(d, dict) and "re" in d else ""
        raise ParameterError("--in", path, 'a ciphertext JSON object {"scale", "form", "c0", "c1"} '
                             f"({what_file(d)}{hint})")
    int_rows(d["c0"], "c0", path)
    int_rows(d.get("c1"), "c1", path)


def slots_json(d, path: str) -> list[complex]:
    """Slot values {"re": [...], "im": [...]}: JSON numbers, finite; im missing / null / [] = 0."""
    import math
    if not isinstance(d, dict) or "re" not in d:
        raise ParameterError("--in", path, f'slot values {{"re": [...], "im": [...]}} ({what_file(d)})')
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


def describe(n, q) -> str:
    q = list(q) if isinstance(q, (list, tuple)) else q
    if isinstance(q, list) and len(q) > 4:
        return f"N={n}, Q=[{q[0]}, {q[1]}, ... {len(q)} primes]"
    return f"N={n}, Q={q}"


def params_for_keys(spec: str | None, keys: dict, path: str):
    """--params if given (it must match the keys' N and Q), else the keys' own N and Q, with the scale
    from the keys' LogDefaultScale or from the preset with these N and Q."""
    from hhe_gen.params import PRESETS, CKKSParams, RingParams, preset
    n, q = keys.get("N"), keys.get("Q")
    if spec is not None:
        p = params_from(spec)
        if (n is not None and n != p.n) or (q is not None and list(q) != list(p.moduli)):
            raise ParameterError("keys", describe(n, q if q is not None else p.moduli),
                                 f"keys made for --params {spec} ({describe(p.n, p.moduli)}): --params must "
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
        raise ParameterError("--params", None, f"a preset or parameters file for these keys ({describe(n, q)}): "
                             "the keys carry no LogDefaultScale and match no preset")
    try:
        return CKKSParams(ring, log_scale, name=Path(path).stem)
    except ParameterError as exc:
        raise ParameterError(exc.name, exc.value, f"{exc.allowed} (in {path})") from None


def in_file(read, data, params, path: str):
    """``read(data, params)``; a ParameterError says which file held the bad field."""
    try:
        return read(data, params)
    except ParameterError as exc:
        raise ParameterError(exc.name, exc.value, f"{exc.allowed} (in {path})") from None

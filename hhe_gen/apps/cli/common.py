"""What every ``hhe-gen`` command shares: output files written whole or not at all and never over
one of the command's inputs, the one ``--seed`` rule, the ``--on`` check, integer lists and a part's parameter names turned into
options."""

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from hhe_gen.params import ParameterError

__all__ = ["NTT_MEMORY", "SEED_RULE", "check_on", "check_output", "int_list", "options_named", "params_input",
           "parse_seed", "same_file", "seed_or_fresh", "write_json_output"]

NTT_MEMORY = {"auto": None, "in-place": True, "stream": False}
"""``--ntt`` of the accelerator commands: :class:`hhe_gen.engine.config.AcceleratorConfig`'s ``ntt_in_place``."""
SEED_RULE = "an integer 0 .. 2^256 - 1 (decimal or 0x hex)"


def check_output(out: str | None, *inputs, option: str = "-o"):
    """Refuse, before any work is done, an output file that cannot be written or that is one of the
    command's input files (writing it would replace that input: ``-o keys.json`` after ``--keys
    keys.json``).

    ``inputs`` are ``(flag, path)`` pairs, e.g. ``("--keys", args.keys)``; a pair whose path is
    None is skipped.  The same file is the same resolved path or, when both exist, the same file
    on disk (:func:`os.path.samefile`: a hard link or a symbolic link to it counts).
    """
    if out in (None, "-"):
        return
    path = Path(out)
    if path.is_dir():
        raise ParameterError(option, out, "a file name (this is a directory)")
    if not path.parent.is_dir():
        raise ParameterError(option, out, f"a file in an existing directory ({path.parent} does not exist)")
    for flag, given in inputs:
        if given is not None and given != "-" and same_file(out, given):
            raise ParameterError(option, out, f"a file other than the input {flag} {given} "
                                 "(writing it would replace that input)")


def same_file(a, b) -> bool:
    """True if the paths ``a`` and ``b`` name one file: the same resolved path or, when both exist,
    the same file on disk."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def params_input(spec: str | None):
    """``("--params", spec)`` when ``--params`` names a file (not a preset), for :func:`check_output`."""
    return ("--params", spec if spec is not None and Path(spec).is_file() else None)


def write_json_output(data, out: str | None):
    """JSON to stdout, or to ``out`` atomically: a temporary file beside it, renamed when complete."""
    text = json.dumps(data) + "\n"
    if out in (None, "-"):
        sys.stdout.write(text)
        return
    from hhe_gen.apps.report import write_atomic
    check_output(out)
    try:
        write_atomic(out, text)
    except OSError as exc:
        raise ParameterError("-o", out, f"a writable file ({exc.strerror or exc})") from None


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


def seed_or_fresh(seed: int | None) -> int:
    if seed is None:
        import secrets
        return secrets.randbits(256)
    return seed


def check_on(on: str, allowed=("model",)):
    """Refuse an ``--on`` engine that the command does not have (``allowed``)."""
    if on not in allowed:
        raise ParameterError("--on", on, " or ".join(repr(a) for a in allowed)
                             + ("" if "rtl" in allowed else " (the RTL runs through hhe-gen accel run --on rtl)"))


def int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x, 0) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(what, text, "comma-separated integers (decimal or 0x hex)") from None


@contextmanager
def options_named(options: dict):
    """Re-raise a ParameterError about one of ``options``' keys (a part's own name for a
    parameter) naming the command-line option ``options[name]`` instead."""
    try:
        yield
    except ParameterError as exc:
        if exc.name not in options:
            raise
        raise ParameterError(options[exc.name], exc.value, exc.allowed) from None

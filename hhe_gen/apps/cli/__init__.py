"""``hhe-gen``: the command line of hhe-gen.

    hhe-gen params [PRESET] [--json]
    hhe-gen primes --n N --bits B --count C [--form ntt|dna-hhe|abc-fhe] [--json]
    hhe-gen kat rubato [FILE...] [--on model|rtl] [--check-derivation] [--trace] [--lanes L]
                       [--multiplier M] [--verbose]
    hhe-gen --version
    hhe-gen ckks keygen  [--params P] [--seed S] -o keys.json
    hhe-gen ckks encrypt [--params P] --keys keys.json --in slots.json [--mode pk|sk] [--seed S] -o ct.json
    hhe-gen ckks decrypt [--params P] --keys keys.json --in ct.json -o slots.json
    hhe-gen ckks rlk     [--params P] --keys keys.json [--seed S] -o rlk.json
    hhe-gen ckks mul     [--params P] --in ct.json --times ct.json --rlk rlk.json -o ct.json
    hhe-gen accel asm FILE.s [--params P] [--buffers B] -o OUT.hex|OUT.bin
    hhe-gen accel disasm FILE.hex|FILE.bin [--params P] [--buffers B]
    hhe-gen accel program NAME [--params P] [--level L] [--buffers B] [-o OUT.s|OUT.hex|OUT.bin]
    hhe-gen accel run --program NAME|FILE [--on model|rtl] [--params P] [--keys keys.json]
                      [--in slots.json|ct.json] [--seed S] [--mode pk|sk] [--level L] [--buffers B]
                      [-o OUT.json] [--json REPORT]
    hhe-gen accel plan [--params P] [--lanes L] [--buffers B] [--reducer K] [--twiddles otf|rom]
                       [--device D] [--reserve R] [--json FILE]
    hhe-gen net receive --port P [--host H] [--timeout S] [--rows R] -o ct.json
    hhe-gen net send --in ct.json --to HOST:PORT [--message ID] [--segment K] [--params P]
    hhe-gen soc sim [--params P] [--lanes L] [--rubato SET|none] [--no-lattigo] [--accel-clock HZ] [--json FILE]
    hhe-gen soc build --board ecpix5|arty-a7 [--params P] [--lanes L] [--rubato SET|none] [--accel-mhz F] [-o DIR]
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
    hhe-gen cache [--prune] [--max-gb G] [--older-than DAYS] [--json FILE]
    hhe-gen sweep SPEC.yaml|SPEC.json -o DIR [--scheduler tcp://HOST:PORT | --workers K] [--connect-timeout S]
                  [--no-progress]

Every bad parameter ends the command with a one-line error naming it and exit status 2; so does a
file that cannot be read or written.  Output files are written whole or not at all (a temporary file
beside them, renamed when complete).

- ``--seed``: the same rule for every command (:func:`parse_seed`): an integer 0 .. 2^256 - 1,
  decimal or 0x hex.
- ``ckks encrypt`` / ``decrypt`` take N and Q from the keys file (the scale from its
  LogDefaultScale, which keygen writes, or from the preset with these N and Q); ``--params``, if
  given, must match the keys.  ``encrypt`` refuses slot values too large for Delta and Q
  (:func:`hhe_gen.models.ckks.encode`).
- ``accel`` (docs/isa.md): NAME is key_setup, encrypt_pk, encrypt_sk or decrypt (``run`` also takes
  ``encrypt`` with ``--mode``); ``run`` places the keys (or ``ckks keygen``'s from ``--seed``), the
  seed and the input by the memory map, runs key_setup first, and writes the ciphertext (NTT form)
  or the slots; an engine error exits 1 with its cause and position and writes nothing.
  ``run --on`` model (the ISA model), amaranth, rtl (= verilator) or soc-sim; every run other than
  the model's is compared with the ISA model.
- ``ckks mul`` takes N, Q and P from the relinearisation key (``ckks rlk`` writes them), else from
  the one preset its inputs fit; ``--params``, if given, must match the key.
- No output file (``-o``) may be one of the command's input files.

``python -m hhe_gen`` (and ``python -m hhe_gen.apps.cli``) is the same as ``hhe-gen``.

One module per group of sub-commands (:data:`COMMANDS`), each with a ``register(sub)``;
``common`` holds what they share; the interchange files are read by :mod:`hhe_gen.host.interchange`.
"""

import argparse
import sys

from hhe_gen.params import ParameterError

from . import accel, cache, ckks, generate, kat, net, presets, runs, soc, sweep
from .common import parse_seed

__all__ = ["main", "build_parser", "parse_seed", "version"]

#: the modules that add sub-commands, in the order ``hhe-gen --help`` lists them
COMMANDS = (presets, kat, ckks, accel, net, soc, generate, runs, cache, sweep)


def version() -> str:
    """The installed hhe-gen's version (its distribution metadata; the package's ``__version__``
    when it runs from a source tree that is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version
    try:
        return dist_version("hhe-gen")
    except PackageNotFoundError:
        from hhe_gen import __version__
        return __version__


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="hhe-gen", description="Generator of client-side HHE hardware (RNS-CKKS + Rubato).")
    ap.add_argument("--version", action="version", version=f"hhe-gen {version()}",
                    help="print hhe-gen's version and exit")
    sub = ap.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(sub)
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


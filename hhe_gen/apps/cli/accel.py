"""``hhe-gen accel asm | disasm | program | run``: the accelerator engine's programs from the command
line (docs/isa.md): assemble and disassemble program images, print the generated CKKS programs
with their memory map, and run a program on an engine with interchange files in and out.

- ``asm FILE.s -o OUT``: OUT ends in .hex / .mem (``$readmemh`` text) or .bin (64-bit
  little-endian words); the engine's shape (primes, log_scale, slots) comes from ``--params``
  (:func:`hhe_gen.engine.model.shape_for_params`), its buffer count from ``--buffers``.
- ``program NAME``: one of :data:`hhe_gen.engine.programs.PROGRAMS`; stdout (or OUT.s) is
  assembly text that ``asm`` reads back, the memory map and buffer needs as ``;`` comments.
- ``run --program NAME|FILE``: the keys (``--keys``, or ``ckks keygen``'s rule from ``--seed``),
  the seed and the input (``--in``: slots for an encryption, a ciphertext for ``decrypt``) are
  placed by the memory map; ``key_setup`` runs first (then a soft reset), then the program;
  the output is read back into the interchange format (a ciphertext in NTT form, or slots).
  A program FILE (.s / .asm / .hex / .mem / .bin) is read as an encryption when ``--in`` holds
  slots and as a decryption when it holds a ciphertext.  An engine error ends the command with
  exit status 1, its cause and position on one line, and no output file.

Every sub-command takes the accelerator's options (:mod:`.configure`): the same options build the
accelerator ``generate accel`` writes, and programs are assembled for its shape.  ``run --on`` is
a backend of :mod:`hhe_gen.client.backends` (``model``, ``amaranth``, ``rtl`` = ``verilator``,
``soc-sim``) running that accelerator; every run is compared with the ISA model
(:class:`hhe_gen.client.compare.CheckedBackend`), and a difference is an error (exit status 1).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.params import ParameterError

from .common import SEED_RULE, seed_or_fresh, write_json_output

__all__ = ["ON", "RunResult", "Outcome", "register"]

ON = ("model", "amaranth", "rtl", "verilator", "soc-sim")
"""The backends ``accel run --on`` takes (:data:`hhe_gen.client.backends.BACKENDS`)."""


_TEXT = (".s", ".asm")
_HEX = (".hex", ".mem")
_BIN = (".bin",)
_IMAGE = _HEX + _BIN
_PROGRAM_FILE = _TEXT + _IMAGE


class _FileError(ParameterError):
    """A ParameterError (an AssemblyError most often) with the file it came from in front."""

    def __init__(self, path, exc: ParameterError):
        self.name, self.value, self.allowed = exc.name, exc.value, exc.allowed
        ValueError.__init__(self, f"{path}: {exc}")


# -- files --------------------------------------------------------------------------------------
def _suffix(path) -> str:
    return Path(str(path)).suffix.lower()


def _check_file_out(out, option: str, suffixes=None, what: str = "", inputs=()):
    """Refuse an output name that cannot be written, has the wrong suffix or is one of the
    command's ``inputs`` ((flag, path) pairs: :func:`.common.check_output`) before any work."""
    from .common import check_output
    if out in (None, "-"):
        raise ParameterError(option, out, "a file name")
    if suffixes is not None and _suffix(out) not in suffixes:
        raise ParameterError(option, out, f"a file name ending in {', '.join(suffixes)}{what}")
    check_output(out, *inputs, option=option)


def _write_file(out, content, option: str) -> None:
    """Text or bytes into ``out`` whole or not at all (a temporary file beside it, renamed)."""
    from hhe_gen.apps.report import write_atomic
    _check_file_out(out, option)
    try:
        write_atomic(out, content)
    except OSError as exc:
        raise ParameterError(option, out, f"a writable file ({exc.strerror or exc})") from None


def _write_image(out, words, option: str = "-o", about: dict | None = None) -> str:
    from hhe_gen.engine import asm
    if _suffix(out) in _HEX:
        _write_file(out, asm.image_hex(words, about), option)
        return "hex image"
    _write_file(out, asm.image_bytes(words), option)
    return "binary image"


def _read(path, option: str, binary: bool = False):
    p = Path(path)
    if not p.is_file():
        raise ParameterError(option, path, "an existing file" + (f" ({p.name} is a directory)" if p.is_dir() else
                                                                 f" ({p.name} does not exist)"))
    try:
        return p.read_bytes() if binary else p.read_text()
    except UnicodeDecodeError:
        raise ParameterError(option, path, "a text file (assembly or hex image)") from None
    except OSError as exc:
        raise ParameterError(option, path, f"a readable file ({exc.strerror or exc})") from None


def _read_words(path, option: str, shape=None) -> list[int]:
    """The words of a program file: assembled (.s / .asm) or read (.hex / .mem / .bin)."""
    from hhe_gen.engine import asm
    suffix = _suffix(path)
    allowed = _PROGRAM_FILE if shape is not None else _IMAGE
    if suffix not in allowed:
        hint = "" if shape is not None else " (assemble a .s file with hhe-gen accel asm first)"
        raise ParameterError(option, path, "a program file ending in " + ", ".join(allowed) + hint)
    try:
        if suffix in _TEXT:
            return asm.assemble(_read(path, option), shape)
        if suffix in _HEX:
            return asm.words_from_hex(_read(path, option))
        return asm.words_from_bytes(_read(path, option, binary=True))
    except ParameterError as exc:
        if isinstance(exc, _FileError) or exc.name == option:
            raise
        raise _FileError(path, exc) from None


# -- the engine's shape and programs ---------------------------------------------------------------
def _params(spec):
    from hhe_gen.host.interchange import params_from
    from hhe_gen.params import DEFAULT_PRESET
    return params_from(spec or DEFAULT_PRESET)


def _config(args, params=None):
    """The resolved accelerator of the options (:func:`.configure.config_from_args`)."""
    from .configure import config_from_args
    return config_from_args(args, params=params)


def _level(params, level):
    if level is None:
        return params.max_level
    try:
        return params.check_level(level)
    except ParameterError as exc:
        raise ParameterError("--level", level, exc.allowed) from None


def _program_names() -> str:
    from hhe_gen.engine.programs import PROGRAMS
    return ", ".join(PROGRAMS)


def _generate(name: str, params, shape, level: int):
    """The generated program ``name`` at ``level``; a refusal names the option that fixes it."""
    from hhe_gen.engine import programs
    if name not in programs.PROGRAMS:
        raise ParameterError("program", name, f"one of {_program_names()}")
    try:
        return getattr(programs, name)(params, shape, level=level)
    except ParameterError as exc:
        if exc.name == "buffers":
            raise ParameterError("--buffers", shape.buffers, exc.allowed) from None
        if exc.name == "slots":
            raise ParameterError("--level", level, f"at most {shape.slots - 1}: the engine has {shape.slots} "
                                 f"prime slots and {name} binds one per row") from None
        raise


def _map_lines(program, shape) -> list[str]:
    """The memory map and the buffer needs of a generated program, as ``;`` comment lines."""
    from hhe_gen.engine.memory_map import REGIONS
    layout = program.layout
    per_prime = {r.name: r.per_prime for r in REGIONS}
    out = [f"; memory map: blocks of N = {layout.n} 64-bit words, {layout.primes} primes, "
           f"{layout.size} words from {layout.base:#x}"]
    width = len(f"{layout.base + layout.size:#x}")
    for region, row, address in layout.describe():
        out.append(f";   {address:#0{width}x}  {region}" + (f"[{row}]" if per_prime[region] else ""))
    sets = len(program.allocation.sets)
    out.append(f"; buffers: at least {program.min_buffers} for {program.name} with {program.rows} "
               f"row{'s' if program.rows != 1 else ''}; "
               f"this engine has {shape.buffers}, the program uses {program.allocation.used} "
               f"({sets} working set{'s' if sets != 1 else ''})")
    return out


# -- backends -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunResult:
    """What one program did on the engine.

    Members
    -------
    name : str            the program's name (or file)
    words : tuple[int]    its instruction words
    seen : int            instructions the engine saw
    executed : int        instructions executed (not dropped)
    units : dict          executed instructions by unit (or "serialising" / "none")
    cause : str           the error status after the program (``NONE``: no error)
    position : int | None the failing instruction's position in the program
    notify : tuple[int]   the notify codes raised, in order
    cycles : int | None   engine cycles from the first word to idle (RTL only)
    """
    name: str
    words: tuple
    seen: int
    executed: int
    units: dict
    cause: str
    position: int | None
    notify: tuple
    cycles: int | None = None

    @property
    def ok(self) -> bool:
        return self.cause == "NONE"


@dataclass(frozen=True)
class Outcome:
    """What a run left: ``setup`` (key_setup's result, None if it did not run), ``program`` (None
    if key_setup failed and the program did not run), the memory afterwards and the engine's word
    width (what decrypt's slots are read with)."""
    setup: RunResult | None
    program: RunResult | None
    memory: dict
    word_bits: int

    @property
    def runs(self) -> tuple:
        return tuple(r for r in (self.setup, self.program) if r is not None)

    @property
    def failed(self) -> RunResult | None:
        return next((r for r in self.runs if not r.ok), None)


def _unit_class(word: int) -> str:
    from hhe_gen.cores.engine import isa
    ins = isa.decode(word)
    info = ins.info
    if info is None:
        return "unknown"
    if ins.opcode in isa.SERIALISING:
        return "serialising"
    return info.unit.name.lower()


def _result(name: str, words, run) -> RunResult:
    """The :class:`RunResult` of a backend's run of ``words``: an error stops the program at its
    position (a DATA_RANGE word itself executes)."""
    from hhe_gen.cores.engine import isa
    cause = isa.ErrorCause(run.error) if run.error in set(isa.ErrorCause) else None
    if run.error and (cause is None or run.position is None):
        label = cause.name if cause is not None else f"FIRMWARE_{run.error}"
        return RunResult(name, tuple(words), len(words), 0, {}, label, None, tuple(run.notify), run.cycles)
    kept = len(words) if not run.error else run.position + (cause == isa.ErrorCause.DATA_RANGE)
    units: dict[str, int] = {}
    for w in words[:kept]:
        key = _unit_class(w)
        units[key] = units.get(key, 0) + 1
    return RunResult(name, tuple(words), len(words), kept, units, cause.name, run.position, tuple(run.notify),
                     run.cycles)


def _run(backend, program, memory: dict, setup=None) -> tuple[Outcome, list]:
    """``setup`` (if any), then ``program``, on ``backend`` (a :class:`CheckedBackend`) whose memory
    starts as ``memory``; the outcome (the memory afterwards as the backend has it, at the model's
    addresses) and the differences from the ISA model."""
    backend.write(memory)
    differences, first = [], None
    if setup is not None:
        checked = backend.run(setup.words)
        differences += [f"{setup.name}: {d}" for d in checked.differences]
        first = _result(setup.name, setup.words, checked.run)
        if not first.ok:
            return Outcome(first, None, backend.memory(), backend.config.word_bits), differences
    checked = backend.run(program.words)
    differences += [f"{program.name}: {d}" for d in checked.differences]
    return (Outcome(first, _result(program.name, program.words, checked.run), backend.memory(),
                    backend.config.word_bits), differences)


# -- commands ---------------------------------------------------------------------------------------
def cmd_asm(args):
    _check_file_out(args.output, "-o", _IMAGE, " (a hex or binary program image)", [("FILE", args.file)])
    config = _config(args)
    params, shape = config.params, config.shape
    if _suffix(args.file) not in _TEXT:
        raise ParameterError("FILE", args.file, "an assembly file ending in " + ", ".join(_TEXT))
    words = _read_words(args.file, "FILE", shape)
    kind = _write_image(args.output, words, about=config.image_about())
    print(f"{args.file}: {len(words)} instructions for {params.name} ({shape.buffers} buffers, "
          f"{shape.slots} prime slots) -> {args.output} ({kind})")
    return 0


def _image_config(args):
    """The accelerator a program image is disassembled for: the one its header names (a hex image
    written by hhe-gen), else the options'; a --params other than the header's is refused."""
    from hhe_gen.engine import asm
    from hhe_gen.engine.config import AcceleratorConfig

    from .configure import option_names
    about = asm.image_about(_read(args.file, "FILE")) if _suffix(args.file) in _HEX else None
    if about is None or not about.get("preset"):
        return _config(args)
    if args.params is not None and args.params != about["preset"]:
        raise ParameterError("--params", args.params, f"{about['preset']!r}, the parameters {args.file} was "
                             "assembled for (its first line says so), or no --params")
    with option_names():
        return AcceleratorConfig(about["preset"], about.get("lanes", 2), buffers=about.get("buffers"),
                                 rubato=about.get("rubato"), network=about.get("network", True)).resolve()


def cmd_disasm(args):
    from hhe_gen.engine import asm
    shape = _image_config(args).shape
    words = _read_words(args.file, "FILE")
    sys.stdout.write(asm.disassemble(words, shape))
    return 0


def cmd_program(args):
    if args.output is not None:
        _check_file_out(args.output, "-o", _PROGRAM_FILE, " (assembly text or a program image)")
    config = _config(args)
    params, shape = config.params, config.shape
    program = _generate(args.name, params, shape, _level(params, args.level))
    notes = _map_lines(program, shape)
    if args.output is None:
        sys.stdout.write(program.text + ";\n" + "\n".join(notes) + "\n")
        return 0
    if _suffix(args.output) in _TEXT:
        _write_file(args.output, program.text + ";\n" + "\n".join(notes) + "\n", "-o")
        kind = "assembly text"
    else:
        kind = _write_image(args.output, program.words, about=config.image_about())
    print(program.text.splitlines()[0])
    print("\n".join(notes))
    print(f"{len(program.words)} instructions -> {args.output} ({kind})")
    return 0


@dataclass(frozen=True)
class _Code:
    name: str
    words: tuple


def _load_keys(args, seed: int):
    """(params, keys, where they came from): the keys file, or ckks keygen's rule from ``seed``
    (--seed, or the run's fresh seed)."""
    from hhe_gen.host.interchange import check_keys_json, in_file, load_json, params_for_keys
    from hhe_gen.models import ckks
    if args.keys is None:
        params = _params(args.params)
        how = "generated from --seed (ckks keygen's rule)" if args.seed is not None else \
            "generated from a fresh seed (give --keys or --seed to reproduce them)"
        return params, ckks.keygen(params, seed), how
    data = load_json(args.keys, "--keys")
    check_keys_json(data, args.keys)
    params = params_for_keys(args.params, data, args.keys)
    return params, in_file(ckks.KeyPair.from_json, data, params, path=args.keys), f"from {args.keys}"


def _which_program(args):
    """(kind, name): kind "name" for a generated program (name resolved with --mode), "file"."""
    from hhe_gen.engine.programs import PROGRAMS
    name = args.program
    if name == "encrypt":
        return "name", f"encrypt_{args.mode or 'pk'}"
    if name in PROGRAMS:
        if args.mode is not None and name != f"encrypt_{args.mode}":
            allowed = f"'{name[-2:]}' (the program's own mode) or no --mode" if name.startswith("encrypt_") \
                else "no --mode (only encrypt programs have a mode)"
            raise ParameterError("--mode", args.mode, f"{allowed} with --program {name}")
        return "name", name
    if _suffix(name) in _PROGRAM_FILE:
        if args.mode is not None:
            raise ParameterError("--mode", args.mode, "no --mode with a program file (the file decides)")
        return "file", name
    raise ParameterError("--program", name, f"one of {_program_names()}, encrypt (with --mode pk|sk), "
                         "or a program file ending in " + ", ".join(_PROGRAM_FILE))


def _input(args, params, expect):
    """(kind, value) of --in: ("slots", list[complex]), ("ciphertext", Ciphertext) or (None, None);
    ``expect`` is the kind the program reads (None: whatever the file holds)."""
    from hhe_gen.host.interchange import check_ciphertext_json, in_file, load_json, slots_json
    from hhe_gen.models import ckks
    if args.input is None:
        if expect not in (None, "none"):
            raise ParameterError("--in", None, f"a {'slots' if expect == 'slots' else 'ciphertext'} JSON file "
                                 f"(--program {args.program} reads one)")
        return None, None
    if expect == "none":
        raise ParameterError("--in", args.input, f"no --in: --program {args.program} reads only the keys")
    data = load_json(args.input, "--in")
    kind = expect or ("ciphertext" if isinstance(data, dict) and "c0" in data else "slots")
    if kind == "slots":
        return kind, slots_json(data, args.input)
    check_ciphertext_json(data, args.input)
    ct = in_file(ckks.Ciphertext.from_json, data, params, path=args.input)
    if ct.scale != params.scale:
        raise ParameterError("scale", ct.scale, f"2^{params.log_scale} = {params.scale}, the scale the engine's "
                             f"codec is built for (in {args.input})")
    return kind, ct


def _error_text(run: RunResult, shape) -> str:
    """``CAUSE at position P (instruction): meaning`` of a failed run."""
    from hhe_gen.cores.engine.isa import ErrorCause
    from hhe_gen.engine import asm
    if run.position is None or run.cause not in ErrorCause.__members__:
        return f"{run.cause} (its position is not reported by this backend)"
    line = asm.disassemble_word(run.words[run.position], shape).split(" ;")[0]
    return f"{run.cause} at position {run.position} ({line}): {asm.CAUSE_MEANING[_cause(run.cause)]}"


def _check_fixed_slots(slots, fmt, path):
    """Refuse a slot part the engine's fixed-point input would saturate (quantize saturates)."""
    import math
    low, high = -(fmt.max_int + 1.5), fmt.max_int + 0.5       # round half away from zero stays in range
    for field, part in (("re", lambda z: z.real), ("im", lambda z: z.imag)):
        for i, z in enumerate(slots):
            x = math.ldexp(part(z), fmt.frac_bits)
            if not low < x < high:
                bound = math.ldexp(1, fmt.width - 1 - fmt.frac_bits)
                raise ParameterError(f"{field}[{i}]", part(z), f"a value in [-{bound:g}, {bound:g}): the engine's "
                                     f"slots are fixed point, {fmt.width} bits with {fmt.frac_bits} fraction bits "
                                     f"(in {path})")


def _table(outcome: Outcome, backend: str, shape, level: int) -> list[str]:
    """The printed report: key_setup's line, then the program's (or failed key_setup's) table."""
    out = []
    setup = outcome.setup
    if setup is not None:
        status = "no error" if setup.ok else "an error"
        out.append(f"key_setup ran first (the keys into NTT form, rows 0 .. {level}): {setup.executed} "
                   f"instructions, {status}, notify {', '.join(map(str, setup.notify)) or 'none'}"
                   + ("; then a soft reset" if setup.ok else "; the program did not run"))
    run = outcome.program or setup
    engine = "the ISA model" if backend == "model" else f"the {backend} engine"
    out.append(f"{run.name} on {engine} ({shape.buffers} buffers, {shape.slots} prime slots):")
    rows = [("instructions executed", f"{run.executed} of {run.seen}")]
    rows += [(f"  {unit}", str(count)) for unit, count in sorted(run.units.items(), key=lambda kv: (-kv[1], kv[0]))]
    rows.append(("error status", "NONE" if run.ok else _error_text(run, shape)))
    rows.append(("notify codes", ", ".join(map(str, run.notify)) or "none"))
    if run.cycles is not None:
        rows.append(("cycles", str(run.cycles)))
    width = max(len(r[0]) for r in rows)
    return out + [f"  {a:<{width}}  {b}" for a, b in rows]


def _cause(name: str):
    from hhe_gen.cores.engine.isa import ErrorCause
    return ErrorCause[name]


def _report(outcome: Outcome, args, params, shape, level, output, config=None, differences=()) -> dict:
    def one(r: RunResult) -> dict:
        return {"program": r.name, "instructions": len(r.words), "seen": r.seen, "executed": r.executed,
                "units": dict(sorted(r.units.items())), "error": {"cause": r.cause, "position": r.position},
                "notify": list(r.notify), **({"cycles": r.cycles} if r.cycles is not None else {})}
    return {"backend": args.on, "params": params.name, "N": params.n, "buffers": shape.buffers,
            "slots": shape.slots, "level": level, "program": args.program,
            "runs": [one(r) for r in outcome.runs], "output": output,
            **({"configuration": config.describe()["values"]} if config is not None else {}),
            "equal_to_model": not differences, "differences": list(differences)}


def cmd_run(args):
    from hhe_gen.client.backends import backend_for
    from hhe_gen.client.compare import CheckedBackend
    from hhe_gen.engine import memory_map as mm
    from hhe_gen.models import ckks
    if args.on not in ON:                              # refused before any work
        raise ParameterError("--on", args.on, ", ".join(repr(b) for b in ON[:-1]) + f" or {ON[-1]!r}")
    if args.on == "soc-sim":
        from hhe_gen.flow.extras import require
        require("soc", "hhe-gen accel run --on soc-sim")
    kind, name = _which_program(args)
    inputs = [("--keys", args.keys), ("--in", args.input)] + ([("--program", name)] if kind == "file" else [])
    if args.output is not None:
        _check_file_out(args.output, "-o", (".json",), " (the run prints its report on stdout)", inputs)
    if args.json is not None:
        _check_file_out(args.json, "--json", inputs=inputs + [("-o", args.output)])
    seed = seed_or_fresh(args.seed)
    params, keys, keys_from = _load_keys(args, seed)
    config = _config(args, params)
    shape, fmt = config.shape, config.fmt
    reads = {"key_setup": "none", "decrypt": "ciphertext"}.get(name, "slots") if kind == "name" else None
    in_kind, value = _input(args, params, reads)
    if in_kind == "ciphertext":
        if args.level is not None and args.level != value.level:
            raise ParameterError("--level", args.level, f"the ciphertext's own level, {value.level} (decrypt "
                                 "reads the level from the ciphertext: leave --level out)")
        level = value.level
    else:
        level = _level(params, args.level)
    writes = {"slots": "ciphertext", "ciphertext": "slots", None: None}[in_kind]
    if writes is None and args.output is not None:
        raise ParameterError("-o", args.output, f"no -o: {args.program} without --in writes no interchange file")
    if writes is not None and args.output is None:
        raise ParameterError("-o", None, f"an output file for the {writes} (-o OUT.json)")
    if name == "encrypt_pk" and not keys.pk0:
        raise ParameterError("keys", "<no public key>", "keys with pk0 and pk1 for public-key encryption "
                             f"(in {args.keys})")
    setup = _generate("key_setup", params, shape, level)
    if kind == "name":
        program = setup if name == "key_setup" else _generate(name, params, shape, level)
        code = _Code(name, program.words)
    else:
        code = _Code(Path(name).name, tuple(_read_words(name, "--program", shape)))

    layout = mm.MemoryMap.for_params(params)
    memory: dict[int, int] = {}
    if keys.pk0:
        mm.write_keys(memory, layout, params, keys)
    else:                                              # secret-key-only keys: pk0 / pk1 stay zero
        mm.write_words(memory, layout.address("sk"), keys.sk)
    mm.write_seed(memory, layout, seed)
    if in_kind == "slots":
        _check_fixed_slots(value, fmt, args.input)
        ckks.encode(params, value, level, fmt=fmt)   # ckks encrypt's refusal of slots too large
        mm.write_slots(memory, layout, value, fmt)
    elif in_kind == "ciphertext":
        mm.write_ciphertext(memory, layout, params, value)

    from .configure import option_names
    with option_names():
        backend = CheckedBackend(backend_for(args.on, config))
    try:
        outcome, differences = _run(backend, code, memory,
                                    setup=None if code.name == "key_setup" and kind == "name" else setup)
    finally:
        backend.close()
    print(f"keys {keys_from}")
    print("\n".join(_table(outcome, args.on, shape, level)))
    if args.on != "model":
        print(f"  {'against the ISA model':<21}  " + ("bit-exact (memory, packets, errors)" if not differences
                                                      else f"{len(differences)} differences"))
    failed = outcome.failed
    if failed is None and not differences and writes is not None:
        if writes == "ciphertext":
            data = mm.read_ciphertext(outcome.memory, layout, params, level).to_json()
        else:
            slots = mm.read_slots(outcome.memory, layout, fmt, outcome.word_bits)
            data = {"re": [z.real for z in slots], "im": [z.imag for z in slots]}
        write_json_output(data, args.output)
        what = f"ciphertext, form ntt, level {level}" if writes == "ciphertext" else "slots"
        print(f"wrote {args.output} ({what})")
    if args.json is not None:
        report = _report(outcome, args, params, shape, level, None if failed or differences else args.output,
                         config, differences)
        _write_file(args.json, json.dumps(report, indent=1) + "\n", "--json")
    if differences:
        nothing = f"; nothing written to {args.output}" if args.output else ""
        print(f"hhe-gen: error: the {args.on} run differs from the ISA model: {differences[0]}{nothing}",
              file=sys.stderr)
        return 1
    if failed is not None:
        nothing = f"; nothing written to {args.output}" if args.output else ""
        print(f"hhe-gen: error: engine error in {failed.name}: {_error_text(failed, shape)}{nothing}",
              file=sys.stderr)
        return 1
    return 0


def cmd_plan(args):
    """``accel plan``: the engine's block RAMs (buffers and every unit's memories) against a device."""
    from hhe_gen.apps.report import print_table
    from hhe_gen.cores.engine.memory_plan import DEVICES
    from hhe_gen.cores.unused import mark_unused

    from .configure import option_names
    config = _config(args)
    params = config.params
    with option_names():
        engine = mark_unused(config.engine(), deep=True)
    args.buffers = engine.shape.buffers
    plan = engine.memory_plan(device=args.device, reserve=args.reserve)
    rows = [(u["owner"], u["name"], f'{u["depth"]} x {u["width"]}', "rom" if u["rom"] else "ram", u["dp16kd"],
             u["bram36"]) for u in plan.rows()]
    print_table(f"block RAMs of the engine: {params.name or 'params'}, N = {params.n}, "
                f"{len(params.moduli)} primes, {args.lanes} lanes, {args.buffers} buffers",
                ["part", "memory", "depth x width", "kind", "DP16KD", "BRAM36"], rows)
    summary = plan.summary()
    print_table("per part", ["part", "kbit", "DP16KD", "BRAM36"],
                [(k, v["bits"] // 1024, v["dp16kd"], v["bram36"]) for k, v in summary["by_owner"].items()]
                + [("total", sum(v["bits"] for v in summary["by_owner"].values()) // 1024, summary["dp16kd"],
                    summary["bram36"])])
    unit = "DP16KD" if DEVICES[args.device]["family"] == "ecp5" else "BRAM36"
    print(f"{args.device}: {summary['device_blocks']} {unit}; the engine {plan.used} + reserve {args.reserve} "
          f"-> {plan.left} left ({'fits' if plan.fits else 'does NOT fit'})")
    if args.json:
        write_json_output({"params": params.name, "n": params.n, "lanes": args.lanes, "buffers": args.buffers,
                           **summary, "memories": plan.rows()}, args.json)
    return 0


def register(sub) -> None:
    """Add this module's sub-commands to the ``hhe-gen`` parser."""
    p = sub.add_parser("accel", help="the accelerator engine: assemble, disassemble, print and run its programs",
                       description="The accelerator engine's programs (docs/isa.md). Exit status: 0 done, "
                                   "1 the engine reported an error (run), 2 unusable file or option.")
    ops = p.add_subparsers(dest="accel_op", required=True, metavar="asm|disasm|program|run|plan",
                           help="what to do with the engine's programs")

    from .configure import add_accelerator_options as shape_options

    q = ops.add_parser("asm", help="assemble FILE.s into a program image (.hex, .mem or .bin)")
    q.add_argument("file", metavar="FILE.s", help="assembly source (docs/isa.md section 7)")
    shape_options(q)
    q.add_argument("-o", "--output", required=True, help="program image: .hex / .mem ($readmemh text) or .bin")
    q.set_defaults(func=cmd_asm)

    q = ops.add_parser("disasm", help="print the listing of a program image (.hex, .mem or .bin)")
    q.add_argument("file", metavar="FILE", help="program image: .hex / .mem or .bin")
    shape_options(q)
    q.set_defaults(func=cmd_disasm)

    q = ops.add_parser("program", help="print or write a generated CKKS program with its memory map")
    q.add_argument("name", metavar="NAME", help="key_setup | encrypt_pk | encrypt_sk | decrypt")
    shape_options(q)
    q.add_argument("--level", type=int, help="level 0 .. len(Q) - 1 (default: top); rows = level + 1")
    q.add_argument("-o", "--output", help="write the program: .s / .asm (assembly text) or .hex / .mem / .bin "
                   "(image); default: print it")
    q.set_defaults(func=cmd_program)

    q = ops.add_parser("run", help="run a program on an engine with interchange files in and out",
                       description="Run a program on the engine: keys, seed and input placed by the memory "
                                   "map, key_setup first, the output read back into the interchange format.")
    q.add_argument("--program", required=True, metavar="NAME|FILE",
                   help="key_setup | encrypt_pk | encrypt_sk | decrypt | encrypt (with --mode), or a program "
                        "file .s / .asm / .hex / .mem / .bin (read as an encryption with slots in, as a "
                        "decryption with a ciphertext in)")
    q.add_argument("--on", default="model", help="model (default): the ISA golden model | amaranth: the "
                   "accelerator's RTL in Amaranth's simulator (small N) | rtl (or verilator): the same RTL in "
                   "Verilator (any N; a build takes minutes, cached) | soc-sim: the whole SoC in simulation; "
                   "every run is compared with the ISA model")
    shape_options(q, params_help="preset name or parameters JSON file (default: the keys' N and Q; without --keys: dna-hhe); "
                     "must match the keys")
    q.add_argument("--keys", help="keys JSON (default: generated with ckks keygen's rule from --seed)")
    q.add_argument("--in", dest="input", help="slots JSON (encryptions) or ciphertext JSON (decrypt)")
    q.add_argument("--seed", help=f"seed of the encryption (and of the keys without --keys), {SEED_RULE} "
                   "(default: fresh)")
    q.add_argument("--mode", choices=["pk", "sk"], help="with --program encrypt: public- (default) or "
                   "secret-key encryption")
    q.add_argument("--level", type=int, help="encryption level 0 .. len(Q) - 1 (default: top); decrypt: "
                   "must equal the ciphertext's level")
    q.add_argument("-o", "--output", help="output JSON: the ciphertext (form ntt) or the slots")
    q.add_argument("--json", metavar="REPORT", help="also write the run's report (counts, errors, notify codes) "
                   "as JSON")
    q.set_defaults(func=cmd_run)

    q = ops.add_parser("plan", help="the engine's block RAMs in DP16KD and BRAM36 against a device budget")
    shape_options(q)
    q.add_argument("--reserve", type=int, default=0, help="blocks kept for the rest of the SoC (default 0)")
    q.add_argument("--json", metavar="FILE", help="also write the plan as JSON")
    q.set_defaults(func=cmd_plan)


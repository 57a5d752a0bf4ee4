"""Check Rubato KAT files on the simulated RTL (:class:`hhe_gen.cores.rubato.RubatoCore`).

The files are those of :mod:`hhe_gen.host.kat` (format ``rubato-kat/1``; the shipped set is
:func:`hhe_gen.host.kat.shipped_kat_files`, described in docs/rubato.md section 6).  For every
vector of every file the core runs two blocks in Amaranth's simulator with the vector's key,
nonce, counter and noise seed: one with noise off (compared with ``keystream_before_noise``)
and one with noise on (compared with ``final_keystream``; the noise the hardware added,
``centre(final - z)``, is compared with ``noise.values``).  With ``trace`` the state committed
after every layer is compared with the file's ``trace`` (every field of every step) and with
:func:`hhe_gen.models.rubato.keystream`'s trace, and the number of XOF words the round-constant
sampler took with ``rc_xof_words_read``.  The results use the report classes of
:mod:`hhe_gen.host.kat`.

The inputs are always the file's own; whether they follow the shipped set's label rule is a
question for the model checker (``check_derivation``), not for the hardware.  A vector whose inputs
are missing or unusable is reported as a mismatch and not run; a file that
:func:`hhe_gen.host.kat.load_rubato_kat_file` rejects is one file-level mismatch.

The ``alternative_xof_vectors`` (AES-128-CTR) are recorded as skipped: the core has SHAKE256
only (SHAKE256 is the reference XOF, docs/rubato.md).

CLI: ``hhe-gen kat rubato --on rtl [--trace] [--lanes L] [--multiplier barrett|butterfly]
[FILE...]`` (no file: the shipped set).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from hhe_gen.host.kat import KatFileError, KatMismatch, KatReport, KatSkip, load_rubato_kat_file
from hhe_gen.models import rubato as rubato_model
from hhe_gen.params.errors import ParameterError

__all__ = ["check_rubato_kat_file_rtl", "check_rubato_kat_files_rtl"]


def _centre(x: int, q: int) -> int:
    return x - q if x > q // 2 else x


def check_rubato_kat_file_rtl(path, *, trace: bool = False, lanes: int = 2,
                              vectors: Iterable[int] | None = None, multiplier: str = "barrett") -> KatReport:
    """Check one KAT file on the RTL (see the module docstring).

    Parameters
    ----------
    path : str or Path
    trace : compare every layer's state too
    lanes : the core's lanes (a divisor of n)
    vectors : indices of the vectors to run (default: all)
    multiplier : the core's multipliers, "barrett" or "butterfly" (:class:`RubatoCore`)
    """
    from hhe_gen.cores.rubato import RubatoCore
    from hhe_gen.sim.rubato import simulate_blocks

    path = Path(path)
    report = KatReport(files=[str(path)])

    def bad(vector, field, detail):
        report.mismatches.append(KatMismatch(str(path), vector, field, detail))

    try:
        data, p = load_rubato_kat_file(path)
    except KatFileError as exc:
        bad(None, "file", str(exc))
        return report
    core = RubatoCore(p, lanes, multiplier=multiplier)
    selected = list(range(len(data["vectors"]))) if vectors is None else list(vectors)
    blocks, meta = [], []
    for j in selected:
        vec = data["vectors"][j]
        problem = _input_problem(p, vec)
        if problem:
            bad(f"vectors[{j}]", *problem)
            continue
        seed = vec["noise"]["seed"]
        blocks.append({"nonce": vec["nonce"], "counter": vec["counter"], "noise": 0,
                       "key": vec["key"], "seed": seed})
        blocks.append({"nonce": vec["nonce"], "counter": vec["counter"], "noise": 1})
        meta.append((j, vec))
    runs = []
    if blocks:
        import time

        from hhe_gen.flow.tools import say
        say(f"{path.name}: {len(meta)} vectors ({len(blocks)} blocks) on the simulated Rubato core "
            f"({p.name}, {lanes} lanes) ...")
        start = time.monotonic()
        runs = simulate_blocks(core, None, blocks, trace=trace)
        say(f"{path.name}: done in {time.monotonic() - start:.0f} s")
    for k, (j, vec) in enumerate(meta):
        name = f"vectors[{j}]"
        plain, noisy = runs[2 * k], runs[2 * k + 1]
        if plain.outputs != vec.get("keystream_before_noise"):
            bad(name, "keystream_before_noise", f"RTL {plain.outputs} != file {vec.get('keystream_before_noise')}")
        if noisy.outputs != vec.get("final_keystream"):
            bad(name, "final_keystream", f"RTL {noisy.outputs} != file {vec.get('final_keystream')}")
        noise = [_centre((a - b) % p.q, p.q) for a, b in zip(noisy.outputs, plain.outputs)]
        if noise != vec["noise"].get("values"):
            bad(name, "noise.values", f"RTL {noise} != file {vec['noise'].get('values')}")
        if trace:
            model = rubato_model.RubatoTrace()
            rubato_model.keystream(p, vec["key"], vec["nonce"], vec["counter"], trace=model)
            steps = vec.get("trace", [])
            if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
                bad(name, "trace", "expected a list of objects")
                steps = []
            seen = set()
            for run in (plain, noisy):
                if len(run.states) != len(core.phases):
                    bad(name, "trace", f"{len(run.states)} committed states, expected {len(core.phases)}")
                for index, state in run.states:
                    phase = core.phases[index]
                    where = f"trace[{phase.step}].{phase.field}"
                    seen.add((phase.step, phase.field))
                    if state != model.steps[phase.step][phase.field]:
                        bad(name, where, f"RTL {state} != model {model.steps[phase.step][phase.field]}")
                    if phase.step >= len(steps) or state != steps[phase.step].get(phase.field):
                        bad(name, where, f"RTL {state} != file")
            for s, step in enumerate(steps):
                for field in step:
                    if field.startswith("after_") and (s, field) not in seen:
                        bad(name, f"trace[{s}].{field}", "not probed on the RTL")
            read = plain.xof_words
            if read != vec.get("rc_xof_words_read"):
                bad(name, "rc_xof_words_read", f"RTL filter took {read} candidate words, file "
                    f"says {vec.get('rc_xof_words_read')}")
        report.vectors_checked += 1
    for position, _ in enumerate(data.get("alternative_xof_vectors", {}).get("vectors", [])):
        report.skipped.append(KatSkip(str(path), f"alternative_xof_vectors[{position}]",
                                      "the RTL core has SHAKE256 only"))
    return report


def _input_problem(p, vec: dict) -> tuple[str, str] | None:
    """(field, detail) if the vector's key, nonce, counter or noise seed cannot drive the core."""
    for name in ("key", "nonce", "counter", "noise"):
        if name not in vec:
            return name, "missing field (the vector was not run)"
    noise = vec["noise"]
    if not isinstance(noise, dict) or "seed" not in noise:
        return "noise.seed", "missing field (the vector was not run)"
    for name, value in (("nonce", vec["nonce"]), ("counter", vec["counter"]), ("noise.seed", noise["seed"])):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 64:
            return name, "unusable input: not an unsigned 64-bit integer (the vector was not run)"
    try:
        rubato_model.keystream(p, vec["key"], vec["nonce"], vec["counter"])  # validates the key
    except (ParameterError, TypeError) as exc:
        return "key", f"unusable input: {exc} (the vector was not run)"
    return None


def check_rubato_kat_files_rtl(paths: Iterable, trace: bool = False, lanes: int = 2,
                               multiplier: str = "barrett") -> KatReport:
    """Check several KAT files on the RTL (see :func:`check_rubato_kat_file_rtl`); one merged
    :class:`hhe_gen.host.kat.KatReport`."""
    report = KatReport()
    for path in paths:
        report.merge(check_rubato_kat_file_rtl(path, trace=trace, lanes=lanes, multiplier=multiplier))
    return report

"""Check the Rubato KAT files on the simulated RTL (:class:`hhe_gen.cores.rubato.RubatoCore`).

For every vector of every ``rubato_<set>.json`` file the core runs two blocks in Amaranth's
simulator with the vector's key, nonce, counter and noise seed: one with noise off (compared with
``keystream_before_noise``) and one with noise on (compared with ``final_keystream``; the noise
the hardware added, ``centre(final - z)``, is compared with ``noise.values``).  With ``trace``
the state committed after every layer is compared with the file's ``trace`` (every field of every
step) and with :func:`hhe_gen.models.rubato.keystream`'s trace, and the number of XOF words the
round-constant sampler took with ``rc_xof_words_read``.  The results use the report classes of
:mod:`hhe_gen.host.kat`.

The ``alternative_xof_vectors`` (AES-128-CTR) are recorded as skipped: the core has SHAKE256
only (SPEC.md section 5 makes SHAKE256 the reference XOF).

CLI wiring wanted (hhe_gen/cli.py is not this module's): ``hhe-gen kat rubato --on rtl
[--trace] [--lanes L] [--multiplier barrett|butterfly] FILE...`` ->
``check_rubato_kat_files_rtl(files, trace=..., lanes=..., multiplier=...)`` (the
``--multiplier`` option is not wired in the CLI yet).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from hhe_gen.host.kat import KatMismatch, KatReport, KatSkip
from hhe_gen.models import rubato as rubato_model
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import rubato_params

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
        data = json.loads(path.read_text())
        p = rubato_params(data.get("parameter_set", ""))
    except (OSError, ValueError, ParameterError) as exc:
        bad(None, "file", f"cannot use KAT file: {exc}")
        return report
    core = RubatoCore(p, lanes, multiplier=multiplier)
    selected = list(range(len(data.get("vectors", [])))) if vectors is None else list(vectors)
    blocks, meta = [], []
    for j in selected:
        vec = data["vectors"][j]
        seed = vec["noise"]["seed"]
        blocks.append({"nonce": vec["nonce"], "counter": vec["counter"], "noise": 0,
                       "key": vec["key"], "seed": seed})
        blocks.append({"nonce": vec["nonce"], "counter": vec["counter"], "noise": 1})
        meta.append((j, vec))
    runs = simulate_blocks(core, None, blocks, trace=trace)
    for k, (j, vec) in enumerate(meta):
        name = f"vectors[{j}]"
        plain, noisy = runs[2 * k], runs[2 * k + 1]
        if plain.outputs != vec["keystream_before_noise"]:
            bad(name, "keystream_before_noise", f"RTL {plain.outputs} != file {vec['keystream_before_noise']}")
        if noisy.outputs != vec["final_keystream"]:
            bad(name, "final_keystream", f"RTL {noisy.outputs} != file {vec['final_keystream']}")
        noise = [_centre((a - b) % p.q, p.q) for a, b in zip(noisy.outputs, plain.outputs)]
        if noise != vec["noise"]["values"]:
            bad(name, "noise.values", f"RTL {noise} != file {vec['noise']['values']}")
        if trace:
            model = rubato_model.RubatoTrace()
            rubato_model.keystream(p, vec["key"], vec["nonce"], vec["counter"], trace=model)
            steps = vec.get("trace", [])
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
            if read != vec["rc_xof_words_read"]:
                bad(name, "rc_xof_words_read", f"RTL filter took {read} candidate words, file "
                    f"says {vec['rc_xof_words_read']}")
        report.vectors_checked += 1
    for position, _ in enumerate(data.get("alternative_xof_vectors", {}).get("vectors", [])):
        report.skipped.append(KatSkip(str(path), f"alternative_xof_vectors[{position}]",
                                      "the RTL core has SHAKE256 only (no AES-128-CTR XOF)"))
    return report


def check_rubato_kat_files_rtl(paths: Iterable, trace: bool = False, lanes: int = 2,
                               multiplier: str = "barrett") -> KatReport:
    """Check several KAT files on the RTL (see :func:`check_rubato_kat_file_rtl`); one merged
    :class:`hhe_gen.host.kat.KatReport`."""
    report = KatReport()
    for path in paths:
        report.merge(check_rubato_kat_file_rtl(path, trace=trace, lanes=lanes, multiplier=multiplier))
    return report

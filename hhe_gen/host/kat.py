"""Check the Rubato known-answer-test files (``shared/kat/rubato/rubato_*.json``) against the models.

Every field of every vector is recomputed from its inputs with :mod:`hhe_gen.models.rubato` and
:mod:`hhe_gen.models.sampler` and compared; the inputs themselves are re-derived from the rules of
``make_vectors.md`` section 4.  A field the checker does not know is reported as a mismatch
(nothing passes unchecked).  Field names follow ``make_vectors.md`` section 5.

Two things are deliberately not compared, and say so:

* ``encryption_example.ciphertext_reference_avx2_actual`` is the reference's defective output
  (it adds the IEEE-754 bit pattern of round(Delta*m) instead of the integer, SPEC.md §7).  It is
  documentation only; the checker verifies just that it has l entries.
* free-text fields (``label``, ``note``, ``seed_origin``) are checked only for naming the right
  vector, not word for word.

The ``alternative_xof_vectors`` (AES-128-CTR) are checked when the optional ``cryptography``
package is importable; otherwise each is recorded in ``KatReport.skipped`` with the reason and is
not counted as checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from hhe_gen.models import rubato as rubato_model
from hhe_gen.models.keccak import Shake
from hhe_gen.models.sampler import rubato_noise_xof_input, rubato_xof_input
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import RubatoParams, rubato_params

__all__ = ["KatMismatch", "KatSkip", "KatReport", "check_rubato_kat_file", "check_rubato_kat_files",
           "find_rubato_kat_files", "aes_available"]

_VECTOR_FIELDS = {
    "index", "label", "key", "nonce", "nonce_hex", "counter", "counter_hex", "rc_xof_input_hex",
    "rc_xof_words_read", "rc_xof_words_rejected", "round_constants", "round_keys",
    "keystream_before_noise", "noise", "noise_cdf_defect_affected_words", "final_keystream",
    "trace", "encryption_example",
}
_NOISE_FIELDS = {"seed", "seed_hex", "seed_origin", "xof_input_hex", "values", "values_all_n_words"}
_EXAMPLE_FIELDS = {"message", "delta", "scaled_message_round_delta_m", "ciphertext_intended",
                   "ciphertext_reference_avx2_actual", "note"}
_U64 = (1 << 64) - 1


@dataclass(frozen=True)
class KatMismatch:
    """One disagreement.

    Members
    -------
    file : str            the JSON file
    vector : str | None   e.g. "vectors[3]" or "alternative_xof_vectors[1]"; None for file-level
    field : str           dotted path inside the vector (or file), e.g. "trace[1].after_MixRows"
    detail : str          what was expected and what the file has
    """

    file: str
    vector: str | None
    field: str
    detail: str

    def __str__(self):
        where = f"{self.vector}." if self.vector else ""
        return f"{self.file}: {where}{self.field}: {self.detail}"


@dataclass(frozen=True)
class KatSkip:
    """A vector that was not checked, and why (never counted as passed)."""

    file: str
    vector: str
    reason: str


@dataclass
class KatReport:
    """Result of checking one or more KAT files.

    Members
    -------
    files : list[str]                files read
    vectors_checked : int            N: vectors whose every field was compared
    mismatches : list[KatMismatch]   every disagreement found (M = len(mismatches))
    skipped : list[KatSkip]          vectors not checked, with the reason
    """

    files: list = field(default_factory=list)
    vectors_checked: int = 0
    mismatches: list = field(default_factory=list)
    skipped: list = field(default_factory=list)

    @property
    def mismatch_count(self) -> int:
        """M, the number of mismatches."""
        return len(self.mismatches)

    @property
    def ok(self) -> bool:
        """True if at least one vector was checked and nothing mismatched."""
        return self.vectors_checked > 0 and not self.mismatches

    def merge(self, other: "KatReport") -> "KatReport":
        """Add another report's results to this one (returns self)."""
        self.files += other.files
        self.vectors_checked += other.vectors_checked
        self.mismatches += other.mismatches
        self.skipped += other.skipped
        return self

    def summary(self) -> str:
        """"N vectors checked, M mismatches" (plus ", K skipped" if any were skipped)."""
        text = f"{self.vectors_checked} vectors checked, {self.mismatch_count} mismatches"
        if self.skipped:
            text += f", {len(self.skipped)} skipped"
        return text


def aes_available() -> bool:
    """True if the optional ``cryptography`` package (for the AES-128-CTR vectors) imports."""
    try:
        import cryptography.hazmat.primitives.ciphers  # noqa: F401
    except ImportError:
        return False
    return True


def find_rubato_kat_files(directory) -> list[Path]:
    """The ``rubato_*.json`` files of a directory, sorted by name."""
    return sorted(Path(directory).glob("rubato_*.json"))


class _Checker:
    """Compares one file; collects mismatches into a report."""

    def __init__(self, path: Path, report: KatReport):
        self.file = str(path)
        self.report = report
        self.vector: str | None = None

    def bad(self, field_name: str, detail: str) -> None:
        self.report.mismatches.append(KatMismatch(self.file, self.vector, field_name, detail))

    def equal(self, field_name: str, expected, found) -> bool:
        if expected == found:
            return True
        if isinstance(expected, list) and isinstance(found, list) and len(expected) == len(found):
            i = next(k for k, (a, b) in enumerate(zip(expected, found)) if a != b)
            self.bad(field_name, f"differs first at [{i}]: expected {expected[i]!r}, file has {found[i]!r}")
        else:
            self.bad(field_name, f"expected {_short(expected)}, file has {_short(found)}")
        return False

    def fields(self, field_name: str, obj: dict, allowed: set, required: set) -> None:
        for name in sorted(set(obj) - allowed):
            self.bad(f"{field_name}{name}", "unexpected field (not checked)")
        for name in sorted(required - set(obj)):
            self.bad(f"{field_name}{name}", "missing field")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _derived_words(label: str, p: RubatoParams) -> list[int]:
    """make_vectors.md §4: SHAKE-256(label) cut into 4-byte LE words, masked, >= q skipped."""
    xof = Shake(256).absorb(label.encode("ascii"))
    out = []
    while len(out) < p.n:
        w = int.from_bytes(xof.squeeze(4), "little") & p.mask
        if w < p.q:
            out.append(w)
    return out


def _derived_u64(label: str) -> int:
    return int.from_bytes(Shake(256).absorb(label.encode("ascii")).squeeze(8), "little")


def _expected_inputs(p: RubatoParams, j: int) -> tuple[list[int], int, int]:
    """(key, nonce, counter) of public vector j (make_vectors.md §4)."""
    if j == 0:
        return list(range(1, p.n + 1)), 0x0123456789ABCDEF, 0
    if j == 1:
        return [p.q - 1] * p.n, _U64, _U64
    if j == 2:
        return [0] * p.n, 0, 0
    if j == 3:
        return [1] * p.n, 1, 1
    prefix = f"Rubato-KAT-v1|{p.name}|vector-{j}|"
    return _derived_words(prefix + "key", p), _derived_u64(prefix + "nonce"), j - 4


def _check_params_block(c: _Checker, data: dict, p: RubatoParams) -> None:
    block = data.get("params", {})
    noise = block.get("noise", {})
    expected = {
        "n": p.n, "v": p.v, "l": p.l, "q": p.q, "q_hex": hex(p.q), "q_bits": p.q_bits,
        "rounds_r": p.rounds, "round_constant_count": p.round_constant_count,
        "mix_circulant_first_row": list(p.circulant), "xof": "SHAKE256",
        "delta_for_messages": p.delta,
    }
    for name, value in expected.items():
        c.equal(f"params.{name}", value, block.get(name))
    c.equal("params.noise.cdf_table", list(p.cdf_table), noise.get("cdf_table"))
    c.equal("params.noise.gaussian_width_s", p.noise_width_s, noise.get("gaussian_width_s"))
    c.equal("params.noise.std_dev_sigma", p.noise_sigma, noise.get("std_dev_sigma"))
    c.equal("params.noise.cdf_table_defect", p.cdf_table_defect, noise.get("cdf_table_defect") is not None)
    c.equal("format", "rubato-kat/1", data.get("format"))
    c.equal("round_constant_derivation.mask", hex(p.mask),
            data.get("round_constant_derivation", {}).get("mask"))


def _check_vector(c: _Checker, p: RubatoParams, vec: dict, *, xof: str,
                  expected_index: int, with_trace: bool) -> None:
    j = expected_index
    c.equal("index", j, vec.get("index"))
    required = _VECTOR_FIELDS - {"encryption_example", "noise_cdf_defect_affected_words", "trace"}
    if with_trace:
        required |= {"trace"}
    if j in (0, 1) and with_trace:
        required |= {"encryption_example"}
    if p.cdf_table_defect:
        required |= {"noise_cdf_defect_affected_words"}
    allowed = set(required)
    c.fields("", vec, allowed, required)
    if any(name not in vec for name in ("key", "nonce", "counter", "noise")):
        return

    # Inputs: re-derived from make_vectors.md §4, then used as given for everything else.
    key, nonce, counter = _expected_inputs(p, j)
    c.equal("key", key, vec["key"])
    c.equal("nonce", nonce, vec["nonce"])
    c.equal("counter", counter, vec["counter"])
    label = vec.get("label")
    if not isinstance(label, str) or (j >= 4 and f"vector-{j}|" not in label):
        c.bad("label", f"expected a text naming vector {j}, file has {_short(label)}")
    key, nonce, counter = vec["key"], vec["nonce"], vec["counter"]
    try:
        if not (isinstance(nonce, int) and isinstance(counter, int) and 0 <= nonce <= _U64
                and 0 <= counter <= _U64):
            raise ParameterError("nonce/counter", (nonce, counter), "unsigned 64-bit integers")
        rubato_model.keystream(p, key, nonce, counter)  # validates the key
    except ParameterError as exc:
        c.bad("key", f"unusable input: {exc}")
        return
    c.equal("nonce_hex", f"0x{nonce:016x}", vec.get("nonce_hex"))
    c.equal("counter_hex", f"0x{counter:016x}", vec.get("counter_hex"))
    c.equal("rc_xof_input_hex", rubato_xof_input(nonce, counter).hex(), vec.get("rc_xof_input_hex"))

    # Noise inputs.
    noise = vec["noise"]
    c.fields("noise.", noise, _NOISE_FIELDS, _NOISE_FIELDS)
    expected_seed = _derived_u64(f"Rubato-KAT-v1|{p.name}|vector-{j}|noise-seed")
    c.equal("noise.seed", expected_seed, noise.get("seed"))
    seed = noise.get("seed")
    if not isinstance(seed, int) or not 0 <= seed <= _U64:
        c.bad("noise.seed", f"not an unsigned 64-bit integer: {_short(seed)}")
        return
    c.equal("noise.seed_hex", f"0x{seed:016x}", noise.get("seed_hex"))
    origin = noise.get("seed_origin")
    if not isinstance(origin, str) or f"|vector-{j}|noise-seed" not in origin:
        c.bad("noise.seed_origin", f"expected a text naming vector {j}'s seed label, file has {_short(origin)}")
    c.equal("noise.xof_input_hex", rubato_noise_xof_input(nonce, counter, seed).hex(),
            noise.get("xof_input_hex"))

    # The keystream block, every intermediate value.
    trace = rubato_model.RubatoTrace()
    final = rubato_model.keystream(p, key, nonce, counter, noise_seed=seed, trace=trace, xof=xof)
    c.equal("rc_xof_words_read", trace.rc_xof_words_read, vec.get("rc_xof_words_read"))
    c.equal("rc_xof_words_rejected", trace.rc_xof_words_rejected, vec.get("rc_xof_words_rejected"))
    c.equal("round_constants", trace.round_constants, vec.get("round_constants"))
    c.equal("round_keys", trace.round_keys, vec.get("round_keys"))
    c.equal("keystream_before_noise", trace.keystream_before_noise, vec.get("keystream_before_noise"))
    c.equal("noise.values", trace.noise_values, noise.get("values"))
    c.equal("noise.values_all_n_words", trace.noise_values_all_n_words, noise.get("values_all_n_words"))
    c.equal("final_keystream", final, vec.get("final_keystream"))
    if p.cdf_table_defect:
        c.equal("noise_cdf_defect_affected_words",
                rubato_model.noise_defect_affected_words(p, nonce, counter, seed, xof=xof),
                vec.get("noise_cdf_defect_affected_words"))

    if with_trace and "trace" in vec:
        _check_trace(c, trace.steps, vec["trace"])

    if "encryption_example" in vec:
        _check_example(c, p, j, final, key, nonce, counter, vec["encryption_example"])


def _check_trace(c: _Checker, steps: list, recorded) -> None:
    if not isinstance(recorded, list) or len(recorded) != len(steps):
        c.bad("trace", f"expected {len(steps)} steps, file has {_short(recorded)[:60]}")
        return
    for s, (mine, theirs) in enumerate(zip(steps, recorded)):
        allowed = set(mine) | ({"note"} if mine["step"] == "finalization" else set())
        c.fields(f"trace[{s}].", theirs, allowed, set(mine))
        for name, value in mine.items():
            if name in theirs:
                c.equal(f"trace[{s}].{name}", value, theirs[name])


def _check_example(c: _Checker, p: RubatoParams, j: int, final: list, key, nonce, counter,
                   example: dict) -> None:
    c.fields("encryption_example.", example, _EXAMPLE_FIELDS, _EXAMPLE_FIELDS - {"note"})
    message = [((5 * i + 3 * j) % 64 - 32) / 4 for i in range(p.l)]
    c.equal("encryption_example.message", message, example.get("message"))
    c.equal("encryption_example.delta", p.delta, example.get("delta"))
    given = example.get("message")
    if not isinstance(given, list) or len(given) != p.l:
        return
    c.equal("encryption_example.scaled_message_round_delta_m", rubato_model.scale_message(p, given),
            example.get("scaled_message_round_delta_m"))
    c.equal("encryption_example.ciphertext_intended", rubato_model.encrypt(p, final, given),
            example.get("ciphertext_intended"))
    # The reference's defective output (bit-cast instead of conversion, SPEC.md §7) documents the
    # defect only; it must not be implemented, so only its shape is checked.
    actual = example.get("ciphertext_reference_avx2_actual")
    if not isinstance(actual, list) or len(actual) != p.l:
        c.bad("encryption_example.ciphertext_reference_avx2_actual", f"expected {p.l} words")


def check_rubato_kat_file(path) -> KatReport:
    """Check every field of every vector of one ``rubato_<set>.json`` file.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    KatReport
        ``vectors_checked`` counts the main vectors and, if AES is available, the
        ``alternative_xof_vectors``; otherwise those are listed in ``skipped``.  An unreadable file
        or unknown parameter set is one file-level mismatch.
    """
    path = Path(path)
    report = KatReport(files=[str(path)])
    c = _Checker(path, report)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        c.bad("file", f"cannot read KAT JSON: {exc}")
        return report
    try:
        p = rubato_params(data.get("parameter_set", ""))
    except ParameterError as exc:
        c.bad("parameter_set", str(exc))
        return report
    _check_params_block(c, data, p)

    vectors = data.get("vectors")
    if not isinstance(vectors, list) or not vectors:
        c.bad("vectors", "missing or empty")
        vectors = []
    for position, vec in enumerate(vectors):
        c.vector = f"vectors[{position}]"
        _check_vector(c, p, vec, xof="shake256", expected_index=position, with_trace=True)
        report.vectors_checked += 1

    alternative = data.get("alternative_xof_vectors", {})
    c.vector = None
    c.equal("alternative_xof_vectors.xof", "AES128-CTR", alternative.get("xof"))
    alt_vectors = alternative.get("vectors", [])
    aes = aes_available()
    for position, vec in enumerate(alt_vectors):
        name = f"alternative_xof_vectors[{position}]"
        if not aes:
            report.skipped.append(KatSkip(str(path), name, "AES-128-CTR needs the optional "
                                          "'cryptography' package, which is not installed"))
            continue
        c.vector = name
        # make_vectors.md §4: the AES vectors reuse the inputs of vectors 0 and 4.
        expected_index = (0, 4)[position] if position < 2 else vec.get("index", -1)
        _check_vector(c, p, vec, xof="aes128-ctr", expected_index=expected_index, with_trace=False)
        report.vectors_checked += 1
    return report


def check_rubato_kat_files(paths: Iterable) -> KatReport:
    """Check several files (see :func:`check_rubato_kat_file`); one merged report."""
    report = KatReport()
    for path in paths:
        report.merge(check_rubato_kat_file(path))
    return report

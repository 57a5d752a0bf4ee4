"""Check Rubato known-answer-test files (format ``rubato-kat/1``) against the models.

hhe-gen ships one such file per parameter set as package data (:func:`shipped_kat_files`,
``hhe_gen/data/kat/rubato/``, where README.md names their source); docs/rubato.md section 6
describes their inputs and every field.

By default every vector's inputs (key, nonce, counter, noise seed, encryption-example message)
are taken from the file as they are, and every other field is recomputed from them with
:mod:`hhe_gen.models.rubato` and :mod:`hhe_gen.models.sampler` and compared, so a correct file
made with any inputs passes.  With ``check_derivation=True`` the inputs must also be the ones the
label rule of the shipped set derives (docs/rubato.md, "Inputs"), and the free-text fields
``label`` and ``noise.seed_origin`` must name the right vector.  A field the checker does not know
is reported as a mismatch (nothing passes unchecked).

Two things are deliberately not compared, and say so:

* ``encryption_example.ciphertext_reference_avx2_actual`` is the reference's defective output
  (it adds the IEEE-754 bit pattern of round(Delta*m) instead of the integer, docs/rubato.md
  section 5).  It is documentation only; the checker verifies just that it has l entries.
* free-text fields (``label``, ``note``, ``seed_origin``) must be text; only with
  ``check_derivation`` are ``label`` and ``seed_origin`` checked for naming the right vector,
  never word for word.

The ``alternative_xof_vectors`` (AES-128-CTR) are checked when the optional ``cryptography``
package is importable; otherwise each is recorded in ``KatReport.skipped`` with the reason and is
not counted as checked.  The section itself is optional: a file without it is recorded in
``skipped`` once (vector ``alternative_xof_vectors``), not as a mismatch.

A file that cannot be used at all (missing, not JSON, not a KAT object, another ``format`` than
``rubato-kat/1``, unknown parameter set) is a :class:`KatFileError` from
:func:`load_rubato_kat_file`; the ``check_*`` functions record it as one file-level mismatch
(field ``file``) so that a batch goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Iterable

from hhe_gen.models import rubato as rubato_model
from hhe_gen.models.keccak import Shake
from hhe_gen.models.sampler import rubato_noise_xof_input, rubato_xof_input
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import RUBATO_SETS, RubatoParams, rubato_params

__all__ = ["KatMismatch", "KatSkip", "KatReport", "KatFileError", "check_rubato_kat_file",
           "check_rubato_kat_files", "find_rubato_kat_files", "shipped_kat_files", "load_rubato_kat_file",
           "skip_sentences", "aes_available"]

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
FORMAT = "rubato-kat/1"
"""The ``format`` field of every file this checker reads."""
ALTERNATIVE_ABSENT = "the optional section is absent (nothing to check)"


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
    """A vector that was not checked, or an optional section the file does not have (``vector`` is
    then the section's name, without an index), and why; never counted as passed."""

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

    def skip_sentences(self) -> list[str]:
        """The skipped vectors as sentences, one per reason (see :func:`skip_sentences`)."""
        return skip_sentences(self.skipped)


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


def shipped_kat_files() -> list[Path]:
    """The Rubato KAT files shipped with hhe-gen, one per parameter set, in the order of
    :data:`hhe_gen.params.rubato.RUBATO_SETS` (80S, 80M, 80L, 128S, 128M, 128L).

    They are package data of ``hhe_gen`` (``data/kat/rubato/rubato_<set>.json``), found with
    :mod:`importlib.resources`; their source is named in that folder's README.md.  Returns the
    files as paths on disk (hhe-gen installs as plain files, never zipped); an empty list means
    a broken installation.
    """
    folder = resources.files("hhe_gen") / "data" / "kat" / "rubato"
    if not folder.is_dir():
        return []
    found = [entry for entry in folder.iterdir()
             if entry.is_file() and entry.name.startswith("rubato_") and entry.name.endswith(".json")]
    order = {name.lower().replace("par-", "rubato_") + ".json": k for k, name in enumerate(RUBATO_SETS)}
    return sorted((Path(str(entry)) for entry in found), key=lambda path: (order.get(path.name, len(order)), path.name))


class KatFileError(ValueError):
    """A KAT file that cannot be checked at all: missing, unreadable, not JSON or not a Rubato KAT
    object.  The message is one line and names the file."""


def load_rubato_kat_file(path) -> tuple[dict, RubatoParams]:
    """Read one KAT file and check its overall shape.

    Returns
    -------
    (data, params)
        the parsed JSON object and the parameter set it names

    Raises
    ------
    KatFileError
        the file is missing or unreadable, is not JSON, is not a JSON object, names no known
        Rubato parameter set, has no non-empty ``vectors`` list of objects, or has an
        ``alternative_xof_vectors`` that is not an object with a list of objects as ``vectors``,
        or whose ``format`` is not ``"rubato-kat/1"``.
        Problems inside a vector (a missing or wrong field) are not raised here; the checkers
        report them field by field.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise KatFileError(f"KAT file not found: {path}") from None
    except IsADirectoryError:
        raise KatFileError(f"KAT file {path} is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise KatFileError(f"cannot read KAT file {path}: {reason}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise KatFileError(f"KAT file {path} is not valid JSON: {exc}") from None

    def wrong(reason: str) -> KatFileError:
        return KatFileError(f"KAT file {path} is not a Rubato KAT file: {reason}")

    if not isinstance(data, dict):
        raise wrong(f"the top level is a JSON {_json_type(data)}, not an object")
    name = data.get("parameter_set")
    try:
        params = rubato_params(name) if isinstance(name, str) else None
    except ParameterError:
        params = None
    if params is None:
        raise wrong(f"'parameter_set' is {_short(name)}, not a Rubato parameter set name like 'Par-80S'")
    vectors = data.get("vectors")
    if not isinstance(vectors, list) or not vectors:
        raise wrong("'vectors' is missing or not a non-empty list")
    for position, vec in enumerate(vectors):
        if not isinstance(vec, dict):
            raise wrong(f"vectors[{position}] is a JSON {_json_type(vec)}, not an object")
    if "alternative_xof_vectors" in data:
        alternative = data["alternative_xof_vectors"]
        if not isinstance(alternative, dict) or not isinstance(alternative.get("vectors", []), list):
            raise wrong("'alternative_xof_vectors' is not an object with a 'vectors' list")
        for position, vec in enumerate(alternative.get("vectors", [])):
            if not isinstance(vec, dict):
                raise wrong(f"alternative_xof_vectors.vectors[{position}] is a JSON {_json_type(vec)}, "
                            "not an object")
    if data.get("format") != FORMAT:
        raise wrong(f"'format' is {_short(data.get('format'))}, not {FORMAT!r}")
    return data, params


def _json_type(value) -> str:
    for kind, name in ((bool, "boolean"), (dict, "object"), (list, "array"), (str, "string"),
                       (int, "number"), (float, "number")):
        if isinstance(value, kind):
            return name
    return "null"


def skip_sentences(skipped: Iterable[KatSkip]) -> list[str]:
    """Skipped vectors as sentences, one per reason, e.g.
    ``"skipped 2 AES-XOF vectors of rubato_80s.json: the RTL core has SHAKE256 only"``; a skipped
    section (a :class:`KatSkip` whose ``vector`` has no index) as e.g.
    ``"skipped alternative_xof_vectors of rubato_80s.json: the optional section is absent ..."``.

    Files are named by their base name unless two of them share it.
    """
    skipped = list(skipped)
    names = {s.file: Path(s.file).name for s in skipped}
    if len(set(names.values())) < len(names):
        names = {f: f for f in names}
    groups: dict = {}
    for s in skipped:
        if "[" not in s.vector:
            kind = s.vector                  # a whole section
        elif s.vector.startswith("alternative_xof_vectors"):
            kind = "AES-XOF vector"
        else:
            kind = "vector"
        per_file = groups.setdefault((kind, s.reason), {})
        per_file[s.file] = per_file.get(s.file, 0) + 1
    sentences = []
    for (kind, reason), per_file in groups.items():
        total = sum(per_file.values())
        counts = set(per_file.values())
        if kind not in ("AES-XOF vector", "vector"):   # a section: once per file
            sentences.append(f"skipped {kind} of {', '.join(names[f] for f in per_file)}: {reason}")
            continue
        what = f"{total} {kind}{'' if total == 1 else 's'}"
        if len(per_file) == 1:
            where = f"of {names[next(iter(per_file))]}"
        elif len(counts) == 1:
            where = f"({counts.pop()} of each of {', '.join(names[f] for f in per_file)})"
        else:
            where = "(" + ", ".join(f"{k} of {names[f]}" for f, k in per_file.items()) + ")"
        sentences.append(f"skipped {what} {where}: {reason}")
    return sentences


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
    """The label rule: SHAKE-256(label) cut into 4-byte LE words, masked, >= q skipped."""
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
    """(key, nonce, counter) of vector j of the shipped set (docs/rubato.md, "Inputs")."""
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
    block = data.get("params")
    block = block if isinstance(block, dict) else {}
    noise = block.get("noise")
    noise = noise if isinstance(noise, dict) else {}
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
    derivation = data.get("round_constant_derivation")
    c.equal("round_constant_derivation.mask", hex(p.mask),
            derivation.get("mask") if isinstance(derivation, dict) else None)


def _check_vector(c: _Checker, p: RubatoParams, vec: dict, *, xof: str,
                  expected_index: int, with_trace: bool, derivation: bool) -> None:
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

    # Inputs: used as the file gives them; with the derivation check also compared with the
    # label rule of the shipped set.
    label = vec.get("label")
    if derivation:
        key, nonce, counter = _expected_inputs(p, j)
        c.equal("key", key, vec["key"])
        c.equal("nonce", nonce, vec["nonce"])
        c.equal("counter", counter, vec["counter"])
        if not isinstance(label, str) or (j >= 4 and f"vector-{j}|" not in label):
            c.bad("label", f"expected a text naming vector {j}, file has {_short(label)}")
    elif not isinstance(label, str):
        c.bad("label", f"expected a text, file has {_short(label)}")
    key, nonce, counter = vec["key"], vec["nonce"], vec["counter"]
    for name, value in (("nonce", nonce), ("counter", counter)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= _U64:
            c.bad(name, f"unusable input: not an unsigned 64-bit integer: {_short(value)}")
            return
    try:
        rubato_model.keystream(p, key, nonce, counter)  # validates the key
    except (ParameterError, TypeError) as exc:
        c.bad("key", f"unusable input: {exc}")
        return
    c.equal("nonce_hex", f"0x{nonce:016x}", vec.get("nonce_hex"))
    c.equal("counter_hex", f"0x{counter:016x}", vec.get("counter_hex"))
    c.equal("rc_xof_input_hex", rubato_xof_input(nonce, counter).hex(), vec.get("rc_xof_input_hex"))

    # Noise inputs.
    noise = vec["noise"]
    if not isinstance(noise, dict):
        c.bad("noise", f"expected an object, file has {_short(noise)}")
        return
    c.fields("noise.", noise, _NOISE_FIELDS, _NOISE_FIELDS)
    if derivation:
        expected_seed = _derived_u64(f"Rubato-KAT-v1|{p.name}|vector-{j}|noise-seed")
        c.equal("noise.seed", expected_seed, noise.get("seed"))
    seed = noise.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= _U64:
        c.bad("noise.seed", f"not an unsigned 64-bit integer: {_short(seed)}")
        return
    c.equal("noise.seed_hex", f"0x{seed:016x}", noise.get("seed_hex"))
    origin = noise.get("seed_origin")
    if derivation:
        if not isinstance(origin, str) or f"|vector-{j}|noise-seed" not in origin:
            c.bad("noise.seed_origin", f"expected a text naming vector {j}'s seed label, file has {_short(origin)}")
    elif not isinstance(origin, str):
        c.bad("noise.seed_origin", f"expected a text, file has {_short(origin)}")
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
        _check_example(c, p, j, final, vec["encryption_example"], derivation)


def _check_trace(c: _Checker, steps: list, recorded) -> None:
    if not isinstance(recorded, list) or len(recorded) != len(steps):
        c.bad("trace", f"expected {len(steps)} steps, file has {_short(recorded)[:60]}")
        return
    for s, (mine, theirs) in enumerate(zip(steps, recorded)):
        if not isinstance(theirs, dict):
            c.bad(f"trace[{s}]", f"expected an object, file has {_short(theirs)}")
            continue
        allowed = set(mine) | ({"note"} if mine["step"] == "finalization" else set())
        c.fields(f"trace[{s}].", theirs, allowed, set(mine))
        for name, value in mine.items():
            if name in theirs:
                c.equal(f"trace[{s}].{name}", value, theirs[name])


def _check_example(c: _Checker, p: RubatoParams, j: int, final: list, example, derivation: bool) -> None:
    if not isinstance(example, dict):
        c.bad("encryption_example", f"expected an object, file has {_short(example)}")
        return
    c.fields("encryption_example.", example, _EXAMPLE_FIELDS, _EXAMPLE_FIELDS - {"note"})
    note = example.get("note")
    if note is not None and not isinstance(note, str):
        c.bad("encryption_example.note", f"expected a text, file has {_short(note)}")
    given = example.get("message")
    if derivation:
        message = [((5 * i + 3 * j) % 64 - 32) / 4 for i in range(p.l)]
        c.equal("encryption_example.message", message, given)
    c.equal("encryption_example.delta", p.delta, example.get("delta"))
    if not (isinstance(given, list) and len(given) == p.l
            and all(isinstance(m, (int, float)) and not isinstance(m, bool) for m in given)):
        if not derivation:
            c.bad("encryption_example.message", f"expected {p.l} numbers, file has {_short(given)}")
        return
    try:
        scaled, ciphertext = rubato_model.scale_message(p, given), rubato_model.encrypt(p, final, given)
    except ParameterError as exc:
        c.bad("encryption_example.message", f"unusable input: {exc}")
        return
    c.equal("encryption_example.scaled_message_round_delta_m", scaled,
            example.get("scaled_message_round_delta_m"))
    c.equal("encryption_example.ciphertext_intended", ciphertext, example.get("ciphertext_intended"))
    # The reference's defective output (bit-cast instead of conversion, docs/rubato.md section 5) documents the
    # defect only; it must not be implemented, so only its shape is checked.
    actual = example.get("ciphertext_reference_avx2_actual")
    if not isinstance(actual, list) or len(actual) != p.l:
        c.bad("encryption_example.ciphertext_reference_avx2_actual", f"expected {p.l} words")


def check_rubato_kat_file(path, *, check_derivation: bool = False) -> KatReport:
    """Check every field of every vector of one ``rubato_<set>.json`` file.

    Parameters
    ----------
    path : str or Path
    check_derivation : bool
        False (default): each vector's key, nonce, counter, noise seed and message are taken from
        the file, and every other field is recomputed from them.  True: those inputs must also be
        the ones the label rule of the shipped set derives (docs/rubato.md, "Inputs"; the
        alternative-XOF vectors reuse the inputs of vectors 0 and 4), so a file made with other
        inputs fails.

    Returns
    -------
    KatReport
        ``vectors_checked`` counts the main vectors and, if AES is available, the
        ``alternative_xof_vectors``; otherwise those are listed in ``skipped``.  A file that
        :func:`load_rubato_kat_file` rejects is one file-level mismatch (field ``file``).
    """
    path = Path(path)
    report = KatReport(files=[str(path)])
    c = _Checker(path, report)
    try:
        data, p = load_rubato_kat_file(path)
    except KatFileError as exc:
        c.bad("file", str(exc))
        return report
    _check_params_block(c, data, p)

    for position, vec in enumerate(data["vectors"]):
        c.vector = f"vectors[{position}]"
        _check_vector(c, p, vec, xof="shake256", expected_index=position, with_trace=True,
                      derivation=check_derivation)
        report.vectors_checked += 1

    if "alternative_xof_vectors" not in data:
        report.skipped.append(KatSkip(str(path), "alternative_xof_vectors", ALTERNATIVE_ABSENT))
        return report
    alternative = data["alternative_xof_vectors"]
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
        if check_derivation:
            # The shipped set's AES vectors reuse the inputs of vectors 0 and 4.
            expected_index = (0, 4)[position] if position < 2 else vec.get("index", -1)
        else:
            expected_index = vec.get("index")
            if not isinstance(expected_index, int) or isinstance(expected_index, bool) or expected_index < 0:
                c.bad("index", f"expected a vector number, file has {_short(expected_index)}")
                continue
        _check_vector(c, p, vec, xof="aes128-ctr", expected_index=expected_index, with_trace=False,
                      derivation=check_derivation)
        report.vectors_checked += 1
    return report


def check_rubato_kat_files(paths: Iterable, *, check_derivation: bool = False) -> KatReport:
    """Check several files (see :func:`check_rubato_kat_file`); one merged report."""
    report = KatReport()
    for path in paths:
        report.merge(check_rubato_kat_file(path, check_derivation=check_derivation))
    return report

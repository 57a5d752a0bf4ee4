"""``hhe-gen kat rubato`` and the KAT checker's own-input / derivation modes.

- without a file the command checks the shipped set (package data);
- a KAT file made with random inputs (every field recomputed here with the golden model
  :mod:`hhe_gen.models.rubato`) passes by default and fails with ``--check-derivation``; one
  corrupted output word in a copy of it is reported, and nothing else;
- a missing, non-JSON or wrongly shaped file is a one-line error naming the file (exit status 2);
- skipped vectors are reported as sentences;
- every option of the ``kat`` sub-command has help text.
"""

import argparse
import copy
import json
import random

import pytest

from hhe_gen.apps.cli import build_parser, main
from hhe_gen.host import kat
from hhe_gen.host.kat import (KatFileError, KatSkip, check_rubato_kat_file, load_rubato_kat_file,
                              shipped_kat_files, skip_sentences)
from hhe_gen.models import rubato
from hhe_gen.params.rubato import rubato_params

SET_FILES = ["rubato_80s.json", "rubato_80m.json", "rubato_80l.json",
             "rubato_128s.json", "rubato_128m.json", "rubato_128l.json"]
INPUT_FIELDS = {"key", "nonce", "counter", "label", "noise.seed", "noise.seed_origin", "encryption_example.message"}


def _shipped(name):
    return next(f for f in shipped_kat_files() if f.name == name)


# -- a KAT file with random inputs, made with the golden model ------------------------------------
def _le64(*values):
    return b"".join(v.to_bytes(8, "little") for v in values)


def _fill_vector(p, vec, rng, *, xof, index, with_trace):
    """Random key, nonce, counter, noise seed (and message); every field recomputed."""
    key = [rng.randrange(p.q) for _ in range(p.n)]
    nonce, counter, seed = rng.getrandbits(64), rng.getrandbits(64), rng.getrandbits(64)
    tr = rubato.RubatoTrace()
    final = rubato.keystream(p, key, nonce, counter, noise_seed=seed, trace=tr, xof=xof)
    vec.update({
        "index": index, "label": f"random inputs (test), vector {index}",
        "key": key, "nonce": nonce, "nonce_hex": f"0x{nonce:016x}",
        "counter": counter, "counter_hex": f"0x{counter:016x}",
        "rc_xof_input_hex": _le64(nonce, counter).hex(),
        "rc_xof_words_read": tr.rc_xof_words_read, "rc_xof_words_rejected": tr.rc_xof_words_rejected,
        "round_constants": tr.round_constants, "round_keys": tr.round_keys,
        "keystream_before_noise": tr.keystream_before_noise, "final_keystream": final,
    })
    vec["noise"] = {
        "seed": seed, "seed_hex": f"0x{seed:016x}", "seed_origin": "random.getrandbits(64) in a test",
        "xof_input_hex": (_le64(nonce, counter, seed) + bytes(8)).hex(),
        "values": tr.noise_values, "values_all_n_words": tr.noise_values_all_n_words,
    }
    if "noise_cdf_defect_affected_words" in vec:
        vec["noise_cdf_defect_affected_words"] = rubato.noise_defect_affected_words(p, nonce, counter, seed, xof=xof)
    if with_trace:
        vec["trace"] = copy.deepcopy(tr.steps)
    if "encryption_example" in vec:
        message = [rng.randrange(-28, 29) / 4 for _ in range(p.l)]
        vec["encryption_example"].update({
            "message": message, "scaled_message_round_delta_m": rubato.scale_message(p, message),
            "ciphertext_intended": rubato.encrypt(p, final, message)})


def random_kat(name, seed):
    """A copy of the shipped file ``name`` with random inputs and every output recomputed."""
    data = json.loads(_shipped(name).read_text())
    p = rubato_params(data["parameter_set"])
    rng = random.Random(f"{name}/{seed}")
    for j, vec in enumerate(data["vectors"]):
        _fill_vector(p, vec, rng, xof="shake256", index=j, with_trace=True)
    for vec in data["alternative_xof_vectors"]["vectors"]:
        _fill_vector(p, vec, rng, xof="aes128-ctr", index=vec["index"], with_trace=False)
    return data


@pytest.fixture(scope="module")
def random_files(tmp_path_factory):
    """Every parameter set as a random-input file, and per file a copy with one output word
    changed: (path, corrupted path, (vector, field) of the corruption)."""
    folder = tmp_path_factory.mktemp("random_kat")
    rng = random.Random(14)
    out = {}
    for name in SET_FILES:
        data = random_kat(name, 2026)
        good = folder / name
        good.write_text(json.dumps(data, indent=1))
        j = rng.randrange(len(data["vectors"]))
        field = rng.choice(["final_keystream", "keystream_before_noise", "round_keys"])
        words = data["vectors"][j][field]
        if field == "round_keys":
            words = words[rng.randrange(len(words))]
        i = rng.randrange(len(words))
        words[i] = (words[i] + 1) % rubato_params(data["parameter_set"]).q
        bad = folder / f"corrupted_{name}"
        bad.write_text(json.dumps(data))
        out[name] = (good, bad, (f"vectors[{j}]", field))
    return out


def test_random_inputs_differ_from_the_shipped_ones(random_files):
    """The generated file keeps the format but none of the shipped inputs, and its vectors are
    every one recomputed (not copied)."""
    for name, (good, _, _) in random_files.items():
        mine, shipped = json.loads(good.read_text()), json.loads(_shipped(name).read_text())
        assert set(mine) == set(shipped)
        for a, b in zip(mine["vectors"], shipped["vectors"]):
            assert set(a) == set(b) and set(a["noise"]) == set(b["noise"])
            for field in ("key", "nonce", "counter", "final_keystream", "round_constants"):
                assert a[field] != b[field]
            assert a["noise"]["seed"] != b["noise"]["seed"]


@pytest.mark.parametrize("name", SET_FILES)
def test_random_input_file_passes_with_its_own_inputs(random_files, name):
    good, _, _ = random_files[name]
    report = check_rubato_kat_file(good)
    assert report.mismatches == [], report.mismatches[:3]
    assert report.vectors_checked == (12 if kat.aes_available() else 10)


@pytest.mark.parametrize("name", SET_FILES)
def test_random_input_file_fails_the_derivation_check(random_files, name):
    good, _, _ = random_files[name]
    report = check_rubato_kat_file(good, check_derivation=True)
    assert not report.ok
    fields = {m.field for m in report.mismatches}
    # Only the inputs are wrong: every recomputed output agrees with the model.
    assert fields <= INPUT_FIELDS, sorted(fields - INPUT_FIELDS)
    assert {"key", "nonce", "noise.seed", "label", "noise.seed_origin", "encryption_example.message"} <= fields
    assert "counter" in fields            # vectors 4..9 have counter j-4; random ones do not
    wrong_keys = {m.vector for m in report.mismatches if m.field == "key"}
    assert {f"vectors[{j}]" for j in range(10)} <= wrong_keys


@pytest.mark.parametrize("name", SET_FILES)
def test_one_corrupted_output_word_is_the_only_mismatch(random_files, name):
    _, bad, where = random_files[name]
    report = check_rubato_kat_file(bad)
    assert [(m.vector, m.field) for m in report.mismatches] == [where]
    assert report.mismatches[0].detail.startswith("differs first at [")


def test_cli_on_the_random_file(random_files, capsys):
    good, bad, (vector, field) = random_files["rubato_80m.json"]
    checked = 12 if kat.aes_available() else 10
    assert main(["kat", "rubato", str(good)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == f"{checked} vectors checked, 0 mismatches"

    assert main(["kat", "rubato", "--check-derivation", str(good)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith(f"{checked} vectors checked, ") and not out[-1].endswith(" 0 mismatches")
    assert any(f"{good}: vectors[4].key: " in line for line in out)
    assert any("more mismatches (--verbose lists them all)" in line for line in out)

    assert main(["kat", "rubato", str(bad)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 2 and out[-1] == f"{checked} vectors checked, 1 mismatches"
    assert out[0].startswith(f"mismatch: {bad}: {vector}.{field}: differs first at [")


# -- the shipped set ------------------------------------------------------------------------------
def test_no_file_checks_the_shipped_set(capsys):
    assert main(["kat", "rubato"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0] == "the 6 shipped Rubato KAT files: " + ", ".join(SET_FILES)
    assert out[-1] == "72 vectors checked, 0 mismatches"
    assert main(["kat", "rubato", "--check-derivation", "--verbose"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[1:-1] == [f"{name}: 12 vectors checked, 0 mismatches" for name in SET_FILES]
    assert out[-1] == "72 vectors checked, 0 mismatches"


def test_files_may_follow_options(capsys):
    first, second = (str(_shipped(n)) for n in ("rubato_80s.json", "rubato_128s.json"))
    assert main(["kat", "rubato", first, "--on", "model", "--verbose", second]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [f"{first}: 12 vectors checked, 0 mismatches", f"{second}: 12 vectors checked, 0 mismatches",
                   "24 vectors checked, 0 mismatches"]


def test_check_derivation_is_for_the_model_only(capsys):
    assert main(["kat", "rubato", "--on", "rtl", "--check-derivation"]) == 2
    assert "'--check-derivation'" in capsys.readouterr().err


# -- unusable files -------------------------------------------------------------------------------
BAD_FILES = [
    ("not_json.json", "{\"parameter_set\": ", "is not valid JSON"),
    ("list.json", "[1, 2]", "is not a Rubato KAT file: the top level is a JSON array, not an object"),
    ("no_set.json", "{\"vectors\": [{}]}", "is not a Rubato KAT file: 'parameter_set' is None"),
    ("other_set.json", "{\"parameter_set\": \"Par-256X\", \"vectors\": [{}]}", "'parameter_set' is 'Par-256X'"),
    ("no_vectors.json", "{\"parameter_set\": \"Par-80S\"}", "'vectors' is missing or not a non-empty list"),
    ("vector_not_object.json", "{\"parameter_set\": \"Par-80S\", \"vectors\": [3]}",
     "vectors[0] is a JSON number, not an object"),
    ("bad_alternative.json", "{\"parameter_set\": \"Par-80S\", \"vectors\": [{}], \"alternative_xof_vectors\": []}",
     "'alternative_xof_vectors' is not an object with a 'vectors' list"),
]


def test_missing_file_is_a_one_line_error(tmp_path, capsys):
    missing = tmp_path / "rubato_nope.json"
    for argv in (["kat", "rubato", str(missing)], ["kat", "rubato", str(_shipped("rubato_80s.json")), str(missing)],
                 ["kat", "rubato", "--on", "rtl", str(missing)]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""                       # checked nothing, reported no count
        assert captured.err == f"hhe-gen: error: KAT file not found: {missing}\n"
    with pytest.raises(KatFileError, match="not found"):
        load_rubato_kat_file(missing)


@pytest.mark.parametrize("name,text,message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_unusable_file_is_a_one_line_error(tmp_path, capsys, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    assert main(["kat", "rubato", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.splitlines()
    assert len(err) == 1 and str(path) in err[0] and message in err[0], err
    with pytest.raises(KatFileError):
        load_rubato_kat_file(path)
    report = check_rubato_kat_file(path)                # the library: one file-level mismatch
    assert [m.field for m in report.mismatches] == ["file"] and report.vectors_checked == 0


def test_directory_is_a_one_line_error(tmp_path, capsys):
    assert main(["kat", "rubato", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"hhe-gen: error: KAT file {tmp_path} is a directory, not a file\n"


def test_wrong_fields_inside_a_vector_are_mismatches_not_crashes(tmp_path):
    data = json.loads(_shipped("rubato_80s.json").read_text())
    data["vectors"][0]["noise"] = 5
    data["vectors"][1]["nonce"] = "zero"
    data["vectors"][2]["key"] = None
    data["vectors"][3]["encryption_example"] = []
    data["vectors"][4]["trace"][0] = "x"
    data["params"] = []
    path = tmp_path / "rubato_80s.json"
    path.write_text(json.dumps(data))
    found = {(m.vector, m.field) for m in check_rubato_kat_file(path).mismatches}
    assert {("vectors[0]", "noise"), ("vectors[1]", "nonce"), ("vectors[2]", "key"),
            ("vectors[3]", "encryption_example"), ("vectors[4]", "trace[0]"), (None, "params.n")} <= found


# -- skipped vectors ------------------------------------------------------------------------------
def test_skip_sentences():
    reason = "the RTL core has SHAKE256 only"
    one = [KatSkip("/x/rubato_80s.json", f"alternative_xof_vectors[{k}]", reason) for k in range(2)]
    assert skip_sentences(one) == [f"skipped 2 AES-XOF vectors of rubato_80s.json: {reason}"]
    two = one + [KatSkip("/x/rubato_128s.json", f"alternative_xof_vectors[{k}]", reason) for k in range(2)]
    assert skip_sentences(two) == [
        f"skipped 4 AES-XOF vectors (2 of each of rubato_80s.json, rubato_128s.json): {reason}"]
    uneven = two[:3] + [KatSkip("/y/rubato_80s.json", "alternative_xof_vectors[0]", "other")]
    assert skip_sentences(uneven) == [
        f"skipped 3 AES-XOF vectors (2 of /x/rubato_80s.json, 1 of /x/rubato_128s.json): {reason}",
        "skipped 1 AES-XOF vector of /y/rubato_80s.json: other"]
    assert skip_sentences([]) == []


def test_skipped_vectors_print_as_a_sentence(monkeypatch, capsys):
    monkeypatch.setattr(kat, "aes_available", lambda: False)
    assert main(["kat", "rubato", str(_shipped("rubato_80l.json"))]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == ["skipped 2 AES-XOF vectors of rubato_80l.json: AES-128-CTR needs the optional "
                   "'cryptography' package, which is not installed",
                   "10 vectors checked, 0 mismatches"]
    assert not any("KatSkip" in line for line in out)


# -- help -----------------------------------------------------------------------------------------
def test_every_kat_option_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    kat_parser = sub.choices["kat"]
    for action in kat_parser._actions:
        assert action.help and action.help != argparse.SUPPRESS, action.option_strings or action.dest
    text = kat_parser.format_help()
    assert "--check-derivation" in text and "shipped" in text

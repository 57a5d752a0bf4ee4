"""The Rubato KAT checker: passes the shipped files (with and without the derivation check),
reports corrupted copies field by field."""

import copy
import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest

from hhe_gen.host import kat
from hhe_gen.host.kat import (KatReport, check_rubato_kat_file, check_rubato_kat_files,
                              find_rubato_kat_files, shipped_kat_files)

# The shipped package data (hhe_gen/data/kat/rubato).
KAT_DIR = Path(str(resources.files("hhe_gen") / "data" / "kat" / "rubato"))
SET_FILES = ["rubato_80s.json", "rubato_80m.json", "rubato_80l.json",
             "rubato_128s.json", "rubato_128m.json", "rubato_128l.json"]


@pytest.fixture(scope="module")
def kat_files():
    files = shipped_kat_files()
    if len(files) != 6:
        pytest.fail(f"expected the 6 shipped Rubato KAT files in {KAT_DIR}, found {len(files)}")
    return files


def test_shipped_files_are_the_package_data():
    """shipped_kat_files(): the six files of hhe_gen/data/kat/rubato in parameter-set order, the
    same as a directory listing of that folder; the folder's README names their source."""
    files = shipped_kat_files()
    assert [f.name for f in files] == SET_FILES
    assert all(f.is_file() and f.parent == KAT_DIR for f in files)
    assert sorted(files) == find_rubato_kat_files(KAT_DIR)
    readme = (KAT_DIR / "README.md").read_text()
    assert "KAIST-CryptLab/Rubato" in readme and "145ee37c0d5e4552c273488f6389dfb47b68febd" in readme
    for f in files:
        assert f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.name}" in readme


@pytest.mark.parametrize("check_derivation", [False, True], ids=["own-inputs", "check-derivation"])
def test_all_shipped_files_pass(kat_files, check_derivation):
    report = check_rubato_kat_files(kat_files, check_derivation=check_derivation)
    assert report.mismatches == []
    per_file_alt = 0 if kat.aes_available() else 2
    assert report.vectors_checked == 6 * (10 + 2 - per_file_alt)
    assert len(report.skipped) == 6 * per_file_alt
    assert report.ok
    assert report.summary().startswith(f"{report.vectors_checked} vectors checked, 0 mismatches")
    assert len(report.files) == 6


def test_without_aes_the_alternative_vectors_are_skipped_not_passed(kat_files, monkeypatch):
    monkeypatch.setattr(kat, "aes_available", lambda: False)
    report = check_rubato_kat_file(kat_files[0])
    assert report.vectors_checked == 10
    assert [s.vector for s in report.skipped] == ["alternative_xof_vectors[0]", "alternative_xof_vectors[1]"]
    assert all("cryptography" in s.reason for s in report.skipped)
    assert report.summary() == "10 vectors checked, 0 mismatches, 2 skipped"


def _bump(value):
    return value + 1 if isinstance(value, int) else value


# (file, path inside the JSON, expected vector name, expected field name)
# An input (key, counter, noise seed) is taken from the file by default, so its corruption shows in
# the outputs computed from it; with check_derivation the input itself is reported (INPUT_FIELDS).
CORRUPTIONS = [
    ("rubato_128s.json", ["vectors", 3, "trace", 2, "after_MixRows", 5], "vectors[3]", "trace[2].after_MixRows"),
    ("rubato_128s.json", ["vectors", 0, "trace", 5, "after_ARK", 15], "vectors[0]", "trace[5].after_ARK"),
    ("rubato_80m.json", ["vectors", 7, "round_constants", 1, 3], "vectors[7]", "round_constants"),
    ("rubato_80m.json", ["vectors", 7, "round_keys", 2, 0], "vectors[7]", "round_keys"),
    ("rubato_80l.json", ["vectors", 2, "rc_xof_words_read"], "vectors[2]", "rc_xof_words_read"),
    ("rubato_80l.json", ["vectors", 2, "rc_xof_words_rejected"], "vectors[2]", "rc_xof_words_rejected"),
    ("rubato_80s.json", ["vectors", 9, "keystream_before_noise", 0], "vectors[9]", "keystream_before_noise"),
    ("rubato_80s.json", ["vectors", 4, "noise", "values", 2], "vectors[4]", "noise.values"),
    ("rubato_80s.json", ["vectors", 4, "noise", "values_all_n_words", 15], "vectors[4]", "noise.values_all_n_words"),
    ("rubato_80s.json", ["vectors", 5, "noise", "seed"], "vectors[5]", "noise.seed"),
    ("rubato_80s.json", ["vectors", 6, "final_keystream", 11], "vectors[6]", "final_keystream"),
    ("rubato_128m.json", ["vectors", 1, "noise_cdf_defect_affected_words", 0, "word"], "vectors[1]",
     "noise_cdf_defect_affected_words"),
    ("rubato_128l.json", ["vectors", 1, "encryption_example", "ciphertext_intended", 4], "vectors[1]",
     "encryption_example.ciphertext_intended"),
    ("rubato_128l.json", ["vectors", 0, "encryption_example", "scaled_message_round_delta_m", 1], "vectors[0]",
     "encryption_example.scaled_message_round_delta_m"),
    ("rubato_128l.json", ["vectors", 8, "key", 10], "vectors[8]", "key"),
    ("rubato_128l.json", ["vectors", 8, "counter"], "vectors[8]", "counter"),
    ("rubato_128l.json", ["params", "noise", "cdf_table", 4], None, "params.noise.cdf_table"),
    ("rubato_80s.json", ["alternative_xof_vectors", "vectors", 1, "round_constants", 0, 0],
     "alternative_xof_vectors[1]", "round_constants"),
    ("rubato_80s.json", ["alternative_xof_vectors", "vectors", 0, "noise", "values", 0],
     "alternative_xof_vectors[0]", "noise.values"),
]


INPUT_FIELDS = {"key": "round_keys", "counter": "counter_hex", "noise.seed": "noise.seed_hex"}


@pytest.mark.parametrize("name,path,vector,field", CORRUPTIONS)
def test_corrupted_copy_is_reported(tmp_path, kat_files, name, path, vector, field):
    if path[0] == "alternative_xof_vectors":
        pytest.importorskip("cryptography", reason="AES-128-CTR vectors need 'cryptography'")
    data = json.loads((KAT_DIR / name).read_text())
    bad = copy.deepcopy(data)
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = _bump(node[path[-1]])
    assert bad != data
    target = tmp_path / name
    target.write_text(json.dumps(bad))
    for check_derivation in (False, True):
        report = check_rubato_kat_file(target, check_derivation=check_derivation)
        expected = field if check_derivation else INPUT_FIELDS.get(field, field)
        assert not report.ok
        assert (vector, expected) in {(m.vector, m.field) for m in report.mismatches}, report.mismatches
        if not check_derivation:
            assert field not in INPUT_FIELDS or field not in {m.field for m in report.mismatches}
        assert report.summary().startswith(f"{report.vectors_checked} vectors checked, "
                                           f"{report.mismatch_count} mismatches")


def test_unknown_and_missing_fields_are_reported(tmp_path):
    data = json.loads((KAT_DIR / "rubato_128s.json").read_text())
    data["vectors"][2]["extra_field"] = [1, 2, 3]
    del data["vectors"][3]["final_keystream"]
    data["vectors"][4]["trace"][0]["after_Something"] = []
    target = tmp_path / "rubato_128s.json"
    target.write_text(json.dumps(data))
    fields = {(m.vector, m.field) for m in check_rubato_kat_file(target).mismatches}
    assert ("vectors[2]", "extra_field") in fields
    assert ("vectors[3]", "final_keystream") in fields
    assert ("vectors[4]", "trace[0].after_Something") in fields


def test_unreadable_file_and_unknown_set(tmp_path):
    report = check_rubato_kat_file(tmp_path / "missing.json")
    assert report.mismatch_count == 1 and report.vectors_checked == 0 and not report.ok
    assert report.mismatches[0].field == "file" and "not found" in report.mismatches[0].detail
    other = tmp_path / "rubato_x.json"
    other.write_text(json.dumps({"parameter_set": "Par-256X", "vectors": []}))
    merged = check_rubato_kat_files([tmp_path / "missing.json", other])
    assert merged.mismatch_count == 2
    assert merged.summary() == "0 vectors checked, 2 mismatches"
    assert isinstance(merged, KatReport)

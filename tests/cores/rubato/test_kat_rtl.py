"""hhe_gen.host.kat_rtl: the KAT files on the simulated RTL (a subset by default, all 60 SHAKE256
vectors of the six files with every layer in the slow set), and a corrupted file is caught."""

import json
from pathlib import Path

import pytest

from hhe_gen.host.kat import KatReport
from hhe_gen.host.kat_rtl import check_rubato_kat_file_rtl, check_rubato_kat_files_rtl

from ._helpers import KAT_DIR

FILES = sorted(Path(KAT_DIR).glob("rubato_*.json"))


def test_two_vectors_with_trace():
    report = check_rubato_kat_file_rtl(Path(KAT_DIR) / "rubato_128s.json", trace=True, vectors=[0, 1])
    assert isinstance(report, KatReport)
    assert report.ok and report.vectors_checked == 2, report.mismatches[:3]
    assert len(report.skipped) == 2        # the AES-128-CTR vectors


def test_two_vectors_with_trace_butterfly():
    """The same with the multi-field Butterfly's Z_t mode as the multipliers."""
    report = check_rubato_kat_file_rtl(Path(KAT_DIR) / "rubato_80m.json", trace=True, vectors=[3, 7],
                                       multiplier="butterfly")
    assert report.ok and report.vectors_checked == 2, report.mismatches[:3]


def test_corrupted_file_is_caught(tmp_path):
    data = json.loads((Path(KAT_DIR) / "rubato_80s.json").read_text())
    vec = data["vectors"][0]
    vec["keystream_before_noise"][3] ^= 1
    vec["trace"][1]["after_MixRows"][5] ^= 4
    vec["noise"]["values"][0] += 1
    bad = tmp_path / "rubato_80s.json"
    bad.write_text(json.dumps(data))
    report = check_rubato_kat_file_rtl(bad, trace=True, vectors=[0])
    fields = {m.field for m in report.mismatches}
    assert {"keystream_before_noise", "trace[1].after_MixRows", "noise.values"} <= fields
    assert not report.ok


def test_unreadable_file(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{not json")
    report = check_rubato_kat_files_rtl([path])
    assert report.mismatch_count == 1 and not report.ok


@pytest.mark.slow
@pytest.mark.parametrize("multiplier", ["barrett", "butterfly"])
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_vector_every_layer(path, multiplier):
    report = check_rubato_kat_files_rtl([path], trace=True, lanes=2, multiplier=multiplier)
    assert report.ok and report.vectors_checked == 10, report.mismatches[:3]

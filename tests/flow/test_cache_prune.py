"""Pruning the build caches: the entries used least recently go first, old ones go, an entry another
build holds stays; ``hhe-gen cache`` lists and prunes the three caches."""

import json
import os
import time

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.flow.cache_prune import budget_bytes, entries, mark_used, prune, sibling_lock
from hhe_gen.flow.filelock import locked
from hhe_gen.params.errors import ParameterError

DAY = 86400.0


def _entry(root, name, kib, age_days, now):
    folder = root / name
    (folder / "obj").mkdir(parents=True)
    (folder / "obj" / "blob").write_bytes(os.urandom(kib * 1024))
    os.utime(folder, (now - age_days * DAY, now - age_days * DAY))
    return folder


@pytest.fixture
def cache(tmp_path):
    now = time.time()
    for name, kib, age in (("new", 64, 0.5), ("mid", 64, 2), ("old", 64, 5)):
        _entry(tmp_path, name, kib, age, now)
    (tmp_path / ".new.lock").write_text("")        # lock files and the locks folder are not entries
    (tmp_path / "locks").mkdir()
    return tmp_path, now


def _names(root):
    return sorted(e.path.name for e in entries(root))


def test_entries_are_listed_newest_first_with_their_size(cache):
    root, _ = cache
    listed = entries(root)
    assert [e.path.name for e in listed] == ["new", "mid", "old"]
    assert all(e.bytes >= 64 * 1024 for e in listed)


def test_over_the_budget_the_least_recently_used_go_first(cache):
    root, now = cache
    one = entries(root)[0].bytes
    removed = prune(root, sibling_lock, max_bytes=2 * one + one // 2, now=now)
    assert [e.path.name for e in removed] == ["old"]
    assert _names(root) == ["mid", "new"]
    mark_used(root / "mid")                         # used now: "new" is the least recent
    prune(root, sibling_lock, max_bytes=one + one // 2, now=now + 1)
    assert _names(root) == ["mid"]


def test_entries_unused_for_longer_than_the_limit_go(cache):
    root, now = cache
    prune(root, sibling_lock, older_than=1 * DAY, now=now)
    assert _names(root) == ["new"]


def test_an_entry_held_by_a_build_or_kept_stays(cache):
    root, now = cache
    with locked(sibling_lock(root / "old")):
        prune(root, sibling_lock, max_bytes=0, keep=root / "mid", now=now)
    assert _names(root) == ["mid", "old"]


def test_bad_budgets_are_refused(cache, monkeypatch):
    root, _ = cache
    with pytest.raises(ParameterError, match="max_bytes"):
        prune(root, sibling_lock, max_bytes=-1)
    with pytest.raises(ParameterError, match="older_than"):
        prune(root, sibling_lock, older_than=-1)
    monkeypatch.setenv("HHE_GEN_CACHE_MAX_GB", "lots")
    with pytest.raises(ParameterError, match="HHE_GEN_CACHE_MAX_GB"):
        budget_bytes()
    monkeypatch.setenv("HHE_GEN_CACHE_MAX_GB", "1.5")
    assert budget_bytes() == 1_500_000_000


def test_cli_lists_and_prunes_every_cache(tmp_path, monkeypatch, capsys):
    roots = {"synthesis": tmp_path / "h" / "synth", "verilator": tmp_path / "v", "soc": tmp_path / "s"}
    monkeypatch.setenv("HHE_GEN_CACHE", str(tmp_path / "h"))
    monkeypatch.setenv("HHE_GEN_VERILATOR_CACHE", str(roots["verilator"]))
    monkeypatch.setenv("HHE_GEN_SOC_CACHE", str(roots["soc"]))
    now = time.time()
    for name, root in roots.items():
        _entry(root, f"{name}-a-0123456789abcdef0123", 32, 0, now)
        _entry(root, f"{name}-b-3210fedcba9876543210", 32, 10, now)
    out = tmp_path / "listing.json"
    assert main(["cache", "--json", str(out)]) == 0
    listing = json.loads(out.read_text())
    assert {k: v["entries"] for k, v in listing.items()} == {"synthesis": 2, "verilator": 2, "soc": 2}
    assert main(["cache", "--prune", "--older-than", "3", "--json", str(out)]) == 0
    pruned = json.loads(out.read_text())
    for name, root in roots.items():
        assert pruned[name]["entries"] == 1 and len(pruned[name]["removed"]) == 1
        assert _names(root) == [f"{name}-a-0123456789abcdef0123"]
    assert main(["cache", "--prune", "--max-gb", "-2"]) == 2
    assert "--max-gb" in capsys.readouterr().err

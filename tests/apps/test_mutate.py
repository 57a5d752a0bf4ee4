"""hhe_gen.apps.mutate: the mutant enumerator on a synthetic source, a tiny end-to-end run on a copy
of the tree (the working tree untouched), the ``hhe-gen mutate`` command; the full mutation run
of every family is in the slow set."""

import ast
import json
import os
from pathlib import Path

import pytest

from hhe_gen.apps import mutate
from hhe_gen.apps.cli import main

ROOT = Path(__file__).resolve().parents[2]

SOURCE = '''\
from amaranth.hdl import Mux


def check_width(w):
    if not 2 <= w <= 64:
        raise ValueError(f"bad width {w + 1}")
    return w


class Unit:
    def elaborate(self, platform):
        s = a + b
        d = s - q
        r = Mux(d[-1], s, d)
        neg = (x) < 0                 # a comment with < and +
        same = kind == "ct"
        y = v[:k + 2]
        z = 3 * w
        f = lambda u, t: u + t
        t = (r  # split over lines
             >= limit)
        name = f"r{k + 1}"
        return r if n != 1 else add_delay(w + 1)
'''


def _by(mutants):
    return {(m.operator, m.original, m.mutant, m.line) for m in mutants}


def test_enumerator_finds_the_known_mutants():
    muts = mutate.enumerate_source(SOURCE, "cores/x/unit.py")
    found = _by(muts)
    expected = {
        ("cmp", "<", "<=", 15), ("cmp", ">=", ">", 21), ("cmp", "!=", "==", 23),   # comparisons
        ("const", "0", "1", 15), ("const", "0", "(-1)", 15),                          # x < 0
        ("const", "-1", "-2", 14), ("const", "-1", "0", 14),                          # d[-1]: the sign bit
        ("const", "2", "1", 17), ("const", "2", "3", 17),                             # v[:k + 2]
        ("const", "1", "0", 23), ("const", "1", "2", 23),                             # n != 1
        ("arith", "-", "+", 13),                                                      # s - q: a modulus
        ("arith", "+", "-", 19),                                                      # inside a lambda
    }
    assert found == expected, (found - expected, expected - found)
    # not mutated: the parameter check, the string dispatch, a + b (no modulus, no Mux / lambda),
    # 3 * w, the f-string and the delay estimate
    assert all(m.function == "Unit.elaborate" and m.family == "x" for m in muts)
    checks = mutate.enumerate_source(SOURCE, "cores/x/unit.py", checks=True)
    extra = {m for m in checks if m.context == "check"}
    assert {(m.original, m.mutant) for m in extra if m.operator == "cmp"} == {("<=", "<")}
    assert len({m.start for m in extra if m.operator == "cmp"}) == 2               # both <= of 2 <= w <= 64


def test_every_mutant_applies_and_changes_one_node():
    src = SOURCE.encode()
    base = ast.dump(ast.parse(src))
    for m in mutate.enumerate_source(src, "cores/x/unit.py", checks=True):
        out = m.apply(src)
        tree = ast.dump(ast.parse(out))                 # still Python
        assert tree != base, m.id
        assert out == src[:m.start] + m.mutant.encode() + src[m.end:]
    with pytest.raises(ValueError):
        mutate.enumerate_source(src, "x.py")[0].apply(b"# changed\n" + src)


def test_operator_selection_and_sampling():
    cmp_only = mutate.enumerate_source(SOURCE, "cores/x/unit.py", operators=("cmp",))
    assert {m.operator for m in cmp_only} == {"cmp"} and len(cmp_only) == 3
    with pytest.raises(ValueError):
        mutate.enumerate_source(SOURCE, operators=("swap",))
    muts = mutate.enumerate_source(SOURCE, "cores/x/unit.py")
    a, b = mutate.sample(muts, 4, seed=3), mutate.sample(muts, 4, seed=3)
    assert a == b and len(a) == 4 and a == sorted(a, key=muts.index)
    assert mutate.sample(muts, None) == muts


def test_the_real_tree_has_mutants_in_every_family():
    muts = mutate.enumerate_tree(ROOT)
    assert {m.family for m in muts} == set(mutate.FAMILIES)
    modadd = mutate.enumerate_tree(ROOT, ["cores/arith/modadd.py"])
    assert any(m.original == "-1" and m.function == "ModAdd._build" for m in modadd)   # the borrow bit
    assert mutate.select_tests(ROOT, "cores/arith/modadd.py")[0].startswith("tests/cores/arith/test_")


def test_tiny_end_to_end_run_on_a_copy():
    """Three mutants of ModAdd against its test file: the select-bit and the +/- mutants are killed,
    the wider sum (an equivalent mutant) survives; the working tree is untouched."""
    target = ROOT / "cores/arith/modadd.py"
    before = target.read_bytes(), os.stat(target).st_mtime_ns
    muts = mutate.enumerate_tree(ROOT, ["cores/arith/modadd.py"])
    pick = [next(m for m in muts if m.function == "ModAdd._build" and (m.original, m.mutant) == pair)
            for pair in (("-1", "0"), ("+", "-"), ("1", "2"))]
    seen = []
    results, baselines = mutate.run_mutants(ROOT, pick, tests=["tests/cores/arith/test_modadd.py"],
                                            timeout=120, progress=lambda event, **kw: seen.append(event))
    status = {(r.mutant.original, r.mutant.mutant): r.status for r in results}
    assert status == {("-1", "0"): "killed", ("+", "-"): "killed", ("1", "2"): "survived"}
    assert all(r.detail.startswith("tests/cores/arith/test_modadd.py::") for r in results if r.status == "killed")
    assert seen.count("done") == 3 and seen[0] == "baseline"
    (base,) = baselines.values()
    assert base.returncode == 0 and base.failures == []
    data = mutate.to_json(results, baselines)
    assert data["summary"]["arith"] == {**data["summary"]["arith"], "mutants": 3, "killed": 2, "survived": 1}
    assert {"file", "line", "original", "mutant", "status", "seconds"} <= set(data["mutants"][0])
    assert (target.read_bytes(), os.stat(target).st_mtime_ns) == before


def test_cli_list_and_errors(capsys):
    assert main(["mutate", "cores/sampler/residues.py", "--ops", "cmp", "--list"]) == 0
    out = capsys.readouterr().out
    assert "residues.py:" in out and "<=" in out
    assert main(["mutate", "nonsense", "--list"]) == 2
    assert main(["mutate", "arith", "--ops", "cmp,swap", "--list"]) == 2
    assert main(["mutate", "arith", "--sample", "0"]) == 2
    assert "--sample" in capsys.readouterr().err


def test_cli_run_writes_json(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["mutate", "cores/arith/modadd.py", "--match", "ModSub._build", "--ops", "arith",
                 "--tests", "tests/cores/arith/test_modadd.py", "--sample", "1", "--seed", "2",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    (rec,) = data["mutants"]
    assert rec["status"] == "killed" and rec["function"] == "ModSub._build" and rec["seconds"] > 0
    (run,) = data["runs"]
    assert run["total_mutants"] == 2 and run["sample"] == 1 and run["ran"] == 1 and run["operators"] == ["arith"]
    assert data["summary"]["arith"]["mutants"] == 1
    assert "per family" in capsys.readouterr().out


def _run_cli(out, tests, *selection):
    return main(["mutate", "cores/arith/modadd.py", "--ops", "arith", "--tests", tests, "--json", str(out),
                 *selection])


def test_cli_runs_add_to_the_results_file(tmp_path, capsys):
    """Two runs of other selections leave both in the file; a selection run again replaces its
    records and keeps the others; a file that is no results file is refused before any run."""
    out, tests = tmp_path / "m.json", _hash_test(tmp_path)
    assert _run_cli(out, tests, "--match", "ModSub._build") == 0
    assert _run_cli(out, tests, "--match", "ModAdd._build", "--sample", "1") == 0
    assert "1 mutants of this run (0 replaced), 2 earlier kept" in capsys.readouterr().out
    data = json.loads(out.read_text())
    first = {m["id"]: m for m in data["mutants"]}
    assert len(first) == 3 and sum("ModSub" in m["function"] for m in first.values()) == 2
    assert all(m["status"] == "killed" for m in first.values())
    assert [r["match"] for r in data["runs"]] == [["ModSub._build"], ["ModAdd._build"]]
    assert data["summary"]["arith"]["mutants"] == 3 and len(data["baselines"]) == 1
    assert _run_cli(out, tests, "--match", "ModSub._build") == 0            # the first selection again
    assert "2 mutants of this run (2 replaced), 1 earlier kept" in capsys.readouterr().out
    again = json.loads(out.read_text())
    assert [m["id"] for m in again["mutants"]] == list(first) and len(again["runs"]) == 2
    assert again["summary"]["arith"]["mutants"] == 3

    for bad in ("{not json", '{"results": []}', '{"mutants": [{"no id": 1}]}'):
        out.write_text(bad)
        assert _run_cli(out, tests, "--match", "ModSub._build") == 2
        err = capsys.readouterr().err
        assert err.startswith("hhe-gen: error: ") and "left as it is" in err and "killed" not in err
        assert out.read_text() == bad and sorted(p.name for p in tmp_path.glob("m.json*")) == ["m.json"]


def test_an_earlier_one_run_file_is_read_as_one_run(tmp_path):
    """The one-run form written before (run fields at the top level) is merged, not refused."""
    muts = mutate.enumerate_tree(ROOT, ["cores/arith/modadd.py"], operators=("arith",))
    a, b = (mutate.MutantResult(m, "killed", 1.0, "t") for m in muts[:2])
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"summary": mutate.summarize([a]), "mutants": [a.record()], "root": "/r",
                               "operators": ["arith"], "sample": None, "seed": None, "total_mutants": 4}))
    written = mutate.write_results(old, mutate.to_json([b, a], operators=["arith"], match=["x"]))
    assert (written.kept, written.replaced, written.backup) == (0, 1, None)
    data = json.loads(old.read_text())
    assert [m["id"] for m in data["mutants"]] == [a.mutant.id, b.mutant.id]
    assert data["runs"] == [{"root": "/r", "operators": ["arith"], "sample": None, "seed": None,
                             "total_mutants": 4, "ran": 1},
                            {"operators": ["arith"], "match": ["x"], "ran": 2}]
    assert data["summary"]["arith"]["mutants"] == 2
    old.write_text("[]")                    # changed under a run: kept beside it, the run's results written
    written = mutate.write_results(old, mutate.to_json([a]))
    assert written.backup == tmp_path / "old.json.bak" and written.backup.read_text() == "[]"
    assert [m["id"] for m in json.loads(old.read_text())["mutants"]] == [a.mutant.id]


@pytest.mark.slow
def test_full_mutation_run(tmp_path):
    """Every mutant of every family against its family's tests (hours: see docs in the module)."""
    muts = mutate.enumerate_tree(ROOT)
    results, _ = mutate.run_mutants(ROOT, muts, jobs=os.cpu_count() or 1)
    assert len(results) == len(muts) and all(r.status in mutate.STATUSES for r in results)
    summary = mutate.summarize(results)
    assert set(summary) == set(mutate.FAMILIES)
    (tmp_path / "mutate.json").write_text(json.dumps(mutate.to_json(results)))


def test_find_root_without_arguments_is_this_checkout(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)             # not found through the working directory
    root = mutate.find_root()
    assert (root / "cores").is_dir() and (root / "hhe_gen" / "apps" / "mutate").is_dir()


# -- a mutant is killed only by a test that fails; a run without verdicts is an error ---------------
NO_PYTEST = (os.sys.executable, "-c", "import sys; sys.exit('No module named pytest')")


def _modadd_mutant():
    muts = mutate.enumerate_tree(ROOT, ["cores/arith/modadd.py"])
    return next(m for m in muts if m.function == "ModAdd._build" and (m.original, m.mutant) == ("+", "-"))


def _hash_test(tmp_path, at_module_level: bool = False) -> str:
    """A test file that fails (or, at module level, does not collect) when modadd.py is changed."""
    import hashlib
    digest = hashlib.sha256((ROOT / "cores/arith/modadd.py").read_bytes()).hexdigest()
    check = ("import hashlib, hhe_gen.cores.arith.modadd as m\n"
             f"assert hashlib.sha256(open(m.__file__, 'rb').read()).hexdigest() == {digest!r}\n")
    body = check + "\n\ndef test_ok():\n    pass\n" if at_module_level else \
        "def test_unchanged():\n" + "".join(f"    {ln}\n" for ln in check.splitlines()) + \
        "\n\ndef test_other():\n    pass\n"
    path = tmp_path / ("test_collect.py" if at_module_level else "test_hash.py")
    path.write_text(body)
    return str(path)


def test_a_failing_test_kills_and_a_collection_error_of_the_mutant_kills(tmp_path):
    mutant = _modadd_mutant()
    (res,), baselines = mutate.run_mutants(ROOT, [mutant], tests=[_hash_test(tmp_path)], timeout=120)
    assert res.status == "killed" and res.detail.endswith("::test_unchanged"), res
    (base,) = baselines.values()
    assert base.returncode == 0 and base.failures == base.dropped == []
    (res,), _ = mutate.run_mutants(ROOT, [mutant], tests=[_hash_test(tmp_path, True)], timeout=120)
    assert res.status == "killed" and "does not collect" in res.detail, res


def test_a_baseline_that_cannot_run_or_passes_nothing_is_an_error(tmp_path, monkeypatch):
    mutant = _modadd_mutant()
    skipped = tmp_path / "test_skip.py"
    skipped.write_text("import pytest\n\n\n@pytest.mark.skip\ndef test_nothing():\n    pass\n")
    with pytest.raises(mutate.MutationError, match="pass no test"):
        mutate.run_mutants(ROOT, [mutant], tests=[str(skipped)], timeout=120)
    monkeypatch.setattr(mutate.Workspace, "command", NO_PYTEST)
    with pytest.raises(mutate.MutationError, match="pytest cannot start for the unmutated tests"):
        mutate.run_mutants(ROOT, [mutant], tests=[_hash_test(tmp_path)], timeout=120)


@pytest.mark.parametrize("command, needle", [
    (NO_PYTEST, "pytest cannot start for mutant"),
    ((os.sys.executable, "-c", "import sys; print('usage error'); sys.exit(4)"), "pytest exit 4"),
    ((os.sys.executable, "-c", "import sys; print('1 failed in 0.1s'); sys.exit(1)"), "pytest exit 1"),
])
def test_a_mutant_run_without_a_verdict_is_an_error(tmp_path, monkeypatch, command, needle):
    """The baseline runs the real pytest; the mutants' runs then cannot start or give no failed test."""
    def note(event, **info):
        if event == "baseline_done":
            monkeypatch.setattr(mutate.Workspace, "command", command)
    mutant = _modadd_mutant()
    target = ROOT / mutant.file
    before = target.read_bytes()
    with pytest.raises(mutate.MutationError, match=needle) as info:
        mutate.run_mutants(ROOT, [mutant], tests=[_hash_test(tmp_path)], timeout=120, progress=note)
    assert mutant.id in str(info.value) and "\n" not in str(info.value)
    assert target.read_bytes() == before


def test_cli_mutate_without_pytest_is_one_error_line_and_keeps_the_results(tmp_path, monkeypatch, capsys):
    out = tmp_path / "m.json"
    out.write_text('{"mutants": [{"id": "earlier"}]}\n')
    monkeypatch.setattr(mutate.Workspace, "command", NO_PYTEST)
    assert main(["mutate", "cores/arith/modadd.py", "--match", "ModSub._build", "--ops", "arith",
                 "--tests", _hash_test(tmp_path), "--json", str(out)]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert err[-1].startswith("hhe-gen: error: mutate: pytest cannot start") and "No module named pytest" in err[-1]
    assert sum("error" in ln for ln in err) == 1
    assert out.read_text() == '{"mutants": [{"id": "earlier"}]}\n'
    assert main(["mutate", "arith", "--match", "no-such-text", "--json", str(out)]) == 2
    assert "'--match' = 'no-such-text'" in capsys.readouterr().err


def test_baseline_deselects_failing_tests_and_drops_files_that_do_not_collect(tmp_path):
    hashed = _hash_test(tmp_path)
    with open(hashed, "a") as f:
        f.write("\n\ndef test_broken_anyway():\n    assert False\n")
    broken = tmp_path / "test_no_collect.py"
    broken.write_text("import no_such_module_anywhere\n")
    (res,), baselines = mutate.run_mutants(ROOT, [_modadd_mutant()], tests=[str(broken), hashed], timeout=120)
    (base,) = baselines.values()
    assert base.dropped == [str(broken)] and base.tests == [hashed]
    assert [f.split("::")[-1] for f in base.failures] == ["test_broken_anyway"]
    assert res.status == "killed" and res.detail.endswith("::test_unchanged"), res

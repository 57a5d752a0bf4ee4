"""Results files of ``hhe-gen bench`` / ``prove`` (hhe_gen.apps.report.write_results): a run adds to
the file (a case run again replaces its row, the others stay), a file that is not a results file is
refused before any work and never lost; an unknown --only case or an empty selection is an error."""

import json

import pytest

from hhe_gen.apps import bench
from hhe_gen.apps.cli import main
from hhe_gen.apps.report import merge_results, read_results, write_results
from hhe_gen.params import ParameterError


def test_merge_replaces_in_place_and_appends():
    earlier = [{"group": "a", "name": "x", "v": 1}, {"group": "b", "name": "y", "v": 1},
               {"group": "a", "name": "z", "v": 1}]
    rows = [{"group": "a", "name": "z", "v": 2}, {"group": "c", "name": "w", "v": 2},
            {"group": "a", "name": "x", "v": 2}]
    assert merge_results(earlier, rows) == [rows[2], earlier[1], rows[0], rows[1]]
    assert merge_results([], rows) == rows


def test_write_results_adds_to_the_file(tmp_path):
    path = tmp_path / "sub" / "r.json"
    first = write_results(path, [{"group": "a", "name": "x", "v": 1}, {"group": "a", "name": "y", "v": 1}])
    assert (first.kept, first.replaced, first.backup) == (0, 0, None)
    again = write_results(path, [{"group": "a", "name": "y", "v": 2}, {"group": "b", "name": "x", "v": 2}])
    assert (again.kept, again.replaced) == (1, 1)
    assert json.loads(path.read_text())["results"] == [{"group": "a", "name": "x", "v": 1},
                                                       {"group": "a", "name": "y", "v": 2},
                                                       {"group": "b", "name": "x", "v": 2}]
    assert sorted(p.name for p in path.parent.iterdir()) == ["r.json"]        # no temporary file left


@pytest.mark.parametrize("content", ["{not json", "", "[1, 2]", '{"results": {}}', '{"results": [{"name": "x"}]}'])
def test_a_file_that_is_no_results_file_is_refused_and_kept(tmp_path, content):
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(ParameterError, match="'--json'") as info:
        read_results(path)
    assert str(path) in info.value.allowed and "\n" not in str(info.value)
    assert path.read_text() == content
    assert read_results(tmp_path / "none.json") is None


def test_write_results_moves_a_broken_file_aside(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("{broken")
    (tmp_path / "r.json.bak").write_text("an older backup")
    written = write_results(path, [{"group": "a", "name": "x"}])
    assert written.backup == tmp_path / "r.json.bak1" and written.backup.read_text() == "{broken"
    assert (tmp_path / "r.json.bak").read_text() == "an older backup"
    assert json.loads(path.read_text()) == {"results": [{"group": "a", "name": "x"}]}


@pytest.fixture
def scratch_bench(monkeypatch):
    """A private, empty bench registry (no family modules imported) with two groups of test cases;
    ``calls`` lists the cases run, ``summaries`` the rows every summary of group g1 saw."""
    monkeypatch.setattr(bench, "CASE_MODULES", [])
    monkeypatch.setattr(bench, "_REGISTRY", {})
    monkeypatch.setattr(bench, "_SUMMARIES", {})
    state = {"calls": [], "summaries": [], "value": 1}

    def case(name):
        def fn():
            state["calls"].append(name)
            return {"v": state["value"]}
        fn.__name__ = "measure"
        return fn
    bench.bench_case("g1", "a1")(case("a1"))
    bench.bench_case("g1", "a2", quick=False)(case("a2"))
    bench.bench_case("g2", "b1", quick=False)(case("b1"))

    @bench.bench_summary("g1")
    def _summary(rows, out_dir):
        state["summaries"].append(sorted(r["name"] for r in rows))
        return []
    return state


def _rows(path):
    return {(r["group"], r["name"]): r["metrics"]["v"] for r in json.loads(path.read_text())["results"]}


def test_bench_runs_add_to_the_results_file(scratch_bench, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "g1", "--json", str(out)]) == 0
    assert main(["bench", "g2", "--json", str(out)]) == 0
    assert _rows(out) == {("g1", "a1"): 1, ("g1", "a2"): 1, ("g2", "b1"): 1}
    scratch_bench["value"] = 2
    assert main(["bench", "--only", "g1/a2", "--json", str(out)]) == 0
    assert _rows(out) == {("g1", "a1"): 1, ("g1", "a2"): 2, ("g2", "b1"): 1}
    assert scratch_bench["summaries"][-1] == ["a1", "a2"]      # the group's plot from all its rows
    assert "1 replaced), 2 earlier kept" in capsys.readouterr().out


def test_bench_refuses_a_broken_results_file_before_any_work(scratch_bench, tmp_path, capsys):
    out = tmp_path / "bench.json"
    out.write_text('{"results": [')
    assert main(["bench", "g1", "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hhe-gen: error: parameter '--json'") and err.count("\n") == 1 and str(out) in err
    assert out.read_text() == '{"results": [' and scratch_bench["calls"] == []


@pytest.mark.parametrize("argv, needles", [
    (["g1", "--only", "nosuch"], ["'--only' = 'nosuch'", "a1, a2"]),
    (["--only", "g9/a1"], ["'--only' = 'g9/a1'", "a1, a2, b1"]),
    (["g2", "--only", "a1"], ["'--only' = 'a1'", "of the groups g2, one of b1"]),
    (["g9"], ["'group' = 'g9'", "one of g1, g2"]),
    (["g2", "--quick"], ["'--quick'", "g2"]),
])
def test_bench_bad_selections_are_one_line_errors(scratch_bench, tmp_path, capsys, argv, needles):
    out = tmp_path / "bench.json"
    out.write_text('{"results": []}\n')
    assert main(["bench", *argv, "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hhe-gen: error: ") and err.count("\n") == 1
    assert all(n in err for n in needles), err
    assert out.read_text() == '{"results": []}\n' and scratch_bench["calls"] == []

"""The proof records and runner (hhe_gen.flow.proof, hhe_gen.apps.prove) and ``hhe-gen prove``."""

import json

import pytest

from hhe_gen.apps import prove
from hhe_gen.apps.cli import main
from hhe_gen.flow import proof as proof_records
from hhe_gen.params import ParameterError


def test_arith_group_is_found_and_has_its_z3_proofs():
    assert "arith" in prove.groups()
    names = {p.name for p in prove.proofs(["arith"], quick=True)}
    for name in ("z3-barrett-symbolic", "z3-barrett-primes", "z3-special-mu-symbolic",
                 "z3-montgomery-symbolic", "z3-qinv-series", "z3-ntt-montgomery-primes",
                 "z3-word-montgomery-primes", "mutant-z3-barrett-mu-plus-one"):
        assert name in names
    for p in prove.proofs(["arith"]):
        assert p.what and p.size and p.engine in ("z3", "sby-prove", "sby-bmc", "sby-cover", "python")
    with pytest.raises(ParameterError, match="'group' = 'no-such-group'"):
        prove.proofs(["no-such-group"])


def test_every_quick_z3_arith_proof_gives_its_expected_verdict(tmp_path):
    selected = [p for p in prove.proofs(["arith"], quick=True) if p.engine == "z3"]
    assert sum(p.expect == "FAIL" for p in selected) >= 4     # mutants exist and run
    for p in selected:
        record = prove.run_proof(p, tmp_path, quick=True)
        assert record["ok"], record
        assert record["status"] == p.expect
        assert record["checks"] >= 1 and record["seconds"] >= 0


@pytest.fixture
def scratch_registry(monkeypatch):
    """A private copy of the registry so test proofs do not leak into other tests."""
    prove._load()
    monkeypatch.setattr(proof_records, "_REGISTRY", dict(proof_records._REGISTRY))


def test_runner_records_failures_errors_and_expectations(scratch_registry, tmp_path):
    @prove.proof("test-tmp", "passes", what="w", size="s", engine="python")
    def _ok(ctx):
        assert ctx.workdir.is_dir()
        return prove.ProofResult("PASS", depth=3)

    @prove.proof("test-tmp", "fails", what="w", size="s", engine="python")
    def _bad(ctx):
        return prove.ProofResult("FAIL", detail="counterexample x=1")

    @prove.proof("test-tmp", "breaks", what="w", size="s", engine="python")
    def _broken(ctx):
        raise RuntimeError("harness bug")

    @prove.proof("test-tmp", "mutant-passes", what="w", size="s", engine="python", expect="FAIL",
                 quick=False)
    def _weak(ctx):
        return prove.ProofResult("PASS")

    records = {r["name"]: r for r in prove.run_proofs(["test-tmp"], workdir=tmp_path,
                                                       progress=False)}
    assert records["passes"]["ok"] and records["passes"]["depth"] == 3
    assert not records["fails"]["ok"] and records["fails"]["detail"] == "counterexample x=1"
    assert records["breaks"]["status"] == "ERROR" and "harness bug" in records["breaks"]["detail"]
    assert not records["mutant-passes"]["ok"]          # a mutant that passes is a problem
    assert [r["name"] for r in prove.run_proofs(["test-tmp"], quick=True, workdir=tmp_path,
                                                progress=False)] == ["passes", "fails", "breaks"]
    table = prove.summary_table(list(records.values()))
    assert table.row_count == 4
    with pytest.raises(ValueError):
        prove.proof("test-tmp", "passes", what="w", size="s", engine="python")(lambda ctx: None)
    with pytest.raises(ValueError):
        prove.proof("test-tmp", "x", what="w", size="s", engine="magic")
    with pytest.raises(ValueError):
        prove.ProofResult("MAYBE")


def test_cli_prove_writes_json_and_exit_status(scratch_registry, tmp_path, capsys):
    out = tmp_path / "p.json"
    argv = ["prove", "arith", "--quick", "--json", str(out), "--workdir", str(tmp_path / "w"),
            "--only", "z3-barrett-symbolic", "arith/mutant-z3-barrett-mu-plus-one"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "z3-barrett-symbolic" in text and "FAIL (expected)" in text
    results = json.loads(out.read_text())["results"]
    assert [r["name"] for r in results] == ["z3-barrett-symbolic", "mutant-z3-barrett-mu-plus-one"]
    assert [r["status"] for r in results] == ["PASS", "FAIL"] and all(r["ok"] for r in results)

    @prove.proof("test-tmp", "fails", what="w", size="s", engine="python")
    def _bad(ctx):
        return prove.ProofResult("FAIL")
    assert main(["prove", "test-tmp", "--json", str(out), "--workdir", str(tmp_path / "w")]) == 1
    assert main(["prove", "no-such-group", "--json", str(out)]) == 2


@pytest.fixture
def counted_proofs(scratch_registry):
    """Two test proofs of group test-tmp; ``runs`` lists the proofs run, ``detail`` their detail."""
    state = {"runs": [], "detail": "first"}
    for name in ("one", "two"):
        def fn(ctx, name=name):
            state["runs"].append(name)
            return prove.ProofResult("PASS", detail=state["detail"])
        prove.proof("test-tmp", name, what="w", size="s", engine="python")(fn)
    return state


@pytest.mark.parametrize("argv, needles", [
    (["arith", "--only", "nosuch"], ["'--only' = 'nosuch'", "z3-barrett-symbolic"]),
    (["test-tmp", "--only", "one", "arith/one"], ["'--only' = 'arith/one'", "one of one, two"]),
    (["--only", "test-tmp/nosuch"], ["'--only' = 'test-tmp/nosuch'", "all groups"]),
    (["test-tmp", "--quick", "--only", "z3-barrett-symbolic"], ["'--only'", "under --quick"]),
    (["test-tmp", "--timeout", "-1"], ["'--timeout' = -1.0", "positive"]),
    (["test-tmp", "--timeout", "0"], ["'--timeout' = 0.0"]),
    (["test-tmp", "--timeout", "nan"], ["'--timeout' = nan"]),
])
def test_cli_prove_bad_selection_or_timeout_is_an_error_before_any_proof(counted_proofs, tmp_path, capsys,
                                                                         argv, needles):
    out = tmp_path / "p.json"
    out.write_text('{"results": []}\n')
    assert main(["prove", *argv, "--json", str(out), "--workdir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hhe-gen: error: ") and err.count("\n") == 1
    assert all(n in err for n in needles), err
    assert counted_proofs["runs"] == [] and out.read_text() == '{"results": []}\n'
    assert not (tmp_path / "w").exists()
    with pytest.raises(ParameterError, match="'--only' = 'nosuch'"):
        prove.run_proofs(["test-tmp"], names=["nosuch"], workdir=tmp_path / "w", progress=False)


def test_cli_prove_adds_to_its_results_file(counted_proofs, tmp_path, capsys):
    out = tmp_path / "p.json"
    common = ["--json", str(out), "--workdir", str(tmp_path / "w")]
    assert main(["prove", "test-tmp", "--only", "one", *common]) == 0
    assert main(["prove", "test-tmp", "--only", "test-tmp/two", *common]) == 0
    counted_proofs["detail"] = "second"
    assert main(["prove", "test-tmp", "--only", "one", *common]) == 0
    results = json.loads(out.read_text())["results"]
    assert [(r["name"], r["detail"]) for r in results] == [("one", "second"), ("two", "first")]
    assert "1 replaced), 1 earlier kept" in capsys.readouterr().out


def test_cli_prove_refuses_a_broken_results_file(counted_proofs, tmp_path, capsys):
    out = tmp_path / "p.json"
    out.write_text("garbage")
    assert main(["prove", "test-tmp", "--json", str(out), "--workdir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert "'--json'" in err and str(out) in err and err.count("\n") == 1
    assert out.read_text() == "garbage" and counted_proofs["runs"] == []

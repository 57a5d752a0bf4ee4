"""``hhe-gen sweep``: spec checks, sweeps on a LocalCluster (the command's own and one reached with
``--scheduler``), a worker killed mid-job, a job over its time-out, the command end to end, re-runs,
and the timing-closure flow (synth option sets, the best per design, best.json and best/, the plot).

The synthesis jobs are Yosys only (``place_and_route: false``) on tiny cores (a 20-bit modular
multiplier: a few seconds), at most two workers; ``HHE_GEN_CACHE`` points into the test's folder so
that no cached result stands in for a run (the killed job also has ``cache: false``).  The default
run's one place-and-route sweep is four runs of that multiplier on an LFE5U-25F (about 6 s each).
"""

import hashlib
import json
import os
import signal
import threading
import time

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.apps.sweep import check_scheduler_address, load_spec, parse_spec
from hhe_gen.apps.sweep.best import folder_names, select_best
from hhe_gen.apps.sweep.jobs import EVENT_TOPIC
from hhe_gen.apps.sweep.records import SweepFile, make_record
from hhe_gen.params.errors import ParameterError


def _write(path, text):
    path.write_text(text)
    return str(path)


def _placed_sweep(tmp_path, monkeypatch, spec_text):
    """Run ``spec_text`` (a place-and-route sweep) on two workers with a cache of the test's own;
    the output folder and its records."""
    monkeypatch.setenv("HHE_GEN_CACHE", str(tmp_path / "cache"))
    spec = _write(tmp_path / "spec.yaml", spec_text)
    out = tmp_path / "out"
    assert main(["sweep", spec, "-o", str(out), "--workers", "2", "--no-progress"]) == 0
    return out, json.loads((out / "sweep.json").read_text())["records"]


# -- checks before anything runs -----------------------------------------------------------------------
@pytest.mark.parametrize("spec,named", [
    ({"core": "modmul", "colour": "red"}, "'colour' = 'red'"),
    ({"core": "fft"}, "'core' = 'fft'"),
    ({"core": "modmul", "axes": {"widht": [20]}}, "'axes.widht'"),
    ({"core": "modmul", "axes": {"width": [20, 99]}}, "'axes.width' = 99"),
    ({"core": "modmul", "axes": {"width": 20}}, "'axes.width' = 20"),
    ({"core": "modmul", "axes": {"width": [20, 20]}}, "'axes.width' = 20"),
    ({"core": "modmul", "fixed": {"reducer": "karatsuba"}}, "'fixed.reducer' = 'karatsuba'"),
    ({"core": "modmul", "fixed": {"width": [20]}}, "'fixed.width'"),
    ({"core": "modmul", "axes": {"width": [20]}, "fixed": {"width": 20}}, "'fixed.width'"),
    ({"core": "modmul", "device": ["85k", "virtex9"]}, "'device[1]' = 'virtex9'"),
    ({"core": "modmul", "device": "85k", "package": "QFN48"}, "'package' = 'QFN48'"),
    ({"core": "modmul", "seeds": [1, 2]}, "'seeds'"),
    ({"core": "modmul", "place_and_route": True, "seeds": [1, -2]}, "'seeds[1]' = -2"),
    ({"core": "modmul", "place_and_route": "yes"}, "'place_and_route' = 'yes'"),
    ({"core": "modmul", "place_and_route": True, "nextpnr": [{"placer": "heap", "router": "router3"}]},
     "'nextpnr[0].router' = 'router3'"),
    ({"core": "modmul", "place_and_route": True, "nextpnr": [{"placer": "heap"}, {"placr": "static"}]},
     "'nextpnr[1].placr'"),
    ({"core": "modmul", "place_and_route": True,
      "nextpnr": [{"placer": "heap", "name": "a"}, {"placer": "heap", "router": "router1", "name": "b"}]},
     "'nextpnr[1]'"),
    ({"core": "modmul", "timeout": 0}, "'timeout' = 0"),
    ({"core": "modmul", "retries": 11}, "'retries' = 11"),
    ({"core": "ntt", "fixed": {"n": 1000}}, "'fixed.n' = 1000"),
    ({"core": "keccak", "axes": {"rounds_per_cycle": [1, 5]}}, "'axes.rounds_per_cycle' = 5"),
    ({"core": "butterfly", "fixed": {"fields": "zq+zz"}}, "'fixed.fields' = 'zq+zz'"),
])
def test_spec_errors_name_the_key_and_value(spec, named):
    with pytest.raises(ParameterError) as err:
        parse_spec(spec)
    assert named in str(err.value)


def test_the_core_refuses_a_point_before_anything_runs():
    """lanes <= N/2 is the core's own check: the expansion builds every core and names the point."""
    spec = parse_spec({"core": "ntt", "fixed": {"n": 16, "bits": 20}, "axes": {"lanes": [1, 16]}})
    with pytest.raises(ParameterError) as err:
        spec.points()
    assert "'lanes' = 16" in str(err.value) and "lanes=16" in str(err.value)


def test_points_are_the_cartesian_product_with_stable_ids():
    spec = parse_spec({"core": "modmul", "device": ["85k", "xc7"], "axes": {"width": [20, 36], "latency": [None, 6]}})
    points = spec.points()
    assert len(points) == 8 and len({p["id"] for p in points}) == 8
    assert {p["target"] for p in points} == {"ecp5", "xilinx"}
    assert all(p["figures"]["cycles"] == (p["params"]["latency"] or 3) for p in points if p["params"]["width"] == 20)
    assert [p["id"] for p in parse_spec(spec.to_json()).points()] == [p["id"] for p in points]
    routed = parse_spec({"core": "modmul", "place_and_route": True, "seeds": [1, 2, 3],
                         "nextpnr": [{"placer": "heap", "router": "router1"},
                                     {"placer": "static", "router": "router2"}],
                         "fixed": {"width": 20}}).points()
    assert len(routed) == 6 and {p["nextpnr_set"] for p in routed} == {"heap/router1", "static/router2"}


@pytest.mark.parametrize("address,ok", [
    ("tcp://10.0.0.5:8786", True), ("tls://scheduler.example.org:8786", True), ("tcp://[::1]:8786", True),
    ("10.0.0.5:8786", False), ("tcp://10.0.0.5", False), ("tcp://host:99999", False), ("http://host:8786", False),
    ("tcp://ho st:8786", False),
])
def test_scheduler_address_format(address, ok):
    if ok:
        assert check_scheduler_address(address) == address
    else:
        with pytest.raises(ParameterError, match="'--scheduler'"):
            check_scheduler_address(address)


def test_cli_errors_are_one_line_with_status_2(tmp_path, capsys):
    bad = _write(tmp_path / "bad.yaml", "core: modmul\naxes: {width: [20]}\ncolour: red\n")
    assert main(["sweep", bad, "-o", str(tmp_path / "out")]) == 2
    assert "'colour' = 'red'" in capsys.readouterr().err
    broken = _write(tmp_path / "broken.yaml", "core: [modmul\n")
    assert main(["sweep", broken, "-o", str(tmp_path / "out")]) == 2
    assert "valid YAML" in capsys.readouterr().err
    assert main(["sweep", str(tmp_path / "missing.json"), "-o", str(tmp_path / "out")]) == 2
    assert "'SPEC'" in capsys.readouterr().err
    good = _write(tmp_path / "good.json", json.dumps({"core": "modmul", "fixed": {"width": 20}}))
    assert main(["sweep", good, "-o", str(tmp_path / "out"), "--scheduler", "localhost:8786"]) == 2
    assert "'--scheduler' = 'localhost:8786'" in capsys.readouterr().err
    assert main(["sweep", good, "-o", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:8786",
                 "--workers", "2"]) == 2
    assert "'--workers'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_unreachable_scheduler_is_a_clear_error_not_a_hang(tmp_path, capsys):
    good = _write(tmp_path / "good.json", json.dumps({"core": "modmul", "fixed": {"width": 20}}))
    t0 = time.monotonic()
    assert main(["sweep", good, "-o", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:9",
                 "--connect-timeout", "1"]) == 2
    assert time.monotonic() - t0 < 30
    err = capsys.readouterr().err
    assert "'--scheduler' = 'tcp://127.0.0.1:9'" in err and "reachable" in err
    records = json.loads((tmp_path / "out" / "sweep.json").read_text())["records"]
    assert [r["status"] for r in records] == ["pending"]      # every point listed, none lost


# -- sweeps that run Yosys -----------------------------------------------------------------------------
@pytest.mark.toolchain
def test_cli_sweep_on_its_own_local_cluster_then_reruns(tmp_path, monkeypatch, capsys):
    """Two widths of the Barrett multiplier: one record each, the wider one larger; the plots; a re-run
    skips both, a spec with one more width runs only that one."""
    monkeypatch.setenv("HHE_GEN_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "out"
    spec = _write(tmp_path / "spec.yaml", "core: modmul\ndevice: 85k\naxes:\n  width: [20, 36]\n"
                  "timeout: 300\nname: widths\n")
    assert main(["sweep", spec, "-o", str(out), "--workers", "2", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "hhe-gen sweep widths: 2 ok" in text
    data = json.loads((out / "sweep.json").read_text())
    records = {r["params"]["width"]: r for r in data["records"]}
    assert sorted(records) == [20, 36] and data["counts"]["ok"] == 2
    for r in records.values():
        assert r["status"] == "ok" and r["attempts"] == 1 and r["cached"] is False
        assert r["worker"].startswith("tcp://") and r["wall_s"] > 0
        assert r["area"]["LUT4"] == r["lut"] > 0 and r["cycles"] == r["figures"]["latency"]
        assert r["fmax_mhz"] is None and r["time_us"] is None       # Yosys only
    assert records[36]["lut"] > records[20]["lut"] and records[36]["ff"] > records[20]["ff"]
    assert records[36]["dsp"] > records[20]["dsp"]
    assert (out / "pareto_lut_vs_time.png").stat().st_size > 1000
    assert (out / "pareto_dsp_vs_throughput.png").stat().st_size > 1000
    assert not (out / "fmax_by_seed.png").exists() and "fmax_by_seed.png not drawn" in text

    assert main(["sweep", spec, "-o", str(out), "--workers", "2", "--no-progress"]) == 0
    assert "skipping 2 of 2 points already ok" in capsys.readouterr().out
    assert json.loads((out / "sweep.json").read_text())["records"] == data["records"]

    more = _write(tmp_path / "more.yaml", "core: modmul\ndevice: 85k\naxes:\n  width: [20, 36, 28]\n"
                  "timeout: 300\nname: widths\n")
    assert main(["sweep", more, "-o", str(out), "--workers", "2", "--no-progress"]) == 0
    assert "skipping 2 of 3 points already ok" in capsys.readouterr().out
    again = {r["params"]["width"]: r for r in json.loads((out / "sweep.json").read_text())["records"]}
    assert again[20] == records[20] and again[36] == records[36] and again[28]["status"] == "ok"


def _kill_when_started(client, point_label, sweep_points, killed):
    """Kill (SIGKILL) the worker process on which the point labelled ``point_label`` starts; record
    (pid, address) in ``killed``."""
    wanted = next(p["id"] for p in sweep_points if p["label"] == point_label)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for _, msg in client.get_events(EVENT_TOPIC):
            if isinstance(msg, dict) and msg.get("point") == wanted:
                pids = client.run(os.getpid)
                pid = pids[msg["worker"]]
                assert pid == msg["pid"]
                os.kill(pid, signal.SIGKILL)
                killed.append((pid, msg["worker"]))
                return
        time.sleep(0.05)


@pytest.mark.toolchain
def test_killed_worker_and_timeout_on_a_cluster_given_by_scheduler(tmp_path, monkeypatch, capsys):
    """A cluster started here, reached with --scheduler: the worker running one job is killed while
    the job runs (the job is run again: ok, 2 attempts) and another job exceeds its time-out
    (recorded as timeout); the sweep completes."""
    from distributed import Client, LocalCluster
    monkeypatch.setenv("HHE_GEN_CACHE", str(tmp_path / "cache"))
    spec_text = ("core: ntt\ndevice: 85k\nfixed: {bits: 20, lanes: 1}\naxes:\n  n: [16, 16384]\n"
                 "timeout: 30\nretries: 2\ncache: false\n")
    spec_file = _write(tmp_path / "spec.yaml", spec_text)
    points = load_spec(spec_file).points()
    out = tmp_path / "out"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        killed = []
        killer = threading.Thread(target=_kill_when_started, args=(client, "n=16 85k", points, killed), daemon=True)
        killer.start()
        t0 = time.monotonic()
        status = main(["sweep", spec_file, "-o", str(out), "--scheduler", cluster.scheduler_address, "--no-progress"])
        wall = time.monotonic() - t0
        killer.join(5)
        assert killed, "the job never started"
        assert killed[0][0] not in client.run(os.getpid).values()      # the nanny started a new process
    assert status == 1                               # not every point ok
    records = {r["params"]["n"]: r for r in json.loads((out / "sweep.json").read_text())["records"]}
    assert records[16]["status"] == "ok" and records[16]["attempts"] >= 2 and records[16]["lut"] > 0
    assert records[16384]["status"] == "timeout" and "time-out of 30 s" in records[16384]["error"]
    assert 30 <= records[16384]["wall_s"] < 60 and wall < 150
    text = capsys.readouterr().out
    assert "timeout: n=16384 85k" in text


def test_the_specs_of_docs_sweep_md_expand():
    """Every YAML block of docs/sweep.md is a valid spec whose points all construct."""
    import re
    from pathlib import Path

    import yaml
    text = (Path(__file__).resolve().parents[2] / "docs" / "sweep.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    counts = [len(parse_spec(yaml.safe_load(b)).points()) for b in blocks]
    assert counts == [3 * 2 * (3 * 2) + 3 * 2, 8, 2 * 4 * 2 * 2]


@pytest.mark.slow
@pytest.mark.toolchain
def test_seed_and_option_sweep_with_place_and_route(tmp_path, monkeypatch, capsys):
    """nextpnr seeds x option sets on an LFE5U-25F: an Fmax per record, time and throughput derived
    from it, and the Fmax-by-seed plot (about a minute on two cores)."""
    out, records = _placed_sweep(tmp_path, monkeypatch, "core: modmul\ndevice: 25k\nfixed: {width: 20, latency: 5}\n"
                                 "place_and_route: true\nseeds: [1, 2]\nnextpnr:\n  - {placer: heap, router: router1}\n"
                                 "  - {placer: static, router: router2}\ntimeout: 600\n")
    assert len(records) == 4 and {(r["seed"], r["nextpnr_set"]) for r in records} == \
        {(s, n) for s in (1, 2) for n in ("heap/router1", "static/router2")}
    for r in records:
        assert r["status"] == "ok" and r["fmax_mhz"] > 0
        assert r["time_us"] == pytest.approx(5 / r["fmax_mhz"], rel=1e-3)
        assert r["throughput_per_s"] == pytest.approx(r["fmax_mhz"] * 1e6, rel=1e-3)
    for name in ("pareto_lut_vs_time.png", "pareto_dsp_vs_throughput.png", "fmax_by_seed.png"):
        assert (out / name).stat().st_size > 1000


def test_a_job_whose_workers_died_too_often_is_a_failed_record():
    """distributed.KilledWorker (the scheduler gave up on the job) becomes a ``failed`` record with the
    attempts counted from the start events; any other error of the future too."""
    from types import SimpleNamespace

    from distributed import KilledWorker

    from hhe_gen.apps.sweep.runner import _result
    point = parse_spec({"core": "modmul", "fixed": {"width": 20}}).points()[0]

    class Gone:
        def __init__(self, exc):
            self.exc = exc

        def result(self):
            raise self.exc

    starts = {point["id"]: [(0.0, "tcp://10.0.0.1:1"), (1.0, "tcp://10.0.0.2:1"), (2.0, "tcp://10.0.0.3:1")]}
    dead = KilledWorker("hhe-gen-sweep-x", SimpleNamespace(address="tcp://10.0.0.3:1"), 2)
    r = _result(Gone(dead), point, starts)
    assert r["status"] == "failed" and r["error"].startswith("KilledWorker") and r["attempts"] == 3
    assert r["worker"] == "tcp://10.0.0.3:1" and r["cycles"] == 3 and r["lut"] is None
    r = _result(Gone(RuntimeError("scheduler lost")), point, {})
    assert r["status"] == "failed" and "scheduler lost" in r["error"] and r["attempts"] == 1


# -- the timing-closure flow: synth option sets, the best per design ------------------------------------
@pytest.mark.parametrize("spec,named", [
    ({"synth": [{"args": ["-retime"]}]}, "'synth[0].args' = '-retime'"),
    ({"synth": [{"args": []}, {"args": ["-abc2"]}]}, "'synth[1].args' = '-abc2'"),
    ({"synth": [{"args": ["-nowidelut", "-nowidelut"]}]}, "'synth[0].args' = '-nowidelut'"),
    ({"synth": [{"args": "-json x.json"}]}, "'synth[0].args' = '-json x.json'"),
    ({"synth": [{"args": [7]}]}, "'synth[0].args' = [7]"),
    ({"synth": [{"args": []}, {"args": ["-nowidelut"], "abc9": "no"}]}, "'synth[1].abc9' = 'no'"),
    ({"synth": [{"arg": ["-nowidelut"]}]}, "'synth[0].arg'"),
    ({"synth": [{"args": ["-dff"], "abc9": False}]}, "'synth[0].args' = '-dff'"),
    ({"synth": [{"args": ["-nodffe", "-nowidelut"]}, {"args": ["-nowidelut", "-nodffe"]}]}, "'synth[1].args'"),
    ({"synth": [{"name": "a"}, {"name": "a", "abc9": False}]}, "'synth (names)' = 'a'"),
    ({"synth": [{"name": ""}]}, "'synth[0].name' = ''"),
    ({"synth": ["-nowidelut"]}, "'synth[0]' = '-nowidelut'"),
    ({"synth": []}, "'synth' = []"),
    ({"synth": [{}], "synth_args": ["-nowidelut"]}, "'synth_args' = ['-nowidelut']"),
    ({"synth": [{}], "abc9": False}, "'abc9' = False"),
    ({"synth_args": ["-bogus"]}, "'synth_args' = '-bogus'"),
    ({"abc9": "yes"}, "'abc9' = 'yes'"),
])
def test_synth_set_errors_name_the_key_and_value(spec, named):
    with pytest.raises(ParameterError) as err:
        parse_spec({"core": "modmul", "fixed": {"width": 20}, **spec})
    assert named in str(err.value)


def test_synth_sets_multiply_the_ecp5_points():
    """Synth sets x nextpnr sets x seeds per ECP5 design; Xilinx points once; the scalar keys are the one
    default set, with the points (and so the records and cache entries) of before."""
    spec = parse_spec({"core": "modmul", "device": ["25k", "xc7"], "axes": {"width": [20, 24]},
                       "place_and_route": True, "seeds": [1, 2], "synth": [
                           {"args": [], "abc9": True}, {"name": "lut4", "args": ["-nowidelut", "-nodffe"],
                                                        "abc9": False}]})
    points = spec.points()
    ecp5 = [p for p in points if p["device"] == "25k"]
    assert len(points) == 2 * 2 * 2 + 2 and len({p["id"] for p in points}) == len(points)
    assert {(p["synth_set"], tuple(p["synth_args"]), p["abc9"]) for p in ecp5} == \
        {("abc9", (), True), ("lut4", ("-nowidelut", "-nodffe"), False)}
    assert "width=20 25k heap/router1 lut4 seed=2" in {p["label"] for p in ecp5}
    assert {p["design"] for p in ecp5} == {"width=20 25k", "width=24 25k"}
    assert all(p["synth_set"] is None and p["synth_args"] == [] for p in points if p["device"] == "xc7")
    assert [p["id"] for p in parse_spec(spec.to_json()).points()] == [p["id"] for p in points]
    scalar = parse_spec({"core": "modmul", "fixed": {"width": 20}, "synth_args": ["-nowidelut"], "abc9": False})
    same = parse_spec({"core": "modmul", "fixed": {"width": 20}, "synth": [{"args": ["-nowidelut"], "abc9": False}]})
    (a,), (b,) = scalar.points(), same.points()
    assert a["id"] == b["id"] and a["label"] == b["label"] == "85k" and a["synth_set"] == "abc -nowidelut"


@pytest.mark.toolchain
def test_the_allowed_synth_options_are_yosys_options():
    """Each allowed option is in Yosys' own help of synth_lattice (what synth_ecp5 runs)."""
    import subprocess

    from hhe_gen.apps.sweep.spec import SYNTH_OPTIONS
    from hhe_gen.flow.tools import find_tool
    text = subprocess.run([*find_tool("yosys").argv, "-p", "help synth_lattice"], capture_output=True, text=True,
                          timeout=120).stdout
    assert "-nowidelut" in text
    for option in SYNTH_OPTIONS:
        assert f"\n    {option}\n" in text, option


def _closure_records():
    """Hand-made records of two routed designs and one Yosys-only point, in spec order."""
    def rec(n, design, status, fmax, nextpnr_set="heap/router1", synth_set="abc9", seed=1, routed=True):
        return {"id": f"id{n}", "label": f"{design} {nextpnr_set} {synth_set} seed={seed}", "design": design,
                "place_and_route": routed, "status": status, "fmax_mhz": fmax, "nextpnr_set": nextpnr_set,
                "synth_set": synth_set, "seed": seed, "lut": 100 + n}
    return [rec(1, "w=20 25k", "ok", 150.5), rec(2, "w=20 25k", "ok", 171.25, seed=2),
            rec(3, "w=20 25k", "ok", 160.0, synth_set="lut4"), rec(4, "w=20 25k", "failed", None, seed=3),
            rec(5, "w=20 25k", "ok", 171.25, synth_set="lut4", seed=2), rec(6, "w=20 25k", "timeout", None, seed=4),
            rec(7, "w=36 25k", "ok", 90.0, "static/router2"), rec(8, "w=36 25k", "ok", 110.0, seed=2),
            rec(9, "w=36 25k", "ok", 95.5, "static/router2", seed=2),
            rec(10, "w=48 25k", "pending", None), rec(11, "w=20 xc7", "ok", None, None, None, None, routed=False)]


def test_select_best_per_design():
    """The highest Fmax per design (the earlier on a tie), min / median / max / count of the ok runs, the runs
    best first; a design with no ok run yet has no best; points without place and route are not designs here."""
    designs = select_best(_closure_records())
    assert [d["design"] for d in designs] == ["w=20 25k", "w=36 25k", "w=48 25k"]
    first, second, third = designs
    assert first["best"]["id"] == "id2" and first["points"] == 6
    assert first["fmax"] == {"count": 4, "min": 150.5, "median": 165.62, "max": 171.25}
    assert [(r["seed"], r["synth_set"], r["fmax_mhz"]) for r in first["runs"]] == \
        [(2, "abc9", 171.25), (2, "lut4", 171.25), (1, "lut4", 160.0), (1, "abc9", 150.5)]
    assert second["best"]["id"] == "id8" and second["fmax"] == {"count": 3, "min": 90.0, "median": 95.5, "max": 110.0}
    assert second["runs"][0] == {"label": "w=36 25k heap/router1 abc9 seed=2", "nextpnr_set": "heap/router1",
                                 "synth_set": "abc9", "seed": 2, "fmax_mhz": 110.0}
    assert third["best"] is None and third["points"] == 1 and third["runs"] == []
    assert third["fmax"] == {"count": 0, "min": None, "median": None, "max": None}
    assert folder_names(["w=20 25k", "w=20/25k", "fields=zq+zt 85k", "x: y"]) == {
        "w=20 25k": "w=20_25k", "w=20/25k": "w=20_25k-" + hashlib.sha256(b"w=20/25k").hexdigest()[:8],
        "fields=zq+zt 85k": "fields=zq+zt_85k", "x: y": "x_y"}


def test_best_json_and_reports_follow_the_results(tmp_path):
    """SweepFile.put: each result rewrites best.json; a design's best result's reports go to best/<design>/,
    a worse later one leaves them, a better one replaces them; a re-opened folder knows whose they are."""
    spec = parse_spec({"core": "modmul", "device": "25k", "axes": {"width": [20, 24]}, "place_and_route": True,
                       "seeds": [1, 2], "name": "closure"})
    points = spec.points()
    store = SweepFile(tmp_path, spec, points)
    store.write()
    data = json.loads((tmp_path / "best.json").read_text())
    assert data["name"] == "closure" and [d["design"] for d in data["designs"]] == ["width=20 25k", "width=24 25k"]
    assert all(d["best"] is None and d["points"] == 2 and d["reports"] is None for d in data["designs"])

    def result(point, fmax, tag):
        reports = {"timing": {"fmax_mhz": fmax, "critical_path": {"ns": round(1000 / fmax, 3)}},
                   "nextpnr_log_tail": f"Info: Max frequency for clock 'clk': {fmax} MHz ({tag})\n"}
        store.put(make_record(point, {"status": "ok", "error": None, "fmax_mhz": fmax, "lut": 50,
                                      "reports": reports}, 1))

    by_label = {p["label"]: p for p in points}
    folder = tmp_path / "best" / "width=20_25k"
    result(by_label["width=20 25k heap/router1 seed=1"], 140.0, "first")
    assert "first" in (folder / "nextpnr_tail.log").read_text()
    result(by_label["width=20 25k heap/router1 seed=2"], 120.0, "worse")
    assert "first" in (folder / "nextpnr_tail.log").read_text()
    assert json.loads((folder / "record.json").read_text())["seed"] == 1
    data = json.loads((tmp_path / "best.json").read_text())
    entry = data["designs"][0]
    assert entry["best"]["seed"] == 1 and entry["best"]["fmax_mhz"] == 140.0 and "reports" not in entry["best"]
    assert entry["fmax"] == {"count": 2, "min": 120.0, "median": 130.0, "max": 140.0}
    assert entry["reports"] == entry["folder"] == "best/width=20_25k"
    assert data["designs"][1]["best"] is None
    result(by_label["width=24 25k heap/router1 seed=2"], 99.0, "other design")
    assert "other design" in (tmp_path / "best" / "width=24_25k" / "nextpnr_tail.log").read_text()
    assert all("reports" not in r for r in json.loads((tmp_path / "sweep.json").read_text())["records"])

    again = SweepFile(tmp_path, spec, points)         # a re-run of the folder: the first best is still held
    again.write()
    assert json.loads((tmp_path / "best.json").read_text())["designs"][0]["reports"] == "best/width=20_25k"
    store = again
    result(by_label["width=20 25k heap/router1 seed=2"], 180.0, "better")
    assert json.loads((folder / "timing.json").read_text())["critical_path"] == {"ns": 5.556}
    assert json.loads((folder / "record.json").read_text())["fmax_mhz"] == 180.0
    assert "better" in (folder / "nextpnr_tail.log").read_text()
    assert sorted(p.name for p in folder.iterdir()) == ["nextpnr_tail.log", "record.json", "timing.json"]


def test_the_fmax_plot_has_a_panel_per_design(tmp_path):
    from hhe_gen.apps.sweep.plots import write_plots
    records = [{**r, "time_us": None, "cycles": 3, "per_cycle": 1.0, "dsp": 1, "device": "25k"}
               for r in _closure_records()]
    written, notes = write_plots(records, tmp_path)
    assert tmp_path / "fmax_by_seed.png" in written and (tmp_path / "fmax_by_seed.png").stat().st_size > 1000
    written, notes = write_plots([r for r in records if not r["place_and_route"]], tmp_path / "yosys")
    assert not (tmp_path / "yosys" / "fmax_by_seed.png").exists()
    assert any("fmax_by_seed.png not drawn: no point was placed and routed" in n for n in notes)


@pytest.mark.toolchain
def test_timing_closure_sweep_keeps_the_best_and_its_reports(tmp_path, monkeypatch, capsys):
    """2 seeds x 2 synth sets of the 20-bit multiplier on an LFE5U-25F, placed and routed on two workers:
    best.json, the best's reports brought back from the worker, the best table and the plot."""
    out, records = _placed_sweep(tmp_path, monkeypatch, "name: closure\ncore: modmul\ndevice: 25k\n"
                                 "fixed: {width: 20, latency: 5}\nplace_and_route: true\nseeds: [1, 2]\nsynth:\n"
                                 "  - {args: [], abc9: true}\n"
                                 "  - {name: lut4-abc, args: [-nowidelut, -nodffe], abc9: false}\ntimeout: 600\n")
    text = capsys.readouterr().out
    assert {(r["seed"], r["synth_set"]) for r in records} == {(s, n) for s in (1, 2) for n in ("abc9", "lut4-abc")}
    assert all(r["status"] == "ok" and r["fmax_mhz"] > 0 and r["cached"] is False for r in records)
    assert all("reports" not in r for r in records)
    (entry,) = json.loads((out / "best.json").read_text())["designs"]
    top = max(r["fmax_mhz"] for r in records)
    assert entry["design"] == "25k" and entry["points"] == 4 and entry["best"]["fmax_mhz"] == top
    assert entry["fmax"]["count"] == 4 and entry["fmax"]["max"] == top
    assert entry["fmax"]["min"] == min(r["fmax_mhz"] for r in records)
    assert entry["reports"] == "best/25k"
    folder = out / "best" / "25k"
    assert json.loads((folder / "record.json").read_text())["id"] == entry["best"]["id"]
    timing = json.loads((folder / "timing.json").read_text())
    assert timing["fmax_mhz"] == top and timing["critical_path"]["ns"] == entry["best"]["critical_ns"]
    assert any(v["achieved"] == pytest.approx(top, abs=0.01) for v in timing["fmax"].values())
    tail = (folder / "nextpnr_tail.log").read_text()
    assert tail.startswith("Info: Critical path report for clock") and "Max frequency" in tail and len(tail) <= 6000
    assert "closure: best per design" in text and "best/25k" in text
    assert (out / "fmax_by_seed.png").stat().st_size > 1000

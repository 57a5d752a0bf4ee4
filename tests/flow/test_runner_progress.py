"""A long tool run says it is still running (hhe_gen.flow.runner): a Verilator build of minutes
shows a line every HEARTBEAT_SECONDS instead of one line at its start."""

from hhe_gen.flow import runner


def test_a_running_tool_says_it_is_still_running(monkeypatch, capsys, tmp_path):
    import time
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 0.1)
    beat = runner._heartbeat("verilator build of x", time.monotonic())
    proc = runner._run_group(["sleep", "0.6"], cwd=tmp_path, env=None, timeout=10, input=None, give_up=beat,
                             poll=0.05)
    assert proc.returncode == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "still running" in line]
    assert len(lines) >= 3 and lines[0].startswith("[hhe-gen] verilator build of x: still running, ")


def test_the_heartbeat_passes_give_up_on(monkeypatch):
    import time
    monkeypatch.setattr(runner, "HEARTBEAT_SECONDS", 3600)
    assert runner._heartbeat("x", time.monotonic(), lambda: "router stuck")() == "router stuck"
    assert runner._heartbeat("x", time.monotonic())() is None

"""The whole-SoC flow's readers: the Verilog files of LiteX's build scripts (Yosys and Vivado),
nextpnr's packed utilisation, on which a design larger than the device stops before placing, and
router2's progress, on which a design that does not route stops; the runner's ``give_up``."""

import subprocess
import sys
import time

import pytest

from hhe_gen.flow.gateware import RouterStall, gateware_sources, packed_utilisation
from hhe_gen.flow.runner import _GaveUp, _run_group
from hhe_gen.params.errors import ParameterError

PACK_LOG = """Info: Packing IOs..
Info: Device utilisation:
Info: 	          TRELLIS_IO:      63/    365    17%
Info: 	              DP16KD:     213/    208   102%
Info: 	          MULT18X18D:      94/    156    60%
Info: 	          TRELLIS_FF:   45428/  83640    54%
Info: 	        TRELLIS_COMB:   92663/  83640   110%
Info:
Info: Placed 63 cells based on constraints.
Info: 	              DP16KD:     1/    208   0%
"""


def test_packed_utilisation_reads_the_table_and_only_it():
    u = packed_utilisation(PACK_LOG)
    assert u["TRELLIS_COMB"] == {"used": 92663, "available": 83640}
    assert u["DP16KD"] == {"used": 213, "available": 208}        # the table's, not a later line's
    assert len(u) == 5
    assert packed_utilisation("Info: nothing here\n") == {}


def test_sources_come_from_the_yosys_or_the_vivado_script(tmp_path):
    (tmp_path / "a.ys").write_text("verilog_defaults -push\nread_verilog /x/accel.v\nread_verilog -sv b.v\n")
    assert [str(p) for p in gateware_sources(tmp_path, "a")] == ["/x/accel.v", str(tmp_path / "b.v")]
    (tmp_path / "c.tcl").write_text("create_project\nread_verilog {/x/accel.v}\nread_verilog {/y/soc.v}\n")
    assert [str(p) for p in gateware_sources(tmp_path, "c")] == ["/x/accel.v", "/y/soc.v"]
    with pytest.raises(ParameterError, match="gateware"):
        gateware_sources(tmp_path, "missing")


def _router_line(i, overused):
    return f"Info:     iter={i} wires={1_300_000 + i} overused={overused} overuse={overused + 7} archfail=NA\n"


def test_router_stall_stops_after_patience_iterations_without_a_new_best(tmp_path):
    log = tmp_path / "nextpnr.log"
    log.write_text("Info: Running router2...\n")
    stall = RouterStall(log, patience=4)
    assert stall() is None                                     # no iteration yet
    trace = [(1, 9000), (2, 4000), (3, 1571), (4, 1600), (5, 1571), (6, 2000)]
    with open(log, "a") as f:
        for i, o in trace:
            f.write(_router_line(i, o))
        f.write("Info:     iter=7 wires=1300007 overu")           # a line still being written
    assert stall() is None                                     # best at 3, 3 iterations since (of 4)
    with open(log, "a") as f:
        f.write("sed=1700 overuse=1710 archfail=NA\n")
    reason = stall()
    assert reason is not None and "1,571" in reason and "iteration 3" in reason and "1,700 now" in reason
    assert "in the 4 iterations since" in reason
    assert stall.iterations == trace + [(7, 1700)]


def test_router_stall_never_stops_a_router_that_converges(tmp_path):
    log = tmp_path / "nextpnr.log"
    log.write_text("".join(_router_line(i, max(0, 500 - 100 * i)) for i in range(1, 12)))
    stall = RouterStall(log, patience=2)
    assert stall() is None and stall.reason is None
    with pytest.raises(ParameterError, match="router_patience"):
        RouterStall(log, patience=0)


def test_give_up_stops_the_tool_and_its_children(tmp_path):
    marker = tmp_path / "grandchild.pid"
    asked = []

    def give_up():
        asked.append(time.monotonic())
        return "no progress" if marker.exists() and marker.read_text().strip() else None

    child = ("import subprocess, sys, time; "
             "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(90)']); "
             f"print('started', flush=True); open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(90)")
    t0 = time.monotonic()
    with pytest.raises(_GaveUp) as info:
        _run_group([sys.executable, "-c", child], cwd=".", env=None, timeout=300, input=None, give_up=give_up,
                   poll=0.2)
    assert time.monotonic() - t0 < 85 and len(asked) >= 1
    assert info.value.reason == "no progress" and "started" in info.value.stdout
    grandchild = int(marker.read_text())
    for _ in range(50):                    # killed: gone, or a zombie until its parent's reaper
        try:
            state = open(f"/proc/{grandchild}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the tool's child still runs")
    # give_up answering None leaves the tool to its timeout
    with pytest.raises(subprocess.TimeoutExpired):
        _run_group([sys.executable, "-c", "import time; time.sleep(60)"], cwd=".", env=None, timeout=0.5,
                   input=None, give_up=lambda: None, poll=0.2)


def test_router_stall_gives_the_slow_tail_more_patience(tmp_path):
    """The 1-lane toy SoC's tail, as measured: 2 overused wires at iteration 70, 1 at 94, 0 at 95."""
    log = tmp_path / "nextpnr.log"
    log.write_text("".join(_router_line(i, 3) for i in range(60, 70)) +
                   "".join(_router_line(i, 2) for i in range(70, 94)))
    stall = RouterStall(log, patience=20)
    assert stall() is None                                     # 23 iterations since the best, in the tail
    with open(log, "a") as f:
        f.write(_router_line(94, 1) + _router_line(95, 0))
    assert stall() is None
    log.write_text("".join(_router_line(i, 150) for i in range(1, 22)))   # the same wait above the tail
    assert RouterStall(log, patience=20)() is not None
    log.write_text("".join(_router_line(i, 99) for i in range(1, 81)) + _router_line(81, 99))
    assert RouterStall(log, patience=20)() is not None       # 80 iterations in the tail without a new best

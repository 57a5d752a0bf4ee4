"""The whole-SoC flow's readers: the Verilog files of LiteX's build scripts (Yosys and Vivado), and
nextpnr's packed utilisation, on which a design larger than the device stops before placing."""

import pytest

from hhe_gen.flow.gateware import gateware_sources, packed_utilisation
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

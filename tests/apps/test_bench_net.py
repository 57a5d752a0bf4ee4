"""``hhe-gen bench net``'s quick cases: a row of N = 2^13 coefficients through the packetizer and
back through the depacketizer, bit-exact with the wire format, in the cycles of the packetizer's
formula (a full packet of c coefficients every 8 + 2c cycles after the first fill)."""

from hhe_gen.apps import bench
from hhe_gen.apps.bench.net import depacketizer_row, packetizer_row


def test_cases_registered():
    names = {c.name for c in bench.cases(["net"], quick=True)}
    assert {"packetizer-row-n8192-s181", "depacketizer-row-n8192-s181"} <= names


def test_packetizer_row_cycles_and_bytes():
    res = packetizer_row(8192, 181)
    full, rest = divmod(8192, 181)                     # 45 packets of 181, one of 47
    assert res["bit_exact"] and res["packets"] == full + 1
    assert res["cycles"] == 181 + full * (8 + 2 * 181) + (8 + 2 * rest) + 1


def test_depacketizer_row_takes_everything():
    res = depacketizer_row(8192, 181)
    assert res["bit_exact"] and res["packets"] == 46

"""``hhe-gen bench net``'s quick cases: a row of N = 2^13 coefficients through the packetizer and
back through the depacketizer, bit-exact with the wire format, in the cycles of the packetizer's
formula (a full packet of c coefficients every 9 + 2c cycles after the first fill: two idle
cycles, 6 header words, 2 words per coefficient, the CRC-32 word)."""

from hhe_gen.apps import bench
from hhe_gen.apps.bench.net import depacketizer_row, packetizer_row
from hhe_gen.models.wire import MAX_COUNT


def test_cases_registered():
    names = {c.name for c in bench.cases(["net"], quick=True)}
    assert MAX_COUNT == 180
    assert {"packetizer-row-n8192-s180", "depacketizer-row-n8192-s180"} <= names


def test_packetizer_row_cycles_and_bytes():
    res = packetizer_row(8192, 180)
    full, rest = divmod(8192, 180)                     # 45 packets of 180, one of 92
    assert res["bit_exact"] and res["packets"] == full + 1
    assert res["cycles"] == 180 + full * (9 + 2 * 180) + (9 + 2 * rest) + 1


def test_depacketizer_row_takes_everything():
    res = depacketizer_row(8192, 180)
    assert res["bit_exact"] and res["packets"] == 46

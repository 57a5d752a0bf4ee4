"""The firmware's SEND builds packets of the wire format (docs/wire.md) the host takes: its version,
header and largest count are the model's, and its CRC-32 routine (compiled for this machine with
the host's C compiler, skipped without one) equals zlib.crc32 on every length up to a whole
packet."""

import random
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from hhe_gen.models.wire import CRC_BYTES, HEADER_BYTES, MAX_COUNT, MAX_PAYLOAD, VERSION

MAIN_C = Path(__file__).resolve().parents[2] / "soc" / "firmware" / "main.c"


def _define(src: str, name: str) -> int:
    m = re.search(rf"^#define {name} (\d+)", src, re.M)
    assert m, f"{name} not defined in {MAIN_C}"
    return int(m.group(1))


def test_firmware_constants_are_the_models():
    src = MAIN_C.read_text()
    assert _define(src, "WIRE_VERSION") == VERSION
    assert _define(src, "WIRE_HEADER") == HEADER_BYTES
    assert _define(src, "WIRE_CRC") == CRC_BYTES
    assert _define(src, "WIRE_MAX_COUNT") == MAX_COUNT
    assert "buf[2] = WIRE_VERSION;" in src
    assert "put32(buf + WIRE_HEADER + 8 * count, wire_crc32(buf, WIRE_HEADER + 8 * count));" in src
    assert "udp_send(HHE_UDP_PORT, HHE_UDP_PORT, WIRE_HEADER + 8 * count + WIRE_CRC)" in src


def test_firmware_crc_is_zlibs(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler")
    src = MAIN_C.read_text()
    start, end = src.index("static void put16"), src.index("/* One polynomial")
    (tmp_path / "crc.c").write_text(
        "#include <stdint.h>\n#include <stdio.h>\n" + src[start:end] +
        "int main(void) { static uint8_t b[2048]; uint32_t n = (uint32_t)fread(b, 1, sizeof b, stdin);\n"
        "  uint8_t t[4]; put32(t, wire_crc32(b, n)); fwrite(t, 1, 4, stdout); return 0; }\n")
    exe = tmp_path / "crc"
    subprocess.run([cc, "-O2", "-o", str(exe), str(tmp_path / "crc.c")], check=True, capture_output=True)
    rng = random.Random(1)
    for n in [0, 1, 3, 4, 5, 27, HEADER_BYTES + 8, HEADER_BYTES + 8 * MAX_COUNT, MAX_PAYLOAD]:
        data = bytes(rng.getrandbits(8) for _ in range(n))
        out = subprocess.run([str(exe)], input=data, check=True, capture_output=True).stdout
        assert int.from_bytes(out, "little") == zlib.crc32(data), n

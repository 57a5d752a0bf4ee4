"""The memory bridge and the key vault in Migen's simulator: commands of the engine's memory port
served over Wishbone, bit for bit against a Python memory; the vault's bus side reads 0."""

import random

import pytest

migen = pytest.importorskip("migen")

from migen import Signal, run_simulation  # noqa: E402
from litex.gen import LiteXModule  # noqa: E402
from litex.soc.interconnect import stream, wishbone  # noqa: E402

from testsupport import drive_memory_port  # noqa: E402
from hhe_gen.soc.memory_bridge import KeyVault, MemoryBridge  # noqa: E402

RAM_WORDS = 256          # 32-bit words of the SoC RAM (byte address 0x1000 on)
BASE = 0x1000


class Harness(LiteXModule):
    def __init__(self, windows):
        self.cmd = stream.Endpoint([("addr", 32), ("count", 17), ("write", 1)])
        self.wdata = stream.Endpoint([("data", 64)])
        self.rdata = stream.Endpoint([("data", 64)])
        self.bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.ram = wishbone.SRAM(RAM_WORDS * 4)
        self.base = Signal(32, reset=BASE)
        self.vault = KeyVault(64)
        self.bridge = MemoryBridge(self.cmd, self.wdata, self.rdata, self.bus, self.base, windows, self.vault)
        # the bus: RAM at BASE (word address BASE/4 ..)
        self.comb += self.bus.connect(self.ram.bus)
        self.comb += self.ram.bus.adr.eq(self.bus.adr - BASE // 4)


def _run(windows, commands, host_vault_writes=()):
    """commands: (addr, count, write, words) -> returns read results, RAM words, vault probes."""
    dut = Harness(windows)
    reads, probes = [], []

    def driver():
        for adr, value in host_vault_writes:        # the SoC-bus side of the vault: write, then read
            yield from dut.vault.bus.write(adr, value)
            probes.append((yield from dut.vault.bus.read(adr)))
        yield from drive_memory_port(dut, commands, reads)
        for _ in range(8):
            yield

    run_simulation(dut, driver())
    return reads, probes


def test_writes_then_reads_round_trip_bit_exact():
    rng = random.Random(1)
    words = [0, (1 << 64) - 1, 1 << 63, 0x0123456789ABCDEF] + [rng.getrandbits(64) for _ in range(12)]
    reads, _ = _run([], [(3, len(words), 1, words), (3, len(words), 0, None), (5, 2, 0, None)])
    assert [w for w, _ in reads[0]] == words
    assert [last for _, last in reads[0]] == [0] * (len(words) - 1) + [1]
    assert [w for w, _ in reads[1]] == words[2:4]


def test_secret_window_goes_to_the_vault_and_its_bus_side_reads_zero():
    secret = [0xDEADBEEF_00000001, 0xFFFFFFFF_FFFFFFFF, 0x1]
    # engine words 40..47 are the vault's (packed at vault word 0); 100..103 at vault word 8
    windows = [(40, 8), (100, 4)]
    reads, probes = _run(windows, [(41, 3, 1, secret), (41, 3, 0, None), (100, 1, 1, [7]), (100, 1, 0, None),
                                   (0, 2, 0, None), (101, 1, 0, None)],
                         host_vault_writes=[(0, 0x12345678), (18, 0xAAAA), (19, 0xBBBB)])
    assert [w for w, _ in reads[0]] == secret
    assert reads[1][0][0] == 7
    assert reads[3][0][0] == 0xBBBB_0000AAAA, "a key uploaded over the bus is what the accelerator reads"
    assert probes == [0, 0, 0], "the vault's bus port must never return what was written"
    assert [w for w, _ in reads[2]] == [0, 0], "the secret words are not in the SoC RAM"

"""The DRAM memory bridge and the DRAM key vault in Migen's simulator, on 64-bit LiteDRAM native
ports served by a model of the native-port protocol (commands and write beats taken with random
stalls, read beats returned in order after a random latency): engine commands bit for bit against
what was written, loads after stores, the secret windows in the vault words, and the vault's bus
window answering reads with 0.  (LiteDRAM's own SDRAM model holds the whole module in a Python
list under Migen's simulator: gigabytes; the SoC with LiteDRAM runs in Verilator instead.)"""

import random

import pytest

migen = pytest.importorskip("migen")

from migen import Signal, run_simulation  # noqa: E402
from litex.gen import LiteXModule  # noqa: E402
from litex.soc.interconnect import stream  # noqa: E402

from testsupport import drive_memory_port  # noqa: E402
from hhe_gen.soc.dram_bridge import DramKeyVault, DramMemoryBridge  # noqa: E402

BASE_WORD = 0x100          # DRAM word of engine word 0
VAULT_WORD = 0x4000        # DRAM word of the vault
VAULT_ORIGIN = 0x9000_0000
ADDRESS_WIDTH = 24


class Harness(LiteXModule):
    def __init__(self, windows):
        from litedram.common import LiteDRAMNativePort
        self.read_port = LiteDRAMNativePort("read", ADDRESS_WIDTH, 64)
        self.write_port = LiteDRAMNativePort("write", ADDRESS_WIDTH, 64)
        self.vault_port = LiteDRAMNativePort("write", ADDRESS_WIDTH, 64)
        self.cmd = stream.Endpoint([("addr", 32), ("count", 17), ("write", 1)])
        self.wdata = stream.Endpoint([("data", 64)])
        self.rdata = stream.Endpoint([("data", 64)])
        self.base = Signal(32, reset=BASE_WORD)
        self.bridge = DramMemoryBridge(self.cmd, self.wdata, self.rdata, self.read_port, self.write_port,
                                       self.base, windows, vault_base=VAULT_WORD)
        self.vault = DramKeyVault(self.vault_port, VAULT_ORIGIN, VAULT_WORD, 4096)


def _serve(port, memory, rng, state):
    """The native-port protocol: a command, then (write) its beat with byte enables, or (read) its
    beat in order after a latency; stalls at random."""
    pending = []
    while not state["done"]:
        yield port.cmd.ready.eq(rng.random() < 0.7)
        yield port.wdata.ready.eq(rng.random() < 0.7)
        ready_read = bool(pending) and pending[0][0] <= state["cycle"]
        yield port.rdata.valid.eq(ready_read)
        if ready_read:
            yield port.rdata.data.eq(pending[0][1])
        yield
        if (yield port.cmd.valid) and (yield port.cmd.ready):
            addr, we = (yield port.cmd.addr), (yield port.cmd.we)
            if we:
                state.setdefault(id(port), []).append(addr)
            else:
                pending.append((state["cycle"] + rng.randrange(2, 12), memory.get(addr, 0)))
        if (yield port.wdata.valid) and (yield port.wdata.ready):
            addr = state[id(port)].pop(0)
            data, enables = (yield port.wdata.data), (yield port.wdata.we)
            old = memory.get(addr, 0)
            mask = sum(0xFF << 8 * b for b in range(8) if enables >> b & 1)
            memory[addr] = (old & ~mask) | (data & mask)
        if ready_read and (yield port.rdata.ready):
            pending.pop(0)


def _run(windows, commands, vault_writes=(), *, probe=True, counted=None):
    dut = Harness(windows)
    reads, probes = [], []
    memory, rng, state = {}, random.Random(7), {"done": False, "cycle": 0}

    def clock():
        while not state["done"]:
            yield
            state["cycle"] += 1

    def driver():
        for adr, value in vault_writes:                     # the bus side of the vault: write, then read
            yield from dut.vault.bus.write(VAULT_ORIGIN // 4 + adr, value)
            if probe:
                probes.append((yield from dut.vault.bus.read(VAULT_ORIGIN // 4 + adr)))
        yield from drive_memory_port(dut, commands, reads)
        if counted is not None:
            counted.append((yield dut.vault.writes))
        for _ in range(8):
            yield
        state["done"] = True

    run_simulation(dut, [driver(), clock()] + [_serve(p, memory, rng, state)
                                               for p in (dut.read_port, dut.write_port, dut.vault_port)])
    return reads, probes


def test_stores_then_loads_round_trip_bit_exact_on_native_ports():
    rng = random.Random(3)
    words = [0, (1 << 64) - 1, 1 << 63, 0x0123456789ABCDEF] + [rng.getrandbits(64) for _ in range(20)]
    # a load right after the store of the same words; an unaligned load of a part; a store over a part
    reads, _ = _run([], [(5, len(words), 1, words), (5, len(words), 0, None), (8, 3, 0, None),
                         (9, 2, 1, [11, 12]), (8, 4, 0, None)])
    assert [w for w, _ in reads[0]] == words
    assert [last for _, last in reads[0]] == [0] * (len(words) - 1) + [1]
    assert [w for w, _ in reads[1]] == words[3:6]
    assert [w for w, _ in reads[2]] == [words[3], 11, 12, words[6]]


def test_secret_windows_go_to_the_dram_vault_and_its_bus_side_reads_zero():
    secret = [0xDEADBEEF_00000001, 0xFFFFFFFF_FFFFFFFF, 0x1]
    windows = [(40, 8), (100, 4)]          # vault words 0..7 and 8..11
    reads, probes = _run(windows, [(41, 3, 1, secret), (41, 3, 0, None), (38, 2, 1, [5, 6]),
                                   (101, 1, 0, None), (38, 2, 0, None)],
                         vault_writes=[(0, 0x12345678), (18, 0xAAAA), (19, 0xBBBB)])
    assert [w for w, _ in reads[0]] == secret
    assert reads[1][0][0] == 0xBBBB_0000AAAA, "a key written through the bus window is what the accelerator reads"
    assert probes == [0, 0, 0], "the vault's bus window must never return what was written"
    assert [w for w, _ in reads[2]] == [5, 6], "words outside the windows stay in the engine's memory"


def test_vault_writes_back_to_back_all_arrive():
    """The vault's bus side acknowledges each write from a register once LiteDRAM's port has taken
    it: back-to-back writes all arrive, and the accelerator's load right after them sees every word."""
    values = [0x11111111 * (k + 1) for k in range(8)]
    counted = []
    reads, _ = _run([(40, 8)], [(40, 4, 0, None)], vault_writes=list(enumerate(values)), probe=False,
                    counted=counted)
    assert [w for w, _ in reads[0]] == [values[2 * k] | values[2 * k + 1] << 32 for k in range(4)]
    assert counted == [8]

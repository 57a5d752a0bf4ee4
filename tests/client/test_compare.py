"""hhe_gen.client.compare: the one comparison with the ISA model finds each kind of difference
(error, packets, messages, memory) and none on a faithful backend; the near-network benchmark
cases run through it on the Verilator RTL."""

import pytest

from hhe_gen.client.backends import Backend, ModelBackend
from hhe_gen.client.compare import CheckedBackend
from hhe_gen.engine import memory_map, programs
from hhe_gen.engine.client_memory import client_memory
from hhe_gen.engine.config import AcceleratorConfig
from hhe_gen.models import ckks
from hhe_gen.models.wire import Kind

CONFIG = AcceleratorConfig("toy", 2).resolve()
P, SHAPE = CONFIG.params, CONFIG.shape
LAYOUT = memory_map.MemoryMap.for_params(P)
KEYS = ckks.keygen(P, 5)
MEMORY = client_memory(P, SHAPE, KEYS, seed=6, slots=[0.5j] * P.slots, fmt=CONFIG.fmt, layout=LAYOUT)
SETUP = programs.key_setup(P, SHAPE, layout=LAYOUT).words
SENT = programs.encrypt_pk(P, SHAPE, layout=LAYOUT, network=programs.NetworkTarget(message=1)).words


class Tampered(Backend):
    """The ISA model (a model of its own, so the comparison does not take it for the golden one)
    whose runs ``tamper(model, run)`` changes afterwards; ``sees_packets`` as a SoC backend's
    when False."""
    name = "tampered"

    def __init__(self, config, *, sees_packets=True):
        super().__init__(config)
        self.inner, self.tamper, self.sees_packets = ModelBackend(config), None, sees_packets

    def write(self, image):
        self.inner.write(image)

    def read(self, first, count):
        return self.inner.read(first, count)

    def run(self, words, **kw):
        run = self.inner.run(words, **kw)
        if self.tamper:
            self.tamper(self.inner.model, run)
        return run


def _checked(tamper=None, **kw):
    """key_setup, faithfully, then the near-network encryption with ``tamper``."""
    backend = CheckedBackend(Tampered(CONFIG, **kw))
    backend.write(MEMORY)
    assert backend.run(SETUP).equal
    backend.backend.tamper = tamper
    return backend, backend.run(SENT, messages=1)


def test_a_faithful_backend_equals_the_model():
    _, checked = _checked()
    assert checked.equal and checked.differences == []
    assert len(checked.run.messages) == 1
    assert len(checked.run.packets) == 2 * len(P.moduli)       # c0 and c1, a packet per row (N = 64)


def test_a_changed_memory_word_is_found():
    sk_ntt = LAYOUT.address("sk_ntt", 0)

    def flip(model, run):
        model.memory[sk_ntt + 3] ^= 1
    _, checked = _checked(flip)
    assert not checked.equal
    assert any(d.startswith("memory: 1 of") and f"{sk_ntt + 3:#x}" in d for d in checked.differences)


def test_a_lost_packet_is_found_where_packets_are_seen():
    _, checked = _checked(lambda model, run: run.packets.pop())
    assert any(d.startswith("packets:") for d in checked.differences)


def test_a_changed_coefficient_in_a_message_is_found_even_without_packets():
    def change(model, run):
        row = run.messages[0].polys[Kind.CKKS_C1][0]
        row[5] = (row[5] + 1) % P.moduli[0]
        run.packets.clear()                          # a SoC backend gives none
    _, checked = _checked(change, sees_packets=False)
    assert checked.differences == ["messages: 1 received, the model's 1; first difference at message 0"]


def test_a_missing_message_is_found():
    _, checked = _checked(lambda model, run: run.messages.clear(), sees_packets=False)
    assert any(d.startswith("messages: 0 received") for d in checked.differences)


def test_an_error_the_model_does_not_raise_is_found():
    def fail(model, run):
        run.error, run.position = 3, 7
    _, checked = _checked(fail)
    assert any(d.startswith("error 3 at 7, the model's 0") for d in checked.differences)


def test_check_memory_compares_the_words_named_only():
    out = LAYOUT.address("pk0", 0)

    def flip(model, run):
        model.memory[out] ^= 1 << 40
    backend, checked = _checked(flip)
    assert backend.check_memory(range(out + 1, out + P.n)) == []
    assert backend.check_memory([out]) == [f"memory: 1 of 1 words differ, the first at {out:#x}"]


@pytest.mark.toolchain
@pytest.mark.parametrize("program", ["encrypt_pk", "decrypt"])
def test_near_network_bench_cases_equal_the_model(program):
    """bench accel's nearnet cases run on the Verilator RTL through the checked backend: bit-exact,
    a packet per row of each polynomial (64 coefficients fit one), and faster than storing first."""
    from hhe_gen.apps.bench.accel import program_cycles
    got = program_cycles("toy", 2, program, level=0 if program == "decrypt" else None, network=True)
    rows = len(P.moduli) if program == "encrypt_pk" else 1
    assert got["bit_exact"] and got["packets"] == 2 * rows
    assert got["gain_vs_wb"] > 1 and got["gain_vs_dram"] > 1
    if program == "encrypt_pk":
        assert got["memory_writes"] == 0 and got["precision_bits"] > 10

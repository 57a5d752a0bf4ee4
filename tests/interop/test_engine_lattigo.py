"""The RTL engine and Lattigo on the two ends of the wire (toy parameters, Amaranth simulation):
Lattigo decrypts the ciphertexts the RTL engine makes (public- and secret-key mode) to the same
plaintext residues as the model, also when the engine sends them itself as UDP packets (through a
real socket on the loopback to the Python receiver), and the RTL engine's decrypt program turns a
Lattigo ciphertext into the slots the model's fixed-point decoder gives."""

import cmath
import math
import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.engine import Engine
from hhe_gen.engine import memory_map, programs
from hhe_gen.engine.client_memory import client_memory
from hhe_gen.engine.model import shape_for_params
from hhe_gen.host.lattigo import slots_from_json, slots_json
from hhe_gen.models import ckks, ckks_fixed
from hhe_gen.models.wire import Reassembler
from hhe_gen.net.udp import through_loopback
from hhe_gen.params import preset
from hhe_gen.sim.engine import run_engine
from hhe_gen.sim.memory import MemoryModel

PARAMS = preset("toy")
BUFFERS = 12
SHAPE = shape_for_params(PARAMS, BUFFERS)


def _slots(seed):
    rng = random.Random(seed)
    return [cmath.rect(rng.random(), rng.random() * 2 * math.pi) for _ in range(PARAMS.slots)]


@pytest.fixture(scope="module")
def setup():
    keys = ckks.keygen(PARAMS, seed=21)
    layout = memory_map.MemoryMap.for_params(PARAMS)
    return keys, layout, client_memory(PARAMS, SHAPE, keys, layout=layout)


def _engine(**kw):
    return Engine.for_params(PARAMS, lanes=2, buffers=BUFFERS, **kw)


def _over_udp(payloads):
    """The payloads through a UDP socket on the loopback into hhe_gen.net.udp.receive."""
    return through_loopback(payloads, reassembler=Reassembler())


@pytest.mark.parametrize("sent", [False, True], ids=["stored", "sent-as-packets"])
@pytest.mark.parametrize("name", ["encrypt_pk", "encrypt_sk"])
def test_lattigo_decrypts_rtl_ciphertexts(lattigo_peer, setup, name, sent):
    keys, layout, mem = setup
    z = _slots(3 if sent else 1)
    mem = dict(mem)
    memory_map.write_seed(mem, layout, 9)
    memory_map.write_slots(mem, layout, z, isa.DEFAULT_FORMAT)
    engine = _engine(net=dict()) if sent else _engine()
    target = programs.NetworkTarget(segment=25, message=0x5EED) if sent else None
    run = run_engine(engine, getattr(programs, name)(PARAMS, engine.shape, layout=layout, network=target).words,
                     MemoryModel(mem))
    assert run.error_cause == 0
    if sent:
        assert all(p.steady and p.gaps == 0 for p in run.packets)
        assert run.memory.writes == 0                        # nothing went through the memory port
        (msg,) = _over_udp([p.payload for p in run.packets])
        assert msg.id == 0x5EED
        ct = msg.ciphertext()
        pt = ckks.encode(PARAMS, z, fmt=isa.DEFAULT_FORMAT)
        ref = getattr(ckks, name)(PARAMS, keys if name == "encrypt_pk" else keys.sk, pt, seed=9, form="ntt")
        assert (ct.c0, ct.c1) == (ref.c0, ref.c1)
    else:
        ct = memory_map.read_ciphertext(run.memory.words, layout, PARAMS)
    got = lattigo_peer.decrypt(PARAMS.interchange(), keys.sk, ct.to_json())
    assert got["coeffs"] == ckks.decrypt(PARAMS, keys.sk, ct).rows
    prec = ckks.precision_bits(z, slots_from_json(got))
    want = ckks.precision_bits(z, ckks.decrypt_slots(PARAMS, keys.sk, ct))
    how = "UDP packets" if sent else "stored"
    print(f"\nRTL {name} ({how}) -> Lattigo decrypt: {prec['mean_bits']:.2f} mean bits (model decrypt "
          f"{want['mean_bits']:.2f})")
    assert abs(prec["mean_bits"] - want["mean_bits"]) < 0.5 and prec["mean_bits"] > 10


def test_rtl_decrypts_lattigo_ciphertexts(lattigo_peer, setup):
    keys, layout, mem = setup
    z = _slots(2)
    ct = ckks.Ciphertext.from_json(lattigo_peer.encrypt(PARAMS.interchange(), slots_json(z), seed=4,
                                                        sk=keys.sk), PARAMS)
    mem = dict(mem)
    memory_map.write_ciphertext(mem, layout, PARAMS, ct)
    run = run_engine(_engine(), programs.decrypt(PARAMS, SHAPE, layout=layout).words, MemoryModel(mem))
    assert run.error_cause == 0
    word_bits = max(max(q.bit_length() for q in PARAMS.moduli), isa.DEFAULT_FORMAT.width)
    got = memory_map.read_fixed_slots(run.memory.words, layout, word_bits)
    rows = ckks.decrypt(PARAMS, keys.sk, ct).rows
    assert got == ckks_fixed.decode_fixed(rows, list(PARAMS.moduli), isa.DEFAULT_FORMAT, PARAMS.log_scale)
    slots = memory_map.read_slots(run.memory.words, layout, isa.DEFAULT_FORMAT, word_bits)
    prec = ckks.precision_bits(z, slots)
    print(f"\nLattigo encrypt -> RTL decrypt: {prec['mean_bits']:.2f} mean bits")
    assert prec["mean_bits"] > 10


# -- N = 2^13, 3 x 54 bits, Delta = 2^50, in Verilator (slow) ---------------------------------------
@pytest.mark.slow
@pytest.mark.toolchain
def test_dna_hhe_rtl_and_lattigo_both_ways(lattigo_peer):
    """The generated client accelerator (AcceleratorConfig: slot format 38/36) at the DNA-HHE set:
    Lattigo decrypts the RTL's pk- and sk-mode ciphertexts with >= 30 mean bits, stored in memory
    and sent by the engine itself as UDP packets (reassembled by the Python receiver after a real
    socket on the loopback), and the RTL's decrypt turns Lattigo's ciphertext into slots with >= 30
    mean bits (a Verilator build ~1-3 min, each program 30-130 s)."""
    from hhe_gen.engine.config import AcceleratorConfig
    from hhe_gen.models.fft import FixedPointFormat
    from hhe_gen.sim.engine_verilator import VerilatedEngine

    params = preset("dna-hhe")
    fmt = FixedPointFormat(38, 36)
    rtl = VerilatedEngine(AcceleratorConfig(params, 2).engine())          # one build for the three runs
    shape = rtl.engine.shape
    keys = ckks.keygen(params, seed=31)
    layout = memory_map.MemoryMap.for_params(params)
    rng = random.Random(5)
    z = [cmath.rect(rng.random(), rng.random() * 2 * math.pi) for _ in range(params.slots)]
    base = client_memory(params, shape, keys, seed=17, slots=z, fmt=fmt, layout=layout)
    for name in ("encrypt_pk", "encrypt_sk"):
        for network in (None, programs.NetworkTarget(message=11)):
            mem = dict(base)
            prog = getattr(programs, name)(params, shape, layout=layout, network=network)
            run = rtl.run(prog.words, MemoryModel(mem))
            assert run.error_cause == 0
            if network is None:
                ct = memory_map.read_ciphertext(run.memory.words, layout, params)
            else:
                assert len(run.packets) == 276 and all(p.steady and p.gaps == 0 for p in run.packets)
                (msg,) = _over_udp([p.payload for p in run.packets])
                ct = msg.ciphertext()
            got = lattigo_peer.decrypt(params.interchange(), keys.sk, ct.to_json())
            prec = ckks.precision_bits(z, slots_from_json(got))
            how = "stored" if network is None else "276 UDP packets"
            print(f"\nRTL {name} (N = 2^13, {how}) -> Lattigo decrypt: {prec['mean_bits']:.2f} mean bits")
            assert prec["mean_bits"] >= 30
    ct = ckks.Ciphertext.from_json(lattigo_peer.encrypt(params.interchange(), slots_json(z), seed=6, sk=keys.sk),
                                   params)
    mem = dict(base)
    memory_map.write_ciphertext(mem, layout, params, ct)
    run = rtl.run(programs.decrypt(params, shape, layout=layout).words, MemoryModel(mem))
    assert run.error_cause == 0
    slots = memory_map.read_slots(run.memory.words, layout, fmt, 54)
    prec = ckks.precision_bits(z, slots)
    print(f"\nLattigo encrypt (N = 2^13) -> RTL decrypt: {prec['mean_bits']:.2f} mean bits")
    assert prec["mean_bits"] >= 30

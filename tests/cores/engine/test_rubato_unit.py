"""The Rubato unit in the engine (dual mode): rubato.key / rubato.stream / rubato.enc bit-exact with the
ISA model (and so with hhe_gen.models.rubato) over random keys, counters that wrap, noise on and
off, messages at the extremes |x| = t - 1 and out of range (DATA_RANGE at the model's position); every SHAKE256 KAT vector of every set through the engine; a CKKS - Rubato - CKKS
program bit-exact and equal, piece by piece, to each mode run alone (nothing of one mode reaches
the other's output); no cycle depends on the key, the seed or the message; an abort mid-block
leaves the engine idle; bad parameters are refused."""

import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.engine import Engine
from hhe_gen.cores.unused import mark_unused
from hhe_gen.engine import asm, memory_map, programs
from hhe_gen.engine.client_memory import client_memory
from hhe_gen.engine.model import EngineModel
from hhe_gen.engine.rubato_program import write_key_block
from hhe_gen.host.kat import load_rubato_kat_file, shipped_kat_files
from hhe_gen.models import ckks
from hhe_gen.models import rubato as rubato_model
from hhe_gen.params import ParameterError, preset
from hhe_gen.params.primes import ntt_primes
from hhe_gen.sim.engine import run_engine
from hhe_gen.sim.memory import MemoryModel

TOY = preset("toy")
KEY, MSG, OUT = 0x4000, 0x4100, 0x5000


def _engine(set_name="Par-128S", n=None, **kw):
    if n is None:
        return Engine.for_params(TOY, lanes=2, buffers=kw.pop("buffers", 6), codec=kw.pop("codec", False),
                                 rubato=dict(params=set_name), **kw)
    return Engine(n, ntt_primes(n, 30, 1), lanes=2, buffers=4, codec=False, rubato=dict(params=set_name), **kw)


def _run_both(engine, src, mem, **kw):
    words = asm.assemble(src, engine.shape)
    model = EngineModel(engine.shape, engine.n)
    model.memory = dict(mem)
    model.run(words)
    run = run_engine(engine, words, MemoryModel(mem, latency=6), **kw)
    return model, run


def _same_memory(model, run, addresses):
    return all(run.memory.words.get(a, 0) == model.memory.get(a, 0) for a in addresses)


def _inputs(p, rng, *, counter=None, message=None):
    key = [rng.randrange(p.q) for _ in range(p.n)]
    key[:2] = [0, p.q - 1]
    counter = rng.getrandbits(64) if counter is None else counter
    mem = {}
    write_key_block(mem, KEY, p, key, rng.getrandbits(64), rng.getrandbits(64), counter)
    mem.update({MSG + k: x % (1 << 64) for k, x in enumerate(message or [])})
    return key, mem


PROGRAM = """cfg.rubato 3
load b0, {key:#x}
load b1, {msg:#x}
rubato.key b0
rubato.stream b2, blocks=2, counter=1
rubato.enc b3, b1, blocks=5, counter=0xffffff, noise
store b2, {out:#x}
store b3, {out2:#x}
"""


def test_tasks_equal_the_model():
    p = rubato_model.rubato_params("Par-128S")
    rng = random.Random(4)
    message = [rng.randrange(-p.q + 1, p.q) for _ in range(5 * p.l)]
    message[:4] = [p.q - 1, -(p.q - 1), 0, -1]
    key, mem = _inputs(p, rng, counter=(1 << 64) - 3, message=message)         # the counters wrap
    model, run = _run_both(_engine(), PROGRAM.format(key=KEY, msg=MSG, out=OUT, out2=OUT + 64), mem)
    assert model.error == isa.ErrorCause.NONE and run.error_cause == 0
    assert _same_memory(model, run, range(OUT, OUT + 128))
    # the ciphertext against hhe_gen.models.rubato directly, and decrypted by its decrypt
    nonce = model.rubato_registers["nonce"]
    seed = model.rubato_registers["seed"]
    got = run.memory.dump(OUT + 64, 5 * p.l)
    for k in range(5):
        counter = ((1 << 64) - 3 + 0xFFFFFF + k) % (1 << 64)
        z = rubato_model.keystream(p, key, nonce, counter, noise_seed=seed)
        block = got[k * p.l:(k + 1) * p.l]
        assert block == [(a + x) % p.q for a, x in zip(z, message[k * p.l:(k + 1) * p.l])]


def test_message_out_of_range_is_a_data_error():
    p = rubato_model.rubato_params("Par-128S")
    rng = random.Random(5)
    message = [p.q, -p.q, (1 << 53) - 1] + [1] * (5 * p.l - 3)
    _, mem = _inputs(p, rng, message=message)
    model, run = _run_both(_engine(), PROGRAM.format(key=KEY, msg=MSG, out=OUT, out2=OUT + 64), mem)
    assert model.error == isa.ErrorCause.DATA_RANGE
    assert (run.error_cause, run.error_position) == (isa.ErrorCause.DATA_RANGE, model.error_position) == \
        (isa.ErrorCause.DATA_RANGE, 5)


def test_no_cycle_depends_on_key_seed_or_message():
    p = rubato_model.rubato_params("Par-128S")
    records = []
    for seed in (1, 2):
        rng = random.Random(seed)
        message = [rng.randrange(-p.q + 1, p.q) for _ in range(5 * p.l)]
        key, mem = _inputs(p, rng, message=message)
        write_key_block(mem, KEY, p, key, 7, rng.getrandbits(64), 99)     # the same nonce and counter base
        _, run = _run_both(_engine(), PROGRAM.format(key=KEY, msg=MSG, out=OUT, out2=OUT + 64), mem)
        records.append([(t.position, t.dispatched, t.finished) for t in run.tasks])
    assert records[0] == records[1]


def test_abort_mid_block_leaves_the_engine_idle():
    p = rubato_model.rubato_params("Par-128S")
    rng = random.Random(6)
    _, mem = _inputs(p, rng)
    src = PROGRAM.format(key=KEY, msg=MSG, out=OUT, out2=OUT + 64)
    _, whole = _run_both(_engine(), src, mem)
    (stream,) = [t for t in whole.tasks if t.position == 4]
    _, aborted = _run_both(_engine(), src, mem, abort_after=(stream.dispatched + stream.finished) // 2)
    # the aborted stream never completes, nothing after it runs, and the run ends (busy low)
    assert aborted.error_cause == 0 and all(t.position < 4 for t in aborted.tasks)
    assert aborted.cycles < whole.cycles


def _kat_cases():
    """(path, datapath) of every KAT file on both datapaths; on the shared one only Par-128S's in the
    default run, the other sets under the slow marker (a minute each)."""
    for path in shipped_kat_files():
        yield pytest.param(path, "separate", id=f"{path.stem}-separate")
        slow = () if path.stem.endswith("128s") else (pytest.mark.slow,)
        yield pytest.param(path, "shared", id=f"{path.stem}-shared", marks=slow)


@pytest.mark.parametrize("path, datapath", list(_kat_cases()))
def test_every_kat_vector_through_the_engine(path, datapath):
    """Every KAT vector, on the Rubato unit's own multipliers and with its Feistel on the crypto
    unit's shared butterfly array (Z_t field)."""
    data, p = load_rubato_kat_file(path)
    engine = _engine(p.name, n=128, datapath=datapath)
    set_id = isa.RUBATO_SET_IDS.index(p.name)
    src, mem = [f"cfg.rubato {set_id}"], {}
    for j, vec in enumerate(data["vectors"]):
        write_key_block(mem, KEY + 0x100 * j, p, vec["key"], vec["nonce"], vec["noise"]["seed"], vec["counter"])
        src += [f"load b0, {KEY + 0x100 * j:#x}", "rubato.key b0", "rubato.stream b1, blocks=1",
                "rubato.stream b2, blocks=1, noise", f"store b1, {OUT + 0x100 * j:#x}",
                f"store b2, {OUT + 0x100 * j + 0x80:#x}"]
    run = run_engine(engine, asm.assemble("\n".join(src), engine.shape), MemoryModel(mem, latency=6))
    assert run.error_cause == 0
    for j, vec in enumerate(data["vectors"]):
        assert run.memory.dump(OUT + 0x100 * j, p.l) == vec["keystream_before_noise"], j
        assert run.memory.dump(OUT + 0x100 * j + 0x80, p.l) == vec["final_keystream"], j


def test_ckks_rubato_ckks_in_one_program_each_as_alone():
    """encrypt_pk, then Rubato, then decrypt of the CKKS ciphertext, in one instruction stream: the
    memory equals the model's, and each part's results equal those of the part run alone."""
    shape = mark_unused(_engine(codec=None, buffers=12), deep=True).shape
    layout = memory_map.MemoryMap.for_params(TOY)
    keys = ckks.keygen(TOY, seed=3)
    slots = [0.5, -0.25j, 0.125 + 0.5j]
    mem = client_memory(TOY, shape, keys, seed=9, slots=slots, layout=layout)
    p = rubato_model.rubato_params("Par-128S")
    rng = random.Random(7)
    message = [rng.randrange(-p.q + 1, p.q) for _ in range(5 * p.l)]
    _, extra = _inputs(p, rng, message=message)
    mem.update(extra)
    pk = list(programs.encrypt_pk(TOY, shape, layout=layout).words)
    rub = asm.assemble(PROGRAM.format(key=KEY, msg=MSG, out=OUT, out2=OUT + 64), shape)
    dec = list(programs.decrypt(TOY, shape, layout=layout).words)
    runs = {}
    for name, words in (("all", pk + rub + dec), ("ckks", pk + dec), ("rubato", rub)):
        model = EngineModel(shape, TOY.n)
        model.memory = dict(mem)
        assert model.run(words) == isa.ErrorCause.NONE
        run = run_engine(_engine(codec=None, buffers=12), words, MemoryModel(mem, latency=6))
        assert run.error_cause == 0
        assert run.memory.words == {a: v for a, v in model.memory.items()} | {
            a: v for a, v in run.memory.words.items() if a not in model.memory and v == 0}
        runs[name] = run.memory.words
    rubato_out = [*range(OUT, OUT + 2 * p.l), *range(OUT + 64, OUT + 64 + 5 * p.l)]      # the words written
    ckks_out = [layout.address("slots_out") + k for k in range(TOY.n)] + \
        [layout.address(r, i) + k for r in ("c0", "c1") for i in range(len(TOY.moduli)) for k in range(TOY.n)]
    assert [runs["all"].get(a) for a in rubato_out] == [runs["rubato"].get(a) for a in rubato_out]
    assert [runs["all"].get(a) for a in ckks_out] == [runs["ckks"].get(a) for a in ckks_out]


@pytest.mark.parametrize("kw, name", [(dict(set_name="Par-128L"), "'n'"), (dict(set_name="Par-99"), "parameter set")])
def test_bad_parameters(kw, name):
    with pytest.raises(ParameterError, match=name):
        _engine(**kw)


# -- random dual-mode programs ---------------------------------------------------------------------
RN = 32                                         # a Par-128S key block (22 words) fits; 2 blocks of 12
RPRIME = ntt_primes(RN, 30, 1)[0]
RBUFFERS = 5
SEED = 0x300


def _dual_program(rng, length):
    """Random interleavings of CKKS tasks (load, ntt / intt, add / mul, sample), Rubato tasks
    (rubato.key, rubato.stream, rubato.enc) and sends; the initial memory. state[b]: "res" (residues mod the
    prime, or still all zero: None) | "key" | "msg" | "mixed" (neither: not an operand of the CKKS
    tasks, whose contract wants residues)."""
    p = rubato_model.rubato_params("Par-128S")
    memory = {}
    for j in range(2):
        write_key_block(memory, KEY + 0x40 * j, p, [rng.randrange(p.q) for _ in range(p.n)], rng.getrandbits(64),
                        rng.getrandbits(64), rng.getrandbits(64))
    memory.update({MSG + k: rng.randrange(-p.q + 1, p.q) % (1 << 64) for k in range(RN)})
    memory.update({0x200 + k: rng.randrange(RPRIME) for k in range(RN)})
    memory.update({SEED + k: rng.getrandbits(64) for k in range(4)})
    lines = ["cfg.prime s0, p0", "cfg.rubato 3", "cfg.net.segment 7", f"cfg.net.message {rng.getrandbits(32)}",
             f"ldseed {SEED:#x}"]
    state = [None] * RBUFFERS
    for _ in range(length):
        dst = rng.randrange(RBUFFERS)
        res = [b for b in range(RBUFFERS) if state[b] == "res"]
        choice = rng.random()
        if choice < 0.2:
            what = rng.choice(["res", "key", "msg"])
            addr = {"res": 0x200, "key": KEY + 0x40 * rng.randrange(2), "msg": MSG}[what]
            lines.append(f"load b{dst}, {addr:#x}")
            state[dst] = what
        elif choice < 0.3 and "key" in state:
            lines.append(f"rubato.key b{state.index('key')}")
        elif choice < 0.5:
            blocks, counter, noise = rng.randrange(1, 3), rng.getrandbits(24), rng.choice(["", ", noise"])
            msg = [b for b in range(RBUFFERS) if state[b] == "msg"]
            if msg and rng.random() < 0.5:
                lines.append(f"rubato.enc b{dst}, b{rng.choice(msg)}, blocks={blocks}, counter={counter}{noise}")
            else:
                lines.append(f"rubato.stream b{dst}, blocks={blocks}, counter={counter}{noise}")
            # keystream words are < t < q; the words past the blocks keep what they held
            state[dst] = "res" if state[dst] in ("res", None) else "mixed"
        elif choice < 0.6:          # the sampling unit and Rubato take turns on the shared datapath's one XOF
            kind = rng.choice(["uniform", "ternary", "gaussian"])
            lines.append(f"sample b{dst}, s0, {kind}, domain={rng.randrange(4)}, nonce={rng.getrandbits(24)}")
            state[dst] = "res" if kind == "uniform" else "mixed"
        elif choice < 0.7 and res:
            lines.append(f"{rng.choice(['ntt', 'intt'])} b{dst}, b{rng.choice(res)}, s0")
            state[dst] = "res"
        elif choice < 0.85 and res:
            lines.append(f"{rng.choice(['add', 'mul'])} b{dst}, b{rng.choice(res)}, b{rng.choice(res)}, s0")
            state[dst] = "res"
        elif choice < 0.95:
            kind = rng.choice(["c0", "rubato", "slots"])
            lines.append(f"send b{rng.randrange(RBUFFERS)}, {kind}, rows=1, words={rng.randrange(RN + 1)}")
        else:
            lines.append(f"notify {rng.randrange(1 << 16)}")
    lines += [f"store b{b}, {OUT + RN * b:#x}" for b in range(RBUFFERS)] + ["notify 48879"]
    return "\n".join(lines), memory


@pytest.mark.parametrize("seed", range(4))
def test_random_dual_mode_programs_equal_the_model(seed):
    """Whatever the dispatch order, CKKS, Rubato and network tasks interleaved at random leave the
    memory, the packets, the notify codes and the error status of the ISA model."""
    rng = random.Random(seed)
    src, memory = _dual_program(rng, 16)
    for ooo, datapath in ((True, "separate"), (False, "separate"), (True, "shared")):
        engine = Engine(RN, (RPRIME,), lanes=2, buffers=RBUFFERS, ooo=ooo, window=8, codec=False,
                        net=dict(max_segment=8), rubato=dict(params="Par-128S"), datapath=datapath)
        model, run = _run_both(engine, src, memory)
        assert (run.error_cause, run.error_position if run.error_cause else 0) == \
            (int(model.error), model.error_position if model.error else 0)
        assert _same_memory(model, run, range(OUT, OUT + RN * RBUFFERS)), ooo
        assert [p.payload for p in run.packets] == [p.payload for p in model.packets]
        assert [c for _, c in run.notifies] == list(model.events)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4, 40))
def test_many_random_dual_mode_programs_equal_the_model(seed):
    test_random_dual_mode_programs_equal_the_model(seed)


def test_rubato_program_sends_a_ciphertext_the_model_decrypts():
    """hhe_gen.engine.rubato_program on an engine with the Rubato and network units: the packets equal
    the model's, reassemble into one row of kind rubato, and hhe_gen.models.rubato.decrypt gets the
    message back block by block (counter base + k) within its error bound."""
    from hhe_gen.engine.programs import NetworkTarget
    from hhe_gen.engine.rubato_program import rubato_encrypt, write_scaled_message
    from hhe_gen.models.wire import Kind, Reassembler

    p = rubato_model.rubato_params("Par-128S")
    engine = Engine.for_params(TOY, lanes=2, buffers=4, codec=False, net=dict(), rubato=dict(params=p.name))
    rng = random.Random(10)
    key = [rng.randrange(p.q) for _ in range(p.n)]
    nonce, seed, base = rng.getrandbits(64), rng.getrandbits(64), (1 << 64) - 2
    message = [rng.uniform(-7, 7) for _ in range(5 * p.l)]
    mem = {}
    write_key_block(mem, KEY, p, key, nonce, seed, base)
    write_scaled_message(mem, MSG, p, message, engine.word_bits)
    prog = rubato_encrypt(engine.shape, engine.n, key_address=KEY, message_address=MSG, blocks=5, counter=1,
                          network=NetworkTarget(segment=16, message=3))
    model = EngineModel(engine.shape, engine.n)
    model.memory = dict(mem)
    model.run(prog.words)
    run = run_engine(engine, prog.words, MemoryModel(mem, latency=6))
    assert run.error_cause == 0 and [pk.payload for pk in run.packets] == [pk.payload for pk in model.packets]
    rx = Reassembler(kinds=(Kind.RUBATO,))
    (msg,) = [m for m in (rx.feed(pk.payload) for pk in run.packets) if m is not None]
    words = msg.polys[Kind.RUBATO][0]
    assert len(words) == 5 * p.l
    for k in range(5):
        back = rubato_model.decrypt(p, key, nonce, (base + 1 + k) % (1 << 64), words[k * p.l:(k + 1) * p.l])
        want = message[k * p.l:(k + 1) * p.l]
        assert max(abs(a - b) for a, b in zip(back, want)) <= rubato_model.decryption_error_bound(p, 7)
    with pytest.raises(ParameterError, match="blocks"):
        rubato_encrypt(engine.shape, engine.n, key_address=KEY, message_address=MSG, blocks=6, out_address=0)

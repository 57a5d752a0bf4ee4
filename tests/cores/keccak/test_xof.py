"""SHAKE128/256 XOF core against Python's hashlib (an independent implementation).

Two drivers: ``run_stream`` (hhe_gen.sim.stream) for whole messages with random gaps and
back-pressure, and a cycle-by-cycle driver (``drive``) for restarts at chosen moments, per-cycle
invariants (no output before the message is absorbed) and exact cycle counts.
"""

import hashlib
import random

import pytest
from amaranth import unsigned
from amaranth.sim import Simulator

from hhe_gen.cores.keccak import (RATES, Phase, ShakeXof, absorb_layout, byte_stream_signature,
                                  pad_cycles, squeeze_bytes_per_cycle)
from hhe_gen.cores.unused import mark_unused
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream

HASHLIB = {128: hashlib.shake_128, 256: hashlib.shake_256}


def message_beats(msg: bytes, w: int, rng: random.Random | None = None, empty_last=None):
    """Absorb-stream payloads for ``msg``: W-byte beats, the last flagged with its byte count.

    With ``rng``: junk in the bytes beyond ``nbytes`` of the last beat and in ``nbytes`` of other
    beats (the core must ignore both).  For a message of a multiple of W bytes, ``empty_last``
    (default: random with ``rng``, else False) ends it with an extra empty last beat instead of
    flagging its last full beat.
    """
    if empty_last is None:
        empty_last = rng is not None and rng.random() < 0.5
    junk = (lambda bits: rng.getrandbits(bits)) if rng else (lambda bits: 0)
    beats = []
    for i in range(0, len(msg), w):
        chunk = msg[i:i + w]
        beats.append({"data": int.from_bytes(chunk, "little"), "last": 0,
                      "nbytes": junk(8) % (w + 1)})
    if not beats or (empty_last and len(msg) % w == 0):
        beats.append({"data": 0, "last": 1, "nbytes": 0})
    last = beats[-1]
    nbytes = len(msg) - w * (len(beats) - 1)
    last["last"], last["nbytes"] = 1, nbytes
    last["data"] |= (junk(8 * w) >> (8 * nbytes)) << (8 * nbytes)
    return beats


def unbeat(words, w):
    return b"".join(x.to_bytes(w, "little") for x in words)


def absorb_cycles(msg_len, beats, w, rate, n, ring=False):
    """Expected cycles between consecutive accepted beats (full-rate producer): 1, plus n after a
    beat that completes a block; and the cycles from the last beat to the first output (PAD is one
    cycle; with the ring it turns from the slot after the last beat's to the block's end, and
    is at least one cycle)."""
    slots = rate // w
    gaps = []
    for i in range(beats - 1):
        gaps.append(1 + (n if (i + 1) % slots == 0 else 0))
    last_full = msg_len == beats * w          # the last beat carries W bytes
    last_completes_block = last_full and beats % slots == 0
    pad = 1
    if ring and not last_completes_block:
        pad = max(1, slots - 1 - (beats - 1) % slots)
    first_out = n + 1 + pad + (n if last_completes_block else 0)
    return gaps, first_out


# -- whole messages with run_stream --------------------------------------------------------------

CASES = [  # (variant, W, k, message length, output beats, extra empty last beat)
    (128, 8, 1, 0, 30, False),
    (256, 8, 2, 1, 20, False),
    (128, 8, 24, 167, 22, False),
    (256, 8, 3, 135, 18, False),
    (256, 8, 8, 136, 5, False),
    (256, 8, 4, 136, 5, True),
    (128, 8, 6, 169, 5, False),
    (256, 8, 12, 3 * 136 + 5, 40, False),
    (256, 1, 4, 137, 140, False),
    (128, 1, 1, 168, 170, False),
    (256, 1, 1, 0, 3, False),
    (128, 2, 8, 100, 90, False),
    (256, 4, 2, 272, 40, True),
    pytest.param(128, 1, 12, 2 * 168 + 1, 400, False, marks=pytest.mark.slow),
    pytest.param(256, 8, 24, 7 * 136 + 9, 300, True, marks=pytest.mark.slow),
    pytest.param(128, 4, 2, 1000, 500, False, marks=pytest.mark.slow),
]


def assert_exact_cycles(run, length, n_beats, w, rate, n, ring=False):
    """A full-rate run's cycles are the formula's: the gaps between input beats, the first output
    after the last beat, and one output per cycle with a permutation (n) after each block."""
    gaps, first_out = absorb_cycles(length, n_beats, w, rate, n, ring)
    assert [b - a for a, b in zip(run.in_cycles, run.in_cycles[1:])] == gaps
    assert run.out_cycles[0] - run.in_cycles[-1] == first_out
    slots = rate // w
    assert [b - a for a, b in zip(run.out_cycles, run.out_cycles[1:])] == \
        [1 + (n if (j + 1) % slots == 0 else 0) for j in range(len(run.out_cycles) - 1)]


@pytest.mark.parametrize("variant,w,k,length,n_out,empty_last", CASES)
def test_matches_hashlib_with_exact_cycles(variant, w, k, length, n_out, empty_last):
    rng = random.Random(f"{variant}-{w}-{k}-{length}")
    msg = rng.randbytes(length)
    want = HASHLIB[variant](msg).digest(n_out * w)
    beats = message_beats(msg, w, random.Random(1), empty_last=empty_last)   # with junk
    full = run_stream(ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k), beats, n_out)
    assert unbeat(full.outputs, w) == want
    assert_exact_cycles(full, length, len(beats), w, RATES[variant], 24 // k)
    # the same with random valid gaps and ready back-pressure
    gappy = run_stream(ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k),
                       message_beats(msg, w, rng), n_out, gaps=length + k)
    assert unbeat(gappy.outputs, w) == want


@pytest.mark.parametrize("variant,w,k,length,n_out,empty_last", [
    (256, 8, 1, 0, 20, False), (256, 8, 1, 16, 20, False), (256, 8, 1, 41, 20, False),
    (256, 8, 2, 135, 20, False), (256, 8, 1, 136, 20, False), (256, 8, 1, 136, 20, True),
    (256, 8, 24, 3 * 136 + 5, 40, False), (128, 8, 1, 167, 25, False), (128, 8, 3, 168, 25, False),
    (256, 1, 4, 137, 140, False), (128, 1, 1, 167, 170, False), (256, 4, 2, 272, 40, True), (128, 2, 8, 100, 90, False),
])
def test_ring_matches_hashlib_with_exact_cycles(variant, w, k, length, n_out, empty_last):
    """ring=True: the rate's slots turn one per beat (in at the last slot, out at slot 0); the
    output is hashlib's, and PAD turns the ring to the block's end (absorb_cycles)."""
    rng = random.Random(f"ring-{variant}-{w}-{k}-{length}")
    msg = rng.randbytes(length)
    want = HASHLIB[variant](msg).digest(n_out * w)
    beats = message_beats(msg, w, random.Random(1), empty_last=empty_last)
    full = run_stream(ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k, ring=True), beats, n_out)
    assert unbeat(full.outputs, w) == want
    assert_exact_cycles(full, length, len(beats), w, RATES[variant], 24 // k, ring=True)
    gappy = run_stream(ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k, ring=True),
                       message_beats(msg, w, rng), n_out, gaps=length + k)
    assert unbeat(gappy.outputs, w) == want


@pytest.mark.parametrize("length,w,pad", [(0, 8, 16), (16, 8, 15), (32, 8, 13), (41, 8, 11), (135, 8, 1),
                                          (136, 8, 1), (137, 8, 16), (16, 4, 30), (168, 8, 1)])
def test_pad_cycles(length, w, pad):
    variant = 128 if length == 168 else 256
    assert pad_cycles(length, variant, w, ring=True) == pad
    assert pad_cycles(length, variant, w) == 1


def test_squeeze_throughput_formula():
    assert squeeze_bytes_per_cycle(128, 8, 24) == 168 / 22
    assert squeeze_bytes_per_cycle(256, 1, 1) == 136 / 160
    with pytest.raises(ParameterError):
        squeeze_bytes_per_cycle(512, 8, 1)


# -- cycle-by-cycle driver: restarts, invariants ------------------------------------------------

def drive(dut, ops, *, seed=None, max_cycles=20000):
    """Run a list of operations on ``dut`` one clock at a time.

    ops: ("msg", bytes[, variant]) absorbs a message (variant: value of the shake256 port, "both"
    only); ("raw", beats) feeds beats of an unfinished message; ("take", n) squeezes n beats;
    ("restart",) strobes restart for one cycle; ("wait", c) idles c cycles; ("expect", phase)
    checks the control state.  Operations run in order; with ``seed``, random valid gaps and
    ready back-pressure.  Returns a list of per-"take" output byte strings and a log of
    (cycle, event) tuples.

    Invariants checked every cycle: o_stream.valid only after the current message's last beat was
    taken (and at least n+2 cycles later); under back-pressure the offered beat stays the same;
    i_stream.ready and o_stream.valid never both high; a restart leaves a zero state, position and
    round counter, and the core ready, in the next cycle.
    """
    rng = random.Random(seed) if seed is not None else None
    w = dut.beat_bytes
    n = dut.perm_cycles
    results, log = [], []

    async def tb(ctx):
        cycle = 0
        last_taken_at = None          # cycle the current message's last beat was taken
        held = None                   # (payload) offered but not taken in the previous cycle
        for op in ops:
            if op[0] == "restart":
                ctx.set(dut.abort, 1)
                assert not ctx.get(dut.i_stream.ready) and not ctx.get(dut.o_stream.valid)
                await ctx.tick()
                cycle += 1
                ctx.set(dut.abort, 0)
                assert ctx.get(dut.state) == 0 and ctx.get(dut.pos) == 0
                assert ctx.get(dut.step) == 0 and ctx.get(dut.phase) == Phase.ABSORB
                if dut.groups > 1:      # planes: the round and its group of planes too
                    assert ctx.get(dut.group) == 0 and ctx.get(dut.rnd) == 0
                assert ctx.get(dut.i_stream.ready)
                last_taken_at, held = None, None
                log.append((cycle, "restart"))
                continue
            if op[0] == "expect":
                assert ctx.get(dut.phase) == op[1]
                continue
            if op[0] == "raw":          # beats of a message in progress (no last beat)
                for beat in op[1]:
                    ctx.set(dut.i_stream.payload, beat)
                    ctx.set(dut.i_stream.valid, 1)
                    while True:
                        taken = ctx.get(dut.i_stream.ready)
                        await ctx.tick()
                        cycle += 1
                        if taken:
                            break
                ctx.set(dut.i_stream.valid, 0)
                continue
            if op[0] == "wait":
                for _ in range(op[1]):
                    assert last_taken_at is not None or not ctx.get(dut.o_stream.valid)
                    await ctx.tick()
                    cycle += 1
                continue
            if op[0] == "msg":
                beats = message_beats(op[1], w, rng)
                if len(op) > 2:
                    ctx.set(dut.shake256, int(op[2] == 256))
                i = 0
                while i < len(beats):
                    assert cycle < max_cycles
                    offer = rng is None or rng.random() >= 0.3
                    ctx.set(dut.i_stream.payload, beats[i])
                    ctx.set(dut.i_stream.valid, int(offer))
                    assert not ctx.get(dut.o_stream.valid), "output before the message ended"
                    taken = offer and ctx.get(dut.i_stream.ready)
                    if taken and i == 1 and len(op) > 2:
                        ctx.set(dut.shake256, int(op[2] != 256))   # latched: must not matter
                    await ctx.tick()
                    cycle += 1
                    if taken:
                        i += 1
                ctx.set(dut.i_stream.valid, 0)
                last_taken_at = cycle - 1
                log.append((last_taken_at, "last beat"))
                continue
            assert op[0] == "take"
            got = []
            while len(got) < op[1]:
                assert cycle < max_cycles
                ready = rng is None or rng.random() >= 0.3
                ctx.set(dut.o_stream.ready, int(ready))
                valid = ctx.get(dut.o_stream.valid)
                assert not (valid and ctx.get(dut.i_stream.ready))
                if valid:
                    assert last_taken_at is not None and cycle - last_taken_at >= n + 2
                    payload = ctx.get(dut.o_stream.payload)
                    if held is not None:
                        assert payload == held, "payload changed under back-pressure"
                    if ready:
                        got.append(payload)
                        log.append((cycle, "out"))
                        held = None
                    else:
                        held = payload
                await ctx.tick()
                cycle += 1
            ctx.set(dut.o_stream.ready, 0)
            results.append(unbeat(got, w))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()
    return results, log


@pytest.mark.parametrize("w,k,seed", [(8, 1, None), (8, 4, 5), (1, 8, 6), (2, 2, 7),
                                      pytest.param(1, 24, 8, marks=pytest.mark.slow)])
def test_restart_mid_squeeze_gives_the_fresh_stream(w, k, seed):
    rng = random.Random(w * 100 + k)
    m1, m2, m3 = rng.randbytes(40), rng.randbytes(150), b""
    rate_beats = 136 // w
    ops = [("msg", m1), ("take", rate_beats + 3),       # into the second output block
           ("restart",), ("msg", m2), ("take", 4),
           ("restart",), ("msg", m3), ("take", 2),
           ("restart",), ("msg", m2), ("take", rate_beats + 1)]
    out, _ = drive(ShakeXof(256, beat_bytes=w, rounds_per_cycle=k), ops, seed=seed)
    h = hashlib.shake_256
    assert out == [h(m1).digest((rate_beats + 3) * w), h(m2).digest(4 * w), h(m3).digest(2 * w),
                   h(m2).digest((rate_beats + 1) * w)]


@pytest.mark.parametrize("where,phase", [
    ("absorb", Phase.ABSORB), ("perm_absorb", Phase.PERM_ABSORB), ("pad", Phase.PAD),
    ("perm_squeeze", Phase.PERM_SQUEEZE), ("squeeze", Phase.SQUEEZE), ("idle", Phase.ABSORB)])
def test_restart_anywhere(where, phase):
    """A restart while absorbing, in a block permutation, in PAD, in the final permutation, while
    squeezing under back-pressure, or before anything, gives exactly the next message's stream."""
    w, k = 8, 3
    n = 24 // k
    rng = random.Random(where)
    m_old, m_new = rng.randbytes(200), rng.randbytes(30)
    raw = [{"data": int.from_bytes(m_old[i:i + w], "little"), "last": 0, "nbytes": 0}
           for i in range(0, 200, w)]
    before = {"absorb": [("raw", raw[:5])],
              "perm_absorb": [("raw", raw[:21])],                   # 168 bytes: a full block
              "pad": [("msg", m_old[:20])],
              "perm_squeeze": [("msg", m_old[:20]), ("wait", 1 + n // 2)],
              "squeeze": [("msg", m_old[:20]), ("wait", 2 * n)],
              "idle": []}[where]
    ops = before + [("expect", phase), ("restart",), ("msg", m_new), ("take", 25)]
    out, _ = drive(ShakeXof(128, beat_bytes=w, rounds_per_cycle=k), ops)
    assert out[-1] == hashlib.shake_128(m_new).digest(25 * w)


def test_runtime_variant_per_message():
    """variant="both": the shake256 port, sampled with each message's first beat, selects the
    rate and padding position; messages of both kinds alternate across restarts."""
    rng = random.Random(11)
    w = 8
    msgs = [(rng.randbytes(L), v) for L, v in ((0, 128), (136, 256), (167, 128), (135, 256),
                                                (168, 128))]
    ops = []
    for msg, v in msgs:
        ops += [("msg", msg, v), ("take", 23), ("restart",)]
    out, _ = drive(ShakeXof("both", beat_bytes=w, rounds_per_cycle=6), ops, seed=3)
    assert out == [HASHLIB[v](msg).digest(23 * w) for msg, v in msgs]


def test_interfaces():
    xof = ShakeXof(256, beat_bytes=4)
    mark_unused(xof)
    assert xof.o_stream.signature.members == byte_stream_signature(4).members
    assert xof.o_stream.payload.shape() == unsigned(32)
    assert xof.i_stream.payload.shape() == absorb_layout(4)
    assert not hasattr(xof, "shake256")
    both = ShakeXof("both")
    mark_unused(both)
    assert hasattr(both, "shake256")


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
@pytest.mark.parametrize("kwargs,name", [
    ({"variant": 512}, "variant"), ({"variant": True}, "variant"), ({"variant": "128"}, "variant"),
    ({"beat_bytes": 3}, "beat_bytes"), ({"beat_bytes": 16}, "beat_bytes"),
    ({"beat_bytes": 0}, "beat_bytes"), ({"rounds_per_cycle": 5}, "rounds_per_cycle"),
    ({"ring": 1}, "ring"), ({"variant": "both", "ring": True}, "variant"),
])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as err:
        ShakeXof(**kwargs)
    assert err.value.name == name


@pytest.mark.parametrize("w,k,variant", [(2, 6, 128), (4, 2, 256), (1, 3, 256), (8, 12, "both")])
def test_random_lengths_and_chunkings(w, k, variant):
    """Random message lengths and output lengths, one message after another (restart between),
    random valid gaps and ready back-pressure."""
    rng = random.Random(f"{w}-{k}-{variant}")
    ops, want = [], []
    for _ in range(4):
        v = rng.choice((128, 256)) if variant == "both" else variant
        msg = rng.randbytes(rng.randrange(0, 350))
        beats = rng.randrange(1, 400 // w)
        ops += [("msg", msg, v) if variant == "both" else ("msg", msg), ("take", beats),
                ("restart",)]
        want.append(HASHLIB[v](msg).digest(beats * w))
    out, _ = drive(ShakeXof(variant, beat_bytes=w, rounds_per_cycle=k), ops, seed=rng.randrange(99))
    assert out == want

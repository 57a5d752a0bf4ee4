"""The shared XOF (one SHAKE256, clients taking turns) against hashlib: every client's squeezed
bytes are SHAKE256 of its own message, whoever held the XOF before (the restart between holders
leaves nothing behind); one grant at a time and only to a requester; a request that finds the
XOF free is granted in the same cycle, the first client first; one that waits is granted two
cycles after the holder's last request."""

import hashlib
import random

import pytest
from amaranth.hdl import Shape
from amaranth.sim import Simulator

from hhe_gen.cores.keccak.shared import SharedXof, xof_client_signature
from hhe_gen.cores.unused import mark_unused
from hhe_gen.params.errors import ParameterError

from .test_xof import message_beats, unbeat

W = 8


class _Client:
    """One client's jobs: (idle cycles, message, beats to squeeze); per cycle it drives its port from
    its state and records what it squeezed."""

    def __init__(self, rng, jobs):
        self.rng, self.jobs = rng, list(jobs)
        self.done = []                      # (message, squeezed bytes)
        self._next_job()

    def _next_job(self):
        if self.jobs:
            self.wait, self.msg, self.want = self.jobs.pop(0)
            self.beats = message_beats(self.msg, W, self.rng)
            self.out = []
            # a job right after the last one keeps the XOF and restarts it itself (as Rubato's
            # core does per message); one after a pause finds it restarted by the release
            self.restart = self.wait == 0
        else:
            self.wait = None

    @property
    def req(self) -> bool:
        return self.wait is not None and self.wait == 0

    def drive(self, ctx, port):
        ctx.set(port.req, self.req)
        ctx.set(port.restart, self.req and self.restart)
        ctx.set(port.absorb.valid, self.req and bool(self.beats) and not self.restart)
        if self.req and self.beats:
            ctx.set(port.absorb.payload, self.beats[0])
        self.ready = self.req and not self.beats and self.rng.random() < 0.7
        ctx.set(port.squeeze.ready, self.ready)

    def sample(self, ctx, port):
        """After the cycle's inputs settled: the transfers of this cycle."""
        if self.wait is None:
            return
        if self.wait > 0:
            self.wait -= 1
            return
        if self.restart and ctx.get(port.grant):
            self.restart = False
        if ctx.get(port.absorb.valid) and ctx.get(port.absorb.ready):
            self.beats.pop(0)
        if self.ready and ctx.get(port.squeeze.valid):
            self.out.append(ctx.get(port.squeeze.payload))
            if len(self.out) == self.want:
                self.done.append((self.msg, unbeat(self.out, W)))
                self._next_job()


def _jobs(rng, count):
    return [(rng.choice([0, 0, 1, 3, 40]), rng.randbytes(rng.choice([0, 7, 16, 32, 41, 136, 150])),
             rng.choice([1, 5, 17, 18, 40])) for _ in range(count)]


@pytest.mark.parametrize("seed", range(3))
def test_clients_take_turns_and_get_their_own_shake(seed):
    rng = random.Random(seed)
    dut = SharedXof(2, beat_bytes=W, rounds_per_cycle=2)
    clients = [_Client(random.Random(rng.getrandbits(32)), _jobs(rng, 6)) for _ in range(2)]
    ports = [dut.client0, dut.client1]
    seen = {"free_both": 0, "waited": 0}

    async def bench(ctx):
        last_req = [None, None]            # the holder's last cycle with req
        holder = None
        for cycle in range(20_000):
            if all(c.wait is None for c in clients):
                break
            for c, port in zip(clients, ports):
                c.drive(ctx, port)
            grants = [ctx.get(port.grant) for port in ports]
            reqs = [c.req for c in clients]
            assert sum(grants) <= 1 and all(r or not g for r, g in zip(reqs, grants))
            if holder is not None and not reqs[holder]:
                last_req[holder], holder = cycle - 1, None
            if any(grants):
                g = grants.index(1)
                if holder is None:
                    released = [t for t in last_req if t is not None]
                    if released and max(released) >= cycle - 2:
                        assert max(released) == cycle - 2     # waited: two cycles after the release
                        seen["waited"] += 1
                    if all(reqs):
                        assert g == 0                           # the first client first
                        seen["free_both"] += 1
                    holder = g
                else:
                    assert g == holder
            elif holder is None and any(reqs):
                released = [t for t in last_req if t is not None]
                assert released and max(released) >= cycle - 2, "a request found the XOF free and waited"
            for c, port in zip(clients, ports):
                c.sample(ctx, port)
            await ctx.tick()
        else:
            raise TimeoutError("the clients did not finish")

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    for c in clients:
        assert len(c.done) == 6
        for msg, got in c.done:
            assert got == hashlib.shake_256(msg).digest(len(got))
    assert seen["waited"] > 0


def test_signature_and_parameters():
    sig = xof_client_signature(8)
    assert set(sig.members) == {"req", "grant", "restart", "absorb", "squeeze"}
    assert Shape.cast(sig.members["squeeze"].signature.members["payload"].shape).width == 64
    with pytest.raises(ParameterError, match="clients"):
        SharedXof(0)
    with pytest.raises(ParameterError, match="beat_bytes"):
        SharedXof(2, beat_bytes=3)
    mark_unused(SharedXof(1), deep=True)

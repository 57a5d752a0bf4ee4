"""Helpers of the test suite that need pytest (the installed package never imports pytest)."""

import os

import pytest

__all__ = ["on_ci", "require_go", "mutate_payload", "drive_memory_port"]


def on_ci() -> bool:
    """True under CI=true, where a missing tool is a failure, not a skip."""
    return os.environ.get("CI", "").lower() == "true"


def require_go(reason: str | None = None) -> None:
    """Skip (or, with CI=true, fail) when Go is missing; ``reason`` defaults to go_available()."""
    if reason is None:
        from hhe_gen.host.lattigo import go_available
        reason = go_available()
    if reason is None:
        return
    if on_ci():
        pytest.fail(f"CI=true but the Lattigo peer cannot be built: {reason}")
    pytest.skip(f"Lattigo peer not available: {reason}")


def mutate_payload(good: bytes, rng, *, header_bytes: int = 24, grow: int = 2000, min_keep: int = 0,
                   reseal: bool = False) -> bytes:
    """A variant of a good packet payload for fuzzing: one header bit flipped, the payload cut
    (keeping at least ``min_keep`` bytes), grown by up to ``grow`` zero bytes, or its offset field
    (bytes 16 .. 19) set to 0 .. 15.  With ``reseal`` the mutation is made to the payload without
    its CRC-32 trailer and a new trailer is computed over the result (a malformed packet whose CRC
    checks: what the checks behind the CRC must catch)."""
    import struct
    if reseal and len(good) > 4:
        from hhe_gen.models.wire import seal
        return seal(mutate_payload(good[:-4], rng, header_bytes=header_bytes, grow=grow,
                                   min_keep=max(0, min_keep - 4)))
    b = bytearray(good)
    choice = rng.randrange(4)
    if choice == 0:
        b[rng.randrange(header_bytes)] ^= 1 << rng.randrange(8)
    elif choice == 1:
        del b[rng.randrange(min_keep, len(b)):]
    elif choice == 2:
        b += bytes(rng.randrange(1, grow))
    else:
        struct.pack_into("<I", b, 16, rng.randrange(16))
    return bytes(b)


def drive_memory_port(dut, commands, reads: list, *, limit: int = 5000):
    """A Migen generator playing the engine's memory port on ``dut`` (``cmd``, ``wdata``, ``rdata``
    endpoints): each ``(addr, count, write, words)`` as a command, then its write beats or (read)
    the beats taken as ``(data, last)`` into a list appended to ``reads``; a read that delivers
    nothing for ``limit`` cycles fails."""
    for addr, count, write, words in commands:
        yield dut.cmd.valid.eq(1)
        yield dut.cmd.addr.eq(addr)
        yield dut.cmd.count.eq(count)
        yield dut.cmd.write.eq(write)
        yield
        while not (yield dut.cmd.ready):
            yield
        yield dut.cmd.valid.eq(0)
        if write:
            for i, w in enumerate(words):
                yield dut.wdata.valid.eq(1)
                yield dut.wdata.data.eq(w)
                yield dut.wdata.last.eq(i == count - 1)
                yield
                while not (yield dut.wdata.ready):
                    yield
            yield dut.wdata.valid.eq(0)
        else:
            got, idle = [], 0
            yield dut.rdata.ready.eq(1)
            while len(got) < count:
                if (yield dut.rdata.valid):
                    got.append(((yield dut.rdata.data), (yield dut.rdata.last)))
                    idle = 0
                yield
                idle += 1
                assert idle < limit, "the memory port stopped delivering"
            yield dut.rdata.ready.eq(0)
            reads.append(got)

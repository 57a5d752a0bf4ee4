"""Helpers of the test suite that need pytest (the installed package never imports pytest)."""

import os

import pytest

__all__ = ["on_ci", "require_go", "mutate_payload"]


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


def mutate_payload(good: bytes, rng, *, header_bytes: int = 24, grow: int = 2000, min_keep: int = 0) -> bytes:
    """A variant of a good packet payload for fuzzing: one header bit flipped, the payload cut
    (keeping at least ``min_keep`` bytes), grown by up to ``grow`` zero bytes, or its offset field
    (bytes 16 .. 19) set to 0 .. 15."""
    import struct
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

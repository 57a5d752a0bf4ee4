"""Shared helpers of the sampler core tests (bytes -> beats, KAT location, stream bookkeeping)."""

import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest

# The Rubato KAT files shipped as package data (hhe_gen/data/kat/rubato).
KAT_DIR = Path(str(resources.files("hhe_gen") / "data" / "kat" / "rubato"))
KAT_SETS = ("80s", "80m", "80l", "128s", "128m", "128l")


def beats(data: bytes, in_bytes: int) -> list[int]:
    """The byte stream as W-byte little-endian beats (zero-padded last beat)."""
    data = bytes(data) + bytes(-len(data) % in_bytes)
    return [int.from_bytes(data[i:i + in_bytes], "little") for i in range(0, len(data), in_bytes)]


def shake(message: bytes, nbytes: int) -> bytes:
    """SHAKE256 output from hashlib (independent of the project's Keccak model)."""
    return hashlib.shake_256(message).digest(nbytes)


def load_kat(name: str) -> dict:
    """One shipped Rubato KAT file; a clear failure (not a skip) when it is missing."""
    path = KAT_DIR / f"rubato_{name}.json"
    if not path.is_file():
        pytest.fail(f"Rubato KAT file missing: {path} (package data hhe_gen/data/kat/rubato; "
                    "is hhe-gen installed from this checkout?)")
    return json.loads(path.read_text())


def asap_out_cycles(ready_cycles: list[int]) -> list[int]:
    """Output cycles of a stream that emits item t as soon as it is ready and the previous one
    went out: out[t] = max(ready[t], out[t-1] + 1)."""
    out = []
    for r in ready_cycles:
        out.append(r if not out else max(r, out[-1] + 1))
    return out

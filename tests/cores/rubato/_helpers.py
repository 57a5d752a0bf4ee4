"""Shared helpers of the Rubato core tests: an independent XOF word source and the model run."""

import hashlib
import struct
from importlib import resources

from hhe_gen.models import rubato as model

# The Rubato KAT files shipped as package data (hhe_gen/data/kat/rubato).
KAT_DIR = str(resources.files("hhe_gen") / "data" / "kat" / "rubato")
SETS = ("Par-80S", "Par-80M", "Par-80L", "Par-128S", "Par-128M", "Par-128L")


def accepted_positions(p, nonce, counter):
    """Candidate-word index of every accepted round constant, from hashlib's SHAKE256 (not the
    project's Keccak model or core)."""
    count = p.round_constant_count
    words_needed = 2 * count + 64
    stream = hashlib.shake_256(nonce.to_bytes(8, "little") + counter.to_bytes(8, "little")).digest(4 * words_needed)
    words = struct.unpack(f"<{words_needed}I", stream)
    mask = (1 << p.q_bits) - 1
    return [i for i, w in enumerate(words) if w & mask < p.q][:count]


def expected(p, key, nonce, counter, seed=None):
    """(keystream, trace) from the golden model."""
    tr = model.RubatoTrace()
    out = model.keystream(p, key, nonce, counter, noise_seed=seed, trace=tr)
    return out, tr


def check_states(core, run, tr):
    """Every committed state equals the model's trace, and every phase was seen once."""
    assert [i for i, _ in run.states] == list(range(len(core.phases)))
    for index, state in run.states:
        ph = core.phases[index]
        assert state == tr.steps[ph.step][ph.field], (index, ph)

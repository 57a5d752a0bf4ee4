"""Boundary vectors for the Rubato core's modular steps (issue 14 section 6), against the golden
model hhe_gen.models.rubato.

With Rubato's 25/26-bit moduli the final noise addition ``(z + e) mod q`` practically never wraps
(|e| <= 20), so these tests use Par-80S with a small prime q (the structure, tables and XOFs of
Par-80S; the formal harnesses do the same): the linear layers' sums, the Feistel additions and
the final addition then wrap all the time.  Blocks are chosen with the model so that the final
addition t = z + e lands exactly on q (must give 0), on q - 1, on -1 (must give q - 1) and on 0
from a negative e; every output word and every committed state is compared with the model.
"""

import dataclasses

import pytest

from hhe_gen.cores.rubato import RubatoCore
from hhe_gen.models import rubato as model
from hhe_gen.params import rubato_params
from hhe_gen.sim.rubato import simulate_blocks

SEED = 1
EVENTS = {
    "z + e = q": lambda z, e, q: z + e == q,
    "z + e = q - 1, e > 0": lambda z, e, q: z + e == q - 1 and e > 0,
    "z + e = -1": lambda z, e, q: z + e == -1,
    "z + e = 0, e < 0": lambda z, e, q: z + e == 0 and e < 0,
    "z = q - 1, e = 0": lambda z, e, q: z == q - 1 and e == 0,
}


def small_params(q: int):
    return dataclasses.replace(rubato_params("Par-80S"), name=f"Par-80S-q{q}", q=q, q_bits=q.bit_length())


def boundary_blocks(p, key, tries: int = 200):
    """(nonce, counter, 1) blocks whose final additions cover every EVENT (found with the model)."""
    found = {}
    for nonce in range(tries):
        tr = model.RubatoTrace()
        model.keystream(p, key, nonce, 0, noise_seed=SEED, trace=tr)
        for name, hit in EVENTS.items():
            if name not in found and any(hit(z, e, p.q) for z, e in zip(tr.keystream_before_noise, tr.noise_values)):
                found[name] = nonce
        if len(found) == len(EVENTS):
            break
    assert set(found) == set(EVENTS), f"no block for {set(EVENTS) - set(found)} in {tries} nonces"
    return [(nonce, 0, 1) for nonce in sorted(set(found.values()))]


@pytest.mark.parametrize("q, lanes, multiplier", [(17, 4, "barrett"), (97, 8, "barrett"), (17, 2, "butterfly")])
def test_final_addition_and_layers_wrap(q, lanes, multiplier):
    p = small_params(q)
    key = [(7 * i + 3) % q for i in range(p.n - 1)] + [q - 1]
    blocks = boundary_blocks(p, key)
    core = RubatoCore(p, lanes, multiplier=multiplier)
    runs = simulate_blocks(core, key, blocks, seed=SEED, trace=True)
    for (nonce, counter, _), run in zip(blocks, runs):
        tr = model.RubatoTrace()
        assert run.outputs == model.keystream(p, key, nonce, counter, noise_seed=SEED, trace=tr), nonce
        for index, state in run.states:
            ph = core.phases[index]
            assert state == tr.steps[ph.step][ph.field], (nonce, index, ph)


def test_all_q_minus_one_key_without_noise():
    """Key words all q - 1 (every round key product at its largest), noise off."""
    p = small_params(17)
    key = [p.q - 1] * p.n
    core = RubatoCore(p, 4, noise=False)
    blocks = [(0, 0, 0), ((1 << 64) - 1, (1 << 64) - 1, 0)]
    runs = simulate_blocks(core, key, blocks)
    for (nonce, counter, _), run in zip(blocks, runs):
        assert run.outputs == model.keystream(p, key, nonce, counter)

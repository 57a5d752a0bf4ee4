"""Precision of the accelerator's ciphertexts as Lattigo decrypts them (``hhe-gen bench accel``,
cases ``precision-*``).

The client accelerator's m-to-ct (``encrypt_pk``) of random slots in the unit disc, decrypted by
Lattigo v6 (the peer, :class:`hhe_gen.host.lattigo.LattigoPeer`): the mean and the worst slot's
bits (-log2 of the mean and of the largest absolute error, :func:`hhe_gen.models.ckks.precision_bits`),
against Lattigo's own public-key encryption of the same slots under the same keys.  The
accelerator's ciphertext is the ISA model's (:class:`hhe_gen.engine.model.EngineModel` with the
configuration's slot format): the RTL equals it bit for bit, on Amaranth's simulator and on
Verilator at N = 2^13 (tests/cores/engine, tests/interop/test_engine_lattigo.py), and the model
takes seconds where a Verilator run takes minutes.  One case per slot format and rounding: the
client default, the half-up rounding it replaced, and wider formats (the codec's W bits; the
shared butterfly array's port grows to 2W).
"""

from __future__ import annotations

from hhe_gen.apps.bench import bench_case

LATTIGO_MARGIN_BITS = 2
"""The wider format's goal (issue 37): within this many bits of Lattigo's own mean."""
WORST_SLOT_GOAL = 28
"""The default format's goal for the worst slot (issue 37), in bits."""


def lattigo_precision(params: str = "dna-hhe", lanes: int = 2, width=None, frac_bits=None, rounding=None,
                      seed: int = 5) -> dict:
    """The accelerator's ``encrypt_pk`` ciphertext decrypted by Lattigo, against Lattigo's own
    encryption (module docstring)."""
    import cmath
    import math
    import random

    from hhe_gen.engine import memory_map, programs
    from hhe_gen.engine.client_memory import client_memory, run_model
    from hhe_gen.engine.config import SLOT_FORMAT, AcceleratorConfig
    from hhe_gen.host.lattigo import LattigoPeer, slots_from_json, slots_json
    from hhe_gen.models import ckks
    from hhe_gen.params import preset

    p = preset(params)
    fmt = None if width is None else (width, SLOT_FORMAT[1] if frac_bits is None else frac_bits)
    config = AcceleratorConfig(p, lanes, slot_format=fmt, slot_rounding=rounding).resolve()
    shape, fmt = config.shape, config.fmt
    layout = memory_map.MemoryMap.for_params(p)
    keys = ckks.keygen(p, seed=seed)
    rng = random.Random(seed)
    z = [cmath.rect(rng.random(), rng.random() * 2 * math.pi) for _ in range(p.slots)]
    mem = client_memory(p, shape, keys, seed=seed + 1, slots=z, fmt=fmt, layout=layout)
    words = programs.encrypt_pk(p, shape, layout=layout).words
    after = run_model(shape, p.n, words, mem, fmt=fmt)
    ct = memory_map.read_ciphertext(after, layout, p)
    peer = LattigoPeer()
    ours = ckks.precision_bits(z, slots_from_json(peer.decrypt(p.interchange(), keys.sk, ct.to_json())))
    theirs_ct = peer.encrypt(p.interchange(), slots_json(z), keys=keys.to_json(p), seed=seed + 2)
    theirs = ckks.precision_bits(z, slots_from_json(peer.decrypt(p.interchange(), keys.sk, theirs_ct)))
    out = {"slot_format": f"{fmt.width}/{fmt.frac_bits}", "rounding": fmt.rounding,
           "mean_bits": round(ours["mean_bits"], 2), "worst_slot_bits": round(ours["min_bits"], 2),
           "lattigo_mean_bits": round(theirs["mean_bits"], 2),
           "lattigo_worst_slot_bits": round(theirs["min_bits"], 2),
           "below_lattigo_mean": round(theirs["mean_bits"] - ours["mean_bits"], 2)}
    out["within_lattigo_margin"] = out["below_lattigo_mean"] <= LATTIGO_MARGIN_BITS
    out["worst_slot_goal"] = WORST_SLOT_GOAL
    return out


def _cases():
    bench_case("accel", "precision-toy-lattigo", quick=True, params="toy")(lattigo_precision)
    bench_case("accel", "precision-dna-hhe-lattigo", quick=False)(lattigo_precision)
    bench_case("accel", "precision-dna-hhe-lattigo-half-up", quick=False, rounding="half-up")(lattigo_precision)
    for width in (42, 46, 54):
        bench_case("accel", f"precision-dna-hhe-lattigo-{width}bits", quick=False, width=width,
                   frac_bits=width - 2)(lattigo_precision)


_cases()

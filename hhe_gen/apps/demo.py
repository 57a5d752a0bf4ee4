"""``hhe-gen demo``: the main job, end to end.

1. CKKS parameters (the DNA-HHE preset by default) and key generation (model);
2. the accelerator generated for them (``hhe-gen generate accel``: Verilog, manifest and program
   images in ``out/accel``), and its keys put in NTT form by the ``key_setup`` program (ISA model:
   once per key pair);
3. encode + public-key encryption of sample data (a sine wave plus a random complex vector) by the
   ``encrypt_pk`` program on the RTL accelerator (Verilator; the first build takes minutes and is
   cached), checked bit for bit against the ISA model;
4. decryption and decoding of that ciphertext by Lattigo v6 (an independent implementation) where
   Go is present, and by the model in any case; the precision of both;
5. the ``decrypt`` program on the RTL (ciphertext -> slots) and its precision;
6. one Rubato keystream block (Par-128S) encrypting a short real message, decrypted back, and
   the same keystream block from the Rubato core (RTL, simulated), compared word for word;
7. a table of precision, cycles and timings, also written to ``out/demo.json``.
"""

import cmath
import math
import random
import time

from hhe_gen.models import ckks
from hhe_gen.params import preset
from hhe_gen.apps.report import console, print_table, write_json

__all__ = ["run_demo", "sample_slots"]


def sample_slots(n_slots: int, seed: int) -> list[complex]:
    """A sine wave in the first half of the slots, uniform random points of the unit disc in the rest."""
    rng = random.Random(seed)
    half = n_slots // 2
    wave = [complex(math.sin(2 * math.pi * k / half), 0.0) for k in range(half)]
    disc = [cmath.rect(math.sqrt(rng.random()), rng.uniform(-math.pi, math.pi)) for _ in range(n_slots - half)]
    return wave + disc


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t0) * 1e3


def run_demo(preset_name: str = "dna-hhe", use_lattigo: bool = True, seed: int = 2026) -> int:
    p = preset(preset_name)
    console.rule(f"hhe-gen demo: CKKS {p.name}, N = {p.n}, {len(p.moduli)} x {p.ring.max_bits}-bit primes, "
                 f"Delta = 2^{p.log_scale}")
    rows, report = [], {"preset": p.summary()}

    keys, t = _timed(lambda: ckks.keygen(p, seed))
    rows.append(("keygen (model)", "", f"{t:.0f}"))
    slots = sample_slots(p.slots, seed)
    ct, accel_ok = _accelerator(p, keys, slots, (seed + 1) % (1 << 256), rows, report)

    out, t = _timed(lambda: ckks.decrypt_slots(p, keys.sk, ct))
    prec = ckks.precision_bits(slots, out)
    report["model_decrypt"] = prec
    rows.append(("decrypt + decode (model)", f"{prec['mean_bits']:.1f} mean / {prec['min_bits']:.1f} min", f"{t:.0f}"))

    lattigo_note = _lattigo_decrypt(p, keys, ct, slots, rows, report) if use_lattigo else "skipped (--no-lattigo)"
    report["lattigo"] = lattigo_note

    rubato_ok = _rubato_block(seed, rows, report)

    print_table("results", ["step", "precision (bits)", "time (ms)"], rows)
    console.print(f"Lattigo: {lattigo_note}")
    path = write_json("out/demo.json", report)
    console.print(f"report written to {path}")
    # Delta = 2^50 and more: >= 30 bits; small test sets: within a bit of the model's own decryption
    bar = 30 if p.log_scale >= 50 else prec["mean_bits"] - 1
    report["precision_bar_bits"] = bar
    precise = all(report.get(k, {"mean_bits": 99})["mean_bits"] >= bar
                  for k in ("model_decrypt", "lattigo_decrypt", "rtl_decrypt"))
    ok = precise and rubato_ok and accel_ok
    console.print("[bold green]demo OK[/]" if ok else
                  f"[bold red]demo FAILED: {f'precision below {bar:.1f} bits' if not precise else 'RTL differs from the model'}[/]")
    return 0 if ok else 1


def _accelerator(p, keys, slots, seed, rows, report):
    """Generate the accelerator, run encrypt_pk and decrypt on its RTL (Verilator); the ciphertext
    and whether the RTL equalled the ISA model."""
    from hhe_gen.apps.generate_accel import DEFAULT_SLOT_FORMAT, client_engine, generate_accel
    from hhe_gen.engine import memory_map, programs
    from hhe_gen.engine.client_memory import client_memory, run_model
    from hhe_gen.models.fft import FixedPointFormat
    from hhe_gen.sim.engine_verilator import VerilatedEngine
    from hhe_gen.sim.memory import MemoryModel

    lanes, fmt = 2, FixedPointFormat(*DEFAULT_SLOT_FORMAT)
    console.print(f"generating the accelerator for {p.name} ({lanes} lanes) into out/accel ...")
    gen, t = _timed(lambda: generate_accel(p, lanes, "out/accel"))
    man = gen["manifest"]
    rows.append((f"generate the accelerator: out/accel (Verilog, manifest, {len(man['programs'])} programs; "
                 f"{man['parameters']['buffers']} buffers, {man['memory_plan']['dp16kd']} DP16KD)", "", f"{t:.0f}"))
    console.print("building the accelerator's RTL in Verilator (cached after the first time) ...")
    rtl = VerilatedEngine(client_engine(p, lanes), progress="verilator build of the accelerator")
    engine = rtl.engine
    shape, layout = engine.shape, memory_map.MemoryMap.for_params(p)

    mem = client_memory(p, shape, keys, seed=seed, slots=slots, fmt=fmt, layout=layout)
    same, cycles = True, {}
    for name in ("encrypt_pk", "decrypt"):
        words = getattr(programs, name)(p, shape, layout=layout).words
        want = run_model(shape, p.n, words, mem, fmt=fmt)
        console.print(f"running {name} on the RTL accelerator (Verilator) ...")
        run, t = _timed(lambda: rtl.run(words, MemoryModel(mem)))
        equal = run.error_cause == 0 and all(run.memory.words.get(a, 0) == v for a, v in want.items())
        same = same and equal
        cycles[name] = run.cycles
        mem = dict(run.memory.words)
        if name == "encrypt_pk":
            ct = memory_map.read_ciphertext(mem, layout, p)
            rows.append((f"encode + encrypt, public key (RTL accelerator): {run.cycles} cycles",
                         "bit-exact with the ISA model" if equal else "DIFFERS from the ISA model", f"{t:.0f}"))
        else:
            got = memory_map.read_slots(mem, layout, fmt, engine.word_bits)
            prec = ckks.precision_bits(slots, got)
            report["rtl_decrypt"] = prec
            rows.append((f"decrypt + decode (RTL accelerator): {run.cycles} cycles",
                         f"{prec['mean_bits']:.1f} mean / {prec['min_bits']:.1f} min"
                         + ("" if equal else ", DIFFERS from the ISA model"), f"{t:.0f}"))
    report["accelerator"] = {"lanes": lanes, "cycles": cycles, "equal_to_model": same,
                             "memory_plan_dp16kd": man["memory_plan"]["dp16kd"]}
    return ct, same


def _lattigo_decrypt(p, keys, ct, slots, rows, report) -> str:
    from hhe_gen.host.lattigo import LattigoPeer, go_available
    reason = go_available()
    if reason is not None:
        return f"not used: {reason} (the model decrypted instead)"
    peer = LattigoPeer()
    console.print("Lattigo v6 peer: building/starting (first build downloads Go modules)...")
    answer, t = _timed(lambda: peer.call("decrypt", {"params": p.interchange(), "sk": keys.sk,
                                                      "ciphertext": ct.to_json()}))
    got = [complex(a, b) for a, b in zip(answer["re"], answer["im"])]
    prec = ckks.precision_bits(slots, got)
    report["lattigo_decrypt"] = prec
    rows.append(("decrypt + decode (Lattigo v6)", f"{prec['mean_bits']:.1f} mean / {prec['min_bits']:.1f} min", f"{t:.0f}"))
    return f"decrypted the accelerator's ciphertext ({peer.version().get('lattigo', '?')})"


def _rubato_block(seed: int, rows, report) -> bool:
    from hhe_gen.models import rubato
    from hhe_gen.params.rubato import rubato_params
    rp = rubato_params("Par-128S")
    rng = random.Random(seed)
    key = [rng.randrange(rp.q) for _ in range(rp.n)]
    nonce, counter = rng.getrandbits(64), 0
    message = [round(rng.uniform(-4, 4), 3) for _ in range(rp.l)]
    ks, t = _timed(lambda: rubato.keystream(rp, key, nonce, counter, noise_seed=seed))
    c = rubato.encrypt(rp, ks, message)
    back = rubato.decrypt(rp, key, nonce, counter, c)
    err = max(abs(a - b) for a, b in zip(message, back))
    bits = -math.log2(err) if err else float("inf")
    report["rubato"] = {"set": rp.name, "max_abs_error": err, "bits": bits, "ms_per_block": t}
    rows.append((f"Rubato {rp.name} block (model): keystream + noise, encrypt, decrypt",
                 f"{bits:.1f} (noise/Delta)", f"{t:.1f}"))
    rtl_ok = _rubato_rtl(rp, key, nonce, counter, seed, list(ks), rows, report)
    return err < 2 ** -10 and rtl_ok


def _rubato_rtl(rp, key, nonce, counter, seed, expected, rows, report) -> bool:
    """The same block on the Rubato core (2 lanes, noise on) in Amaranth's simulator."""
    from hhe_gen.cores.rubato import RubatoCore
    from hhe_gen.sim.rubato import simulate_blocks
    core = RubatoCore(rp, lanes=2)
    run, t = _timed(lambda: simulate_blocks(core, key, [(nonce, counter, 1)], seed=seed)[0])
    same = run.outputs == expected
    report["rubato_rtl"] = {"lanes": 2, "cycles": run.cycles, "equal_to_model": same}
    rows.append((f"Rubato {rp.name} block (RTL core, 2 lanes, simulated): {run.cycles} cycles",
                 "bit-exact with the model" if same else "DIFFERS from the model", f"{t:.0f}"))
    return same

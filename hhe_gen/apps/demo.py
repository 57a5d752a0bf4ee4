"""``hhe-gen demo``: the main job, end to end.

1. CKKS parameters (the DNA-HHE preset by default) and key generation (model);
2. the dual-mode accelerator generated for them (``hhe-gen generate accel --rubato 128s``:
   Verilog, manifest and program images in ``out/accel``), and its keys put in NTT form by the
   ``key_setup`` program (ISA model: once per key pair);
3. encode + public-key encryption of sample data (a sine wave plus a random complex vector) by the
   ``encrypt_pk`` program on the RTL accelerator (Verilator; the first build takes minutes and is
   cached), near-network: the accelerator sends the ciphertext as UDP packets itself, which cross a
   socket on the loopback to the host's receiver (``hhe_gen.net``; also written to
   ``out/encrypt_pk.pcap`` for Wireshark); the packets are checked bit for bit against the ISA
   model's;
4. decryption and decoding of that ciphertext by Lattigo v6 (an independent implementation) where
   Go is present, and by the model in any case; the precision of both;
5. the ``decrypt`` program on the RTL (ciphertext -> slots) and its precision;
6. Rubato (Par-128S) on the same accelerator: a real message encrypted by the Rubato unit and sent
   as packets (``hhe_gen.engine.rubato_program``), decrypted by the Rubato model, bit-exact with
   the ISA model;
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
    ct, accel_ok, accel_rubato_ok = _accelerator(p, keys, slots, (seed + 1) % (1 << 256), rows, report)
    if ct is None:
        print_table("results", ["step", "precision (bits)", "time (ms)"], rows)
        console.print("[bold red]demo FAILED: no ciphertext arrived from the accelerator[/]")
        return 1

    out, t = _timed(lambda: ckks.decrypt_slots(p, keys.sk, ct))
    prec = ckks.precision_bits(slots, out)
    report["model_decrypt"] = prec
    rows.append(("decrypt + decode (model)", f"{prec['mean_bits']:.1f} mean / {prec['min_bits']:.1f} min", f"{t:.0f}"))

    lattigo_note = _lattigo_decrypt(p, keys, ct, slots, rows, report) if use_lattigo else "skipped (--no-lattigo)"
    report["lattigo"] = lattigo_note

    rubato_ok = _rubato_block(seed, rows, report) and accel_rubato_ok

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


RUBATO_SET = "Par-128S"


def _accelerator(p, keys, slots, seed, rows, report):
    """Generate the dual-mode accelerator, run encrypt_pk (near-network) and decrypt on its RTL
    (Verilator) beside the ISA model, then Rubato; the ciphertext, whether the CKKS runs equalled
    the ISA model and whether the Rubato run did and decrypted."""
    from hhe_gen.client.backends import RtlBackend
    from hhe_gen.client.compare import CheckedBackend
    from hhe_gen.engine import memory_map, programs
    from hhe_gen.engine.client_memory import client_memory
    from hhe_gen.engine.config import AcceleratorConfig
    from hhe_gen.models.wire import Reassembler
    from hhe_gen.net.pcap import UdpDatagram, write_pcap
    from hhe_gen.net.udp import through_loopback

    config = AcceleratorConfig(p, 2, rubato=RUBATO_SET).resolve()
    fmt, shape, layout = config.fmt, config.shape, memory_map.MemoryMap.for_params(p)
    man, t, fresh = _generated(config, "out/accel")
    rows.append((f"generate the accelerator: out/accel (Verilog, manifest, {len(man['programs'])} programs; "
                 f"{man['parameters']['buffers']} buffers, {man['memory_plan']['dp16kd']} DP16KD)"
                 + ("" if fresh else "; unchanged, kept"), "", f"{t:.0f}"))
    console.print("building the accelerator's RTL in Verilator (cached after the first time; a first build takes "
                  "3 - 5 minutes) ...")
    rtl = CheckedBackend(RtlBackend(config))
    rtl.write(client_memory(p, shape, keys, seed=seed, slots=slots, fmt=fmt, layout=layout))
    same, cycles, ct = True, {}, None
    target = programs.NetworkTarget(message=1)
    for name in ("encrypt_pk", "decrypt"):
        words = getattr(programs, name)(p, shape, layout=layout, **({"network": target} if name == "encrypt_pk"
                                                                      else {})).words
        console.print(f"running {name} on the RTL accelerator (Verilator) beside the ISA model ...")
        checked, t = _timed(lambda: rtl.run(words))
        run = checked.run
        equal = checked.equal and run.error == 0
        same = same and equal
        cycles[name] = run.cycles
        if name == "encrypt_pk":
            write_pcap("out/encrypt_pk.pcap", [UdpDatagram(0x0A000032, _ip(target.ip), target.src_port,
                                                           target.dst_port, payload) for payload in run.packets])
            messages = through_loopback(run.packets, reassembler=Reassembler())
            same = same and len(messages) == 1
            ct = messages[0].ciphertext() if messages else None
            if ct is not None:
                image: dict = {}
                memory_map.write_ciphertext(image, layout, p, ct)
                rtl.write(image)
            rows.append((f"encode + encrypt, public key (RTL accelerator): {run.cycles} cycles to the last of "
                         f"{len(run.packets)} UDP packets, received over the loopback",
                         "bit-exact with the ISA model" if equal else "DIFFERS from the ISA model", f"{t:.0f}"))
        else:
            first = layout.address("slots_out")
            got = memory_map.read_slots(dict(zip(range(first, first + p.n), rtl.read(first, p.n))), layout, fmt,
                                        config.word_bits)
            prec = ckks.precision_bits(slots, got)
            report["rtl_decrypt"] = prec
            rows.append((f"decrypt + decode (RTL accelerator): {run.cycles} cycles",
                         f"{prec['mean_bits']:.1f} mean / {prec['min_bits']:.1f} min"
                         + ("" if equal else ", DIFFERS from the ISA model"), f"{t:.0f}"))
        for line in checked.differences:
            console.print(f"[red]{name}: {line}[/]")
        if ct is None:
            break
    rubato_ok = _rubato_on_the_accelerator(rtl, seed, rows, report)
    report["accelerator"] = {"configuration": config.describe()["values"], "cycles": cycles, "equal_to_model": same,
                             "memory_plan_dp16kd": man["memory_plan"]["dp16kd"], "rubato": RUBATO_SET}
    return ct, same, rubato_ok


def _ip(dotted: str) -> int:
    a, b, c, d = (int(x) for x in dotted.split("."))
    return a << 24 | b << 16 | c << 8 | d


def _generated(config, folder: str):
    """(manifest, ms, generated now): the accelerator of ``config`` generated into ``folder``, or
    the one already there when it was generated for the same configuration by the same source
    (a key of the configuration and of every installed source file, kept beside it)."""
    import hashlib
    import json
    from pathlib import Path

    from hhe_gen.engine.generate_accel import generate_accel
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256(json.dumps(config.describe(), sort_keys=True).encode())
    for package in ("hhe_gen", "cores"):
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.read_bytes())
    key, out = digest.hexdigest(), Path(folder)
    stamp, manifest = out / ".generated", out / "hhe_accel.json"
    if stamp.exists() and manifest.exists() and stamp.read_text().strip() == key:
        console.print(f"the accelerator in {folder} was generated for this configuration and source: kept")
        return json.loads(manifest.read_text()), 0.0, False
    console.print(f"generating the accelerator for {config.params.name} ({config.lanes} lanes, CKKS + Rubato "
                  f"{config.rubato}) into {folder} (about a minute) ...")
    gen, t = _timed(lambda: generate_accel(config, folder, name="hhe_accel"))
    stamp.write_text(key + "\n")
    return gen["manifest"], t, True


def _rubato_on_the_accelerator(rtl, seed, rows, report) -> bool:
    """A real message encrypted by the accelerator's Rubato unit and sent as packets, beside the ISA
    model; decrypted by the Rubato model."""
    from hhe_gen.engine import memory_map
    from hhe_gen.engine.programs import NetworkTarget
    from hhe_gen.engine.rubato_program import rubato_encrypt, write_key_block, write_scaled_message
    from hhe_gen.models import rubato
    from hhe_gen.models.wire import Kind, Reassembler
    from hhe_gen.params.rubato import rubato_params

    config, rp = rtl.config, rubato_params(RUBATO_SET)
    n = config.params.n
    rng = random.Random(seed)
    key = [rng.randrange(rp.q) for _ in range(rp.n)]
    nonce, noise_seed = rng.getrandbits(64), rng.getrandbits(64)
    blocks = min(16, n // rp.l)
    message = [round(rng.uniform(-4, 4), 3) for _ in range(blocks * rp.l)]
    layout = memory_map.MemoryMap.for_params(config.params)
    key_at = layout.base + layout.size            # after the CKKS memory map
    mem: dict = {}
    write_key_block(mem, key_at, rp, key, nonce, noise_seed, 0)
    write_scaled_message(mem, key_at + 128, rp, message, config.word_bits)
    prog = rubato_encrypt(config.shape, n, key_address=key_at, message_address=key_at + 128, blocks=blocks,
                          network=NetworkTarget(message=2))
    rtl.write(mem)
    checked, t = _timed(lambda: rtl.run(prog.words))
    run = checked.run
    equal = checked.equal and run.error == 0
    rx = Reassembler(kinds=(Kind.RUBATO,))
    got = [m for m in (rx.feed(payload) for payload in run.packets) if m is not None]
    back = []
    if got:
        words = got[0].polys[Kind.RUBATO][0]
        for k in range(blocks):
            back += rubato.decrypt(rp, key, nonce, k, words[k * rp.l:(k + 1) * rp.l])
    err = max(abs(a - b) for a, b in zip(message, back)) if len(back) == len(message) else float("inf")
    from hhe_gen.cores.engine.isa import Opcode, decode
    enc = next(k for k, w in enumerate(prog.words) if decode(w).opcode == Opcode.RUBATO_ENC)
    (task,) = [tk for tk in run.tasks if tk.position == enc] or [None]
    per_block = (task.finished - task.dispatched) / blocks if task else 0
    report["rubato_accelerator"] = {"set": rp.name, "blocks": blocks, "cycles": run.cycles,
                                    "cycles_per_block": per_block, "equal_to_model": equal, "max_abs_error": err}
    rows.append((f"Rubato {rp.name} on the accelerator: {blocks} blocks encrypted ({per_block:.0f} cycles per "
                 f"block), {len(run.packets)} UDP packets, decrypted by the model",
                 (f"{-math.log2(err):.1f}" if 0 < err < 1 else "-") + (", bit-exact with the ISA model" if equal
                                                                       else ", DIFFERS from the ISA model"),
                 f"{t:.0f}"))
    return equal and err < 2 ** -10


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
    return err < 2 ** -10

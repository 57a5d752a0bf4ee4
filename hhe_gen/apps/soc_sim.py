"""``hhe-gen soc sim``: the whole SoC in Verilator with Ethernet, end to end.

    hhe-gen soc sim [--params toy|dna-hhe|...] [--lanes L] [--rubato SET|none] [--json FILE]

Builds (or takes from the cache) the simulated SoC (:mod:`hhe_gen.soc.sim_build`), starts it in a
network namespace (:mod:`hhe_gen.soc.sim_run`) and, as a host on the other side of its Ethernet:

1. uploads the keys and a message over Etherbone (the secret key into the key vault), asks the
   firmware to check the vault's word count, and runs ``key_setup`` through the firmware and again
   from the host directly (CSR by CSR);
2. reads every CSR, the vault and the accelerator's RAM back: no word of the secret key may show;
3. runs ``encrypt_pk`` and ``encrypt_sk`` near-network: the accelerator sends the ciphertext through
   LiteEth's hardware UDP port, the host receives and reassembles it; the packets are compared
   with the ISA model's, Lattigo v6 decrypts the ciphertext (the model when Go is missing);
4. (dual mode) encrypts a message with Rubato on the accelerator, sent as packets, decrypted by the
   Rubato model;
5. the way back: the host sends a ciphertext (level 0) as packets to the SoC; ``decrypt`` with
   ``recv`` takes it and writes the message, compared with the ISA model.

Returns a report (also ``--json``): per step, cycles the accelerator was busy, packets, whether it
equals the model, precision.
"""

from __future__ import annotations

import cmath
import math
import random
import time

__all__ = ["run_soc_sim", "DEFAULT_RUBATO"]

DEFAULT_RUBATO = "128s"


def _slots(n: int, seed: int) -> list[complex]:
    rng = random.Random(seed)
    return [cmath.rect(rng.random(), rng.random() * 2 * math.pi) for _ in range(n)]


def _secrecy(soc, sk_ntt_words) -> dict:
    """Every readable CSR, the vault and the RAM of the memory map after the key upload: the vault
    must read 0 everywhere and no NTT(s) word may appear anywhere."""
    host, info = soc.host, soc.info
    secret = {w for w in sk_ntt_words if w}
    csr_values = []
    for name, reg in vars(host.regs).items():
        if getattr(reg, "mode", "") in ("rw", "ro"):
            csr_values.append(reg.read())
    vault = []
    for w in info["windows"]:
        for k in range(0, 2 * w["words"], 254):
            n = min(254, 2 * w["words"] - k)
            vault += host.comm.read(w["vault_address"] + 4 * k, length=n)
    ram = host.read_memory(0, info["layout_words"])
    halves = set(csr_values) | {v & 0xFFFFFFFF for v in ram} | {v >> 32 for v in ram}
    found = [w for w in secret if w in ram or (w & 0xFFFFFFFF) in halves and w >> 32 == 0 and w > 0xFFFF]
    return {"csrs_read": len(csr_values), "vault_words_read": len(vault), "vault_nonzero": sum(1 for v in vault if v),
            "ram_words_read": len(ram), "secret_words_found": len(found),
            "ok": not any(vault) and not found}


def run_soc_sim(params_name: str = "toy", lanes: int = 2, rubato: str | None = DEFAULT_RUBATO, *,
                use_lattigo: bool = True, seed: int = 7, progress=None, accel_clk_freq: int | None = None) -> dict:
    """Build and run the simulated SoC end to end (module docstring); returns the report.  Every
    program runs through the client's SoC backend with the ISA model beside it
    (:class:`hhe_gen.client.compare.CheckedBackend`): a step equals the model when its error, its
    messages and the memory words it is checked on are the model's."""
    from hhe_gen.client.backends import SocSimBackend
    from hhe_gen.client.compare import CheckedBackend
    from hhe_gen.engine.config import AcceleratorConfig
    from hhe_gen.engine import memory_map, programs
    from hhe_gen.engine.client_memory import client_memory
    from hhe_gen.flow.tools import say
    from hhe_gen.models import ckks
    from hhe_gen.params.presets import preset
    from hhe_gen.soc.host import FIRMWARE_COMMANDS
    from hhe_gen.soc.sim_build import build_sim_soc
    from hhe_gen.soc.sim_run import SimulatedSoC

    say_ = progress or say
    p = preset(params_name)
    t0 = time.monotonic()
    build = build_sim_soc(p, lanes, rubato=rubato, accel_clk_freq=accel_clk_freq)
    report = {"params": p.name, "lanes": lanes, "rubato_set": rubato, "accel_clk_freq": accel_clk_freq,
              "build": {"cached": build.cached, "seconds": round(time.monotonic() - t0, 1),
                        "folder": str(build.folder)}}
    config = AcceleratorConfig(p, lanes, rubato=rubato).resolve()      # the SoC's accelerator (soc_build's)
    shape, layout = config.shape, memory_map.MemoryMap.for_params(p)
    keys = ckks.keygen(p, seed)
    slots = _slots(p.slots, seed + 1)
    mem = client_memory(p, shape, keys, seed=seed, slots=slots, fmt=config.fmt, layout=layout)
    info = build.info

    with SimulatedSoC(build) as soc:
        report["start_seconds"] = round(time.monotonic() - t0, 1)
        soc_backend = CheckedBackend(SocSimBackend(config, soc=soc, timeout=120), memory=False)

        def step(name, words, **kw):
            """``words`` run by the firmware (RUN) and by the ISA model: the :class:`Checked` run."""
            checked = soc_backend.run(words, **kw)
            say_(f"{name}: {checked.run.cycles} cycles busy, {checked.run.meaning}"
                 + "".join(f"; {d}" for d in checked.differences))
            return checked

        say_("uploading keys and the message over Etherbone (the secret key into the key vault) ...")
        t = time.monotonic()
        shown = [0.0]

        def uploaded(done, total):
            if total > 50_000 and done / total >= shown[0] + 0.1:
                shown[0] = done / total
                say_(f"  {done:,} of {total:,} words ({100 * done // total} %)")
        sent = soc_backend.write(mem, progress=uploaded)
        report["upload"] = {"words32": sent, "seconds": round(time.monotonic() - t, 2)}
        ping = soc.host.command(FIRMWARE_COMMANDS["ping"])
        check = soc.host.command(FIRMWARE_COMMANDS["keycheck"], soc.host.vault_words_sent)
        report["firmware"] = {"version": ping.values[0], "n": ping.values[1], "host_resolved": bool(ping.values[3]),
                              "keycheck": check.meaning, "vault_words": check.values[0]}
        setup = programs.key_setup(p, shape, layout=layout).words
        run = step("key_setup", setup).run
        report["key_setup"] = {"busy_cycles": run.cycles, "status": run.meaning, "interrupts": run.record.values[3]}
        direct = soc.host.run(setup)                 # the same program from the host, CSR by CSR
        report["key_setup_direct"] = {"busy_cycles": direct.busy_cycles, "error_cause": direct.error_cause,
                                      "units": direct.units}
        model_memory = soc_backend.model.model.memory
        sk_ntt = [model_memory.get(layout.address("sk_ntt", i) + k, 0) for i in range(len(p.moduli))
                  for k in range(p.n)]
        report["secrecy"] = _secrecy(soc, sk_ntt)

        received_pk = None
        target = programs.NetworkTarget(ip=info["remote_ip"], dst_port=info["udp_port"], src_port=info["udp_port"])
        for k, name in enumerate(("encrypt_pk", "encrypt_sk")):
            words = getattr(programs, name)(p, shape, layout=layout,
                                            network=programs.NetworkTarget(**{**vars(target), "message": k + 1})).words
            checked = step(name, words, messages=1)
            got = checked.run.messages
            entry = {"busy_cycles": checked.run.cycles, "status": checked.run.meaning,
                     "packets": len(checked.expected.packets), "messages": len(got),
                     "equal_to_model": bool(got) and checked.equal}
            if got:
                ct = got[0].ciphertext()
                entry["precision"] = _decrypt_precision(p, keys, ct, slots, use_lattigo)
                if name == "encrypt_pk":
                    received_pk = ct
            report[name] = entry

        report["cpu_driven"] = _cpu_driven(soc, p, shape, layout, soc_backend, report["encrypt_pk"], step, say_,
                                           accel_hz=accel_clk_freq or SYS_CLK_HZ)
        report["bad_input"] = _bad_input(soc, p, shape, layout, own_clock=accel_clk_freq is not None)
        if rubato:
            report["rubato"] = _rubato(soc, soc_backend, target, say_)

        if received_pk is not None:
            report["decrypt_network"] = _way_back(soc, p, layout, received_pk, soc_backend, slots, step)
    report["seconds"] = round(time.monotonic() - t0, 1)
    report["ok"] = bool(report["secrecy"]["ok"] and report["firmware"]["keycheck"] == "ok"
                        and report["key_setup_direct"]["error_cause"] == 0
                        and report["bad_input"]["ok"]
                        and all(report[k].get("equal_to_model") for k in
                                ("encrypt_pk", "encrypt_sk", "decrypt_network", "cpu_driven") if k in report)
                        and (not rubato or report.get("rubato", {}).get("ok")))
    return report


def _decrypt_precision(p, keys, ct, slots, use_lattigo: bool) -> dict:
    from hhe_gen.host.lattigo import LattigoPeer, go_available
    from hhe_gen.models import ckks
    if use_lattigo and go_available() is None:
        answer = LattigoPeer().call("decrypt", {"params": p.interchange(), "sk": keys.sk, "ciphertext": ct.to_json()})
        got = [complex(a, b) for a, b in zip(answer["re"], answer["im"])]
        by = "lattigo"
    else:
        got = ckks.decode(p, ckks.decrypt(p, keys.sk, ct))
        by = "model"
    prec = ckks.precision_bits(slots, got)
    return {"by": by, "mean_bits": round(prec["mean_bits"], 2), "min_bits": round(prec["min_bits"], 2)}


def _rubato(soc, soc_backend, target, say_) -> dict:
    """A message encrypted by the Rubato unit (the key block into the vault), sent as packets,
    decrypted by the Rubato model; the packets' message against the ISA model's."""
    from hhe_gen.engine.programs import NetworkTarget
    from hhe_gen.engine.rubato_program import rubato_encrypt, write_key_block, write_scaled_message
    from hhe_gen.models import rubato
    from hhe_gen.models.wire import Kind
    from hhe_gen.params.rubato import rubato_params

    config = soc_backend.config
    rp = rubato_params(config.rubato)
    rng = random.Random(11)
    key = [rng.randrange(rp.q) for _ in range(rp.n)]
    nonce, noise_seed = rng.getrandbits(64), rng.getrandbits(64)
    blocks = max(1, min(16, config.params.n // rp.l))
    message = [round(rng.uniform(-4, 4), 3) for _ in range(blocks * rp.l)]
    key_at = soc.info.get("rubato_key") or soc.info["layout_words"]    # the slot after the CKKS map: the vault
    msg_at = key_at + 128
    mem: dict = {}
    write_key_block(mem, key_at, rp, key, nonce, noise_seed, 0)
    write_scaled_message(mem, msg_at, rp, message, config.word_bits)
    prog = rubato_encrypt(config.shape, config.params.n, key_address=key_at, message_address=msg_at, blocks=blocks,
                          network=NetworkTarget(**{**vars(target), "message": 3}))
    soc_backend.write(mem)
    checked = soc_backend.run(prog.words, messages=1, kinds=(Kind.RUBATO,))
    run = checked.run
    packets = len(checked.expected.packets)
    say_(f"rubato {rp.name}: {run.cycles} cycles busy, {packets} packets sent, {run.meaning}")
    # the key block went to the vault: neither its window nor the RAM behind that address shows it
    n_words = rp.n + 6
    vault_at = next((w["vault_address"] for w in soc.info["windows"] if w["first"] == key_at), None)
    window = soc.host.comm.read(vault_at, length=2 * n_words) if vault_at is not None else []
    raw = soc.host.comm.read(soc.info["main_ram"] + 8 * key_at, length=2 * n_words)
    key_seen = sum(1 for v in list(window) + list(raw) if v in set(key) and v > 0xFF)
    back = []
    if run.messages:
        words = run.messages[0].polys[Kind.RUBATO][0]
        for k in range(blocks):
            back += rubato.decrypt(rp, key, nonce, k, words[k * rp.l:(k + 1) * rp.l])
    err = max(abs(a - b) for a, b in zip(message, back)) if len(back) == len(message) else float("inf")
    return {"set": rp.name, "blocks": blocks, "busy_cycles": run.cycles, "packets": packets,
            "error_cause": run.error, "max_abs_error": err, "equal_to_model": bool(run.messages) and checked.equal,
            "key_in_vault": vault_at is not None, "key_words_readable": key_seen,
            "ok": run.error == 0 and err < 2 ** -10 and key_seen == 0}


def _way_back(soc, p, layout, ct, soc_backend, slots, step) -> dict:
    """The ciphertext, at level 0, sent to the SoC as packets; decrypt with recv; the slots read
    back and checked against the model's."""
    from hhe_gen.engine import memory_map, programs
    from hhe_gen.models import ckks_fixed
    from hhe_gen.models.wire import MAX_COUNT, ciphertext_packets
    config = soc_backend.config
    scratch: dict = {}
    memory_map.write_ciphertext(scratch, layout, p, ct)
    ct0 = memory_map.read_ciphertext(scratch, layout, p, 0)
    packets = ciphertext_packets(ct0, 9, p.log_scale, segment=MAX_COUNT)
    words = programs.decrypt(p, config.shape, level=0, layout=layout, network=True).words
    checked = step("decrypt (recv)", words, udp_in=packets)
    out = layout.address("slots_out")
    differences = checked.differences + soc_backend.check_memory(range(out, out + p.n))
    got = soc_backend.read(out, p.n)
    values = memory_map.read_slots(dict(zip(range(out, out + p.n), got)), layout, config.fmt, config.word_bits)
    regs = soc.host.regs
    return {"busy_cycles": checked.run.cycles, "status": checked.run.meaning, "packets_sent": len(packets),
            "packets_received": regs.accel_packets_received.read(), "rx_dropped": regs.accel_rx_dropped.read(),
            "equal_to_model": checked.run.error == 0 and not differences, "differences": differences,
            "precision_bits": round(ckks_fixed.precision_bits(slots, values)[0], 2)}


SYS_CLK_HZ = 1_000_000
"""The simulated SoC's system clock (:class:`hhe_gen.soc.sim_soc.SimSoC`'s default): the firmware's
timer, and SEND's cycles, count it."""


def _cpu_driven(soc, p, shape, layout, soc_backend, near, step, say_, *, accel_hz: int = SYS_CLK_HZ) -> dict:
    """The CPU-driven path: the same encryption stored over the bus, then the firmware sends the
    ciphertext through the CPU's MAC (SEND); against the near-network run, in time: RUN's busy
    cycles count the accelerator's clock (``accel_hz``), SEND's the system clock."""
    from hhe_gen.engine import memory_map, programs
    from hhe_gen.models.wire import MAX_COUNT, Reassembler
    from hhe_gen.soc.host import FIRMWARE_COMMANDS
    stored = step("encrypt_pk (stored)", programs.encrypt_pk(p, shape, layout=layout).words).run
    rows = len(p.moduli)
    with soc.receiving(messages=1, timeout=300, reassembler=Reassembler()) as rx:
        # the CPU's sending is slow (LiteX's UDP stack, a byte at a time): hours of simulation at N = 2^13
        sent = soc.host.command(FIRMWARE_COMMANDS["send"], layout.address("c0"), layout.address("c1"),
                                rows | p.log_scale << 8 | MAX_COUNT << 16, 21, timeout=4 * 3600)
    say_(f"CPU sends the stored ciphertext: {sent.values[0]} cycles, {sent.values[1]} packets, {sent.meaning}")
    want = memory_map.read_ciphertext(soc_backend.model.model.memory, layout, p)
    got = rx.messages[0].ciphertext() if rx.messages else None
    total_s = stored.cycles / accel_hz + sent.values[0] / SYS_CLK_HZ
    near_s = near["busy_cycles"] / accel_hz
    return {"store_cycles": stored.cycles, "send_cycles": sent.values[0], "packets": sent.values[1],
            "status": sent.meaning, "total_seconds": round(total_s, 6), "near_network_cycles": near["busy_cycles"],
            "near_network_seconds": round(near_s, 6), "accel_hz": accel_hz, "sys_hz": SYS_CLK_HZ,
            "speedup": round(total_s / near_s, 2) if near_s else None,
            "equal_to_model": got is not None and (got.c0, got.c1) == (want.c0, want.c1)}


def _bad_input(soc, p, shape, layout, *, own_clock: bool = False) -> dict:
    """An unknown command, an empty program, a malformed instruction: error codes, never a hang;
    the next RUN clears the error (a new program) and runs without an abort; a malformed word at
    position k of a program after a good one reports k; after two aborts the next program runs.
    Then a flood of garbage UDP frames fills the receive FIFO (packets that do not fit are dropped
    whole) and an abort empties it: the way back's real ciphertext comes after it (``_way_back``);
    ``own_clock``: the accelerator is on a clock of its own (:func:`_garbage_flood`)."""
    from hhe_gen.cores.engine import isa
    from hhe_gen.engine import programs
    from hhe_gen.soc.host import FIRMWARE_COMMANDS
    host = soc.host
    malformed, nop = (1 << 64) - 1, isa.encode(isa.Instruction(isa.Opcode.NOP))
    setup = programs.key_setup(p, shape, layout=layout).words
    unknown = host.command(0x77)
    empty = host.command(FIRMWARE_COMMANDS["run"], host.info["program_area"], 0)
    bad = host.firmware_run([malformed])
    recovered = host.firmware_run(setup)      # no abort: RUN clears the error of the last program
    k = 5
    bad_at = host.firmware_run([nop] * k + [malformed] + [nop] * 3)   # the words before it ran
    host.abort()
    host.abort()                # twice in a row: the second must not leave words drained or lost
    after = host.firmware_run(setup)
    out = {"unknown_command": unknown.meaning, "empty_program": empty.meaning, "malformed_word": bad.meaning,
           "malformed_word_position": bad.values[1], "malformed_word_interrupts": bad.values[3],
           "run_after_error": recovered.meaning, "malformed_at": k, "malformed_at_k": bad_at.meaning,
           "malformed_at_k_position": bad_at.values[1], "next_program": after.meaning}
    from hhe_gen.soc.clock_crossing import STREAM_DEPTH
    out["flood"] = _garbage_flood(soc, in_flight=STREAM_DEPTH if own_clock else 0)
    out["ok"] = (unknown.status == 0x201 and empty.status == 0x202 and 0x100 < bad.status < 0x200
                 and bad.values[1] == 0 and recovered.status == 0 and 0x100 < bad_at.status < 0x200
                 and bad_at.values[1] == k and after.status == 0 and out["flood"]["ok"])
    return out


def _garbage_flood(soc, frames: int = 8, size: int = 1468, seed: int = 36, *, in_flight: int = 0) -> dict:
    """``frames`` UDP payloads of random bytes (not the wire format) to the accelerator's port while
    no ``recv`` runs: the receive FIFO (1024 beats) holds the whole ones that fit and drops the
    others whole, so it holds the kept packets' beats but the ones gone on into the receive
    crossing (at most ``in_flight``: its depth when the accelerator is on a clock of its own, else
    none); then the host aborts, which empties both."""
    rng = random.Random(seed)
    regs = soc.host.regs
    received0 = regs.accel_packets_received.read()
    soc.send([bytes(rng.getrandbits(8) for _ in range(size)) for _ in range(frames)], gap=0.02)
    t0 = time.monotonic()
    while regs.accel_packets_received.read() - received0 < frames and time.monotonic() - t0 < 60:
        time.sleep(0.2)
    level = getattr(regs, "accel_rx_level", None)
    out = {"frames": frames, "beats_each": -(-size // 4),
           "arrived": regs.accel_packets_received.read() - received0, "rx_dropped": regs.accel_rx_dropped.read(),
           "level_before_abort": level.read() if level is not None else None}
    soc.host.abort()
    out["level_after_abort"] = level.read() if level is not None else None
    kept = out["arrived"] - out["rx_dropped"]
    out["kept"], out["in_crossing"] = kept, kept * out["beats_each"] - (out["level_before_abort"] or 0)
    out["ok"] = (out["arrived"] == frames and out["rx_dropped"] > 0 and kept > 0
                 and 0 <= out["in_crossing"] <= in_flight and out["level_after_abort"] == 0)
    return out

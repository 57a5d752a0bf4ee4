"""Benchmarks of the accelerator engine (``hhe-gen bench accel``).

* ``cycles-*``: a CKKS program on the RTL engine in Verilator (:mod:`hhe_gen.sim.engine_verilator`,
  cycle-equal to the Amaranth simulation), from the first instruction word to the engine idle after
  the last result word is written back, with everything the program reads in external memory behind
  the memory port: the slots or the ciphertext, the seed, and the keys in NTT form (``key_setup``
  ran before and is not counted); nothing sits on chip beforehand.  The memory answers one 64-bit
  beat per cycle after 8 cycles (a LiteDRAM native port's shape) or, in the ``-wb`` cases, one beat
  per 4 cycles (a 32-bit Wishbone master moving a word per 2 cycles).  Every run is checked bit for
  bit against the ISA model (``bit_exact``) and, for encryptions, decrypted by the model
  (``precision_bits``: mean bits of the slots).  ``target`` is the case's goal (:data:`TARGETS`, each
  with its source: DNA-HHE Table II x 0.8 at 2 lanes, its m-to-ct 1.79 ms at 60 MHz
  for 8 lanes), ``dna_hhe`` DNA-HHE's own cycles at 200 MHz (Table II).
  ``ntt_busy`` is the share of the run the NTT unit was busy (the bottleneck of m-to-ct),
  ``crypto_busy`` the NTT, pointwise and codec tasks' share (on the shared datapath: the crypto
  unit's), ``xof_busy`` the sampling tasks' (the XOF's demand: the samplers keep ahead of the
  crypto unit when the XOF's tasks overlap its work, the out-of-order run's cycles near
  ``crypto_busy``), ``ntt``
  whether it transforms in place in the banked buffers or streams through its own banks (the
  client engine's choice, :meth:`hhe_gen.engine.config.AcceleratorConfig.resolve`; the
  ``-inplace`` / ``-stream`` cases take the other one).  ``datapath``: the configuration's
  (:attr:`hhe_gen.engine.config.AcceleratorConfig.datapath`); the ``-shared`` cases (toy pk and
  decrypt, quick; N = 2^13 pk / sk / ct-to-m L0 at 2 lanes and pk at 4 lanes, out-of-order) build
  ``datapath="shared"``, whatever that puts on the one butterfly array (issue 37).
* ``nearnet-*``: near-network m-to-ct: the encryption sends each row of c0 / c1 as UDP packets
  itself (``send``, :class:`hhe_gen.engine.programs.NetworkTarget`, segments of 180 coefficients),
  timed to the last packet's last word on ``o_udp`` (always ready: LiteEth's UDP port at one
  32-bit word per cycle), bit-exact against the ISA model's packets and decrypted from them;
  against store-then-send: the same program storing the ciphertext (timed in the same case), then
  a CPU-driven DMA moving it from memory to the same UDP port, modelled by
  :func:`store_then_send_cycles` for a Wishbone master (4 cycles per coefficient: a 32-bit word per
  2 cycles) and a 64-bit LiteDRAM port (1 per cycle; the wire then bounds it).  The model counts no
  CPU time and overlaps the DMA with the wire perfectly, so it favours store-then-send.
* ``rubato-*``: Rubato on the engine (dual mode): ``rubato.key`` then ``rubato.stream`` of as many
  noisy blocks as a buffer of N = 256 holds, in Amaranth's simulator; cycles per block of the
  stream task against the separate core's own (:meth:`hhe_gen.cores.rubato.RubatoCore.cycles_per_block`
  for the same nonce and counters: the rubato-cycles table of docs/figures.md) and DNA-HHE's
  (DNA-HHE, Table III: 1235 / 2087 / 3036 cycles per block), checked against the ISA model.
  ``rubato-*-shared``: the same on the shared datapath (the Feistel on the crypto unit's array, the
  round constants and the noise from the one XOF; ``core_alone`` that core's formula).
* ``plan-*`` (quick): the block-RAM plan (:meth:`hhe_gen.cores.engine.engine.Engine.memory_plan`).
* ``area-*``: Yosys area, ECP5 and Xilinx 7 (:func:`area`), with Xilinx 7's equivalent slices
  (``xc7_ens``, :func:`xc7_ens`) and, for the 2-lane dual-mode accelerator with Par-128S (the
  ``-dual-128s`` cases), issue 37's goals beside them (:data:`AREA_GOALS`: ``goal_*`` and
  ``vs_goal_*``, the ratio).  ``area-by-unit-*``: the ECP5 area unit by unit (:func:`area_by_unit`).
  The ``-shared`` cases build ``datapath="shared"`` (their own synthesis runs, ``_shared`` names).
* after the cases, ``accel-cycles.png`` beside the JSON (:func:`plot_cycles`): the N = 2^13 cycles,
  out-of-order and in-order, with the goals and DNA-HHE's cycles.

The N = 2^13 cases are not quick: a Verilator build of a configuration takes 1 - 5 minutes (cached
afterwards), a run 30 - 130 s on this 2-core machine.
"""

from __future__ import annotations

import cmath
import math
import random

from hhe_gen.apps.bench import bench_case, bench_summary
from hhe_gen.engine.config import SLOT_FORMAT as DEFAULT_SLOT_FORMAT
from hhe_gen.engine.config import AcceleratorConfig

DNA_HHE = {"encrypt_pk": 358_000, "encrypt_sk": None, "decrypt": 58_000}
"""DNA-HHE Table II, Kintex-7 at 200 MHz, 2 butterflies: m-to-ct 1.79 ms, ct-to-m 0.29 ms, in
cycles (it gives no secret-key m-to-ct)."""

TARGETS = {("encrypt_pk", 2): 286_000, ("encrypt_sk", 2): 120_000, ("decrypt", 2): 46_000,
           ("encrypt_pk", 8): 107_000}
"""Cycle goals (N = 2^13, 3 x 54): (program, lanes) -> cycles, with their sources:

* ("encrypt_pk", 2) 286,000 = 0.8 x DNA-HHE's m-to-ct (DNA-HHE Table II: 1.79 ms at 200 MHz,
  358,000 cycles);
* ("decrypt", 2) 46,000 = 0.8 x DNA-HHE's ct-to-m (Table II: 0.29 ms at 200 MHz, 58,000 cycles);
* ("encrypt_pk", 8) 107,000 = DNA-HHE's m-to-ct 1.79 ms (Table II) at 60 MHz;
* ("encrypt_sk", 2) 120,000: hhe-gen's own goal; no paper gives a secret-key m-to-ct."""

AREA_GOALS = {"LUT4": 32_000, "MULT18X18D": 48, "DP16KD": 172, "xc7_ens": 31_428}
"""Issue 37's area goals for the 2-lane dual-mode client accelerator (CKKS and Rubato Par-128S,
N = 2^13, 3 x 54: DNA-HHE's set), keyed by :func:`area`'s metric names, each an upper bound:

* ECP5 (``synth_ecp5``): LUT4 <= 32,000, MULT18X18D <= 48, DP16KD <= 172 (issue 37's targets for
  the shared datapath, docs/shared-datapath.md);
* Xilinx 7 (``synth_xilinx``): ``xc7_ens`` <= 31,428 equivalent slices, DNA-HHE's own figure from
  its Kintex-7 implementation (DNA-HHE's ENS metric, :func:`xc7_ens`)."""

SLOT_FORMAT = DEFAULT_SLOT_FORMAT


def xc7_ens(cells: dict) -> float:
    """DNA-HHE's equivalent-slice count (ENS) of a Xilinx 7 result (``synth_xilinx``'s ``LUT``,
    ``FF``, ``DSP48E1``, ``RAMB18``, ``RAMB36``; a missing one counts 0): DSP48E1 x 100 +
    BRAM36 x 196 + LUT / 4 + FF / 2, a RAMB18 counting as half a BRAM36."""
    n = {k: cells.get(k) or 0 for k in ("LUT", "FF", "DSP48E1", "RAMB18", "RAMB36")}
    return n["DSP48E1"] * 100 + (n["RAMB36"] + n["RAMB18"] / 2) * 196 + n["LUT"] / 4 + n["FF"] / 2


def _slots(n: int, seed: int) -> list[complex]:
    rng = random.Random(seed)
    return [cmath.rect(math.sqrt(rng.random()), rng.random() * 2 * math.pi) for _ in range(n)]


def store_then_send_cycles(n: int, rows: int, segment: int, bus_cycles_per_coefficient: int) -> int:
    """Cycles to send a stored ciphertext (2 x ``rows`` rows of ``n`` coefficients) from memory to
    LiteEth's UDP port in packets of ``segment``: per packet of c coefficients the longer of the bus
    (``bus_cycles_per_coefficient`` x c) and the wire (7 + 2c words: header, coefficients, CRC),
    plus the packetizer's two idle cycles between packets; no CPU time counted."""
    per_row = [min(segment, n - off) for off in range(0, n, segment)]
    return 2 * rows * sum(max(bus_cycles_per_coefficient * c, 7 + 2 * c) + 2 for c in per_row)


def program_cycles(params: str = "toy", lanes: int = 2, program: str = "encrypt_pk", ooo: bool = True,
                   level=None, cycles_per_beat: int = 1, latency: int = 8, fmt=SLOT_FORMAT,
                   ntt_in_place=None, network: bool = False, datapath=None) -> dict:
    """Run ``program`` on the RTL engine in Verilator (module docstring); its metrics.
    ``ntt_in_place``: the client engine's choice (None: the configuration's); ``network``:
    near-network (an encryption sends its ciphertext; the store-then-send figures beside it);
    ``datapath``: "separate" or "shared" (None: the configuration's)."""
    from hhe_gen.cores.engine import isa
    from hhe_gen.engine import memory_map, programs
    from hhe_gen.engine.client_memory import client_memory, run_model
    from hhe_gen.models import ckks, ckks_fixed
    from hhe_gen.params import preset
    from hhe_gen.client.backends import RtlBackend
    from hhe_gen.client.compare import CheckedBackend

    p = preset(params)
    config = AcceleratorConfig(p, lanes, ooo=ooo, slot_format=fmt, ntt_in_place=ntt_in_place,
                               datapath=datapath).resolve()
    shape, fmt = config.shape, config.fmt
    layout = memory_map.MemoryMap.for_params(p)
    keys = ckks.keygen(p, seed=1)
    z = _slots(p.slots, 2)

    def model_run(words, memory):
        return run_model(shape, p.n, words, memory, fmt=fmt)

    mem = client_memory(p, shape, keys, seed=3, slots=z, fmt=fmt, layout=layout)
    if program == "decrypt":
        mem = model_run(programs.encrypt_sk(p, shape, level=level, layout=layout).words, mem)
    rtl = CheckedBackend(RtlBackend(config, progress=f"verilator build of the engine ({params}, {lanes} lanes)",
                                    latency=latency, cycles_per_beat=cycles_per_beat))
    if network:
        return (_near_network_decrypt if program == "decrypt" else _near_network)(
            rtl, program, level, layout, keys, z, mem)
    prog = getattr(programs, program)(p, shape, level=level, layout=layout)
    rtl.write(mem)
    checked = rtl.run(prog.words)
    exact = checked.equal and checked.run.error == 0
    words = rtl.memory()
    if program == "decrypt":
        got = memory_map.read_slots(words, layout, fmt, config.word_bits)
    else:
        ct = memory_map.read_ciphertext(words, layout, p, level)
        got = ckks.decode(p, ckks.decrypt(p, keys.sk, ct))
    run = checked.run
    busy = run.busy_cycles()
    comparable = params == "dna-hhe" and (program != "decrypt" or level == 0)     # ct-to-m: level 0
    target = TARGETS.get((program, lanes)) if comparable else None
    out = {"cycles": run.cycles, "bit_exact": exact, "precision_bits": round(ckks_fixed.precision_bits(z, got)[0], 1),
           "ntt_busy": round(busy.get(int(isa.Unit.NTT), 0) / max(run.cycles, 1), 3),
           "xof_busy": round(busy.get(int(isa.Unit.SAMPLER), 0) / max(run.cycles, 1), 3),
           "crypto_busy": round(sum(busy.get(int(u), 0) for u in (isa.Unit.NTT, isa.Unit.POINTWISE, isa.Unit.CODEC))
                                / max(run.cycles, 1), 3),
           "tasks": len(run.tasks), "ntt": "in place" if config.ntt_in_place else "streaming",
           "datapath": config.datapath}
    if target:
        out.update(target=target, vs_target=round(run.cycles / target, 3))
    if comparable and DNA_HHE.get(program):
        out["vs_dna_hhe"] = round(run.cycles / DNA_HHE[program], 3)
    return out


def _stored_then_sent(rtl, words, mem, rows: int, run) -> dict:
    """``words`` (the program storing its result, or loading its input) run from ``mem`` on
    ``rtl``, and the store-then-send (receive-then-load) figures beside the near-network ``run``:
    the wire and the bus of :func:`store_then_send_cycles`, over the Wishbone bus (4 cycles per
    coefficient) and over a DRAM port (1)."""
    from hhe_gen.models.wire import MAX_COUNT
    rtl.write(mem)
    stored = rtl.run(words).run
    wb = stored.cycles + store_then_send_cycles(rtl.config.params.n, rows, MAX_COUNT, 4)
    dram = stored.cycles + store_then_send_cycles(rtl.config.params.n, rows, MAX_COUNT, 1)
    return {"stored_cycles": stored.cycles, "wb": wb, "dram": dram,
            "gain_vs_wb": round(wb / run.cycles, 3), "gain_vs_dram": round(dram / run.cycles, 3)}


def _near_network(rtl, program, level, layout, keys, z, mem) -> dict:
    """The ``nearnet-*`` encryption case of :func:`program_cycles` (module docstring): bit-exact
    when the run equals the ISA model's (packets, memory) and every packet left at one word per
    cycle without a gap."""
    from hhe_gen.engine import programs
    from hhe_gen.models import ckks, ckks_fixed
    from hhe_gen.models.wire import MAX_COUNT

    p, shape = rtl.config.params, rtl.config.shape
    target = programs.NetworkTarget(segment=MAX_COUNT, message=1)
    sent = getattr(programs, program)(p, shape, level=level, layout=layout, network=target)
    rtl.write(mem)
    checked = rtl.run(sent.words, messages=1)
    run, record = checked.run, checked.run.record
    exact = checked.equal and run.error == 0 and all(pk.steady and not pk.gaps for pk in record.packets)
    precision = None
    if len(run.messages) == 1:
        got = ckks.decode(p, ckks.decrypt(p, keys.sk, run.messages[0].ciphertext()))
        precision = round(ckks_fixed.precision_bits(z, got)[0], 1)
    stored = _stored_then_sent(rtl, getattr(programs, program)(p, shape, level=level, layout=layout).words,
                               mem, sent.rows, run)
    return {"cycles": run.cycles, "bit_exact": exact, "precision_bits": precision, "packets": len(run.packets),
            "memory_writes": record.memory.writes, "stored_cycles": stored["stored_cycles"],
            "store_then_send_wb": stored["wb"], "store_then_send_dram": stored["dram"],
            "gain_vs_wb": stored["gain_vs_wb"], "gain_vs_dram": stored["gain_vs_dram"], "dna_hhe_gain": "1.15 - 1.43"}


def rubato_blocks(rubato: str = "Par-128S", rubato_lanes: int = 2, n: int = 256, datapath: str = "separate") -> dict:
    """The ``rubato-*`` case (module docstring); ``datapath="shared"``: Rubato a sequencer of the crypto
    unit (its Feistel on the array), on the one XOF."""
    import random as _random

    from hhe_gen.apps.bench.rubato import DNA_HHE as DNA_HHE_RUBATO
    from hhe_gen.cores.engine import isa
    from hhe_gen.cores.engine.engine import Engine
    from hhe_gen.cores.rubato.schedule import block_positions
    from hhe_gen.engine import asm
    from hhe_gen.engine.model import EngineModel
    from hhe_gen.engine.rubato_program import write_key_block
    from hhe_gen.models import rubato as rubato_model
    from hhe_gen.params.primes import ntt_primes
    from hhe_gen.sim.engine import run_engine
    from hhe_gen.sim.memory import MemoryModel

    p = rubato_model.rubato_params(rubato)
    engine = Engine(n, ntt_primes(n, 30, 1), lanes=2, buffers=2, codec=False,
                    rubato=dict(params=p.name, rubato_lanes=rubato_lanes), datapath=datapath)
    rng = _random.Random(1)
    nonce, seed, counter = rng.getrandbits(64), rng.getrandbits(64), rng.getrandbits(32)
    mem: dict = {}
    write_key_block(mem, 0, p, [rng.randrange(p.q) for _ in range(p.n)], nonce, seed, counter)
    blocks = n // p.l
    words = asm.assemble(f"cfg.rubato {isa.RUBATO_SET_IDS.index(p.name)}\nload b0, 0\nrubato.key b0\n"
                         f"rubato.stream b1, blocks={blocks}, noise\nstore b1, 0x1000", engine.shape)
    model = EngineModel(engine.shape, n)
    model.memory = dict(mem)
    model.run(words)
    run = run_engine(engine, words, MemoryModel(mem))
    (task,) = [t for t in run.tasks if t.position == 3]
    exact = run.error_cause == 0 and all(run.memory.words.get(0x1000 + k, 0) == model.memory.get(0x1000 + k, 0)
                                         for k in range(n))
    core = (engine.rubato_unit or engine.crypto_unit.rubato_unit).core
    alone = [core.cycles_per_block(block_positions(p, nonce, counter + k), noise=True) for k in range(blocks)]
    per_block = (task.finished - task.dispatched) / blocks
    out = {"blocks": blocks, "cycles_per_block": round(per_block, 1), "core_alone": round(sum(alone) / blocks, 1),
           "bit_exact": exact, "blocks_per_mcycle": round(1e6 / per_block)}
    if p.name in DNA_HHE_RUBATO:
        out.update(dna_hhe=DNA_HHE_RUBATO[p.name], vs_dna_hhe=round(per_block / DNA_HHE_RUBATO[p.name], 3))
    return out


def _near_network_decrypt(rtl, program, level, layout, keys, z, mem) -> dict:
    """cloud -> ct-to-m: the ciphertext's packets arrive back to back on ``i_udp`` from the first
    cycle and ``decrypt(network=True)`` takes them (``recv``); against the ciphertext received
    into memory by a DMA first (the wire and the bus as in :func:`store_then_send_cycles`), then the
    decrypt program loading it.  Bit-exact when the run's memory equals the ISA model's."""
    from hhe_gen.engine import memory_map, programs
    from hhe_gen.models import ckks_fixed
    from hhe_gen.models.wire import MAX_COUNT, ciphertext_packets

    p, config = rtl.config.params, rtl.config
    ct = memory_map.read_ciphertext(mem, layout, p, level)
    packets = ciphertext_packets(ct, 1, p.log_scale, segment=MAX_COUNT)
    received = programs.decrypt(p, config.shape, level=level, layout=layout, network=True)
    rtl.write(mem)
    checked = rtl.run(received.words, udp_in=packets)
    run = checked.run
    exact = checked.equal and run.error == 0
    got = memory_map.read_slots(rtl.memory(), layout, config.fmt, config.word_bits)
    loaded = programs.decrypt(p, config.shape, level=level, layout=layout)
    stored = _stored_then_sent(rtl, loaded.words, mem, received.rows, run)
    return {"cycles": run.cycles, "bit_exact": exact, "precision_bits": round(ckks_fixed.precision_bits(z, got)[0], 1),
            "packets": len(packets), "loaded_cycles": stored["stored_cycles"], "receive_then_load_wb": stored["wb"],
            "receive_then_load_dram": stored["dram"], "gain_vs_wb": stored["gain_vs_wb"],
            "gain_vs_dram": stored["gain_vs_dram"], "dna_hhe_gain": "1.09 - 1.56"}


def memory_plan(params: str = "dna-hhe", lanes: int = 2, device: str = "LFE5UM5G-85F", fmt=SLOT_FORMAT,
                datapath=None) -> dict:
    """Block RAMs of the engine (buffers for every client program, the units' memories);
    ``datapath``: None: the configuration's."""
    from hhe_gen.params import preset
    engine = AcceleratorConfig(preset(params), lanes, slot_format=fmt, datapath=datapath).engine()
    plan = engine.memory_plan(device=device)
    parts = plan.by_owner()
    return {"buffers": engine.shape.buffers, "dp16kd": plan.dp16kd, "bram36": plan.bram36, "left": plan.left,
            **{f"{k}_dp16kd": v["dp16kd"] for k, v in parts.items() if v["dp16kd"]}}


def _area_name(prefix: str, params: str, lanes: int, rubato: str | None, datapath=None) -> str:
    """The synthesis run's name (and cache folder) of an area case; the shared datapath's ends in
    ``_shared`` (the separate one, the default, keeps the name it always had)."""
    from hhe_gen.params import preset
    resolved = AcceleratorConfig(preset(params), lanes, rubato=rubato, datapath=datapath).resolve().datapath
    return (f"{prefix}_{params.replace('-', '_')}_p{lanes}" + (f"_{rubato[4:].lower()}" if rubato else "")
            + ("" if resolved == "separate" else f"_{resolved}"))


def _area_goals(out: dict) -> dict:
    """:data:`AREA_GOALS` beside the figures of ``out`` it has (``goal_*``, ``vs_goal_*``: the
    figure over the goal, rounded to 3 places)."""
    goals = {}
    for k, goal in AREA_GOALS.items():
        if out.get(k) is not None:
            goals.update({f"goal_{k}": goal, f"vs_goal_{k}": round(out[k] / goal, 3)})
    return goals


def area(params: str = "dna-hhe", lanes: int = 2, rubato: str | None = None, xilinx: bool = True,
         datapath=None, slot_format=None) -> dict:
    """Yosys area of the client accelerator (the engine with every unit; ``rubato``: dual mode with
    that set's Rubato unit; ``datapath``: None: the configuration's; ``slot_format``: (W, F), None
    the configuration's, another one's run name ends in ``_w<W>``): ECP5 (``synth_ecp5`` with the
    board build's options, :data:`hhe_gen.flow.synth.ECP5_BOARD_SYNTH_ARGS`, named in
    ``ecp5_synth``; Yosys only: placing and routing the whole engine belongs to the timing-closure
    work) and Xilinx 7
    (``synth_xilinx``, and its equivalent slices ``xc7_ens``, :func:`xc7_ens`).  For 2 lanes in
    dual mode with Par-128S on dna-hhe, :data:`AREA_GOALS` beside them."""
    from hhe_gen.cores.unused import mark_unused
    from hhe_gen.flow.synth import ECP5_BOARD_SYNTH_ARGS, synth_ecp5, synth_xilinx
    from hhe_gen.params import preset
    p = preset(params)
    name = _area_name("hhe_accel", params, lanes, rubato, datapath) + \
        ("" if slot_format is None else f"_w{slot_format[0]}")
    fmt = None if slot_format is None else tuple(slot_format)
    engine = AcceleratorConfig(p, lanes, rubato=rubato, datapath=datapath, slot_format=fmt).engine()
    mark_unused(engine)
    ecp5 = synth_ecp5(engine, name=name, timeout=4 * 3600, place_and_route=False,
                      synth_args=ECP5_BOARD_SYNTH_ARGS)
    out = {k: ecp5.get(k) for k in ("LUT4", "FF", "MULT18X18D", "DP16KD")}
    out["ecp5_synth"] = " ".join(("synth_ecp5", *ECP5_BOARD_SYNTH_ARGS))
    if fmt is not None:
        out["slot_format"] = f"{fmt[0]}/{fmt[1]}"
    if xilinx:
        xc7 = synth_xilinx(AcceleratorConfig(p, lanes, rubato=rubato, target="xilinx", datapath=datapath,
                                             slot_format=fmt).engine(), name=name, timeout=4 * 3600)
        out.update({f"xc7_{k}": xc7.get(k) for k in ("LUT", "FF", "DSP48E1", "RAMB18", "RAMB36")})
        out["xc7_ens"] = xc7_ens(xc7)
    if lanes == 2 and params == "dna-hhe" and rubato is not None and \
            AcceleratorConfig(p, lanes, rubato=rubato).resolve().rubato == "Par-128S":
        out.update(_area_goals(out))
    return out


def area_by_unit(params: str = "dna-hhe", lanes: int = 2, rubato: str | None = None, datapath=None) -> dict:
    """Where the accelerator's ECP5 area goes: Yosys ``synth_ecp5`` with the hierarchy kept
    (``synth_ecp5(by_unit=True)``: classic ABC, no optimisation across units, so the sum is a
    little above :func:`area`'s), one row per unit of the engine, then one per part of the crypto
    unit (``crypto_unit.<part>``: the array, each sequencer, and ``crypto_unit.(own)``, its router
    and multiplexers); ``datapath``: None: the configuration's."""
    from hhe_gen.cores.unused import mark_unused
    from hhe_gen.flow.synth import synth_ecp5
    from hhe_gen.params import preset
    name = _area_name("hhe_accel_units", params, lanes, rubato, datapath)
    engine = AcceleratorConfig(preset(params), lanes, rubato=rubato, datapath=datapath).engine()
    mark_unused(engine)
    r = synth_ecp5(engine, name=name, timeout=4 * 3600, by_unit=True)
    fields = ("LUT4", "CCU2C", "FF", "MULT18X18D", "DP16KD", "DPR16X4")
    units = {unit or "(glue)": {k: cells[k] for k in fields} for unit, cells in r["units"].items()}
    parts = {part: {k: cells[k] for k in fields} for part, cells in r.get("parts", {}).items()
             if part.startswith("crypto_unit.")}
    return {"total": {k: r[k] for k in fields},
            **dict(sorted(units.items(), key=lambda kv: -kv[1]["LUT4"])),
            **dict(sorted(parts.items(), key=lambda kv: -kv[1]["LUT4"]))}


_LABELS = {("encrypt_pk", None): "m-to-ct pk", ("encrypt_sk", None): "m-to-ct sk", ("decrypt", 0): "ct-to-m L0",
           ("decrypt", None): "ct-to-m 3 primes"}


@bench_summary("accel")
def plot_cycles(results, out_dir) -> list:
    """``accel-cycles.png``: the N = 2^13 program cycles (memory one beat per cycle), out-of-order
    and in-order bars per program and lane count, with the goals and DNA-HHE's cycles as marks."""
    from pathlib import Path

    rows = [r for r in results if r.get("kind") == "program_cycles" and "error" not in r
            and r["params"].get("params") == "dna-hhe" and r["params"].get("cycles_per_beat", 1) == 1]
    if not rows:
        return []
    from hhe_gen.flow.extras import require
    require("plots", "drawing a plot")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = []
    for r in rows:
        p = r["params"]
        key = (p.get("program", "encrypt_pk"), p.get("level"), p.get("lanes", 2))
        if key not in groups:
            groups.append(key)
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(groups)), 4.5))
    for i, (program, level, lanes) in enumerate(groups):
        for j, (ooo, colour) in enumerate(((True, "tab:blue"), (False, "tab:grey"))):
            hit = [r for r in rows if (r["params"].get("program", "encrypt_pk"), r["params"].get("level"),
                                       r["params"].get("lanes", 2), r["params"].get("ooo", True)) ==
                   (program, level, lanes, ooo)]
            if hit:
                ax.bar(i + (j - 0.5) * 0.38, hit[0]["metrics"]["cycles"] / 1e3, 0.36, color=colour,
                       label=("out-of-order" if ooo else "in-order") if i == 0 else None)
        goal = TARGETS.get((program, lanes)) if program != "decrypt" or level == 0 else None
        if goal:
            ax.plot([i - 0.45, i + 0.45], [goal / 1e3] * 2, color="tab:green", linewidth=2,
                    label="goal" if not any(h.get_label() == "goal" for h in ax.lines) else None)
        ref = DNA_HHE.get(program) if lanes == 2 and (program != "decrypt" or level == 0) else None
        if ref:
            ax.plot([i - 0.45, i + 0.45], [ref / 1e3] * 2, "--", color="tab:red", linewidth=1.5,
                    label="DNA-HHE" if not any(h.get_label() == "DNA-HHE" for h in ax.lines) else None)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{_LABELS.get((p, lv), p)}\n{lanes} lanes" for p, lv, lanes in groups], fontsize=8)
    ax.set_ylabel("k cycles")
    ax.set_title("CKKS client programs on the RTL engine, N = 2^13, 3 x 54 bits")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    out = Path(out_dir) / "accel-cycles.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return [out]


def _cases():
    bench_case("accel", "cycles-toy-pk", quick=True, params="toy", program="encrypt_pk")(program_cycles)
    bench_case("accel", "cycles-toy-decrypt", quick=True, params="toy", program="decrypt")(program_cycles)
    bench_case("accel", "cycles-toy-pk-shared", quick=True, params="toy", program="encrypt_pk",
               datapath="shared")(program_cycles)
    bench_case("accel", "cycles-toy-decrypt-shared", quick=True, params="toy", program="decrypt",
               datapath="shared")(program_cycles)
    bench_case("accel", "nearnet-toy-pk", quick=True, params="toy", program="encrypt_pk", network=True)(program_cycles)
    bench_case("accel", "nearnet-toy-ct-to-m-l0", quick=True, params="toy", program="decrypt", level=0,
               network=True)(program_cycles)
    for lanes in (2, 8):
        for program, tag, level in (("encrypt_pk", "pk", None), ("encrypt_sk", "sk", None), ("decrypt", "ct-to-m-l0", 0)):
            bench_case("accel", f"nearnet-dna-hhe-{tag}-{lanes}lanes", quick=False, params="dna-hhe", lanes=lanes,
                       program=program, level=level, network=True)(program_cycles)
    for lanes in (2, 8):
        for ooo in (True, False):
            mode = "ooo" if ooo else "inorder"
            for program, level in (("encrypt_pk", None), ("encrypt_sk", None), ("decrypt", 0), ("decrypt", None)):
                if lanes == 8 and program == "decrypt" and level is None:
                    continue
                tag = {"encrypt_pk": "pk", "encrypt_sk": "sk", "decrypt": "ct-to-m"}[program]
                tag += "-l0" if level == 0 else ""
                bench_case("accel", f"cycles-dna-hhe-{tag}-{lanes}lanes-{mode}", quick=False, params="dna-hhe",
                           lanes=lanes, program=program, ooo=ooo, level=level)(program_cycles)
    bench_case("accel", "cycles-dna-hhe-pk-2lanes-ooo-wb", quick=False, params="dna-hhe", lanes=2,
               program="encrypt_pk", cycles_per_beat=4)(program_cycles)
    for lanes, in_place in ((2, False), (8, True)):         # the other NTT memory than the default's
        tag = "inplace" if in_place else "stream"
        bench_case("accel", f"cycles-dna-hhe-pk-{lanes}lanes-ooo-{tag}", quick=False, params="dna-hhe", lanes=lanes,
                   program="encrypt_pk", ntt_in_place=in_place)(program_cycles)
    for program, tag, level in (("encrypt_pk", "pk", None), ("encrypt_sk", "sk", None), ("decrypt", "ct-to-m-l0", 0)):
        bench_case("accel", f"cycles-dna-hhe-{tag}-2lanes-ooo-shared", quick=False, params="dna-hhe", lanes=2,
                   program=program, ooo=True, level=level, datapath="shared")(program_cycles)
    # 4 lanes: the default buffers (one working set per prime from 4 lanes on, 15) fit the engine
    bench_case("accel", "cycles-dna-hhe-pk-4lanes-ooo-shared", quick=False, params="dna-hhe", lanes=4,
               program="encrypt_pk", ooo=True, datapath="shared")(program_cycles)
    for rubato in ("Par-128S", "Par-128M", "Par-128L"):
        bench_case("accel", f"rubato-{rubato[4:].lower()}-2lanes", quick=rubato == "Par-128S",
                   rubato=rubato)(rubato_blocks)
        bench_case("accel", f"rubato-{rubato[4:].lower()}-2lanes-shared", quick=False, rubato=rubato,
                   datapath="shared")(rubato_blocks)
    for lanes in (2, 8):
        bench_case("accel", f"plan-dna-hhe-{lanes}lanes", quick=True, lanes=lanes)(memory_plan)
        bench_case("accel", f"area-dna-hhe-{lanes}lanes", quick=False, lanes=lanes)(area)
    bench_case("accel", "area-dna-hhe-2lanes-dual-128s", quick=False, lanes=2, rubato="Par-128S")(area)
    bench_case("accel", "area-dna-hhe-2lanes-dual-128s-shared", quick=False, lanes=2, rubato="Par-128S",
               datapath="shared")(area)
    # the narrowest wider slot format within LATTIGO_MARGIN_BITS of Lattigo (precision-dna-hhe-lattigo-42bits)
    bench_case("accel", "area-dna-hhe-2lanes-dual-128s-shared-42bits", quick=False, lanes=2, rubato="Par-128S",
               datapath="shared", slot_format=(42, 40), xilinx=False)(area)
    bench_case("accel", "area-toy", quick=False, params="toy")(area)
    bench_case("accel", "area-by-unit-dna-hhe-2lanes", quick=False, lanes=2)(area_by_unit)
    bench_case("accel", "area-by-unit-dna-hhe-2lanes-dual-128s", quick=False, lanes=2,
               rubato="Par-128S")(area_by_unit)
    bench_case("accel", "area-by-unit-dna-hhe-2lanes-dual-128s-shared", quick=False, lanes=2, rubato="Par-128S",
               datapath="shared")(area_by_unit)


_cases()

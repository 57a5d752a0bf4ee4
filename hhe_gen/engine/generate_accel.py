"""``hhe-gen generate accel``: the accelerator engine's Verilog, its manifest and its program images.

    hhe-gen generate accel --params dna-hhe --lanes 2 [--buffers B] [--window W] [--in-order]
                           [--width W --frac-bits F] [--reducer KIND] [--twiddles otf|rom]
                           [--ntt auto|in-place|stream]
                           [--target ecp5|xilinx|generic] [--device PART] [--name NAME] -o DIR

Writes into DIR:

- ``<name>.v``: the engine (:class:`hhe_gen.cores.engine.engine.Engine`: task manager, buffers,
  memory / sampling / NTT / pointwise / codec units), reproducible (no absolute paths unless
  ``--keep-src``);
- ``<name>.json``: the manifest: parameters and primes, the port table, the instruction set
  (word fields, opcodes, error causes, the engine's shape), the memory map of the programs, the
  block-RAM plan against ``--device`` and the programs with their files;
- ``programs/<program>.s`` (commented assembly with its memory map) and ``programs/<program>.hex``
  (``$readmemh`` image, one 64-bit word per line) for key_setup, encrypt_pk, encrypt_sk and
  decrypt at the top level;
- ``<name>_tb.v`` and its hex files: a self-checking Verilog testbench running ``encrypt_pk`` from
  a memory image and comparing the memory afterwards with the ISA model's
  (:mod:`hhe_gen.flow.engine_testbench`; ``--vectors 0``: none).

The instruction set and the programs are documented in docs/isa.md, the engine in docs/engine.md.
"""

from __future__ import annotations

from pathlib import Path

from hhe_gen.params.errors import ParameterError

__all__ = ["DEFAULT_SLOT_FORMAT", "client_reducer", "client_decode_rows", "client_ntt_in_place", "client_engine",
           "generate_accel"]

DEFAULT_SLOT_FORMAT = (38, 36)
"""The slot format (W, F) of a generated accelerator: >= 30 mean bits of precision at N = 2^13
(29 / 26 gives 20.6; ``hhe-gen bench fft``)."""


def client_reducer(params) -> str:
    """The modular reducer of a client accelerator for ``params``: ``special-barrett`` when every
    prime has DNA-HHE's form q = 2^k - 2N*bnd + 1 (one k, 1 <= bnd < 2^10: the reduction is shifts
    and adds, half the multipliers of Barrett's), else ``barrett``."""
    from hhe_gen.params.primes import dna_hhe_primes
    k = max(q.bit_length() for q in params.moduli)
    special = {p.q for p in dna_hhe_primes(k, params.n)}
    return "special-barrett" if set(params.moduli) <= special else "barrett"


def client_decode_rows(params, fmt) -> frozenset | None:
    """The row counts of a client accelerator's decoder: ``{1}`` (q_0's row alone, no CRT of the
    other primes: its multipliers are most of the codec's) when every message the slot format can
    hold decodes the same from q_0 alone: |coefficients| <= sqrt(2) * 2^(W-1-F) * Delta, below
    q_0 / 2 when 2^(W-F+log_scale+1) <= q_0; else None (the codec's default: 1 and every prime)."""
    w, f = fmt
    return frozenset({1}) if 1 << (w - f + params.log_scale + 1) <= params.moduli[0] else None


def client_ntt_in_place(n: int, lanes: int, buffers: int, word_bits: int, qbits: int) -> bool:
    """Whether a client accelerator transforms in its buffers (banked as the NTT's 2P banks, no NTT
    banks of its own, no load and no unload: always fewer cycles) rather than streaming through the
    NTT core's banks: when that costs no more DP16KD (B * 2P banks of N/2P words against B buffers
    of N/P rows of P words plus the core's 2P banks).  At N = 2^13, 54-bit words: 2 lanes, 5
    buffers 120 against 144 blocks (in place); 8 lanes, 15 buffers 480 against 392 (a 512-deep bank
    of 54 bits takes two blocks: streaming)."""
    from hhe_gen.cores.engine.memory_plan import dp16kd_blocks
    p2 = 2 * lanes
    banked = buffers * p2 * dp16kd_blocks(n // p2, word_bits)
    streamed = buffers * dp16kd_blocks(n // lanes, lanes * word_bits) + p2 * dp16kd_blocks(n // p2, qbits)
    return banked <= streamed


def client_engine(params, lanes: int = 2, *, buffers: int | None = None, window: int = 16, ooo: bool = True,
                  fmt=DEFAULT_SLOT_FORMAT, reducer: str | None = None, twiddles: str = "otf",
                  ntt_in_place: bool | None = None, network: bool = True, rubato: str | None = None,
                  rubato_lanes: int = 2, target: str = "ecp5"):
    """The engine of a CKKS client accelerator for ``params``: the parameter set's primes and scale
    built in, twiddles on the fly, the reducer :func:`client_reducer` (unless ``reducer``), the
    decoder :func:`client_decode_rows`, and by default the buffers every client program needs at
    the top level (:func:`hhe_gen.engine.programs.client_buffers`): at 1 or 2 lanes the fewest (the
    NTT unit bounds the time, so more buffers buy little: they are what fits a small FPGA), from 4
    lanes on one working set per prime and the samples drawn once (the sampler and the memory port
    bound the time there).  ``ntt_in_place`` None: :func:`client_ntt_in_place`.  ``network``: with the
    network unit (``send``: near-network encryption, ``o_udp`` in LiteEth's UDP user port shape).
    ``rubato``: a Rubato set name (dual mode: the Rubato unit with ``rubato_lanes`` lanes); None:
    CKKS only."""
    from hhe_gen.cores.engine.engine import Engine
    from hhe_gen.engine.programs import client_buffers
    from hhe_gen.models.fft import FixedPointFormat
    buffers = client_buffers(len(params.moduli), parallel=lanes > 2) if buffers is None else buffers
    reducer = client_reducer(params) if reducer is None else reducer
    codec = {"fmt": FixedPointFormat(*fmt)}
    rows = client_decode_rows(params, fmt)
    if rows is not None:
        codec["decode_rows"] = rows
    if ntt_in_place is None:
        qbits = max(q.bit_length() for q in params.moduli)
        ntt_in_place = client_ntt_in_place(params.n, lanes, buffers, max(qbits, fmt[0]), qbits)
    return Engine.for_params(params, lanes=lanes, buffers=buffers, window=window, ooo=ooo, target=target,
                             ntt=dict(kind=reducer, twiddles=twiddles, in_place=ntt_in_place),
                             pointwise=dict(kind=reducer), codec=codec, net=dict() if network else None,
                             rubato=None if rubato is None else dict(params=rubato, rubato_lanes=rubato_lanes))


def _isa_section(engine) -> dict:
    from hhe_gen.cores.engine import isa
    shape = engine.shape
    return {
        "word_bits": isa.WORD_BITS,
        "fields": [{"name": f.name, "low": f.low, "width": f.width, "meaning": f.meaning} for f in isa.FIELDS],
        "opcodes": [{"mnemonic": i.mnemonic, "code": i.code, "unit": i.unit.name.lower(), "summary": i.summary,
                     "accepted": i.requires == isa.Unit.NONE or i.requires in shape.units}
                    for i in isa.OPCODES.values()],
        "error_causes": {c.name.lower(): int(c) for c in isa.ErrorCause},
        "shape": {"buffers": shape.buffers, "slots": shape.slots, "log_scale": shape.log_scale,
                  "primes": [{"id": i, "q": q} for i, q in enumerate(shape.primes)],
                  "units": sorted(u.name.lower() for u in shape.units)},
        "doc": "docs/isa.md",
    }


def _testbench_vectors(params, shape, layout, fmt, seed: int):
    """(program words, memory before, memory after) of ``encrypt_pk`` on keys and slots drawn from
    ``seed``, keys in NTT form by ``key_setup`` (the ISA model)."""
    import cmath
    import math
    import random

    from hhe_gen.engine import programs
    from hhe_gen.engine.client_memory import client_memory, run_model
    from hhe_gen.models import ckks
    from hhe_gen.models.fft import FixedPointFormat
    fmt = FixedPointFormat(*fmt)
    rng = random.Random(seed)
    slots = [cmath.rect(rng.random(), rng.random() * 2 * math.pi) for _ in range(params.slots)]
    before = client_memory(params, shape, ckks.keygen(params, seed), seed=seed, slots=slots, fmt=fmt, layout=layout)
    words = programs.encrypt_pk(params, shape, layout=layout).words
    return words, before, run_model(shape, params.n, words, before, fmt=fmt)


def generate_accel(params, lanes: int, out_dir, *, buffers: int | None = None, window: int = 16,
                   ooo: bool = True, fmt=DEFAULT_SLOT_FORMAT, reducer: str | None = None, twiddles: str = "otf",
                   ntt_in_place: bool | None = None, target: str = "ecp5", device: str = "LFE5UM5G-85F",
                   name: str | None = None, rubato: str | None = None,
                   keep_src: bool = False, testbench: bool = True, seed: int = 1) -> dict:
    """Generate the accelerator for ``params`` (a :class:`~hhe_gen.params.ckks.CKKSParams`); returns
    ``{"paths": {...}, "manifest": {...}}`` (module docstring).  ``testbench``: also the
    self-checking Verilog testbench of ``encrypt_pk`` on keys and slots drawn from ``seed``
    (:mod:`hhe_gen.flow.engine_testbench`)."""
    from hhe_gen.engine import asm, programs
    from hhe_gen.engine.memory_map import MemoryMap
    from hhe_gen.flow.engine_testbench import write_engine_testbench
    from hhe_gen.flow.verilog import check_name, port_table, write_core
    from hhe_gen.params.checks import check_int
    from hhe_gen.params.ckks import CKKSParams
    if not isinstance(params, CKKSParams):
        raise ParameterError("params", params, "a hhe_gen.params.CKKSParams")
    check_int("seed", seed, 0, (1 << 256) - 1)
    name = check_name(name or f"hhe_accel_n{params.n}_p{lanes}")
    engine = client_engine(params, lanes, buffers=buffers, window=window, ooo=ooo, fmt=fmt, reducer=reducer,
                           twiddles=twiddles, ntt_in_place=ntt_in_place, rubato=rubato, target=target)
    shape, layout = engine.shape, MemoryMap.for_params(params)
    reducer = engine.ntt_unit.ntt.kind
    out = Path(out_dir)
    plan = engine.memory_plan(device=device)
    made, listing = {}, {}
    for prog_name in programs.PROGRAMS:
        prog = getattr(programs, prog_name)(params, shape, layout=layout)
        made[prog_name] = prog
        listing[prog_name] = {"asm": f"programs/{prog_name}.s", "image": f"programs/{prog_name}.hex",
                              "instructions": len(prog.words), "notify": prog.notify, "rows": prog.rows,
                              "buffers_used": prog.allocation.used}
    manifest = {
        "core": "accel",
        "parameters": {"preset": params.name, "n": params.n, "log_scale": params.log_scale, "lanes": lanes,
                       "buffers": shape.buffers, "slots": shape.slots, "window": window,
                       "dispatch": "out-of-order" if ooo else "in-order", "word_bits": engine.word_bits,
                       "slot_format": {"width": fmt[0], "frac_bits": fmt[1]}, "reducer": reducer,
                       "decode_rows": sorted(shape.decode_rows or []),
                       "twiddles": twiddles, "ntt": "in place" if engine.ntt_in_place else "streaming",
                       "target": target, "network": engine.network_unit is not None,
                       "rubato": engine.rubato_unit.params.name if engine.rubato_unit is not None else None},
        "primes": [{"index": i, "q": q, "bits": q.bit_length()} for i, q in enumerate(params.moduli)],
        "interface": {
            "i_instr": "stream of 64-bit instruction words (docs/isa.md)",
            "mem": "memory-master port: cmd (addr, count, write), wdata / rdata beats of 64 bits with last "
                   "(cores/engine/memory_port.py)",
            "abort": "soft reset: clears the queue, the window, every unit and the error",
            "status": "busy, error, error_cause, error_position, notify, notify_code, cycle",
            "completed": "one lane per unit: valid, position, unit, dispatched, finished (per-task cycles)",
            "completed_lanes": [u.name.lower() for u in engine.manager.units],
            "o_udp": "packets (send): LiteEth's UDP user port shape, data 32 bits, last, last_be one-hot, "
                     "ip_address / src_port / dst_port / length held over the packet (docs/wire.md)",
            "i_udp": "arriving packets (recv), the same shape: taken only while a recv runs",
        },
        "isa": _isa_section(engine),
        "memory_map": [{"region": r, "row": i, "address": a} for r, i, a in layout.describe()],
        "memory_plan": {**plan.summary(), "memories": plan.rows()},
        "programs": listing,
    }
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError("-o", str(out_dir), f"a directory that can be created ({exc.strerror})") from None
    if testbench:
        vectors = _testbench_vectors(params, engine.shape, layout, fmt, seed)
        manifest["testbench"] = {**write_engine_testbench(out, name, port_table(engine), *vectors, layout.size),
                                 "program_name": "encrypt_pk", "seed": seed}
    paths = write_core(engine, name, out, manifest, keep_src=keep_src)
    if testbench:
        paths["testbench"] = out / manifest["testbench"]["file"]
    folder = out / "programs"
    folder.mkdir(exist_ok=True)
    for prog_name, prog in made.items():
        (folder / f"{prog_name}.s").write_text(prog.text)
        asm.write_image(folder / f"{prog_name}.hex", prog.words)
        paths[prog_name] = folder / f"{prog_name}.hex"
    return {"paths": {k: str(v) if v else None for k, v in paths.items()}, "manifest": manifest}

"""``hhe-gen generate accel``: the accelerator engine's Verilog, its manifest and its program images.

    hhe-gen generate accel --params dna-hhe --lanes 2 [--buffers B] [--window W] [--in-order]
                           [--width W --frac-bits F] [--reducer KIND] [--twiddles otf|rom]
                           [--ntt auto|in-place|stream]
                           [--target ecp5|xilinx|generic] [--device PART] [--name NAME] -o DIR

Writes into DIR:

- ``<name>.v``: the engine (:class:`hhe_gen.cores.engine.engine.Engine`: task manager, buffers,
  memory / sampling / NTT / pointwise / codec units), reproducible (no absolute paths unless
  ``--keep-src``);
- ``<name>.json``: the manifest: the configuration (every choice and why), parameters and primes,
  the port table, the buffer file's ports by unit (``buffer_ports``), the instruction set
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

from .config import AcceleratorConfig

__all__ = ["generate_accel"]


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
    rng = random.Random(seed)
    slots = [cmath.rect(rng.random(), rng.random() * 2 * math.pi) for _ in range(params.slots)]
    before = client_memory(params, shape, ckks.keygen(params, seed), seed=seed, slots=slots, fmt=fmt, layout=layout)
    words = programs.encrypt_pk(params, shape, layout=layout).words
    return words, before, run_model(shape, params.n, words, before, fmt=fmt)


def generate_accel(config: AcceleratorConfig, out_dir, *, name: str | None = None, keep_src: bool = False,
                   testbench: bool = True, seed: int = 1) -> dict:
    """Generate the accelerator of ``config`` (an :class:`~.config.AcceleratorConfig`, resolved
    here); returns ``{"paths": {...}, "manifest": {...}}`` (module docstring).  ``testbench``: also
    the self-checking Verilog testbench of ``encrypt_pk`` on keys and slots drawn from ``seed``
    (:mod:`hhe_gen.flow.engine_testbench`)."""
    from hhe_gen.engine import asm, programs
    from hhe_gen.engine.memory_map import MemoryMap
    from hhe_gen.flow.engine_testbench import write_engine_testbench
    from hhe_gen.flow.verilog import check_name, port_table, write_core
    from hhe_gen.params.checks import check_int
    if not isinstance(config, AcceleratorConfig):
        raise ParameterError("config", config, "a hhe_gen.engine.config.AcceleratorConfig")
    config = config.resolve()
    params, lanes, fmt = config.params, config.lanes, config.fmt
    check_int("seed", seed, 0, (1 << 256) - 1)
    name = check_name(name or f"hhe_accel_n{params.n}_p{lanes}")
    engine = config.engine()
    shape, layout = engine.shape, MemoryMap.for_params(params)
    out = Path(out_dir)
    plan = engine.memory_plan(device=config.device)
    made, listing = {}, {}
    for prog_name in programs.PROGRAMS:
        prog = getattr(programs, prog_name)(params, shape, layout=layout)
        made[prog_name] = prog
        listing[prog_name] = {"asm": f"programs/{prog_name}.s", "image": f"programs/{prog_name}.hex",
                              "instructions": len(prog.words), "notify": prog.notify, "rows": prog.rows,
                              "buffers_used": prog.allocation.used}
    manifest = {
        "core": "accel",
        "parameters": {**config.describe()["values"], "log_scale": params.log_scale, "slots": shape.slots},
        "configuration": config.describe(),
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
        "buffer_ports": engine.buffer_ports.describe(),
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
        asm.write_image(folder / f"{prog_name}.hex", prog.words, config.image_about())
        paths[prog_name] = folder / f"{prog_name}.hex"
    return {"paths": {k: str(v) if v else None for k, v in paths.items()}, "manifest": manifest}

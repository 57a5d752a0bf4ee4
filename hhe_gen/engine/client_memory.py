"""The memory image a CKKS client program starts from: the keys in NTT form (the ``key_setup``
program run on the ISA model), a seed and the slots, at the places :mod:`.memory_map` gives.

The simulations, the benchmarks, the demo and the generated Verilog testbench all start a program
from this image, and compare the engine's memory afterwards with :func:`run_model`'s.
"""

from __future__ import annotations

from hhe_gen.cores.engine.isa import EngineShape, ErrorCause
from hhe_gen.models import ckks
from hhe_gen.models.fft import FixedPointFormat
from hhe_gen.params.ckks import CKKSParams

from . import memory_map, programs
from .memory_map import MemoryMap
from .model import DEFAULT_FORMAT, EngineModel

__all__ = ["run_model", "client_memory"]


def run_model(shape: EngineShape, n: int, words, memory, *, fmt: FixedPointFormat = DEFAULT_FORMAT,
              **model) -> dict:
    """``words`` on a fresh :class:`~.model.EngineModel` (``shape``, ring degree ``n``, slot format
    ``fmt``, further keywords to the model) over a copy of ``memory``; the memory afterwards.
    Raises RuntimeError naming the cause when the model refuses a word."""
    m = EngineModel(shape, n, fmt=fmt, **model)
    m.memory = dict(memory)
    cause = m.run(words)
    if cause != ErrorCause.NONE:
        raise RuntimeError(f"the ISA model refused the program: {cause.name} at position {m.error_position}")
    return m.memory


def client_memory(params: CKKSParams, shape: EngineShape, keys: ckks.KeyPair, *, seed=None, slots=None,
                  fmt: FixedPointFormat = DEFAULT_FORMAT, layout: MemoryMap | None = None) -> dict:
    """The memory image: ``keys`` written in interchange form and put in NTT form by ``key_setup``
    (every prime), then the ``seed`` (bytes or an int, if given) and the complex ``slots`` in
    ``fmt`` (if given)."""
    layout = layout or MemoryMap.for_params(params)
    mem: dict = {}
    memory_map.write_keys(mem, layout, params, keys)
    mem = run_model(shape, params.n, programs.key_setup(params, shape, layout=layout).words, mem, fmt=fmt)
    if seed is not None:
        memory_map.write_seed(mem, layout, seed)
    if slots is not None:
        memory_map.write_slots(mem, layout, slots, fmt)
    return mem

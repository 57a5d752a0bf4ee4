"""The Rubato program of a dual-mode engine (an engine with the Rubato unit): a real message
encrypted with Rubato, from memory to memory or onto the network.

The host writes a key block (:func:`write_key_block`: the key, the nonce, the noise seed and the
counter base, docs/isa.md) and the message scaled to round(Delta * m) as signed words
(:func:`write_scaled_message`, :func:`hhe_gen.models.rubato.scale_message`'s float32 rule); the
program (:func:`rubato_encrypt`) loads both, puts the key block into the unit's write-only
registers (``rubato.key``), makes B blocks of ciphertext (``rubato.enc ..., noise``: (z + e +
round(Delta * m)) mod t, :func:`hhe_gen.models.rubato.encrypt` block by block) and stores them or
sends them as one row of kind ``rubato`` (``send``, docs/wire.md).  The result decrypts with
:func:`hhe_gen.models.rubato.decrypt` block by block (counter base + k for block k).
"""

from __future__ import annotations

from dataclasses import dataclass

from hhe_gen.cores.engine.isa import RUBATO_KEY_EXTRA, RUBATO_SET_IDS, EngineShape, Unit
from hhe_gen.models import rubato
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import rubato_params

from . import asm

__all__ = ["RubatoProgram", "KEY_BUFFER", "MESSAGE_BUFFER", "OUT_BUFFER", "write_key_block",
           "write_scaled_message", "rubato_encrypt"]

KEY_BUFFER, MESSAGE_BUFFER, OUT_BUFFER = 0, 1, 2
"""The buffers the program uses (an engine has at least three)."""


@dataclass(frozen=True)
class RubatoProgram:
    """An assembled Rubato program: its set, blocks, text and words."""
    set_name: str
    blocks: int
    text: str
    words: tuple


def write_key_block(memory: dict, address: int, params, key, nonce: int, seed: int, counter: int) -> None:
    """The key block at ``address``: the n key words, then the nonce, the noise seed and the
    counter base as 32-bit halves, low first (what ``rubato.key`` reads)."""
    p = rubato_params(params) if isinstance(params, str) else params
    key = list(key)
    if len(key) != p.n or not all(isinstance(k, int) and 0 <= k < p.q for k in key):
        raise ParameterError("key", f"<{len(key)} words>", f"{p.n} words in [0, {p.q})")
    for name, value in (("nonce", nonce), ("seed", seed), ("counter", counter)):
        check_int(name, value, 0, (1 << 64) - 1)
    halves = [v >> s & 0xFFFFFFFF for v in (nonce, seed, counter) for s in (0, 32)]
    for k, word in enumerate(key + halves):
        memory[address + k] = word


def write_scaled_message(memory: dict, address: int, params, message, word_bits: int = 64) -> list[int]:
    """round(Delta * m) of every value (:func:`hhe_gen.models.rubato.scale_message`, l values per
    block) at ``address`` as two's complement words; returns the scaled integers."""
    p = rubato_params(params) if isinstance(params, str) else params
    message = list(message)
    if not message or len(message) % p.l:
        raise ParameterError("message", f"<{len(message)} values>", f"a whole number of blocks of l = {p.l} values")
    scaled = []
    for start in range(0, len(message), p.l):
        scaled += rubato.scale_message(p, message[start:start + p.l])
    for k, x in enumerate(scaled):
        memory[address + k] = x % (1 << word_bits)
    return scaled


def rubato_encrypt(shape: EngineShape, n: int, *, key_address: int, message_address: int, blocks: int,
                   counter: int = 0, out_address: int | None = None, network=None) -> RubatoProgram:
    """The program (module docstring) for an engine of ``shape`` (ring degree ``n``): ``blocks``
    blocks from counter offset ``counter``; stored at ``out_address``, or sent to ``network`` (an
    :class:`hhe_gen.engine.programs.NetworkTarget`)."""
    if Unit.RUBATO not in shape.units or shape.rubato_set is None:
        raise ParameterError("shape", sorted(u.name for u in shape.units), "an engine with the Rubato unit")
    if shape.buffers < 3:
        raise ParameterError("buffers", shape.buffers, ">= 3 (key block, message, ciphertext)")
    name = RUBATO_SET_IDS[shape.rubato_set]
    p = rubato_params(name)
    check_int("blocks", blocks, 1, min(255, n // p.l), f"1 .. {min(255, n // p.l)} (B * l <= N = {n})")
    check_int("counter", counter, 0, (1 << 24) - 1)
    if (out_address is None) == (network is None):
        raise ParameterError("out_address", out_address, "exactly one of out_address and network")
    if p.n + RUBATO_KEY_EXTRA > n:
        raise ParameterError("n", n, f">= {p.n + RUBATO_KEY_EXTRA} (a {name} key block)")
    lines = [f"; Rubato {name}: {blocks} blocks of {p.l} words",
             f"cfg.rubato {shape.rubato_set}"]
    if network is not None:
        lines += [code for code, _ in network.lines()]
    lines += [f"load b{KEY_BUFFER}, {key_address:#x}", f"load b{MESSAGE_BUFFER}, {message_address:#x}",
              f"rubato.key b{KEY_BUFFER}",
              f"rubato.enc b{OUT_BUFFER}, b{MESSAGE_BUFFER}, blocks={blocks}, counter={counter}, noise"]
    if network is None:
        lines.append(f"store b{OUT_BUFFER}, {out_address:#x}")
    else:
        lines.append(f"send b{OUT_BUFFER}, rubato, rows=1, words={blocks * p.l}")
    lines.append("notify 5")
    text = "\n".join(lines) + "\n"
    return RubatoProgram(name, blocks, text, tuple(asm.assemble(text, shape)))

"""Run a program on the RTL engine in Verilator: the same run as :func:`hhe_gen.sim.engine.run_engine`
(Amaranth's simulator) at the speed large rings need.

The engine is exported to Verilog and compiled with a driver of its own (C++, generated here) that
holds the external memory and reproduces, cycle for cycle, what the Amaranth run's processes do:
the instruction feeder (one word offered per cycle, as fast as ``i_instr`` takes them; ``abort``
pulsed after ``abort_after`` cycles if asked), the memory of :class:`hhe_gen.sim.memory.MemoryModel`
(commands in order, ``latency`` cycles to a read's first beat, a beat every ``cycles_per_beat``
cycles), and the monitor of ``notify`` and ``completed``.  So a Verilator run and an Amaranth run of
the same engine, program and memory give the same cycles, tasks and memory contents (the tests
check it), and a program at N = 2^13 takes seconds instead of hours.

Builds are cached (:func:`hhe_gen.flow.verilator.build`): the first build of an engine configuration
takes minutes (the bench prints it), a rerun none.

Driver protocol (standard input, one item per line): ``P latency cycles_per_beat abort_after
max_cycles`` (abort_after -1: none), ``I hex`` per instruction word, ``M addr hex`` per memory word,
``R hex`` per payload offered on ``i_udp`` (its bytes; as :func:`~.engine.run_engine`'s ``udp_in``),
``GO``.  Standard error: ``cycle N`` every 2^16 cycles (progress).  Output: ``END cycles error cause
position``, then ``N cycle code``, ``K position unit dispatched finished``, ``C addr count write``,
``W addr hex`` (every word the engine wrote, final value), ``S reads writes`` and, with a network
unit (``o_udp`` always ready), ``U cycle data last_be last ip src dst length gaps`` per beat.
"""

from __future__ import annotations

import re

from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from .engine import EngineRun, TaskRecord, udp_packet

__all__ = ["driver_for", "VerilatedEngine", "verilate_engine"]

MASK64 = (1 << 64) - 1


def _fields(layout, base: int = 0) -> dict:
    """{name: (offset, width)} of a StructLayout's fields, shifted by ``base``."""
    return {name: (base + f.offset, f.width) for name, f in layout}


def _cxx_name(port: str) -> str:
    """Verilator's C++ member of a port: "__" escaped as "___05F", names of the C library
    (``abort``) prefixed with ``__SYM__``."""
    return ("__SYM__" if port in _C_NAMES else "") + port.replace("__", "___05F")


_C_NAMES = frozenset({"abort", "exit", "signal", "time", "free", "main"})


def _getter(port: str, width: int, lo: int, bits: int) -> str:
    """C++ expression of ``bits`` bits of output port ``port`` (``width`` bits) from bit ``lo``."""
    if width <= 64:
        mask = (1 << bits) - 1
        return f"((((uint64_t)top->{port}) >> {lo}) & {mask:#x}ULL)"
    return f"wide_bits(&top->{port}[0], {lo}, {bits})"


def driver_for(engine):
    """A ``driver`` function for :func:`hhe_gen.flow.verilator.build` of ``engine`` (the layouts of
    its memory port and ``completed`` lanes are read from the engine)."""
    from hhe_gen.cores.engine.memory_port import command_layout

    completed = engine.completed.shape()
    lane, lanes = completed.elem_shape, completed.length
    lane_bits = lane.size
    cmd = _fields(command_layout())
    words = engine.mem.signature.words

    def source(top: str, port_list) -> str:
        width = {name: w for name, _, w in port_list}

        def get(port, field=None, layout=None):
            lo, bits = (layout[field] if field else (0, width[port]))
            return _getter(port, width[port], lo, bits)

        lane_reads = []
        lf = _fields(lane)
        for k in range(lanes):
            base = k * lane_bits
            parts = []
            for name in ("valid", "position", "unit", "dispatched", "finished"):
                lo, bits = lf[name]
                parts.append(_getter("completed", width["completed"], base + lo, bits))
            lane_reads.append("        { " + f"uint64_t v[5] = {{{', '.join(parts)}}}; "
                              "if (v[0]) tasks.push_back({v[1], v[2], v[3], v[4]}); }")
        rdata = "mem__rdata__payload"        # 64 W + 1 bits (data, last): a VlWide of 2 W + 1 words
        set_rdata = " ".join(f"top->{rdata}[{2 * j}] = (uint32_t)d[{j}]; top->{rdata}[{2 * j + 1}] = "
                             f"(uint32_t)(d[{j}] >> 32);" for j in range(words))
        set_rdata += f" top->{rdata}[{2 * words}] = (uint32_t)l;"
        wdata = ", ".join(_getter("mem__wdata__payload", width["mem__wdata__payload"], 64 * j, 64)
                          for j in range(words))
        udp_init, udp_sample, udp_offer = "", "", ""
        if hasattr(engine, "i_udp"):
            from hhe_gen.cores.net.packetizer import UDP_LAYOUT
            f = _fields(UDP_LAYOUT)
            sets = " ".join(f"set_bits(top->i_udp__payload, {f[k][0]}, {f[k][1]}, {v});"
                            for k, v in (("data", "b.data"), ("last", "b.last"), ("last_be", "b.last_be")))
            udp_offer = ("if (rx_i < rx.size()) { const InBeat &b = rx[rx_i]; " + sets +
                         " top->i_udp__valid = 1; } else top->i_udp__valid = 0;")
            from hhe_gen.cores.net.packetizer import UDP_LAYOUT
            udp = _fields(UDP_LAYOUT)
            fields = ", ".join(get("o_udp__payload", name, udp) for name in
                               ("data", "last_be", "last", "ip_address", "src_port", "dst_port", "length"))
            udp_init = "top->o_udp__ready = 1;"
            udp_sample = ("        if (top->o_udp__valid) { uint64_t v[7] = {" + fields + "}; "
                          "beats.push_back({cycles + 1, v[0], v[1], v[2], v[3], v[4], v[5], v[6], gaps}); "
                          "in_packet = !v[2]; if (v[2]) gaps = 0; } else if (in_packet) gaps++;")
        text = (_DRIVER.replace("@TOP@", top)
                .replace("@UDP_INIT@", udp_init).replace("@UDP_SAMPLE@", udp_sample)
                .replace("@UDP_OFFER@", udp_offer)
                .replace("@UDP_TAKE@", "bool rx_take = top->i_udp__valid && top->i_udp__ready;"
                         if udp_offer else "bool rx_take = false;")
                .replace("@LANES@", "\n".join(lane_reads))
                .replace("@CMD_ADDR@", get("mem__cmd__payload", "addr", cmd))
                .replace("@CMD_COUNT@", get("mem__cmd__payload", "count", cmd))
                .replace("@CMD_WRITE@", get("mem__cmd__payload", "write", cmd))
                .replace("@WDATA@", wdata).replace("@W@", str(words))
                .replace("@SET_RDATA@", set_rdata))
        return re.sub(r"top->(\w+)", lambda m: "top->" + _cxx_name(m.group(1)), text)
    return source


class VerilatedEngine:
    """An engine exported to Verilog and built with the driver once (the build cached on disk);
    :meth:`run` runs programs on it any number of times, each from reset.

    Parameters
    ----------
    engine : Engine        a fresh (never elaborated) engine component
    progress : str         the label of the build's progress line

    Members
    -------
    engine : the component;  model : the :class:`hhe_gen.flow.verilator.VerilatorModel`
    """

    def __init__(self, engine, *, progress: str | None = None):
        from hhe_gen.flow.verilator import build
        self.engine = engine
        self.model = build(engine, "engine", driver=driver_for(engine),
                           progress=progress or "verilator build of the engine")

    def run(self, words, memory, *, max_cycles: int = 10_000_000, abort_after=None, udp_in=()) -> EngineRun:
        """:func:`hhe_gen.sim.engine.run_engine`'s run and result (``memory`` is changed in place:
        the words the engine wrote, ``reads``, ``writes``, ``commands``)."""
        check_int("max_cycles", max_cycles, 1)
        if abort_after is not None:
            check_int("abort_after", abort_after, 1)
        if memory.beat_words != self.engine.mem.signature.words:
            raise ParameterError("beat_words", memory.beat_words,
                                 f"the engine's words per memory beat ({self.engine.mem.signature.words})")
        lines = [f"P {memory.latency} {memory.cycles_per_beat} {-1 if abort_after is None else abort_after} "
                 f"{max_cycles}"]
        lines += [f"I {w:x}" for w in words]
        lines += [f"M {a} {v & MASK64:x}" for a, v in memory.words.items()]
        lines += [f"R {payload.hex()}" for payload in udp_in if payload]
        lines.append("GO")
        result = EngineRun(memory)
        beats = []
        for line in _run_with_progress(self.model.binary, "\n".join(lines) + "\n"):
            kind, *f = line.split()
            if kind == "END":
                cycles, error, cause, position = (int(x) for x in f)
                if cycles > max_cycles:
                    raise RuntimeError(f"the engine is still busy after {max_cycles} cycles")
                result.cycles = cycles
                result.error_cause = cause if error else 0
                result.error_position = position
            elif kind == "N":
                result.notifies.append((int(f[0]), int(f[1])))
            elif kind == "K":
                result.tasks.append(TaskRecord(*(int(x) for x in f)))
            elif kind == "C":
                memory.commands.append(tuple(int(x) for x in f))
            elif kind == "W":
                memory.words[int(f[0])] = int(f[1], 16)
            elif kind == "S":
                memory.reads, memory.writes = memory.reads + int(f[0]), memory.writes + int(f[1])
            elif kind == "U":
                cycle, data, last_be, last, *meta, gaps = (int(x, 16) if k == 1 else int(x) for k, x in enumerate(f))
                beats.append((cycle, data, last_be, tuple(meta)))
                if last:
                    result.packets.append(udp_packet(beats, gaps))
                    beats = []
        return result


def verilate_engine(engine, words, memory, *, max_cycles: int = 10_000_000, abort_after=None,
                    progress: str | None = None, udp_in=()) -> EngineRun:
    """:func:`hhe_gen.sim.engine.run_engine` in Verilator: same arguments, same result; one build
    and one run (:class:`VerilatedEngine` runs several programs on one build)."""
    return VerilatedEngine(engine, progress=progress).run(words, memory, max_cycles=max_cycles,
                                                           abort_after=abort_after, udp_in=udp_in)


PROGRESS_SECONDS = 10.0
"""A run longer than this prints a progress line (cycles simulated) this often."""


def _run_with_progress(binary, script: str) -> list[str]:
    """Run the driver; its output lines.  The driver reports the cycles simulated on standard error
    every 2^16 cycles; a line ``[hhe-gen] engine run: N cycles`` is printed at most every
    :data:`PROGRESS_SECONDS`."""
    import subprocess
    import threading
    import time

    from hhe_gen.flow.tools import say

    proc = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout.read().splitlines()), daemon=True)
    reader.start()
    try:
        proc.stdin.write(script)
        proc.stdin.close()
    except BrokenPipeError:         # the driver stopped reading: its exit code and message follow
        pass
    errors, start, shown = [], time.monotonic(), time.monotonic()
    for line in proc.stderr:
        if line.startswith("cycle "):
            now = time.monotonic()
            if now - shown >= PROGRESS_SECONDS:
                say(f"engine run: {int(line.split()[1]):,} cycles ({now - start:.0f} s)")
                shown = now
        else:
            errors.append(line)
    code = proc.wait()
    reader.join()
    if code != 0:
        raise RuntimeError(f"{binary} exited with {code}: {''.join(errors)[-2000:]}")
    return out


_DRIVER = r"""// generated by hhe_gen.sim.engine_verilator: the engine, its instruction feeder, its memory
#include "V@TOP@.h"
#include "verilated.h"
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

static V@TOP@ *top;

static uint64_t wide_bits(const uint32_t *w, int lo, int bits) {
    uint64_t v = 0;
    for (int i = 0; i < bits; i++) v |= (uint64_t)((w[(lo + i) / 32] >> ((lo + i) % 32)) & 1) << i;
    return v;
}

static uint64_t hex(const std::string &s) { return std::stoull(s, nullptr, 16); }

struct Task { uint64_t position, unit, dispatched, finished; };
struct Beat { uint64_t cycle, data, last_be, last, ip, src, dst, length, gaps; };
struct InBeat { uint64_t data, last, last_be; };

template <typename T> static void set_bits(T &port, int lo, int bits, uint64_t value) {
    for (int i = 0; i < bits; i++) {
        int at = lo + i;
        if constexpr (sizeof(T) <= 8) {
            if ((value >> i) & 1) port |= (T)1 << at; else port &= ~((T)1 << at);
        } else {
            uint32_t bit = 1u << (at % 32);
            if ((value >> i) & 1) port[at / 32] |= bit; else port[at / 32] &= ~bit;
        }
    }
}
enum MemState { CMD, WBEAT, WGAP, RLAT, RBEAT, RGAP };

int main(int argc, char **argv) {
    Verilated::commandArgs(argc, argv);
    std::string op;
    long long latency = 8, cpb = 1, abort_after = -1;
    unsigned long long max_cycles = 10000000ULL;
    std::vector<uint64_t> words;
    std::vector<InBeat> rx; size_t rx_i = 0;
    std::unordered_map<uint64_t, uint64_t> mem;
    std::map<uint64_t, uint64_t> written;
    while (std::cin >> op) {
        if (op == "P") { std::cin >> latency >> cpb >> abort_after >> max_cycles; }
        else if (op == "I") { std::string h; std::cin >> h; words.push_back(hex(h)); }
        else if (op == "M") { uint64_t a; std::string h; std::cin >> a >> h; mem[a] = hex(h); }
        else if (op == "R") {       // an incoming payload as hex bytes: 32-bit little-endian beats
            std::string h; std::cin >> h;
            size_t nbytes = h.size() / 2, nbeats = nbytes ? (nbytes + 3) / 4 : 1;
            for (size_t k = 0; k < nbeats; k++) {
                uint64_t beat = 0;
                for (size_t j = 0; j < 4 && 4 * k + j < nbytes; j++)
                    beat |= (uint64_t)std::stoul(h.substr(2 * (4 * k + j), 2), nullptr, 16) << (8 * j);
                bool last = k + 1 == nbeats;
                rx.push_back({beat, last ? 1ULL : 0ULL, last && nbytes ? (1ULL << ((nbytes - 1) % 4)) : 0ULL});
            }
        }
        else if (op == "GO") break;
        else { std::fprintf(stderr, "unknown line %s\n", op.c_str()); return 2; }
    }
    top = new V@TOP@;
    top->clk = 0; top->rst = 1; top->eval();
    top->clk = 1; top->eval(); top->clk = 0; top->rst = 0; top->eval();

    std::vector<std::pair<uint64_t, uint64_t>> notifies;
    std::vector<Task> tasks;
    std::vector<Beat> beats;
    bool in_packet = false; uint64_t gaps = 0;
    std::vector<std::vector<uint64_t>> commands;
    uint64_t reads = 0, writes = 0;
    // memory state (mirrors hhe_gen.sim.memory.MemoryModel.process)
    MemState ms = CMD; uint64_t m_addr = 0, m_count = 0, m_i = 0; long long m_wait = 0;
    // feeder state (mirrors hhe_gen.sim.engine.run_engine's feeder)
    size_t idx = 0; unsigned long long cycles = 0; int phase = 0;   // 0 feed, 1 wait for abort, 2 drain
    bool done = false;
    top->i_instr__valid = words.empty() ? 0 : 1;
    if (!words.empty()) top->i_instr__payload = words[0];
    if (words.empty()) phase = abort_after >= 0 ? 1 : 2;
    if (phase == 1 && (long long)cycles >= abort_after) { top->abort = 1; phase = 3; }
    top->mem__cmd__ready = 1; top->mem__wdata__ready = 0; top->mem__rdata__valid = 0;
    @UDP_INIT@
    @UDP_OFFER@
    while (!done) {
        top->eval();
        // values sampled at the clock edge
        bool instr_ready = top->i_instr__ready, busy = top->busy;
        bool notify = top->notify; uint64_t code = top->notify_code;
        bool cmd_take = top->mem__cmd__ready && top->mem__cmd__valid;
        uint64_t c_addr = @CMD_ADDR@, c_count = @CMD_COUNT@, c_write = @CMD_WRITE@;
        bool w_take = top->mem__wdata__ready && top->mem__wdata__valid;
        uint64_t w_data[@W@] = {@WDATA@};
        bool r_take = top->mem__rdata__valid && top->mem__rdata__ready;
@LANES@
@UDP_SAMPLE@
        @UDP_TAKE@
        top->clk = 1; top->eval(); top->clk = 0;
        cycles++;
        if ((cycles & 0xffff) == 0) { std::fprintf(stderr, "cycle %llu\n", cycles); std::fflush(stderr); }
        if (notify) notifies.push_back({cycles, code});
        if (rx_take) { rx_i++; }
        @UDP_OFFER@
        // feeder
        if (phase == 0) {
            if (abort_after >= 0 && (long long)cycles == abort_after) {
                top->i_instr__valid = 0; top->abort = 1; phase = 3;
            } else if (instr_ready) {
                if (++idx < words.size()) top->i_instr__payload = words[idx];
                else {
                    top->i_instr__valid = 0;
                    if (abort_after < 0) phase = 2;
                    else if ((long long)cycles >= abort_after) { top->abort = 1; phase = 3; }
                    else phase = 1;
                }
            }
        } else if (phase == 1) {
            if ((long long)cycles >= abort_after) { top->abort = 1; phase = 3; }
        } else if (phase == 3) {
            top->abort = 0; phase = 2;
        } else if (phase == 2) {
            if (!busy) done = true;
        }
        if (cycles > max_cycles) done = true;
        // memory
        switch (ms) {
        case CMD:
            if (cmd_take) {
                commands.push_back({c_addr, c_count, c_write});
                top->mem__cmd__ready = 0; m_addr = c_addr; m_count = c_count; m_i = 0;
                if (c_count == 0) { top->mem__cmd__ready = 1; }
                else if (c_write) { top->mem__wdata__ready = 1; ms = WBEAT; }
                else if (latency > 1) { m_wait = latency - 1; ms = RLAT; }
                else goto offer;
            }
            break;
        case WBEAT:
            if (w_take) {
                for (int j = 0; j < @W@; j++) {
                    uint64_t a = m_addr + m_i * @W@ + j; mem[a] = w_data[j]; written[a] = w_data[j];
                }
                writes++; m_i++;
                top->mem__wdata__ready = 0;
                if (cpb > 1) { m_wait = cpb - 1; ms = WGAP; }
                else goto next_write;
            }
            break;
        case WGAP:
            if (--m_wait == 0) goto next_write;
            break;
        case RLAT:
            if (--m_wait == 0) goto offer;
            break;
        case RBEAT:
            if (r_take) {
                reads++; m_i++; top->mem__rdata__valid = 0;
                if (cpb > 1) { m_wait = cpb - 1; ms = RGAP; }
                else goto next_read;
            }
            break;
        case RGAP:
            if (--m_wait == 0) goto next_read;
            break;
        }
        goto memory_done;
    next_write:
        if (m_i < m_count) { top->mem__wdata__ready = 1; ms = WBEAT; } else { top->mem__cmd__ready = 1; ms = CMD; }
        goto memory_done;
    next_read:
        if (m_i >= m_count) { top->mem__cmd__ready = 1; ms = CMD; goto memory_done; }
    offer:
        {
            uint64_t d[@W@], l = m_i + 1 == m_count;
            for (int j = 0; j < @W@; j++) {
                auto it = mem.find(m_addr + m_i * @W@ + j);
                d[j] = it == mem.end() ? 0 : it->second;
            }
            @SET_RDATA@
            top->mem__rdata__valid = 1; ms = RBEAT;
        }
    memory_done:;
    }
    top->eval();
    std::printf("END %llu %d %llu %llu\n", cycles, (int)top->error, (unsigned long long)top->error_cause,
                (unsigned long long)top->error_position);
    for (auto &n : notifies) std::printf("N %llu %llu\n", (unsigned long long)n.first, (unsigned long long)n.second);
    for (auto &t : tasks) std::printf("K %llu %llu %llu %llu\n", (unsigned long long)t.position,
                                      (unsigned long long)t.unit, (unsigned long long)t.dispatched,
                                      (unsigned long long)t.finished);
    for (auto &c : commands) std::printf("C %llu %llu %llu\n", (unsigned long long)c[0], (unsigned long long)c[1],
                                         (unsigned long long)c[2]);
    for (auto &w : written) std::printf("W %llu %llx\n", (unsigned long long)w.first, (unsigned long long)w.second);
    std::printf("S %llu %llu\n", (unsigned long long)reads, (unsigned long long)writes);
    for (auto &b : beats) std::printf("U %llu %llx %llu %llu %llu %llu %llu %llu %llu\n", (unsigned long long)b.cycle,
                                      (unsigned long long)b.data, (unsigned long long)b.last_be,
                                      (unsigned long long)b.last, (unsigned long long)b.ip, (unsigned long long)b.src,
                                      (unsigned long long)b.dst, (unsigned long long)b.length,
                                      (unsigned long long)b.gaps);
    std::fflush(stdout);
    top->final();
    delete top;
    return 0;
}
"""

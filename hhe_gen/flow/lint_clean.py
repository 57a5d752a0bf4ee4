r"""Make the Verilog of ``hhe-gen generate`` clean under ``verilator --lint-only -Wall``.

Amaranth hands Yosys an RTLIL netlist whose cells follow RTLIL's width rules: operands of any
width, extended or cut to the operation's width implicitly (a 3-bit ``state == 1`` has a 1-bit
constant, ``x == 0`` an empty one; a 30-bit prime subtracted from a 32-bit sum stays 30 bits).
Yosys's ``write_verilog`` prints such cells as Verilog expressions that rely on Verilog's context
widths, which is correct Verilog but what Verilator's WIDTHEXPAND / WIDTHTRUNC warnings are about.
:func:`fix_rtlil` rewrites the RTLIL text before Yosys sees it, without changing what any cell
computes:

* arithmetic and bitwise cells (``$add $sub $mul $and $or $xor $xnor $neg $not $pos``): both
  operands made exactly ``Y_WIDTH`` bits (zero- or sign-extended as the cell's signedness says, or
  their low bits: the low ``Y_WIDTH`` bits of these results depend on the operands' low bits only);
* comparisons (``$eq $ne $lt $le $gt $ge $eqx $nex``): both operands extended to the wider one;
* shifts and ``$shift`` / ``$shiftx`` (part selects), ``$divfloor`` / ``$modfloor`` / ``$div`` /
  ``$mod``: the shifted value (and a divisor) extended to the result width; when the value is wider
  than the result, the cell computes at the value's width into a new wire and the result is its low
  bits;
* zero-width wires (a 0-bit field, e.g. the prime select of a one-prime core) dropped, and a
  cell's connection to one made the empty sigspec: Yosys would write them as ``[-1:0]`` (ASCRANGE);
* a submodule instance named like a wire of its own module or of the module it instantiates (the
  ternary sampler's stage ``pieces`` holds a signal ``pieces``) gets the suffix ``_u``
  (VARHIDDEN);
* a ``switch`` whose cases are Amaranth's ``if / elif`` chain (earlier patterns with one fixed bit,
  ``2'1-`` then ``2'-1``) gets disjoint patterns (``2'-1`` becomes ``2'01``): the first match wins
  either way, and Verilator's CASEOVERLAP is about overlapping items.

The Yosys script of :func:`hhe_gen.flow.verilog.export_verilog` is Amaranth's own with
``proc -noopt``: ``proc`` ends with ``opt_expr``, which turns ``x == 0`` back into ``$logic_not``,
written ``! x`` (a 1-bit operator on a vector: WIDTHTRUNC).

Operands that are signals go through a new wire ``$lint$<n>`` of their own width, so that the
extension or the slice is an RTLIL sigspec.

:func:`fix_verilog` finishes Yosys's text: a ``casez`` without ``default`` gets ``default: ;``
(Amaranth's processes assign every signal before the ``casez``, so the missing items do nothing,
which is what the null default says; Verilator's CASEINCOMPLETE), and the whole text is put between
``/* verilator lint_off NAME */`` and ``lint_on`` pragmas for the warning classes that are the
shape of Amaranth's netlist in Yosys's Verilog, not a defect a rewrite could remove:

* ``PROCASSINIT``: a register's Amaranth ``init`` value is its declaration's initialiser
  (``reg x = 1'h0;``) and the register is also assigned in its ``always`` block; dropping the
  initialiser would change the design's power-up state;
* ``UNUSEDSIGNAL``: Amaranth computes intermediate values at full width and Yosys keeps every
  named signal, so bits that nothing reads (the carry of a sum used modulo, a slice's other bits,
  a submodule's unused ``rst``) are declared; synthesis drops them;
* ``DECLFILENAME``: the file ``<top>.v`` also holds the submodules of the hierarchy, which Yosys
  names ``<top>.<path>``;
* ``SYMRSVDWORD``: a port or signal named like a C++ word (the engine's ``abort`` input): the
  names are the cores' interface, and Verilator renames its C++ symbols itself.

Every other warning class stays on: a new one in the generated Verilog is a failing test
(``tests/flow/test_lint.py``).
"""

from __future__ import annotations

import re

__all__ = ["fix_rtlil", "fix_verilog", "LINT_OFF"]

#: The Verilator warning classes :func:`fix_verilog` turns off around the generated Verilog.
LINT_OFF = ("PROCASSINIT", "UNUSEDSIGNAL", "DECLFILENAME", "SYMRSVDWORD")

_TO_Y = {"$add", "$sub", "$mul", "$and", "$or", "$xor", "$xnor"}
_UNARY_TO_Y = {"$neg", "$not", "$pos"}
_COMPARE = {"$eq", "$ne", "$lt", "$le", "$gt", "$ge", "$eqx", "$nex"}
_SHIFT = {"$shl", "$sshl", "$shr", "$sshr", "$shift", "$shiftx"}
_DIVIDE = {"$divfloor", "$modfloor", "$div", "$mod"}
_CONST = re.compile(r"^(\d+)'([01xzm-]*)$")


class _Module:
    """Per-module state of the rewrite: new wires get unique names."""

    def __init__(self):
        self.count = 0

    def wire(self, out: list, indent: str, width: int, sig: str | None = None) -> str:
        self.count += 1
        name = f"$lint${self.count}"
        out.append(f"{indent}wire width {width} {name}")
        if sig is not None:
            out.append(f"{indent}connect {name} {sig}")
        return name


def _const(sig: str):
    m = _CONST.match(sig.strip())
    if sig.strip() == "{  }" or sig.strip() == "{ }":
        return ""
    return m.group(2) if m and len(m.group(2)) == int(m.group(1)) else None


def _resize(mod: _Module, out: list, indent: str, sig: str, width: int, target: int, signed: bool) -> str:
    """The sigspec of ``sig`` (``width`` bits) extended or cut to ``target`` bits."""
    if width == target:
        return sig
    bits = _const(sig)
    if bits is not None:
        if target < width:
            bits = bits[width - target:]
        else:
            fill = bits[0] if (signed and bits) else "0"
            bits = fill * (target - width) + bits
        return f"{target}'{bits}"
    wire = mod.wire(out, indent, width, sig)
    if target < width:
        return f"{wire} [{target - 1}:0]" if target > 1 else f"{wire} [0]"
    if signed:
        msb = f"{wire} [{width - 1}]"
        return "{ " + " ".join([msb] * (target - width)) + f" {wire} }}"
    return f"{{ {target - width}'{'0' * (target - width)} {wire} }}"


def _fix_cell(mod: _Module, kind: str, block: list[str], out: list) -> tuple[list[str], list[str]]:
    """The lines of one cell (``cell`` .. ``end``) rewritten and the connects to put after it; the
    new wires (and their connects) go to ``out``."""
    indent = re.match(r"\s*", block[0]).group(0)
    params, conns = {}, {}
    for i, line in enumerate(block):
        words = line.split(None, 2)
        if len(words) == 3 and words[0] == "parameter":
            params[words[1]] = (i, words[2])
        elif len(words) == 3 and words[0] == "connect":
            conns[words[1]] = (i, words[2])

    def num(name):
        return int(params[name][1]) if name in params else None

    a_w, b_w, y_w = num("\\A_WIDTH"), num("\\B_WIDTH"), num("\\Y_WIDTH")
    signed = num("\\A_SIGNED") == 1 and (b_w is None or num("\\B_SIGNED") == 1)
    if a_w is None or y_w is None or "\\A" not in conns:
        return block, []
    new = list(block)

    def put(port, width, target, port_signed):
        i, sig = conns[port]
        new[i] = f"{indent}  connect {port} {_resize(mod, out, indent, sig, width, target, port_signed)}"
        pi, _ = params[f"{port}_WIDTH"]
        new[pi] = f"{indent}  parameter {port}_WIDTH {target}"

    def widen_y(width):
        i, sig = conns["\\Y"]
        wire = mod.wire(out, indent, width)
        low = f"{wire} [{y_w - 1}:0]" if y_w > 1 else f"{wire} [0]"
        tail.append(f"{indent}connect {sig} {low}")
        new[i] = f"{indent}  connect \\Y {wire}"
        pi, _ = params["\\Y_WIDTH"]
        new[pi] = f"{indent}  parameter \\Y_WIDTH {width}"

    tail: list[str] = []
    if kind in _TO_Y:
        if b_w is None or "\\B" not in conns:
            return block, []
        if a_w != y_w:
            put("\\A", a_w, y_w, signed)
        if b_w != y_w:
            put("\\B", b_w, y_w, signed)
    elif kind in _UNARY_TO_Y:
        if a_w != y_w:
            put("\\A", a_w, y_w, signed)
    elif kind in _COMPARE:
        if b_w is None or "\\B" not in conns:
            return block, []
        w = max(a_w, b_w, 1)
        if a_w != w:
            put("\\A", a_w, w, signed)
        if b_w != w:
            put("\\B", b_w, w, signed)
    elif kind in _SHIFT:
        a_signed = num("\\A_SIGNED") == 1
        if a_w < y_w:
            put("\\A", a_w, y_w, a_signed)
        elif a_w > y_w:
            widen_y(a_w)
    elif kind in _DIVIDE:
        if b_w is None or "\\B" not in conns:
            return block, []
        w = max(a_w, b_w, y_w)
        if a_w != w:
            put("\\A", a_w, w, signed)
        if b_w != w:
            put("\\B", b_w, w, signed)
        if y_w != w:
            widen_y(w)
    else:
        return block, []
    return new, tail


def _disjoint(patterns: list[str], earlier: list[str]) -> list[str] | None:
    """``patterns`` (RTLIL constants of one case) made disjoint from the ``earlier`` ones where
    each of those has one fixed bit; None when that is not possible (left as they are)."""
    result = []
    for p in patterns:
        m = _CONST.match(p)
        if not m:
            return None
        bits = list(m.group(2))
        dead = False
        for q in earlier:
            mq = _CONST.match(q)
            if not mq or len(mq.group(2)) != len(bits):
                return None
            fixed = [(k, c) for k, c in enumerate(mq.group(2)) if c != "-"]
            if len(fixed) != 1 or fixed[0][1] not in "01":
                if all(c == "-" for c in mq.group(2)):
                    return None
                continue          # several fixed bits: overlap only if they agree, leave it
            k, c = fixed[0]
            if bits[k] == "-":
                bits[k] = "1" if c == "0" else "0"
            elif bits[k] == c:
                dead = True
        if not dead:
            result.append(f"{m.group(1)}'{''.join(bits)}")
    return result or None


def _fix_processes(lines: list[str]) -> list[str]:
    out = []
    stack: list[tuple[int, list[str]]] = []      # (indent of the switch, earlier patterns)
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        stripped = line.strip()
        if stripped.startswith("switch "):
            stack.append((indent, []))
        elif stripped == "end" and stack and indent == stack[-1][0]:
            stack.pop()
        elif stripped.startswith("case") and stack and indent == stack[-1][0] + 2:
            patterns = [p.strip() for p in stripped[4:].split(",") if p.strip()]
            earlier = stack[-1][1]
            if patterns and earlier and any("-" in p for p in earlier):
                fixed = _disjoint(patterns, earlier)
                if fixed is not None and fixed != patterns:
                    line = " " * indent + "case " + " , ".join(fixed)
            earlier.extend(patterns)
        out.append(line)
    return out


def fix_rtlil(text: str) -> str:
    """Amaranth's RTLIL ``text`` with the rewrites of the module docstring (same behaviour)."""
    lines = text.split("\n")
    out: list[str] = []
    mod, zero, wires = _Module(), set(), set()
    of_module = _module_wires(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        words = line.split()
        if words[:1] == ["module"]:
            mod, zero, wires = _Module(), set(), of_module.get(words[-1], set())
        if words[:3] == ["wire", "width", "0"]:
            zero.add(words[-1])
            # with the attributes written just before it
            while out and out[-1].strip().startswith("attribute ") and _indent(out[-1]) == _indent(line):
                out.pop()
            i += 1
            continue
        if words[:1] in (["connect"], ["assign"]) and len(words) >= 2 and words[1] in zero:
            i += 1            # a zero-width wire driven (module connect, process assign)
            continue
        if words[:1] == ["cell"] and len(words) == 3:
            j = i + 1
            while not (lines[j].strip() == "end" and _indent(lines[j]) == _indent(line)):
                j += 1
            block = [_no_zero(b, zero) for b in lines[i:j + 1]]
            if words[1].startswith("$"):
                pre: list[str] = []
                new, tail = _fix_cell(mod, words[1], block, pre)
                attrs = []            # the cell's attributes stay just before it
                while out and out[-1].strip().startswith("attribute ") and _indent(out[-1]) == _indent(line):
                    attrs.insert(0, out.pop())
                out.extend(pre + attrs + new + tail)
            else:
                # an instance named like a wire of its module or of the module it instantiates:
                # Verilator's VARHIDDEN (Verilog has one name space per module)
                name = words[2]
                while name in wires or name in of_module.get(words[1], ()):
                    name += "_u"
                out.append(line.replace(words[2], name) if name != words[2] else line)
                out.extend(block[1:])
            i = j + 1
            continue
        out.append(line)
        i += 1
    return "\n".join(_fix_processes(out))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _module_wires(lines: list[str]) -> dict[str, set[str]]:
    """The wires declared in each module of the RTLIL text."""
    names: dict[str, set[str]] = {}
    current: set[str] = set()
    for line in lines:
        words = line.split()
        if words[:1] == ["module"]:
            current = names.setdefault(words[-1], set())
        elif words[:1] == ["wire"]:
            current.add(words[-1])
    return names


def _no_zero(line: str, zero: set) -> str:
    """A cell's ``connect PORT SIG`` with a zero-width wire as SIG: the empty sigspec."""
    words = line.split()
    if len(words) == 3 and words[0] == "connect" and words[2] in zero:
        return line[:len(line) - len(words[2])] + "{  }"
    return line


_CASE = re.compile(r"^(\s*)case[zx]? \(")


def fix_verilog(text: str) -> str:
    """Yosys's Verilog ``text`` with ``default: ;`` in every ``casez`` that has none, between the
    ``lint_off`` / ``lint_on`` pragmas of :data:`LINT_OFF` (module docstring)."""
    lines = text.split("\n")
    out: list[str] = []
    stack: list[tuple[str, bool]] = []           # (indent of the case, has a default)
    for line in lines:
        m = _CASE.match(line)
        if m:
            stack.append((m.group(1), False))
        elif stack and line.strip().startswith("default") and line.startswith(stack[-1][0] + "  ") and \
                not line.startswith(stack[-1][0] + "   "):
            stack[-1] = (stack[-1][0], True)
        elif stack and line.strip() == "endcase" and line.startswith(stack[-1][0]) and \
                len(line) - len(line.lstrip()) == len(stack[-1][0]):
            indent, has_default = stack.pop()
            if not has_default:
                out.append(f"{indent}  default: ;")
        out.append(line)
    head = []
    if out and out[0].startswith("/* Generated by"):     # Yosys's header line stays the first line
        head.append(out.pop(0))
    head += [f"/* verilator lint_off {name} */" for name in LINT_OFF]
    while out and out[-1] == "":
        out.pop()
    return "\n".join(head + out + [f"/* verilator lint_on {name} */" for name in LINT_OFF]) + "\n"

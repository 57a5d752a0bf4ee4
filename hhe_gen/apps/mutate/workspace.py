"""A temporary copy of the source tree laid out as an importable ``hhe_gen`` package, in which
one mutant at a time is applied and undone."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .mutants import COPIED_FILES, PACKAGE_FOLDERS


class MutationError(RuntimeError):
    """A mutation run cannot do its work (the workspace does not shadow the installed package, the
    tests cannot run); the message is one line naming the cause."""


class Workspace:
    """A copy of the repository in a temporary directory, importable as ``hhe_gen`` with the copy's
    ``cores/`` as ``hhe_gen.cores`` (see the module docstring).  Use as a context manager.

    ``command`` (a class attribute) is how pytest is started; the workspace's options and test files
    follow it."""

    command: tuple = (sys.executable, "-m", "pytest")

    def __init__(self, root, keep: bool = False, parent=None):
        self.root = Path(root).resolve()
        self.keep = keep
        self.dir = Path(tempfile.mkdtemp(prefix="hhe-mutate-", dir=parent))
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.egg-info")
        shutil.copytree(self.root / "hhe_gen", self.dir / "hhe_gen", ignore=ignore, symlinks=True)
        for name in PACKAGE_FOLDERS:
            if (self.root / name).is_dir():
                shutil.copytree(self.root / name, self.dir / "hhe_gen" / name, ignore=ignore, symlinks=True)
                os.symlink(Path("hhe_gen") / name, self.dir / name)
        shutil.copytree(self.root / "tests", self.dir / "tests", ignore=ignore, symlinks=True)
        for name in COPIED_FILES:
            if (self.root / name).is_file():
                shutil.copy2(self.root / name, self.dir / name)
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join([str(self.dir)] + [p for p in
                                                 os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"       # a same-size mutant must never meet a stale .pyc
        self.check_imports()

    def path(self, rel: str) -> Path:
        """The copy of repository file ``rel`` (``cores/...`` lives in ``hhe_gen/cores/...``)."""
        first, _, rest = rel.partition("/")
        return self.dir / "hhe_gen" / first / rest if first in PACKAGE_FOLDERS else self.dir / rel

    def check_imports(self):
        """``hhe_gen`` and ``hhe_gen.cores`` must import from the copy, not from the working tree."""
        code = ("import hhe_gen, hhe_gen.cores, hhe_gen.cores.arith as a; "
                "print(hhe_gen.__file__); print(hhe_gen.cores.__file__); print(a.__file__)")
        out = subprocess.run([sys.executable, "-c", code], cwd=self.dir, env=self.env, capture_output=True,
                             text=True, timeout=120)
        files = out.stdout.split()
        if out.returncode != 0 or len(files) != 3 or not all(
                Path(f).resolve().is_relative_to(self.dir.resolve()) for f in files):
            why = " ".join((out.stdout.strip() + " " + _last_line(out.stderr)).split())
            raise MutationError(f"the mutation workspace {self.dir} does not shadow the installed hhe_gen: "
                                 f"{why[-500:]}")

    def pytest(self, tests, *, deselect=(), timeout: float | None = None, first_failure: bool = True,
               collect_only: bool = False):
        """Run pytest (:attr:`command`) on ``tests`` (paths relative to the workspace); returns
        (returncode or None on timeout, seconds, output)."""
        cmd = [*self.command, "-q", "-p", "no:cacheprovider", "-rfE", "--no-header"]
        if first_failure:
            cmd.append("-x")
        if collect_only:
            cmd.append("--collect-only")
        for node in deselect:
            cmd += ["--deselect", node]
        cmd += list(tests)
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=self.dir, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
            return proc.returncode, time.monotonic() - t0, out
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)         # pytest and anything it started
            except ProcessLookupError:
                pass
            out, _ = proc.communicate()
            return None, time.monotonic() - t0, out

    def close(self):
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""

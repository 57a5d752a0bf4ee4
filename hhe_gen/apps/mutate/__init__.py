"""Mutation testing of the hardware generators in ``cores/`` (``hhe-gen mutate``).

A *mutant* is one small edit of one generator source file, of the kind that moves a modular
boundary:

- ``cmp``: a comparison operator swapped for its boundary neighbour (``<`` <-> ``<=``,
  ``>`` <-> ``>=``, ``==`` <-> ``!=``); comparisons with a string / None / bool constant
  (configuration dispatch, not a bound) are left alone;
- ``const``: an integer constant +1 and -1, only where it looks like a bound: an operand of a
  comparison, an additive offset (``w + 1``, ``q - 1``) or a bit / slice index (``d[-1]``,
  ``v[:k + 2]``);
- ``arith``: ``+`` <-> ``-`` in a modular step (both operands non-constant, and inside a ``Mux``,
  inside a datapath ``lambda``, or with a modulus-like name such as ``q`` as an operand).

Code that only validates parameters (an ``if`` whose body raises, ``assert`` / ``raise``
statements, functions named ``check_*`` / ``_check*`` / ``validat*``) is skipped unless
``checks=True``: a mutant there changes an error message, not the hardware.  f-strings (signal
names, messages) and the arguments of the estimated-delay helpers (``add_delay(w + 1)``,
``Segment(...)``: they place registers, nothing else) are skipped too.

Running a mutant: the repository's source tree (``hhe_gen/``, ``cores/``, ``formal/``, ``soc/``,
``boards/``, ``tests/``, ``setup.py``, ``pyproject.toml``) is copied ONCE into a temporary
directory laid out as an importable package (``<tmp>/hhe_gen/cores`` is the copy of ``cores/``,
``<tmp>/cores`` a symbolic link to it, likewise ``formal``, ``soc``, ``boards``); pytest runs
there with the copy first on the import path, so ``hhe_gen.cores`` is the copy (checked once per
copy) and the working tree is never touched.  For each mutant the copy's file is rewritten,
``python -m pytest -x -q -p no:cacheprovider`` runs the test files of the core's family
(``tests/cores/<family>/test_*.py``: ``test_boundaries.py`` first, then the files that name the
mutated module or its classes, then the rest) and the file is restored.  Status: ``killed`` (a
test failed or errored: pytest exit 1 naming it; or a test file that collects unmutated does not
collect with the mutant, e.g. the mutant does not import), ``timeout`` (the per-mutant time limit
passed: counted as killed) or ``survived`` (pytest exit 0 with tests passed).  Any other outcome
(pytest cannot start, exits 3 / 4 / 5, dies from a signal, fails without naming a test) is no
verdict: the run stops with :class:`MutationError` (one line naming the cause) and gives no results.

Before the mutants, every family's selection runs once unmutated (the *baseline*): files that do
not collect are left out (``dropped_files``), tests that already fail are deselected for the
mutants (listed in the result as ``baseline_failures``), and the default time limit is derived
from the baseline's time.  A baseline that does not run, or passes no test, is a
:class:`MutationError`.

Cost: a killed mutant takes a few seconds (``-x`` stops at the first failure), a surviving one
the whole family selection (measured on one core: ckks ~20 s, rubato / sampler / arith ~45 s,
keccak ~60 s, fft ~70 s, ntt ~125 s).  Every operator on every family (about 2000 mutants) is
therefore a run of many hours (``--jobs``, ``--sample``); the comparisons alone (``--ops cmp``,
about 330 mutants) about two hours.

The results file (``--json``) is added to by each run: a mutant run again replaces its record,
every other earlier one stays (:mod:`hhe_gen.apps.mutate.report`); a file that is no such results
file is refused before the run (exit status 2) and left as it is.

Python API::

    muts = enumerate_tree(root, ["arith"], operators=("cmp",))
    results, baselines = run_mutants(root, muts[:3])      # MutantResult list, unmutated runs
    write_results(path, to_json(results, baselines, operators=["cmp"]))   # added to the file
"""

from .mutants import (FAMILIES, OPERATORS, STATUSES, Mutant, core_files, enumerate_file, enumerate_source,
                      enumerate_tree, find_root, sample)
from .report import RUN_KEY, merge, mutants_table, read_results, results_table, summarize, to_json, write_results
from .runner import FamilyBaseline, MutantResult, run_mutants, select_tests
from .workspace import MutationError, Workspace

__all__ = ["FAMILIES", "OPERATORS", "STATUSES", "Mutant", "MutantResult", "FamilyBaseline", "Workspace", "MutationError",
           "enumerate_source", "enumerate_file", "enumerate_tree", "find_root", "core_files",
           "select_tests", "sample", "run_mutants", "summarize", "results_table", "mutants_table",
           "to_json", "RUN_KEY", "read_results", "merge", "write_results"]

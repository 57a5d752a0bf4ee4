"""Design-space sweeps on Dask (``hhe-gen sweep``): many independent synthesis / place-and-route
jobs, one per point of a spec's parameter grid, run on a LocalCluster or an existing Dask cluster.

Modules, in the order a sweep uses them:

* :mod:`.kinds` - the cores a sweep can measure, their parameters and cycle figures;
* :mod:`.spec` - reading and checking a spec file and expanding it into points;
* :mod:`.jobs` - one point on a worker: the synthesis in a child process with a hard time-out;
* :mod:`.runner` - the Dask client or LocalCluster, submissions, retries, progress, collection;
* :mod:`.records` - a record per point and ``DIR/sweep.json``, rewritten whole after each result;
* :mod:`.best` - with place and route, each design's best result: ``DIR/best.json`` and its reports
  in ``DIR/best/<design>/`` (the timing-closure flow);
* :mod:`.summary` - the tables at the end;
* :mod:`.plots` - the Pareto plots and the Fmax-by-seed plot.

The user documentation is docs/sweep.md.
"""

from .kinds import KINDS
from .spec import SweepSpec, check_scheduler_address, load_spec, parse_spec

__all__ = ["KINDS", "SweepSpec", "load_spec", "parse_spec", "check_scheduler_address"]

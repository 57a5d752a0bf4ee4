"""The register scheduler and the Pipe helper of cores/arith/pipeline.py."""

import itertools

import pytest

from hhe_gen.cores.arith.pipeline import DELAY, Segment, schedule
from hhe_gen.params import ParameterError


def _stage_delays(segments, counts):
    """Combinational delay of every stage (independent of the scheduler's own arithmetic)."""
    out, cur = [], DELAY["io"]
    if counts[0]:
        out.append(cur)
        cur = 0.0
    for seg, c in zip(segments, counts[1:]):
        cur += seg.delay
        if c:
            out.append(cur)
            cur = 0.0
    return out + [cur + DELAY["io"]]


def _brute_best(segments, latency):
    n = len(segments)
    best = None
    for cuts in itertools.combinations(range(n + 1), latency):
        counts = [1 if i in cuts else 0 for i in range(n + 1)]
        if any(s.required and not counts[i + 1] for i, s in enumerate(segments)):
            continue
        m = max(_stage_delays(segments, counts))
        best = m if best is None else min(best, m)
    return best


SEGS = [Segment("a", 2.0), Segment("t", 4.5, True), Segment("x", 1.5), Segment("y", 3.0),
        Segment("z", 0.5), Segment("u", 4.5, True), Segment("v", 2.5)]


@pytest.mark.parametrize("latency", range(2, 12))
def test_schedule_counts_required_and_optimal(latency):
    counts = schedule(SEGS, latency)
    assert sum(counts) == latency and len(counts) == len(SEGS) + 1
    assert all(counts[i + 1] >= 1 for i, s in enumerate(SEGS) if s.required)
    if latency <= len(SEGS) + 1:
        assert max(counts) == 1
        assert max(_stage_delays(SEGS, counts)) == pytest.approx(_brute_best(SEGS, latency))
    else:
        assert counts[:-1] == [1] * len(SEGS) and counts[-1] == latency - len(SEGS)


def test_schedule_below_minimum():
    with pytest.raises(ParameterError, match=">= 2"):
        schedule(SEGS, 1)
    assert schedule([Segment("a", 1.0)], 0) == [0, 0]

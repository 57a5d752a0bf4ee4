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


# -- segments with head / tail costs (DSP primitives, carry chunks) ------------------------------------
def _cost(seg, first, last):
    """A segment's delay as the first / last one of a stage (the rule in Segment's docstring)."""
    head = seg.delay if seg.head is None else seg.head
    tail = seg.delay if seg.tail is None else seg.tail
    if first and last:
        return seg.alone if seg.alone is not None else head + tail - seg.delay
    return head if first else tail if last else seg.delay


def _stage_delays_ht(segments, counts):
    """Stage delays with head/tail costs, written out independently of pipeline.py."""
    n = len(segments)
    regs = [i for i in range(n + 1) if counts[i]]
    bounds = [-1] + regs + [n + 1]        # -1: the unit's input, n + 1: its output
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        segs = list(range(max(lo, 0), min(hi, n)))
        d = (DELAY["io"] if lo < 0 else 0.0) + (DELAY["io"] if hi > n else 0.0)
        for k, i in enumerate(segs):
            d += _cost(segments[i], k == 0 and lo >= 0, k == len(segs) - 1 and hi <= n)
        out.append(d)
    return out


HT = [Segment("pre", 2.0), Segment("pp", 5.2, True, head=3.3, tail=3.5, alone=0.5), Segment("c1", 1.7),
      Segment("a1", 3.0, tail=3.4), Segment("a2", 1.0, head=2.8, tail=1.4, alone=3.2),
      Segment("a3", 1.4, head=3.2), Segment("pp2", 5.2, True, head=3.3, tail=3.5, alone=0.5), Segment("r", 1.7)]


def _brute_best_ht(segments, latency):
    n = len(segments)
    best = None
    for cuts in itertools.combinations(range(n + 1), latency):
        counts = [1 if i in cuts else 0 for i in range(n + 1)]
        if any(s.required and not counts[i + 1] for i, s in enumerate(segments)):
            continue
        m = max(_stage_delays_ht(segments, counts))
        best = m if best is None else min(best, m)
    return best


@pytest.mark.parametrize("latency", range(2, 10))
def test_schedule_with_head_and_tail_costs(latency):
    from hhe_gen.cores.arith.pipeline import stage_delays
    counts = schedule(HT, latency)
    assert sum(counts) == latency
    assert all(counts[i + 1] >= 1 for i, s in enumerate(HT) if s.required)
    if latency <= len(HT) + 1:
        got = max(_stage_delays_ht(HT, counts))
        assert got == pytest.approx(_brute_best_ht(HT, latency))
        assert stage_delays(HT, counts) == pytest.approx(_stage_delays_ht(HT, counts))


def test_chunk_and_dsp_costs():
    from hhe_gen.cores.arith.pipeline import add_delay, chunk_costs, dsp_costs
    # a carry chain cut in chunks costs the whole chain when no register splits it
    n1, n2 = 20, 30
    whole = chunk_costs(n1, True, False)["delay"] + chunk_costs(n2, False, True)["delay"]
    assert whole == pytest.approx(add_delay(n1 + n2))
    # a register between two chunks: the second restarts the chain, the first leaves it
    split1 = chunk_costs(n1, True, False)["tail"]
    split2 = chunk_costs(n2, False, True)["head"]
    assert split1 == pytest.approx(add_delay(n1)) and split2 == pytest.approx(add_delay(n2))
    inferred, prim = dsp_costs(False), dsp_costs(True)
    assert inferred["head"] == inferred["tail"] == inferred["delay"] == DELAY["tile"]
    assert prim["head"] < prim["delay"] and prim["tail"] < prim["delay"] and prim["alone"] < prim["head"]

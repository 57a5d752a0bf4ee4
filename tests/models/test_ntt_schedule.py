"""The banked NTT schedule: complete, conflict-free, within the butterfly bound, and computing the
model's NTT/INTT exactly when executed on banked memory."""

import random

import pytest

from hhe_gen.models.ntt import intt, ntt
from hhe_gen.cores.ntt.schedule import ntt_schedule, run_schedule, stage_starts
from hhe_gen.params import ParameterError, ntt_primes


def _cases(max_log):
    for n_log in range(3, max_log + 1):
        for p_log in range(0, n_log):
            yield 1 << n_log, 1 << p_log


@pytest.mark.parametrize("inverse", [False, True])
def test_every_pair_once_distinct_banks_and_bound(inverse):
    for n, p in _cases(10):
        s = ntt_schedule(n, p, inverse)
        assert s.cycles == n // 2 * (n.bit_length() - 1) // p
        assert sorted({s.bank(i) * (n // (2 * p)) + s.addr(i) for i in range(n)}) == list(range(n))
        for stage_no, stage in enumerate(s.stages):
            k = stage_no if inverse else s.n_log - 1 - stage_no
            pairs = [(sl.lo, sl.hi) for cyc in stage for sl in cyc]
            want = [(j, j + (1 << k)) for j in range(n) if not j >> k & 1]
            assert sorted(pairs) == want                          # every butterfly exactly once
            for cyc in stage:
                banks = [s.bank(i) for sl in cyc for i in (sl.lo, sl.hi)]
                assert len(set(banks)) == 2 * p                   # one access per bank per cycle
                tws = sorted({sl.tw for sl in cyc})
                assert len({t % p for t in tws}) == len(tws)      # twiddle ROM banked P ways
                assert [sl.lane for sl in cyc] == list(range(p))
                for sl in cyc:                                    # the model's twiddle index
                    assert sl.tw == (n >> (k + 1)) + (sl.lo >> (k + 1))


@pytest.mark.parametrize("n,p", [(8, 1), (8, 4), (64, 2), (256, 8), (1024, 32), (1024, 512), (4096, 16)])
def test_banked_execution_equals_the_model(n, p):
    q = ntt_primes(n, 54, 1)[0]
    a = [random.Random(n * p).randrange(q) for _ in range(n)]
    fwd = run_schedule(ntt_schedule(n, p), a, q)
    assert fwd == ntt(a, q)
    assert run_schedule(ntt_schedule(n, p, inverse=True), fwd, q) == intt(fwd, q) == a


def test_bad_sizes():
    with pytest.raises(ParameterError, match="'N' = 12"):
        ntt_schedule(12, 2)
    with pytest.raises(ParameterError, match="'lanes' = 8.*N/2 = 4"):
        ntt_schedule(8, 8)


@pytest.mark.parametrize("inverse", [False, True])
def test_stage_overlap_meets_the_cycle_target(inverse):
    """Issue 4's target: cycles <= 1.03 x bound + 64 for N >= 2^10, P <= 32 (pipeline depth 16)."""
    for n_log in (10, 11, 12, 13):
        for p in (1, 2, 4, 8, 16, 32):
            n = 1 << n_log
            s = ntt_schedule(n, p, inverse)
            bound = n // 2 * n_log // p
            starts, total = stage_starts(s, 16)
            assert starts[0] == 0 and all(b >= a + len(st) for a, b, st in zip(starts, starts[1:], s.stages))
            assert bound + 15 <= total <= 1.03 * bound + 64, (n, p, total, bound)


@pytest.mark.parametrize("write_first", [True, False])
def test_stage_starts_respects_dependencies(write_first):
    """Brute force on small cases: no read happens before the write it depends on (write-first:
    a read may share the write's cycle; otherwise it comes at least a cycle later), and each
    stage starts as early as that allows (one cycle earlier breaks it)."""
    gap = 0 if write_first else 1
    for n, p, inverse in ((16, 4, False), (64, 8, True), (32, 2, False)):
        s = ntt_schedule(n, p, inverse)
        starts, total = stage_starts(s, 5, write_first)
        written = {}
        for i, (st, start) in enumerate(zip(s.stages, starts)):
            slack = []
            for c, cyc in enumerate(st):
                for sl in cyc:
                    for word in (sl.lo, sl.hi):
                        if word in written:
                            assert written[word] + gap <= start + c
                            slack.append(start + c - written[word] - gap)
            prev_end = starts[i - 1] + len(s.stages[i - 1]) if i else 0
            assert start == prev_end or min(slack) == 0     # earliest: bound by a dependency or the previous stage
            for c, cyc in enumerate(st):
                for sl in cyc:
                    written[sl.lo] = written[sl.hi] = start + c + 5
        assert total == max(written.values()) and starts[0] == 0

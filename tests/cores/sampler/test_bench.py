"""The sampler benchmark cases are registered and measure what the cores document."""

from hhe_gen.apps.bench import cases
from hhe_gen.apps.bench.sampler import sampler_throughput


def test_cases_registered():
    names = {c.name for c in cases(["sampler"])}
    assert {"gaussian-w8-parallel", "rubato-rc-128s-w8", "seeded-gaussian-w8-k4",
            "gaussian-w8-parallel-synth"} <= names
    assert not any(c.quick for c in cases(["sampler"]) if c.name.endswith("-synth"))


def test_throughput_case_measures_the_documented_rate():
    res = sampler_throughput(kind="gaussian", w=8, comparators=5, n=60)
    assert res["samples_per_cycle"] == 0.25 and res["scan_steps"] == 4
    assert 8 <= res["bytes_per_sample"] <= 8 + 32 / 60      # 8 bytes each, plus up to 4 prefetched beats
    assert res["latency_cycles"] == 7                       # gatherer 1 + 4 steps + count 1 + output 1

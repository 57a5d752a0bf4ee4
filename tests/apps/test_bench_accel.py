"""``hhe-gen bench accel``'s parts that need no Verilator run: the block-RAM plan case against the
block arithmetic (a 54-bit buffer of N = 2^13 words fills 24 DP16KD: 442,368 bits / 18,432 per
block), and the cycles plot drawn from results (none without N = 2^13 results)."""

from hhe_gen.apps import bench
from hhe_gen.apps.bench.accel import memory_plan, plot_cycles


def test_memory_plan_case():
    got = memory_plan("dna-hhe", 2)
    assert got["buffers"] == 5 and got["buffers_dp16kd"] == 5 * 24
    assert got["codec_unit_dp16kd"] == 38             # one FFT: 4 banks 1024 x 76 (5 each), 2 ROMs 2048 x 76 (9)
    parts = sum(v for k, v in got.items() if k.endswith("_dp16kd"))
    assert got["dp16kd"] == parts and got["left"] == 208 - parts


def _result(program, lanes, ooo, cycles, level=None):
    return {"group": "accel", "kind": "program_cycles", "name": f"{program}-{lanes}-{ooo}",
            "params": {"params": "dna-hhe", "lanes": lanes, "program": program, "ooo": ooo, "level": level},
            "metrics": {"cycles": cycles}, "wall_s": 1.0}


def test_cycles_plot(tmp_path):
    results = [_result("encrypt_pk", 2, True, 300_000), _result("encrypt_pk", 2, False, 350_000),
               _result("decrypt", 2, True, 90_000, level=0)]
    written = bench.summarise(results, tmp_path)
    assert [p.split("/")[-1] for p in written] == ["accel-cycles.png"]
    assert (tmp_path / "accel-cycles.png").stat().st_size > 10_000
    toy = [dict(results[0], params={"params": "toy", "program": "encrypt_pk"})]
    assert plot_cycles(toy, tmp_path / "none") == [] and not (tmp_path / "none").exists()


def test_bench_table_shows_a_metric_with_parts_one_line_per_part():
    from rich.console import Console

    from hhe_gen.apps.report import bench_tables
    results = [{"group": "accel", "kind": "area_by_unit", "name": "by-unit", "params": {"lanes": 2}, "wall_s": 1.0,
                "metrics": {"buffers": {"LUT4": 12556, "DP16KD": 120}, "manager": {"LUT4": 4205, "DP16KD": 0}}}]
    (table,) = bench_tables(results)
    console = Console(width=200, record=True)
    console.print(table)
    text = console.export_text()
    assert "LUT4 12,556" in text and "DP16KD 120" in text and "LUT4 4,205" in text
    row = next(line for line in text.splitlines() if "LUT4 12,556" in line)
    assert "DP16KD" not in row, "each part on a line of its own"


def test_server_case_counts_the_key_traffic():
    """server-toy: bit-exact, the key loaded once (2 digits x 2 parts x 3 rows of 64 words), and
    HMult no faster than its memory traffic (7 rows of 64 words per prime, one word per cycle)."""
    from hhe_gen.apps.bench.server import server_cycles
    r = server_cycles("toy-p30", verilator=False)
    assert r["bit_exact"]
    assert r["relinearize"]["key_words"] == 2 * 2 * 3 * 64
    assert r["hmult"]["key_words"] == 0 and r["rescale"]["key_words"] == 0
    assert r["hmult"]["cycles"] >= 7 * 2 * 64
    assert r["relinearize"]["butterfly_cycles"] == 2 * r["relinearize"]["cycles"]
    # the tensor product's arithmetic: 4 pointwise tasks per prime (mul, mul, mac, mul), each
    # N/P rows + the butterfly's latency + 3 cycles (docs of the pointwise unit)
    # the pointwise unit's butterfly as the engine builds it: Barrett over the three primes, ECP5
    from hhe_gen.cores.arith import Butterfly
    from hhe_gen.cores.unused import mark_unused
    from hhe_gen.params.primes import ntt_primes
    butterfly = Butterfly(zq=dict(kind="barrett", moduli=list(ntt_primes(64, 30, 3))), target="ecp5")
    mark_unused(butterfly)
    latency = butterfly.latency
    assert r["hmult"]["arithmetic_cycles"] == r["hmult"]["unit_busy"]["pointwise"] == 4 * 2 * (32 + latency + 3)
    assert r["hmult"]["unit_busy"]["memory"] >= 7 * 2 * 64

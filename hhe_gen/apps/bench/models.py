"""Benchmarks of the golden models themselves (the software baseline later cores are compared with)."""

import random
import time

from hhe_gen.apps.bench import bench_case


def _timed(fn, repeat: int):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@bench_case("models", "ntt-n1024", n=1 << 10, bits=54)
@bench_case("models", "ntt-n8192", n=1 << 13, bits=54)
@bench_case("models", "ntt-n65536", n=1 << 16, bits=36, quick=False)
def ntt_model(n, bits):
    from hhe_gen.models.ntt import intt, ntt
    from hhe_gen.params import ntt_primes
    q = ntt_primes(n, bits, 1)[0]
    a = [random.Random(1).randrange(q) for _ in range(n)]
    ntt(a, q)   # build the tables outside the timing
    t_f = _timed(lambda: ntt(a, q), 3)
    t_i = _timed(lambda: intt(a, q), 3)
    log_n = n.bit_length() - 1
    return {"ms_ntt": round(t_f * 1e3, 2), "ms_intt": round(t_i * 1e3, 2),
            "butterflies": n // 2 * log_n, "ns_per_butterfly": round(t_f / (n // 2 * log_n) * 1e9, 1)}


@bench_case("models", "ckks-dna-hhe", preset="dna-hhe")
@bench_case("models", "ckks-toy", preset="toy")
def ckks_model(preset):
    from hhe_gen.models import ckks
    from hhe_gen.params import preset as get_preset
    p = get_preset(preset)
    slots = [complex(random.Random(k).uniform(-1, 1), random.Random(-k).uniform(-1, 1)) for k in range(p.slots)]
    t = {}
    t0 = time.perf_counter(); keys = ckks.keygen(p, 1); t["ms_keygen"] = time.perf_counter() - t0
    t0 = time.perf_counter(); pt = ckks.encode(p, slots); t["ms_encode"] = time.perf_counter() - t0
    t0 = time.perf_counter(); ct = ckks.encrypt_pk(p, keys, pt, 2); t["ms_encrypt_pk"] = time.perf_counter() - t0
    t0 = time.perf_counter(); ckks.encrypt_sk(p, keys.sk, pt, 3); t["ms_encrypt_sk"] = time.perf_counter() - t0
    t0 = time.perf_counter(); dec = ckks.decrypt(p, keys.sk, ct); t["ms_decrypt"] = time.perf_counter() - t0
    t0 = time.perf_counter(); out = ckks.decode(p, dec); t["ms_decode"] = time.perf_counter() - t0
    res = {k: round(v * 1e3, 1) for k, v in t.items()}
    res["precision_bits_mean"] = round(ckks.precision_bits(slots, out)["mean_bits"], 2)
    return res


@bench_case("models", "shake256-64KiB", nbytes=1 << 16)
def shake_model(nbytes):
    from hhe_gen.models.keccak import Shake
    x = Shake(256)
    x.absorb(b"\x00" * 32)
    t = _timed(lambda: x.squeeze(nbytes), 1)
    return {"MiB_per_s": round(nbytes / t / 2**20, 3), "permutations": -(-nbytes // 136)}


@bench_case("models", "rubato-128S", rubato_set="Par-128S")
@bench_case("models", "rubato-128M", rubato_set="Par-128M")
@bench_case("models", "rubato-128L", rubato_set="Par-128L")
def rubato_model(rubato_set):
    from hhe_gen.models import rubato
    from hhe_gen.params.rubato import rubato_params
    p = rubato_params(rubato_set)
    key = [(i * 7919 + 1) % p.q for i in range(p.n)]
    t = _timed(lambda: rubato.keystream(p, key, 1, 2, noise_seed=3), 3)
    return {"ms_per_block": round(t * 1e3, 3), "words_per_block": p.l}

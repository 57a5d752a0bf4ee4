"""Hardware-encoded plaintexts decode in Lattigo v6 (issue #5, item 2), and Lattigo-decrypted
plaintexts decode in the hardware decoder (its CRT over every prime).

The encoder core equals hhe_gen.models.ckks_fixed.encode_fixed bit for bit (tests/cores/ckks), so
at N = 2^13 the model stands for it; at N = 2^6 and 2^10 the simulated core itself encodes.  Path:
encoder -> model encryption (secret and public key) -> Lattigo decrypt + decode (the Go peer).
The precision Lattigo sees must be the model's A precision (hardware encode -> float64 decode,
hhe_gen.apps.bench.fft) to within the encryption noise (< 0.05 bit at Delta = 2^50), and Lattigo's
decode of the unencrypted plaintext must give the model's float64 decode exactly.  Measured
precisions are printed (run with -s)."""

import cmath
import math
import random

import pytest

from hhe_gen.cores.arith.butterfly import pack_complex, unpack_complex
from hhe_gen.cores.ckks import Decoder, Encoder
from hhe_gen.models import ckks
from hhe_gen.models import ckks_fixed as cf
from hhe_gen.models import fft as fftm
from hhe_gen.params import CKKSParams, RingParams, ntt_primes, preset
from hhe_gen.sim.stream import run_stream

pytestmark = pytest.mark.interop

FMT = fftm.FixedPointFormat(29, 26)


def _slots(n, seed):
    rng = random.Random(seed)
    return [cmath.rect(math.sqrt(rng.random()), rng.uniform(-math.pi, math.pi)) for _ in range(n)]


def _from_json(d):
    return [complex(a, b) for a, b in zip(d["re"], d["im"])]


def _bits(z, got):
    return ckks.precision_bits(z, got)["mean_bits"]


def _check_lattigo_sees_model_precision(peer, p, z, rows, tag):
    """rows: the hardware encoder's plaintext of z (every prime).  Returns Lattigo's mean bits."""
    pt = ckks.Plaintext(rows, p.scale)
    model_a = ckks.decode(p, pt)                                     # path A of the model
    lattigo_plain = _from_json(peer.decode(p.interchange(), rows))
    assert max(abs(a - b) for a, b in zip(model_a, lattigo_plain)) < 2.0 ** -40
    a_bits = _bits(z, model_a)
    keys = ckks.keygen(p, 5)
    out = {}
    for mode, ct in (("sk", ckks.encrypt_sk(p, keys.sk, pt, 6)), ("pk", ckks.encrypt_pk(p, keys, pt, 7))):
        got = peer.decrypt(p.interchange(), keys.sk, ct.to_json())
        assert got["coeffs"] == ckks.decrypt(p, keys.sk, ct).rows
        out[mode] = _bits(z, _from_json(got))
        assert abs(out[mode] - _bits(z, ckks.decode(p, ckks.decrypt(p, keys.sk, ct)))) < 1e-6
        # the hardware decoder's model (CRT over every prime) on Lattigo's decrypted plaintext
        out[mode + "_hw_dec"] = _bits(z, cf.decode_slots(got["coeffs"], list(p.moduli), FMT, p.log_scale))
        out[mode + "_rows"] = got["coeffs"]
    print(f"\n{tag}: model A {a_bits:.2f} mean bits; Lattigo decode of the plaintext "
          f"{_bits(z, lattigo_plain):.2f}; Lattigo decrypt+decode sk {out['sk']:.2f}, pk {out['pk']:.2f}; "
          f"Lattigo decrypt -> hardware decoder (CRT, {len(p.moduli)} primes) sk {out['sk_hw_dec']:.2f}, "
          f"pk {out['pk_hw_dec']:.2f}")
    assert abs(out["sk"] - a_bits) < 0.05 and abs(out["pk"] - a_bits) < 0.05
    return a_bits, out


def test_dna_hhe_model_encoded_plaintexts_decode_in_lattigo(lattigo_peer):
    """N = 2^13, 3 x 54-bit primes, Delta = 2^50, 29/26: the DNA-HHE point (A ~ 20.7 bits)."""
    p = preset("dna-hhe")
    z = _slots(p.slots, 1)
    rows = cf.encode_slots(z, FMT, p.log_scale, p.moduli)
    a_bits, out = _check_lattigo_sees_model_precision(lattigo_peer, p, z, rows, "dna-hhe model encoder")
    assert a_bits >= 20
    e_bits = _bits(z, cf.decode_slots(rows, list(p.moduli), FMT, p.log_scale))
    assert abs(out["sk_hw_dec"] - e_bits) < 0.05 and abs(out["pk_hw_dec"] - e_bits) < 0.05


@pytest.mark.parametrize("log_n,bits,count,lanes", [(6, 54, 2, 2), (10, 40, 3, 8)])
def test_core_encoded_plaintexts_decode_in_lattigo(lattigo_peer, log_n, bits, count, lanes):
    """The simulated encoder core encodes; Lattigo decrypts and decodes; the simulated decoder core
    decodes Lattigo's decrypted plaintext through its CRT over every prime (N = 2^6: 2 x 54-bit
    primes, Delta = 2^50; N = 2^10: 3 x 40-bit primes, Delta = 2^36)."""
    log_scale = 50 if bits > 50 else 36
    p = CKKSParams(RingParams(1 << log_n, tuple(ntt_primes(1 << log_n, bits, count))), log_scale)
    name = f"N = 2^{log_n}, {count} x {bits}-bit, Delta = 2^{log_scale}"
    z = _slots(p.slots, 2)
    fixed = [fftm.quantize_complex(x, FMT) for x in z]
    enc = Encoder(p.n, lanes, FMT, p.log_scale, p.moduli)
    r = run_stream(enc, [[pack_complex(fixed[b * lanes + l], FMT) for l in range(lanes)]
                         for b in range(p.slots // lanes)], len(p.moduli) * p.n // lanes)
    flat = [x for b in r.outputs for x in b]
    rows = [flat[i * p.n:(i + 1) * p.n] for i in range(len(p.moduli))]
    assert rows == enc.model(fixed)
    _, out = _check_lattigo_sees_model_precision(lattigo_peer, p, z, rows, f"{name} encoder core (P = {lanes})")
    dec = Decoder(p.n, lanes, FMT, p.log_scale, list(p.moduli))
    r = run_stream(dec, dec.pack(out["sk_rows"]), p.slots // lanes)
    got = [unpack_complex(x, FMT) for b in r.outputs for x in b]
    assert got == dec.model(out["sk_rows"])
    assert abs(_bits(z, [fftm.dequantize_complex(x, FMT) for x in got]) - out["sk_hw_dec"]) == 0

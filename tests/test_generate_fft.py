"""generate_fft (hhe_gen/apps/generate_fft.py): Verilog + manifest + vectors of the special FFT / IFFT and
the CKKS encoder / decoder at small N, checked independently:

* every manifest port is a Verilog port of that width;
* the vectors drive a freshly built core (Amaranth simulation) and it produces their output beats
  (so the port encoding is the one the hardware uses), in the manifest's cycle count;
* the vectors' values are what a float reference computes (the float special FFT / float CKKS
  decode), within the fixed-point error - independent of the golden models that made them.
"""

import cmath
import json
import math
import re

import pytest

from hhe_gen.cores.ckks import Decoder, Encoder
from hhe_gen.cores.fft import SpecialFft, SpecialIfft
from hhe_gen.apps.generate_fft import generate_fft
from hhe_gen.models import fft as fftm
from hhe_gen.params import ParameterError, is_prime
from hhe_gen.sim.stream import run_stream


def _check_ports(path, name, manifest):
    text = (path / f"{name}.v").read_text()
    assert re.search(rf"^module {name}\(", text, re.M)
    for port in manifest["ports"]:
        decl = re.search(rf"^\s*(input|output)\s+(\[(\d+):0\]\s+)?{re.escape(port['name'])};", text, re.M)
        assert decl, port["name"]
        assert decl.group(1) == {"in": "input", "out": "output"}[port["dir"]]
        assert (int(decl.group(3)) + 1 if decl.group(3) else 1) == port["width"]


def _lanes(beat, lanes, bits):
    return [(beat >> (i * bits)) & ((1 << bits) - 1) for i in range(lanes)]


def _port(manifest, name):
    (row,) = [p for p in manifest["ports"] if p["name"] == name]
    return row


def _float_special_fft(z):
    """The special FFT by its definition: slot j = sum_k z_k zeta_j^k, zeta_j = exp(i pi 5^j / 2n)
    (n values; the CKKS decoding map restricted to n coefficients)."""
    n = len(z)
    zeta = [cmath.exp(1j * math.pi * pow(5, j, 4 * n) / (2 * n)) for j in range(n)]
    return [sum(w * r ** k for k, w in enumerate(z)) for r in zeta]


def _run(core, manifest, vec, in_name, lanes_in, lanes_out):
    ip, op = _port(manifest, in_name), _port(manifest, "o_stream__payload")
    for case in vec["cases"]:
        inputs = [_lanes(b, lanes_in, ip["element_width"]) for b in case["input_beats"]]
        r = run_stream(core, inputs, len(case["output_beats"]))
        assert [_lanes(b, lanes_out, op["element_width"]) for b in case["output_beats"]] == \
            [list(b) for b in r.outputs]
        return r


FMT = fftm.FixedPointFormat(29, 26)


@pytest.mark.parametrize("kind", ["ifft", "fft"])
def test_generate_fft_and_ifft(tmp_path, kind):
    res = generate_fft(kind, 32, 2, tmp_path, vectors=3, seed=3)
    name = f"{kind}_n32_p2"
    man = json.loads((tmp_path / f"{name}.json").read_text())
    vec = json.loads((tmp_path / f"{name}_vectors.json").read_text())
    assert man["cycles"] == res["manifest"]["cycles"]
    _check_ports(tmp_path, name, man)
    assert _port(man, "i_stream__payload")["element_width"] == 58 and man["format"]["width"] == 29
    core = (SpecialIfft if kind == "ifft" else SpecialFft)(16, 2, FMT)
    r = _run(core, man, vec, "i_stream__payload", 2, 2)
    assert r.out_cycles[-1] - r.in_cycles[0] + 1 == man["cycles"]["cycles"]
    assert r.out_cycles[0] - r.in_cycles[-1] == man["cycles"]["first_output_after_last_input"]
    assert man["memories"]["data_banks"] == 4 and sum(man["memories"]["twiddle_roms"]["words"]) > 0
    # values: the FFT against its float definition; the IFFT as the FFT's inverse
    one, checked = 1 << 26, 0
    for case in vec["cases"]:
        x = [complex(a, b) / one for a, b in case["input"]]
        y = [complex(a, b) / one for a, b in case["output"]]
        if max(abs(v) for v in x) > 1.5:
            continue                           # a corner (saturated) input wraps: skip the float check
        if kind == "fft":
            want = _float_special_fft(x)
        else:
            want = x
            y = _float_special_fft(y)
        assert max(abs(a - b) for a, b in zip(y, want)) < 2 ** -18
        checked += 1
    assert checked


def test_generate_encoder(tmp_path):
    res = generate_fft("encoder", 16, 2, tmp_path, log_scale=40, bits=50, count=2, vectors=1, seed=4)
    name = "encoder_n16_p2"
    man = json.loads((tmp_path / f"{name}.json").read_text())
    assert man["cycles"] == res["manifest"]["cycles"]
    vec = json.loads((tmp_path / f"{name}_vectors.json").read_text())
    _check_ports(tmp_path, name, man)
    qs = [p["q"] for p in man["primes"]]
    assert len(qs) == 2 and all(is_prime(q) and q % 32 == 1 for q in qs)
    r = _run(Encoder(16, 2, FMT, 40, qs), man, vec, "i_stream__payload", 2, 2)
    assert r.out_cycles[-1] - r.in_cycles[0] + 1 == man["cycles"]["cycles"]
    assert r.out_cycles[0] - r.in_cycles[-1] == man["cycles"]["first_output_after_last_input"]
    # the rows decode (float CKKS decoding map, by definition) back to the slots
    for case in vec["cases"]:
        rows, slots = case["output"], [complex(a, b) / (1 << 26) for a, b in case["input"]]
        if max(abs(s) for s in slots) > 1.5:
            continue
        m = [x - qs[0] if x > qs[0] // 2 else x for x in rows[0]]
        assert all((x - y) % qs[1] == 0 for x, y in zip(m, rows[1]))          # one integer, two primes
        n = 8
        zeta = [cmath.exp(1j * math.pi * pow(5, j, 32) / 16) for j in range(n)]
        got = [sum(c * r ** k for k, c in enumerate(m)) / 2 ** 40 for r in zeta]
        assert max(abs(a - b) for a, b in zip(got, slots)) < 2 ** -18


def test_generate_decoder_crt(tmp_path):
    res = generate_fft("decoder", 32, 2, tmp_path, log_scale=40, bits=30, count=3, vectors=1, seed=5)
    name = "decoder_n32_p2"
    man = json.loads((tmp_path / f"{name}.json").read_text())
    assert man["cycles"] == res["manifest"]["cycles"]
    vec = json.loads((tmp_path / f"{name}_vectors.json").read_text())
    _check_ports(tmp_path, name, man)
    qs = [p["q"] for p in man["primes"]]
    assert _port(man, "i_stream__payload")["element_width"] == 3 * 30 and man["crt"]["latency"] == 6
    r = _run(Decoder(32, 2, FMT, 40, qs), man, vec, "i_stream__payload", 2, 2)
    assert r.out_cycles[-1] - r.in_cycles[0] + 1 == man["cycles"]["cycles"]
    assert r.out_cycles[0] - r.in_cycles[-1] == man["cycles"]["first_output_after_last_input"]
    for case in vec["cases"]:
        rows = case["input"]
        big_q = qs[0] * qs[1] * qs[2]
        m = []
        for col in zip(*rows):
            x = sum(r * (big_q // q) * pow(big_q // q, -1, q) for r, q in zip(col, qs)) % big_q
            m.append(x - big_q if x > big_q // 2 else x)
        n = 16
        zeta = [cmath.exp(1j * math.pi * pow(5, j, 64) / 32) for j in range(n)]
        want = [sum(c * r ** k for k, c in enumerate(m)) / 2 ** 40 for r in zeta]
        got = [complex(a, b) / (1 << 26) for a, b in case["output"]]
        assert max(abs(a - b) for a, b in zip(got, want)) < 2 ** -18


@pytest.mark.parametrize("kind,kw,name", [
    ("dft", {}, "kind"), ("fft", dict(rounding="down"), "rounding"), ("fft", dict(frac_bits=28), "frac_bits"),
    ("encoder", dict(bits=30), "log_scale"), ("decoder", dict(log_scale=20), "bits"),
    ("decoder", dict(log_scale=20, bits=30, count=9), "count"), ("fft", dict(vectors=-1), "vectors"),
    ("fft", dict(name="1x"), "name"), ("encoder", dict(log_scale=40, primes=[97]), "log_scale"),
])
def test_generate_fft_bad_parameters(tmp_path, kind, kw, name):
    with pytest.raises(ParameterError, match=name):
        generate_fft(kind, 16, 2, tmp_path, **kw)
    with pytest.raises(ParameterError, match="'n'"):
        generate_fft("fft", 24, 2, tmp_path)


def _hex(path):
    return [int(x, 16) for x in path.read_text().split()]


@pytest.mark.parametrize("kind, kw", [("fft", {}), ("decoder", dict(log_scale=40, bits=30, count=2))])
def test_generate_fft_testbench_files(tmp_path, kind, kw):
    """The testbench replays every case's input beats and expects its output beats (the hex files,
    in the payload ports' widths), with a time-out above the manifest's cycles; reproducible
    output: no src attribute, and a second generation writes the same bytes."""
    generate_fft(kind, 16, 2, tmp_path / "a", vectors=2, seed=6, **kw)
    generate_fft(kind, 16, 2, tmp_path / "b", vectors=2, seed=6, **kw)
    name = f"{kind}_n16_p2"
    a, b = tmp_path / "a", tmp_path / "b"
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    for p in a.iterdir():
        assert p.read_bytes() == (b / p.name).read_bytes(), p.name
    man = json.loads((a / f"{name}.json").read_text())
    vec = json.loads((a / f"{name}_vectors.json").read_text())
    tb = man["testbench"]
    assert "src =" not in (a / f"{name}.v").read_text() and man["verilog"]["src_attributes"] is False
    assert _hex(a / tb["hex"]["inputs"]["i_stream"]) == [w for c in vec["cases"] for w in c["input_beats"]]
    assert _hex(a / tb["hex"]["outputs"]["o_stream"]) == [w for c in vec["cases"] for w in c["output_beats"]]
    width = _port(man, "o_stream__payload")["width"]
    assert all(len(x) == (width + 3) // 4 for x in (a / tb["hex"]["outputs"]["o_stream"]).read_text().split())
    assert tb["full_rate_cycles"] == 2 * man["cycles"]["cycles"] and tb["max_cycles"] > tb["full_rate_cycles"]
    assert (a / f"{name}_tb.v").exists() and (a / tb["readme"]).exists()


def test_generate_fft_no_vectors_no_testbench(tmp_path):
    res = generate_fft("ifft", 16, 2, tmp_path, vectors=0)
    assert "testbench" not in res["paths"] and not list(tmp_path.glob("*_tb*"))

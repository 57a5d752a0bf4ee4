"""The hhe-gen command line, driven in-process."""

import json
import shutil

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.host.kat import shipped_kat_files
from hhe_gen.params import is_prime


def _kat_files():
    """The Rubato KAT files shipped as package data (hhe_gen/data/kat/rubato)."""
    files = shipped_kat_files()
    assert len(files) == 6, f"expected the 6 shipped Rubato KAT files, found {files}"
    return files


def test_params_list_and_one_preset(capsys):
    assert main(["params"]) == 0
    assert "dna-hhe" in capsys.readouterr().out
    assert main(["params", "dna-hhe", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["LogN"] == 13 and len(d["Q"]) == 3 and d["LogDefaultScale"] == 50


def test_primes_command(capsys):
    assert main(["primes", "--n", "8192", "--bits", "54", "--count", "3", "--form", "dna-hhe", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 3
    for r in rows:
        assert r["q"] == 2**54 - 2 * 8192 * r["bnd"] + 1 and is_prime(r["q"])
        assert r["mu"] == 2**108 // r["q"]
    assert main(["primes", "--n", "1024", "--bits", "30", "--count", "2", "--json"]) == 0
    assert all(q["q"] % 2048 == 1 for q in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("argv,match", [
    (["primes", "--n", "1000", "--bits", "54"], "'N' = 1000"),
    (["primes", "--n", "1024", "--bits", "80"], "'bits' = 80"),
    (["params", "no-such-preset"], "'preset' = 'no-such-preset'.*dna-hhe"),
    (["ckks", "keygen", "--params", "toy", "--seed", "xyz"], "'--seed' = 'xyz'"),
    (["ckks", "keygen", "--params", "toy", "--on", "rtl"], "'--on' = 'rtl'"),
])
def test_bad_parameters_exit_2_with_a_named_error(capsys, argv, match):
    import re
    assert main(argv) == 2
    assert re.search(match, capsys.readouterr().err)


def test_kat_rubato_all_shipped_files(capsys):
    assert main(["kat", "rubato", *map(str, _kat_files())]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "72 vectors checked, 0 mismatches"


def test_kat_rubato_reports_a_corrupted_file(tmp_path, capsys):
    src = _kat_files()[0]
    data = json.loads(src.read_text())
    data["vectors"][2]["keystream_before_noise"][0] ^= 1
    bad = tmp_path / src.name
    bad.write_text(json.dumps(data))
    assert main(["kat", "rubato", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "mismatches" in out and not out.strip().endswith(" 0 mismatches")


def test_kat_rubato_on_rtl(tmp_path, capsys):
    """The simulated Rubato core on one public file (SHAKE256 vectors; the AES ones are skipped),
    then a corrupted keystream that the RTL path must report."""
    src = next(f for f in _kat_files() if f.name == "rubato_80s.json")
    assert main(["kat", "rubato", "--on", "rtl", str(src)]) == 0
    out = capsys.readouterr().out
    assert out.strip().splitlines() == [
        "skipped 2 AES-XOF vectors of rubato_80s.json: the RTL core has SHAKE256 only",
        "10 vectors checked, 0 mismatches"]
    data = json.loads(src.read_text())
    data["vectors"] = data["vectors"][:2]
    data["vectors"][1]["final_keystream"][3] ^= 4
    bad = tmp_path / src.name
    bad.write_text(json.dumps(data))
    assert main(["kat", "rubato", "--on", "rtl", str(bad)]) == 1
    assert "final_keystream" in capsys.readouterr().out
    assert main(["kat", "rubato", "--on", "rtl", "--multiplier", "butterfly", str(bad)]) == 1
    assert "final_keystream" in capsys.readouterr().out
    data["vectors"] = data["vectors"][:1]
    bad.write_text(json.dumps(data))
    assert main(["kat", "rubato", "--on", "rtl", "--multiplier", "butterfly", str(bad)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1 vectors checked, 0 mismatches"
    assert main(["kat", "rubato", "--trace", str(src)]) == 2
    assert main(["kat", "rubato", "--multiplier", "butterfly", str(src)]) == 2


def test_ckks_files_round_trip(tmp_path, capsys):
    keys, slots, ct, out = (tmp_path / n for n in ("keys.json", "slots.json", "ct.json", "out.json"))
    assert main(["ckks", "keygen", "--params", "toy", "--seed", "7", "-o", str(keys)]) == 0
    k = json.loads(keys.read_text())
    assert k["N"] == 64 and len(k["pk0"]) == 2 and set(k["sk"]) <= {-1, 0, 1}
    slots.write_text(json.dumps({"re": [0.5, -0.25, 1.0], "im": [0.0, 0.5, -1.0]}))
    for mode in ("pk", "sk"):
        assert main(["ckks", "encrypt", "--params", "toy", "--keys", str(keys), "--in", str(slots),
                     "--mode", mode, "--seed", "8", "-o", str(ct)]) == 0
        c = json.loads(ct.read_text())
        assert c["form"] == "coeff" and len(c["c0"]) == 2 and c["scale"] == 2**20
        assert main(["ckks", "decrypt", "--params", "toy", "--keys", str(keys), "--in", str(ct), "-o", str(out)]) == 0
        d = json.loads(out.read_text())
        for got, want in zip(zip(d["re"], d["im"]), [(0.5, 0.0), (-0.25, 0.5), (1.0, -1.0)]):
            assert abs(got[0] - want[0]) < 2**-8 and abs(got[1] - want[1]) < 2**-8
    # the same seed gives the same ciphertext
    first = ct.read_text()
    main(["ckks", "encrypt", "--params", "toy", "--keys", str(keys), "--in", str(slots), "--mode", "sk",
          "--seed", "8", "-o", str(ct)])
    assert ct.read_text() == first


def test_ckks_rejects_keys_for_other_parameters(tmp_path, capsys):
    keys = tmp_path / "keys.json"
    main(["ckks", "keygen", "--params", "toy", "--seed", "1", "-o", str(keys)])
    ct = tmp_path / "ct.json"
    ct.write_text(json.dumps({"scale": 2**50, "c0": [[0]], "c1": [[0]]}))
    assert main(["ckks", "decrypt", "--params", "dna-hhe", "--keys", str(keys), "--in", str(ct)]) == 2
    assert "'keys'" in capsys.readouterr().err


def test_ckks_rlk_and_mul(tmp_path, capsys):
    f = {n: str(tmp_path / f"{n}.json") for n in ("keys", "slots", "a", "b", "rlk", "ab", "out")}
    assert main(["ckks", "keygen", "--params", "toy", "--seed", "1", "-o", f["keys"]]) == 0
    (tmp_path / "slots.json").write_text(json.dumps({"re": [0.5, -0.25], "im": [0.25, 0.0]}))
    for name, seed in (("a", "2"), ("b", "3")):
        assert main(["ckks", "encrypt", "--keys", f["keys"], "--in", f["slots"], "--seed", seed, "-o", f[name]]) == 0
    assert main(["ckks", "rlk", "--keys", f["keys"], "--seed", "4", "-o", f["rlk"]]) == 0
    assert len(json.loads((tmp_path / "rlk.json").read_text())["digits"]) == 2
    assert main(["ckks", "mul", "--params", "toy", "--in", f["a"], "--times", f["b"], "--rlk", f["rlk"],
                 "-o", f["ab"]]) == 0
    ab = json.loads((tmp_path / "ab.json").read_text())
    assert len(ab["c0"]) == 1 and ab["scale"] == 2**40 / 1073739649          # one level down: Delta^2 / q_1
    assert main(["ckks", "decrypt", "--keys", f["keys"], "--in", f["ab"], "-o", f["out"]]) == 0
    d = json.loads((tmp_path / "out.json").read_text())
    for got, want in zip(zip(d["re"], d["im"]), [(0.5 ** 2 - 0.25 ** 2, 2 * 0.5 * 0.25), (0.0625, 0.0)]):
        assert abs(got[0] - want[0]) < 0.05 and abs(got[1] - want[1]) < 0.05   # toy: the product's scale is 2^10
    capsys.readouterr()
    assert main(["ckks", "mul", "--params", "toy", "--in", f["a"], "--times", f["b"]]) == 2
    assert "'--rlk'" in capsys.readouterr().err
    assert main(["ckks", "mul", "--params", "toy", "--in", f["ab"], "--times", f["b"], "--rlk", f["rlk"]]) == 2
    assert "'--times'" in capsys.readouterr().err


def test_bench_models_writes_json_and_table(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "models", "--quick", "--json", str(out)]) == 0
    results = json.loads(out.read_text())["results"]
    names = {r["name"] for r in results}
    assert {"ntt-n8192", "ckks-dna-hhe", "shake256-64KiB", "rubato-128S"} <= names
    assert all(r["metrics"] and "error" not in r for r in results)
    ckks_row = next(r for r in results if r["name"] == "ckks-dna-hhe")
    assert ckks_row["metrics"]["precision_bits_mean"] >= 30
    assert "hhe-gen bench" in capsys.readouterr().out


def test_demo_runs_the_accelerator(tmp_path, monkeypatch, capsys):
    """The demo at the toy set (README command 1 runs it at DNA-HHE's): the dual-mode accelerator
    generated, encrypt_pk (its packets) and decrypt on its RTL equal to the ISA model, the precision
    of the toy set's Delta = 2^20 (Lattigo and the model at this set: tests/interop), Rubato blocks
    on the same RTL equal to the model and decrypted."""
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-lattigo", "--preset", "toy"]) == 0
    report = json.loads((tmp_path / "out" / "demo.json").read_text())
    assert report["accelerator"]["equal_to_model"] and report["accelerator"]["cycles"]["encrypt_pk"] > 100
    assert (tmp_path / "out" / "accel" / "programs" / "encrypt_pk.hex").exists()
    assert report["rtl_decrypt"]["mean_bits"] >= 10 and report["model_decrypt"]["mean_bits"] >= 10
    assert report["rubato"]["max_abs_error"] < 2**-10
    rub = report["rubato_accelerator"]
    assert rub["equal_to_model"] and rub["max_abs_error"] < 2**-10 and rub["blocks"] == 64 // 12
    assert "demo OK" in capsys.readouterr().out


@pytest.mark.toolchain
def test_doctor_finds_every_tool(capsys):
    """On a machine set up by README's commands (and in CI) every external tool is found."""
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    for tool in ("yosys", "sby", "yices", "nextpnr-ecp5", "ecppack", "verilator", "lattigo"):
        assert tool in out


@pytest.mark.parametrize("argv,stem", [
    (["generate", "ntt", "--n", "16", "--lanes", "2", "--bits", "20", "--arch", "sdf", "--vectors", "1"],
     "ntt_sdf_n16_p2_fwd"),
    (["generate", "ifft", "--n", "32", "--lanes", "2", "--vectors", "1"], "ifft_n32_p2"),
    (["generate", "decoder", "--n", "32", "--lanes", "2", "--log-scale", "20", "--bits", "30", "--count", "2",
      "--vectors", "1"], "decoder_n32_p2"),
])
def test_generate_command_writes_core_files(tmp_path, capsys, argv, stem):
    assert main([*argv, "-o", str(tmp_path)]) == 0
    assert "written to" in capsys.readouterr().out
    manifest = json.loads((tmp_path / f"{stem}.json").read_text())
    params = manifest["parameters"]
    assert params.get("n", params.get("N")) == int(argv[3]) and params["lanes"] == 2
    assert f"module {stem}" in (tmp_path / f"{stem}.v").read_text()
    assert json.loads((tmp_path / f"{stem}_vectors.json").read_text())


def test_generate_command_bad_arch(tmp_path, capsys):
    assert main(["generate", "ntt", "--n", "16", "--lanes", "2", "--bits", "20", "--arch", "radix4",
                 "-o", str(tmp_path)]) == 2
    assert "arch" in capsys.readouterr().err

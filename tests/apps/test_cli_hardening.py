"""A new user's mistakes, round two (issue 36): each ends with one bounded line on stderr naming what
is wrong, exit status 2, no traceback, and no input file overwritten."""

import json
import shutil
from pathlib import Path

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.engine import asm
from hhe_gen.params import ParameterError
from hhe_gen.params.errors import MAX_SHOWN, shown

#: the longest error line any of these tests accepts
MAX_LINE = 400


def _error_line(capsys, argv, *needles) -> str:
    """main(argv) exits 2 with exactly one bounded stderr line "hhe-gen: error: ..." holding needles."""
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[:2000]
    line = lines[0]
    assert line.startswith("hhe-gen: error: ") and "Traceback" not in err, line[:2000]
    assert len(line) <= MAX_LINE, line[:2000]
    for needle in needles:
        assert needle in line, line
    return line


def _ok(capsys, argv):
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    capsys.readouterr()


@pytest.fixture
def toy_keys(tmp_path, capsys):
    path = tmp_path / "k.json"
    _ok(capsys, ["ckks", "keygen", "--params", "toy", "--seed", "1", "-o", path])
    return path


def _secret_fragments(keys_path) -> list[str]:
    """Pieces of the keys file that must never appear in an error: runs of its secret key."""
    sk = json.loads(keys_path.read_text())["sk"]
    return ['"sk"'] + [", ".join(map(str, sk[i:i + 6])) for i in range(0, len(sk) - 6, 6)]


# -- item 2: an error echoes at most a bounded part of its input -------------------------------------
def test_parameter_error_shows_at_most_a_bounded_value():
    big = "[1, -1, 0, " * 169_091            # 1.86 MB, like the sk line of a DNA-HHE keys file
    message = str(ParameterError("FILE", big, "a program image"))
    assert len(message) < 2 * MAX_SHOWN + 60
    assert message.startswith("parameter 'FILE' = '[1, -1, 0, ") and "...' (1.86 MB) is not allowed" in message
    assert shown("short") == "'short'" and shown(list(range(3))) == "[0, 1, 2]"
    assert len(shown(list(range(10_000)))) <= MAX_SHOWN + 30
    assert ParameterError("x", big, "y").value == big   # the value itself is kept whole


@pytest.mark.parametrize("as_path", [False, True])
def test_a_long_path_is_cut_in_the_middle_so_its_file_name_shows(as_path):
    """However deep the folder (pytest's own tmp paths vary in length), the file name stays."""
    path = "/tmp/" + "deep-folder/" * 12 + "prog.s"
    text = shown(Path(path) if as_path else path)
    assert len(text) <= MAX_SHOWN and text.endswith("/prog.s'") and text.startswith("'/tmp/"), text


@pytest.mark.parametrize("suffix", [".json", ".hex", ".mem", ".bin"])
def test_disasm_of_a_keys_file_echoes_none_of_it(tmp_path, capsys, toy_keys, suffix):
    image = toy_keys if suffix == ".json" else tmp_path / f"keys{suffix}"
    if image != toy_keys:
        shutil.copy(toy_keys, image)
    line = _error_line(capsys, ["accel", "disasm", image], image.name)
    for fragment in _secret_fragments(toy_keys):
        assert fragment not in line, line


def test_a_long_bad_hex_line_is_cut():
    with pytest.raises(asm.AssemblyError) as info:
        asm.words_from_hex("00\n" + "g" * 100_000 + "\n")
    message = str(info.value)
    assert message.startswith("line 2 (100,000 characters): 'ggg") and len(message) < 200, message[:300]


# -- item 1: an output file that is one of the inputs is refused --------------------------------------
@pytest.fixture
def toy_files(tmp_path, capsys, toy_keys):
    """keys, slots, a ciphertext and a relinearisation key of the toy preset, made through the CLI."""
    slots = tmp_path / "slots.json"
    slots.write_text(json.dumps({"re": [0.5, -0.25], "im": [0.0, 0.125]}))
    ct, rlk = tmp_path / "ct.json", tmp_path / "rlk.json"
    _ok(capsys, ["ckks", "encrypt", "--keys", toy_keys, "--in", slots, "--seed", "2", "-o", ct])
    _ok(capsys, ["ckks", "rlk", "--keys", toy_keys, "--seed", "3", "-o", rlk])
    return {"keys": toy_keys, "slots": slots, "ct": ct, "rlk": rlk}


def _contents(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("argv,target,flag", [
    (["ckks", "encrypt", "--keys", "KEYS", "--in", "SLOTS"], "KEYS", "--keys"),
    (["ckks", "encrypt", "--keys", "KEYS", "--in", "SLOTS"], "SLOTS", "--in"),
    (["ckks", "decrypt", "--keys", "KEYS", "--in", "CT"], "CT", "--in"),
    (["ckks", "decrypt", "--keys", "KEYS", "--in", "CT"], "KEYS", "--keys"),
    (["ckks", "rlk", "--keys", "KEYS"], "KEYS", "--keys"),
    (["ckks", "mul", "--params", "toy", "--in", "CT", "--times", "CT", "--rlk", "RLK"], "CT", "--in"),
    (["ckks", "mul", "--params", "toy", "--in", "CT", "--times", "CT", "--rlk", "RLK"], "RLK", "--rlk"),
])
@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_output_over_an_input_is_refused(tmp_path, capsys, toy_files, argv, target, flag, spelling):
    before = _contents(tmp_path)
    files = {name.upper(): path for name, path in toy_files.items()}
    argv = [str(files[a]) if a in files else a for a in argv]
    out = files[target]
    if spelling == "dot":
        out = out.parent / "." / out.name
    elif spelling in ("symlink", "hardlink"):
        link = tmp_path / "sub" / "link.json"
        link.parent.mkdir()
        (link.symlink_to if spelling == "symlink" else link.hardlink_to)(out)
        out = link
    _error_line(capsys, [*argv, "-o", out], "'-o'", f"the input {flag} ", "would replace that input")
    assert _contents(tmp_path) == before


def test_keygen_over_its_params_file_is_refused(tmp_path, capsys):
    params = tmp_path / "p.json"
    params.write_text(json.dumps({"LogN": 6, "Q": [1073741441, 1073739649], "LogDefaultScale": 20}))
    _error_line(capsys, ["ckks", "keygen", "--params", params, "-o", params], "'-o'", "the input --params")
    assert json.loads(params.read_text())["LogN"] == 6


def test_net_receive_over_its_capture_is_refused(tmp_path, capsys):
    capture = tmp_path / "c.pcap"
    capture.write_bytes(b"not really a capture")
    _error_line(capsys, ["net", "receive", "--pcap", capture, "-o", capture], "'-o'", "the input --pcap")
    assert capture.read_bytes() == b"not really a capture"


def test_other_outputs_are_still_written(tmp_path, capsys, toy_files):
    out = tmp_path / "slots-out.json"
    _ok(capsys, ["ckks", "decrypt", "--keys", toy_files["keys"], "--in", toy_files["ct"], "-o", out])
    assert len(json.loads(out.read_text())["re"]) == 32


# -- item 3: net send / receive refuse what would be a traceback ------------------------------------
@pytest.mark.parametrize("component,row,value", [("c0", 0, 2**70), ("c1", 1, 2**64), ("c0", 1, -1)])
def test_net_send_refuses_a_coefficient_that_is_no_wire_word(tmp_path, capsys, toy_files, component, row, value):
    d = json.loads(toy_files["ct"].read_text())
    d[component][row][3] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    _error_line(capsys, ["net", "send", "--in", bad, "--to", "127.0.0.1:9"], f"'{component}[{row}]' = {value}",
                f"0 .. q_{row} - 1", "--params")


def test_net_send_with_params_checks_each_row_against_its_prime(tmp_path, capsys, toy_files):
    from hhe_gen.params import preset
    q1 = preset("toy").moduli[1]
    d = json.loads(toy_files["ct"].read_text())
    d["c1"][1][5] = q1                              # < 2^64, but not a residue mod q_1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    argv = ["net", "send", "--in", bad, "--to", "127.0.0.1:9"]
    _ok(capsys, argv)                               # without --params only the word size is known
    _error_line(capsys, [*argv, "--params", "toy"], "'c1[1]'", f"q_1 - 1 = {q1 - 1}", "bad.json")
    _ok(capsys, ["net", "send", "--in", toy_files["ct"], "--to", "127.0.0.1:9", "--params", "toy"])


@pytest.mark.parametrize("timeout", ["-1", "0", "nan", "inf", "1e12"])
def test_net_receive_refuses_a_timeout_out_of_range(tmp_path, capsys, timeout):
    _error_line(capsys, ["net", "receive", "--port", "0", "--timeout", timeout, "-o", tmp_path / "ct.json"],
                "'--timeout'", "more than 0 and at most 86400")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("option,value,name", [("--message", "-1", "'--message' = -1"),
                                               ("--segment", "0", "'--segment' = 0"),
                                               ("--to", "127.0.0.1:99999", "'--to' = 99999")])
def test_net_send_names_its_options(capsys, toy_files, option, value, name):
    argv = ["net", "send", "--in", toy_files["ct"], "--to", "127.0.0.1:9"]
    if option == "--to":
        argv[-1] = value
    else:
        argv += [option, value]
    _error_line(capsys, argv, name)


# -- item 4: kat rubato: an absent optional section is no mismatch, a wrong format no KAT file --------
def _kat_copy(tmp_path, edit):
    from hhe_gen.host.kat import shipped_kat_files
    source = next(f for f in shipped_kat_files() if f.name == "rubato_80s.json")
    data = json.loads(source.read_text())
    edit(data)
    path = tmp_path / "rubato_80s.json"
    path.write_text(json.dumps(data))
    return path


def test_kat_file_without_the_optional_aes_section_passes(tmp_path, capsys):
    from hhe_gen.host.kat import check_rubato_kat_file
    path = _kat_copy(tmp_path, lambda d: d.pop("alternative_xof_vectors"))
    assert main(["kat", "rubato", str(path)]) == 0
    out = capsys.readouterr().out
    assert "mismatch:" not in out and out.strip().endswith("vectors checked, 0 mismatches"), out
    assert "skipped alternative_xof_vectors of rubato_80s.json: the optional section is absent" in out
    report = check_rubato_kat_file(path)
    assert report.ok and report.mismatches == [] and [s.vector for s in report.skipped] == ["alternative_xof_vectors"]


@pytest.mark.parametrize("fmt", ["rubato-kat/2", None, 1])
def test_kat_file_of_another_format_is_unusable(tmp_path, capsys, fmt):
    from hhe_gen.host.kat import KatFileError, load_rubato_kat_file
    path = _kat_copy(tmp_path, lambda d: d.update(format=fmt) if fmt is not None else d.pop("format"))
    assert main(["kat", "rubato", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and f"'format' is {fmt!r}, not 'rubato-kat/1'" in lines[0] and str(path) in lines[0], lines
    with pytest.raises(KatFileError, match="'format'"):
        load_rubato_kat_file(path)


# -- item 5: ckks mul takes the parameters from its inputs --------------------------------------------
def _slots(path):
    d = json.loads(path.read_text())
    return [complex(a, b) for a, b in zip(d["re"], d["im"])]


def test_mul_of_toy_ciphertexts_needs_no_params(tmp_path, capsys, toy_files):
    out, slots = tmp_path / "prod.json", tmp_path / "prod-slots.json"
    _ok(capsys, ["ckks", "mul", "--in", toy_files["ct"], "--times", toy_files["ct"], "--rlk", toy_files["rlk"],
                 "-o", out])
    _ok(capsys, ["ckks", "decrypt", "--keys", toy_files["keys"], "--in", out, "-o", slots])
    got = _slots(slots)
    want = [complex(0.5, 0.0) ** 2, complex(-0.25, 0.125) ** 2]
    assert all(abs(g - w) < 2**-4 for g, w in zip(got, want)), got[:2]
    with_params = tmp_path / "prod2.json"
    _ok(capsys, ["ckks", "mul", "--params", "toy", "--in", toy_files["ct"], "--times", toy_files["ct"],
                 "--rlk", toy_files["rlk"], "-o", with_params])
    assert with_params.read_text() == out.read_text()
    bare = tmp_path / "bare-rlk.json"                # without N, Q and P: the one preset they fit
    bare.write_text(json.dumps({k: v for k, v in json.loads(toy_files["rlk"].read_text()).items()
                                if k in ("levelQ", "levelP", "digits")}))
    from_presets = tmp_path / "prod3.json"
    _ok(capsys, ["ckks", "mul", "--in", toy_files["ct"], "--times", toy_files["ct"], "--rlk", bare, "-o", from_presets])
    assert from_presets.read_text() == out.read_text()


def test_mul_takes_custom_parameters_from_the_rlk(tmp_path, capsys):
    """Parameters that are no preset's, with the same shape as toy's (N = 64, two 30-bit primes, one P):
    only the rlk's own N, Q and P tell them apart, and a key without them must be given --params."""
    from hhe_gen.params import PRESETS, ntt_primes, preset
    used = {q for name in PRESETS for q in preset(name).moduli + preset(name).special_moduli}
    q0, q1, p0 = [q for q in ntt_primes(64, 30, 12) if q not in used][:3]
    params = tmp_path / "custom.json"
    params.write_text(json.dumps({"LogN": 6, "Q": [q0, q1], "P": [p0], "LogDefaultScale": 20}))
    keys, slots, ct, rlk = (tmp_path / n for n in ("keys.json", "slots.json", "ct.json", "rlk.json"))
    slots.write_text(json.dumps({"re": [0.5]}))
    _ok(capsys, ["ckks", "keygen", "--params", params, "--seed", "4", "-o", keys])
    _ok(capsys, ["ckks", "encrypt", "--keys", keys, "--in", slots, "--seed", "5", "-o", ct])
    _ok(capsys, ["ckks", "rlk", "--params", params, "--keys", keys, "--seed", "6", "-o", rlk])
    d = json.loads(rlk.read_text())
    assert (d["N"], d["Q"], d["P"], d["LogDefaultScale"]) == (64, [q0, q1], [p0], 20)
    prod, back = tmp_path / "prod.json", tmp_path / "back.json"
    argv = ["ckks", "mul", "--in", ct, "--times", ct, "--rlk", rlk, "-o", prod]
    _ok(capsys, argv)
    _ok(capsys, ["ckks", "decrypt", "--keys", keys, "--in", prod, "-o", back])
    assert abs(_slots(back)[0] - 0.25) < 2**-4
    _error_line(capsys, [*argv, "--params", "toy"], "'--rlk'", "--params must match the key")
    _error_line(capsys, ["ckks", "mul", "--in", ct, "--times", ct, "--rlk", keys], "'--rlk'", "this file holds keys")


def test_mul_with_a_key_without_parameters_asks_for_params(tmp_path, capsys):
    """A key without N, Q and P (the Lattigo peer's form) whose N no preset with P has."""
    from hhe_gen.models import ckks, ckks_eval
    from hhe_gen.params import CKKSParams, RingParams, ntt_primes
    q0, q1, p0 = ntt_primes(128, 30, 3)
    p = CKKSParams(RingParams(128, (q0, q1)), 20, (p0,))
    keys = ckks.keygen(p, 1)
    ct, rlk = tmp_path / "ct.json", tmp_path / "rlk.json"
    ct.write_text(json.dumps(ckks.encrypt_slots(p, keys, [0.5], 2, "pk", None, "coeff").to_json()))
    rlk.write_text(json.dumps(ckks_eval.relin_keygen(p, keys.sk, 3).to_json()))
    argv = ["ckks", "mul", "--in", ct, "--times", ct, "--rlk", rlk, "-o", tmp_path / "prod.json"]
    _error_line(capsys, argv, "'--params'", "N = 128", "no N, Q and P in the key", "no preset fits them",
                "give --params")
    assert not (tmp_path / "prod.json").exists()
    params = tmp_path / "p.json"
    params.write_text(json.dumps({"LogN": 7, "Q": [q0, q1], "P": [p0], "LogDefaultScale": 20}))
    _ok(capsys, [*argv, "--params", params])


# -- item 6: python -m hhe_gen, --version, docs that say what is -------------------------------------
ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_python_m_hhe_gen_and_version():
    import subprocess
    import sys
    from importlib.metadata import version
    res = subprocess.run([sys.executable, "-m", "hhe_gen", "--version"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == f"hhe-gen {version('hhe-gen')}", res
    res = subprocess.run([sys.executable, "-m", "hhe_gen", "net", "receive", "--port", "0", "--timeout", "-1",
                          "-o", "x.json"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "'--timeout'" in res.stderr, res
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0


def test_version_without_distribution_metadata(monkeypatch):
    import importlib.metadata

    import hhe_gen
    from hhe_gen.apps import cli

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert cli.version() == hhe_gen.__version__


def test_no_stale_sentences_about_the_rtl():
    stale = ("arrives with the hardware", "refused until the RTL")
    files = [*ROOT.joinpath("hhe_gen").rglob("*.py"), *ROOT.joinpath("docs").glob("*.md"), ROOT / "README.md"]
    found = [f"{f.relative_to(ROOT)}: {s}" for f in files for s in stale if s in f.read_text()]
    assert not found


def test_ckks_on_rtl_points_to_the_accelerator(capsys):
    _error_line(capsys, ["ckks", "keygen", "--params", "toy", "--on", "rtl"], "'--on' = 'rtl'", "hhe-gen accel run")


def test_pyproject_cites_only_files_that_exist():
    import re
    cited = re.findall(r"[\w./-]+\.md", ROOT.joinpath("pyproject.toml").read_text())
    assert cited and all((ROOT / c).is_file() for c in cited), cited


def test_layout_names_every_package():
    text = ROOT.joinpath("docs", "layout.md").read_text()
    packages = [p.name for p in ROOT.joinpath("hhe_gen").iterdir() if (p / "__init__.py").is_file()]
    assert "client" in packages
    assert [p for p in packages if f"`hhe_gen.{p}`" not in text] == []


def test_sweep_docs_give_the_modmul_widths_that_build():
    import re

    from hhe_gen.apps.bench.arith import build
    from hhe_gen.apps.sweep.kinds import KINDS
    line = next(x for x in ROOT.joinpath("docs", "sweep.md").read_text().splitlines() if x.startswith("| `modmul`"))
    lowest = re.findall(r"(\d+) \(([a-z-]+)\)", line.split("`width`")[1].split("up to 64")[0])
    assert {r for _, r in lowest} == {"barrett", "montgomery", "special-barrett", "ntt-montgomery"}
    for width, reducer in lowest:
        for w in (int(width), 64):
            KINDS["modmul"].complete({"reducer": reducer, "width": w})
            build(reducer, w, None, "ecp5")
        with pytest.raises(ParameterError):
            build(reducer, int(width) - 1, None, "ecp5")

"""What a new user's mistakes do to ``hhe-gen`` (issue 14, section 4): every bad input ends with one
line on stderr naming the parameter, exit status 2, no traceback and no partial output file."""

import argparse
import json
import math
import os
import subprocess
import sys

import pytest

from hhe_gen.apps import cli
from hhe_gen.apps.cli import build_parser, main, parse_seed
from hhe_gen.models import ckks
from hhe_gen.params import PRESETS, ParameterError, preset

TOY = preset("toy")


def _fails(capsys, argv, *needles) -> str:
    """main(argv) exits 2 with exactly one stderr line, "hhe-gen: error: parameter ...", holding needles."""
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hhe-gen: error: parameter ") and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def keys(tmp_path, capsys):
    path = tmp_path / "keys.json"
    assert main(["ckks", "keygen", "--params", "toy", "--seed", "7", "-o", str(path)]) == 0
    capsys.readouterr()
    return path


def _json(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _read_slots(path):
    d = json.loads(path.read_text())
    return [complex(a, b) for a, b in zip(d["re"], d["im"])]


# -- 1. non-numeric slots, -o into a missing directory, nothing partial ---------------------------
@pytest.mark.parametrize("slots,needle", [
    ({"re": ["abc"]}, "'re[0]' = 'abc'"),
    ({"re": [1.0, 2.0], "im": [0.5, "x"]}, "'im[1]' = 'x'"),
    ({"re": [True]}, "'re[0]' = True"),
    ({"re": 5}, "'re' = '<int>'"),
    ({"re": [1.0, float("nan")]}, "'re[1]' = nan"),
    ({"re": [float("inf")]}, "'re[0]' = inf"),
])
def test_bad_slot_values_name_the_field_and_write_nothing(tmp_path, capsys, keys, slots, needle):
    src = tmp_path / "slots.json"
    src.write_text(json.dumps(slots))          # json writes NaN / Infinity, which json.loads reads back
    out = tmp_path / "ct.json"
    _fails(capsys, ["ckks", "encrypt", "--keys", keys, "--in", src, "-o", out], needle, "slots.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keys.json", "slots.json"]


@pytest.mark.parametrize("op", ["keygen", "encrypt", "decrypt"])
def test_output_into_a_missing_directory(tmp_path, capsys, keys, op):
    out = tmp_path / "no-such-dir" / "out.json"
    src = _json(tmp_path, "slots.json", {"re": [0.5]})
    if op == "decrypt":
        ct = tmp_path / "ct.json"
        assert main(["ckks", "encrypt", "--keys", str(keys), "--in", str(src), "-o", str(ct)]) == 0
        src = ct
    argv = ["ckks", op, "--params", "toy", "-o", out] if op == "keygen" else \
        ["ckks", op, "--keys", keys, "--in", src, "-o", out]
    _fails(capsys, argv, "'-o'", "no-such-dir does not exist")
    assert not out.parent.exists()


def test_output_is_a_directory(tmp_path, capsys):
    _fails(capsys, ["ckks", "keygen", "--params", "toy", "-o", tmp_path], "'-o'", "this is a directory")


def test_a_failed_write_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    """The output is written to a temporary file and renamed: a failure leaves the old file as it was."""
    out = tmp_path / "keys.json"
    out.write_text("old contents\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", broken_replace)
    _fails(capsys, ["ckks", "keygen", "--params", "toy", "--seed", "1", "-o", out], "'-o'", "No space left")
    assert out.read_text() == "old contents\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keys.json"]


def test_a_refused_input_does_not_touch_an_existing_output(tmp_path, capsys, keys):
    out = tmp_path / "ct.json"
    out.write_text("old contents\n")
    src = _json(tmp_path, "slots.json", {"re": [1e40]})
    _fails(capsys, ["ckks", "encrypt", "--keys", keys, "--in", src, "-o", out], "'slots'")
    assert out.read_text() == "old contents\n"


# -- 2. slot values beyond what Delta and Q hold ----------------------------------------------------
def test_huge_slot_value_is_refused_naming_the_limit(tmp_path, capsys, keys):
    src = _json(tmp_path, "slots.json", {"re": [1e40]})
    bound = ckks.slot_bound(TOY)
    line = _fails(capsys, ["ckks", "encrypt", "--keys", keys, "--in", src], "'slots'", "1e+40", "|slot| <= ",
                  "Delta = 2^20", "Q/2")
    shown = float(line.split("|slot| <= ")[1].split()[0])
    assert 0.999999 * bound <= shown <= bound


def test_slot_values_at_the_limit_round_trip_and_beyond_it_are_refused(tmp_path, capsys, keys):
    """Equal slots put all their weight on one coefficient (w_0 = z), the worst case of the bound."""
    bound = ckks.slot_bound(TOY)
    ct, out = tmp_path / "ct.json", tmp_path / "out.json"
    for value in (bound, -bound):
        src = _json(tmp_path, "slots.json", {"re": [value] * TOY.slots})
        assert main(["ckks", "encrypt", "--keys", str(keys), "--in", str(src), "--seed", "3", "-o", str(ct)]) == 0
        assert main(["ckks", "decrypt", "--keys", str(keys), "--in", str(ct), "-o", str(out)]) == 0
        got = _read_slots(out)
        assert max(abs(z - value) for z in got) < 2**-8
    src = _json(tmp_path, "slots.json", {"re": [bound * (1 + 2**-20)] * TOY.slots})
    _fails(capsys, ["ckks", "encrypt", "--keys", keys, "--in", src], "'slots'")
    # one large slot among zeros spreads over all coefficients: the check is on the coefficients, exact
    src = _json(tmp_path, "slots.json", {"re": [4 * bound]})
    assert main(["ckks", "encrypt", "--keys", str(keys), "--in", str(src), "--seed", "3", "-o", str(ct)]) == 0
    assert main(["ckks", "decrypt", "--keys", str(keys), "--in", str(ct), "-o", str(out)]) == 0
    assert abs(_read_slots(out)[0] - 4 * bound) < 2**-6


def test_model_encode_checks_the_coefficients():
    """The rule lives in the model: |m_k| <= (Q_level - 1)/2 - noise bound, at every level."""
    for level in (0, 1):
        limit = ckks.coefficient_bound(TOY, level)
        assert limit == (math.prod(TOY.moduli[:level + 1]) - 1) // 2 - ckks.noise_bound(TOY)
        scale = TOY.scale
        at = limit / scale * (1 - 2**-40)
        m = ckks.crt_centered(ckks.encode(TOY, [at] * TOY.slots, level).rows, TOY.moduli)
        assert 0 < m[0] <= limit and ckks.slot_bound(TOY, level) <= at
        with pytest.raises(ParameterError, match="'slots'.*at level %d" % level):
            ckks.encode(TOY, [limit / scale * (1 + 2**-20)] * TOY.slots, level)
    for bad in (float("nan"), float("inf"), complex(0, float("-inf")), 1e308):
        with pytest.raises(ParameterError, match="'slots'"):
            ckks.encode(TOY, [bad])
    assert ckks.noise_bound(TOY) == TOY.error.bound * (2 * TOY.n + 1)


# -- 3. one rule for every --seed ------------------------------------------------------------------
def _seed_commands(tmp_path):
    return [
        ["generate", "ntt", "--n", "16", "--bits", "30", "-o", str(tmp_path / "ntt")],
        ["generate", "fft", "--n", "16", "-o", str(tmp_path / "fft")],
        ["demo", "--no-lattigo"],
        ["ckks", "keygen", "--params", "toy"],
        ["mutate", "--list"],
    ]


@pytest.mark.parametrize("seed", ["-5", "-1", "xyz", "0x", "1.5", str(1 << 256), hex(1 << 256)])
def test_every_seed_option_has_one_rule(tmp_path, capsys, seed):
    for argv in _seed_commands(tmp_path):
        _fails(capsys, [*argv, "--seed", seed], f"'--seed' = '{seed}'", "0 .. 2^256 - 1 (decimal or 0x hex)")
    assert not any(tmp_path.iterdir())


def test_every_command_with_a_seed_is_covered(tmp_path):
    """Each sub-command with a --seed is in the list above (a new one must join the rule's test)."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    with_seed = {name for name, p in sub.choices.items() if any(a.dest == "seed" for a in p._actions)}
    assert with_seed == {argv[0] for argv in _seed_commands(tmp_path)}


def test_parse_seed():
    assert parse_seed(None) is None
    assert parse_seed("0") == 0 and parse_seed(" 42 ") == 42 and parse_seed("0x2A") == 42 == parse_seed(42)
    assert parse_seed(str((1 << 256) - 1)) == parse_seed("0x" + "f" * 64) == (1 << 256) - 1
    for bad in ("-0x5", "", "0b101", (1 << 256), -1, "1e3"):
        with pytest.raises(ParameterError, match="'--seed'"):
            parse_seed(bad)


def test_hex_and_decimal_seeds_give_the_same_keys(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["ckks", "keygen", "--params", "toy", "--seed", "255", "-o", str(a)]) == 0
    assert main(["ckks", "keygen", "--params", "toy", "--seed", "0xff", "-o", str(b)]) == 0
    assert a.read_text() == b.read_text()


# -- 4. encrypt / decrypt take N and Q from the keys -----------------------------------------------
def test_encrypt_and_decrypt_use_the_keys_parameters(tmp_path, capsys, keys):
    k = json.loads(keys.read_text())
    assert (k["N"], k["Q"], k["LogDefaultScale"]) == (TOY.n, list(TOY.moduli), TOY.log_scale)
    src = _json(tmp_path, "slots.json", {"re": [0.5, -0.25], "im": [0.0, 1.0]})
    ct, out = tmp_path / "ct.json", tmp_path / "out.json"
    old_keys = _json(tmp_path, "old.json", {key: v for key, v in k.items() if key != "LogDefaultScale"})
    for key_file in (keys, old_keys):   # without LogDefaultScale: the preset with these N and Q
        assert main(["ckks", "encrypt", "--keys", str(key_file), "--in", str(src), "-o", str(ct)]) == 0
        c = json.loads(ct.read_text())
        assert len(c["c0"]) == 2 and len(c["c0"][0]) == 64 and c["scale"] == 2**20
        assert main(["ckks", "decrypt", "--keys", str(key_file), "--in", str(ct), "-o", str(out)]) == 0
        got = _read_slots(out)
        assert len(got) == 32 and abs(got[0] - 0.5) < 2**-8 and abs(got[1] - complex(-0.25, 1)) < 2**-8
    # a LogDefaultScale that no preset has: the keys' own scale
    custom = _json(tmp_path, "custom.json", {**k, "LogDefaultScale": 25})
    assert main(["ckks", "encrypt", "--keys", str(custom), "--in", str(src), "-o", str(ct)]) == 0
    assert json.loads(ct.read_text())["scale"] == 2**25
    # --params that match the keys are fine
    assert main(["ckks", "encrypt", "--params", "toy", "--keys", str(keys), "--in", str(src), "-o", str(ct)]) == 0


@pytest.mark.parametrize("op", ["encrypt", "decrypt"])
def test_params_that_do_not_match_the_keys_are_refused(tmp_path, capsys, keys, op):
    src = _json(tmp_path, "slots.json", {"re": [0.5]})
    if op == "decrypt":
        ct = tmp_path / "ct.json"
        assert main(["ckks", "encrypt", "--keys", str(keys), "--in", str(src), "-o", str(ct)]) == 0
        src = ct
    _fails(capsys, ["ckks", op, "--params", "dna-hhe", "--keys", keys, "--in", src],
           "'keys'", "N=64", "N=8192", "--params must match the keys")


def test_keys_without_scale_and_no_preset_ask_for_params(tmp_path, capsys):
    """A keys file without LogDefaultScale whose N and Q are no preset's (e.g. an older hhe-gen's)."""
    from hhe_gen.params import ntt_primes
    k = ckks.keygen(TOY, 1).to_json(TOY)
    q = [x for x in ntt_primes(64, 30, 4) if x not in TOY.moduli][:2]
    bad = _json(tmp_path, "keys.json", {**k, "Q": q, "pk0": [], "pk1": []})
    src = _json(tmp_path, "slots.json", {"re": [0.5]})
    _fails(capsys, ["ckks", "encrypt", "--mode", "sk", "--keys", bad, "--in", src],
           "'--params'", "no LogDefaultScale and match no preset")


# -- 5. help text on every option ------------------------------------------------------------------
def test_every_option_of_every_command_has_help():
    ap = build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    missing = [name for name in sub.choices if not any(c.dest == name and c.help for c in sub._choices_actions)]
    for name, p in sub.choices.items():
        for action in p._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not (action.help or "").strip():
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"options without help text: {missing}"


# -- 6. tables off a terminal are not wrapped -------------------------------------------------------
def _run_piped(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["COLUMNS"] = "80"   # what a pipe gets when nothing says otherwise
    res = subprocess.run([sys.executable, "-m", "hhe_gen.apps.cli", *args], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


def test_tables_are_not_wrapped_when_piped():
    lines = _run_piped("params")
    for name, (_, desc) in PRESETS.items():
        assert len(desc) > 0
        row = [line for line in lines if f" {name} " in line]
        assert len(row) == 1 and desc in row[0], (name, row)
    assert max(len(line) for line in lines) > 80   # wider than rich's 80-column default for pipes
    lines = _run_piped("params", "dna-hhe")
    for i, q in enumerate(preset("dna-hhe").moduli):   # the primes table: index, q, bits, q mod 2N on one line
        row = [line for line in lines if f" {q} " in line]
        assert len(row) == 1 and [c.strip() for c in row[0].split("│")[1:5]] == [str(i), str(q), "54", "1"], row


def test_show_prints_a_wide_table_on_one_line_per_row():
    import io

    from rich.console import Console
    from rich.table import Table

    from hhe_gen.apps.report import show
    out = Console(file=io.StringIO(), width=80, highlight=False)
    t = Table(title="wide")
    t.add_column("a")
    t.add_column("b")
    t.add_row("x" * 150, "y" * 150)
    show(t, out)
    lines = out.file.getvalue().splitlines()
    assert len(lines) == 6 and any("x" * 150 + " │ " + "y" * 150 in line for line in lines)
    assert out.width == 80   # restored


# -- 7. other mistakes -------------------------------------------------------------------------------
def test_keys_of_the_wrong_shape(tmp_path, capsys, keys):
    src = _json(tmp_path, "slots.json", {"re": [0.5]})
    k = json.loads(keys.read_text())
    cases = [
        ([1, 2], "'--keys'", "a JSON list"),
        ({"foo": 1}, "'--keys'", "fields: foo"),
        ({"re": [1.0]}, "'--keys'", "slot values"),
        ({**k, "sk": "secret"}, "'sk' = '<str>'"),
        ({**k, "sk": [0.0] * 64}, "'sk'"),
        ({**k, "pk0": 5}, "'pk0' = '<int>'"),
        ({**k, "pk1": [["a"] * 64] * 2}, "'pk1[0]' = 'a'"),
        ({**k, "N": "64"}, "'N' = '64'"),
        ({**k, "Q": 5}, "'Q'"),
        ({**k, "sk": [1] * 63}, "'sk'", "N = 64", "(in "),
        ({**k, "pk0": k["pk0"][:1]}, "'pk0'", "2 rows", "(in "),
    ]
    for data, *needles in cases:
        bad = _json(tmp_path, "bad-keys.json", data)
        _fails(capsys, ["ckks", "encrypt", "--keys", bad, "--in", src], *needles)


def test_ciphertexts_that_do_not_fit(tmp_path, capsys, keys):
    src = _json(tmp_path, "slots.json", {"re": [0.5]})
    ct = tmp_path / "ct.json"
    assert main(["ckks", "encrypt", "--keys", str(keys), "--in", str(src), "--level", "0", "-o", str(ct)]) == 0
    c = json.loads(ct.read_text())
    out = tmp_path / "out.json"
    assert main(["ckks", "decrypt", "--keys", str(keys), "--in", str(ct), "-o", str(out)]) == 0   # level 0 is fine
    assert abs(_read_slots(out)[0] - 0.5) < 2**-8
    cases = [
        ({**c, "c0": c["c0"] * 3, "c1": c["c1"] * 3}, "'c0' = '<3 rows>'", "1 .. 2 rows", "(in "),   # another level
        ({**c, "c0": [r[:32] for r in c["c0"]]}, "'c0[0]'", "N = 64"),                               # another N
        ({**c, "c1": c["c1"] * 2}, "'c1'", "as many rows as c0"),
        ({**c, "c0": 7}, "'c0' = '<int>'"),
        ({**c, "c0": [1, 2]}, "'c0'"),
        ({**c, "scale": "big"}, "'scale'"),
        ({**c, "form": "eval"}, "'form'"),
        ([c], "'--in'", "a JSON list"),
        ({"re": [0.5]}, "'--in'", "slot values; encrypt it first"),
        (json.loads(keys.read_text()), "'--in'", "this file holds keys"),
    ]
    for data, *needles in cases:
        bad = _json(tmp_path, "bad-ct.json", data)
        _fails(capsys, ["ckks", "decrypt", "--keys", keys, "--in", bad, "-o", out], *needles)
    _fails(capsys, ["ckks", "decrypt", "--keys", keys, "--in", ct, "--level", "1"], "'--level' = 1",
           "the ciphertext's own level, 0")


@pytest.mark.parametrize("level", ["2", "-1", "99"])
def test_level_out_of_range(tmp_path, capsys, keys, level):
    src = _json(tmp_path, "slots.json", {"re": [0.5]})
    _fails(capsys, ["ckks", "encrypt", "--keys", keys, "--in", src, "--level", level],
           f"'--level' = {level}", "0 .. 1")


def test_encrypt_given_keys_or_a_ciphertext_as_slots(tmp_path, capsys, keys):
    _fails(capsys, ["ckks", "encrypt", "--keys", keys, "--in", keys], "'--in'", "this file holds keys")


@pytest.mark.parametrize("argv,needles", [
    (["primes", "--n", "1000", "--bits", "30"], ["'N' = 1000", "power of two"]),
    (["generate", "ntt", "--n", "3", "-o", "OUT"], ["'--n' = 3", "2^3 .. 2^16"]),
    (["generate", "ntt", "--n", "3", "--bits", "30", "-o", "OUT"], ["'--n' = 3", "2^3 .. 2^16"]),
    (["generate", "fft", "--n", "3", "-o", "OUT"], ["'n' = 3"]),
    (["ckks", "keygen", "--params", "no-such.json"], ["'--params'", "an existing JSON file"]),
    (["ckks", "keygen", "--params", "KEYS"], ["'--params'"]),
    (["ckks", "encrypt", "--keys", "OUT", "--in", "KEYS"], ["'--keys'"]),
])
def test_other_bad_inputs(tmp_path, capsys, keys, argv, needles):
    argv = [str(keys) if a == "KEYS" else str(tmp_path / "out") if a == "OUT" else a for a in argv]
    _fails(capsys, argv, *needles)
    assert not (tmp_path / "out").exists()


def test_an_os_error_is_one_line(capsys, monkeypatch):
    """A file or folder the command cannot read or write (e.g. bench --json into a folder it may not
    create) ends as one line, not a traceback."""
    def cannot_write(args):
        raise PermissionError(13, "Permission denied", "/root/bench.json")
    monkeypatch.setattr(cli.runs, "cmd_doctor", cannot_write)
    assert main(["doctor"]) == 2
    assert capsys.readouterr().err == "hhe-gen: error: Permission denied: /root/bench.json\n"

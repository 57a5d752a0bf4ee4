"""``hhe-gen accel asm | disasm | program | run``: the engine's programs from the command line.

Expected values come from the specification (docs/isa.md: the field layout, the memory map table,
the programs table, the decrypt listing) or from the CKKS model and the ``ckks`` commands, never
from the accel module itself.  The main end-to-end check: ``accel run --program encrypt_pk`` writes
the ciphertext ``ckks encrypt --mode pk`` writes (same keys, slots and seed) up to the form, and
``accel run --program decrypt`` gives the slots back.
"""

import json
import math

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.engine.config import AcceleratorConfig
from hhe_gen.models import ckks, ckks_fixed, fft
from hhe_gen.models.ntt import intt
from hhe_gen.params import CKKSParams, RingParams, ntt_primes, preset

TOY = preset("toy")                    # N = 64, two 30-bit primes, Delta = 2^20
FMT = AcceleratorConfig(TOY).fmt       # the generated accelerator's slot format, 38 / 36 (docs/engine.md)
# the generated toy accelerator decodes q_0's row alone: 2^(W-F+log_scale+1) = 2^23 <= q_0 (docs/engine.md)
Q0, Q1 = TOY.moduli
# slots for which the float64 encoder of ``ckks encrypt`` and the engine's fixed-point encoder give
# the same plaintext (checked in the test): only then can the two ciphertexts be equal bit for bit
AGREEING = [(-0.974 - 0.567j), (-0.441 + 0.833j), (0.531 - 0.681j), (0.594 - 0.722j),
            (0.235 - 0.747j), (-0.996 + 0.743j), (-0.581 - 0.569j), (0.965 + 0.745j)]
# the README's example: here the two encoders differ in a few coefficients
README_SLOTS = [0.5, -0.25 + 0.5j, 1.0 - 1.0j]


def _ok(capsys, argv) -> str:
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _fails(capsys, argv, *needles, status=2) -> str:
    """main(argv) exits ``status`` with exactly one stderr line "hhe-gen: error: ..." holding needles."""
    assert main([str(a) for a in argv]) == status
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hhe-gen: error: ") and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _slots_file(path, slots):
    path.write_text(json.dumps({"re": [complex(z).real for z in slots], "im": [complex(z).imag for z in slots]}))
    return path


def _read_slots(path):
    d = json.loads(path.read_text())
    return [complex(a, b) for a, b in zip(d["re"], d["im"])]


def _ct(path, params=TOY):
    return ckks.Ciphertext.from_json(json.loads(path.read_text()), params)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    path = tmp_path_factory.mktemp("keys") / "keys.json"
    assert main(["ckks", "keygen", "--params", "toy", "--seed", "7", "-o", str(path)]) == 0
    return path


# -- asm / disasm ---------------------------------------------------------------------------------
SOURCE = """\
; a small hand-written program for the toy engine
cfg.prime s0, p1          ; bind slot 0 to q_1
load b3, s0, 0x100, check
ntt b1, b3, s0
mac b2, b1, b3, b1, s0
store b2, 0x2000
notify 7
"""


def _field_word(opcode, dst=0, a=0, b=0, c=0, slot=0, flags=0, imm=0):
    """The word from the field table of docs/isa.md (opcode 63:58, dst 57:53, a 52:48, b 47:43,
    c 42:38, slot 37:35, flags 34:32, imm 31:0)."""
    return opcode << 58 | dst << 53 | a << 48 | b << 43 | c << 38 | slot << 35 | flags << 32 | imm


def test_asm_writes_hex_and_binary_images_and_disasm_reads_them(tmp_path, capsys):
    src = tmp_path / "prog.s"
    src.write_text(SOURCE)
    want = [_field_word(0x08, imm=1 << 27 | (Q1 % (1 << 27))),       # cfg.prime: prime id | q mod 2^27
            _field_word(0x10, dst=3, flags=1, imm=0x100),
            _field_word(0x20, dst=1, a=3),
            _field_word(0x2B, dst=2, a=1, b=3, c=1),
            _field_word(0x11, a=2, imm=0x2000),
            _field_word(0x02, imm=7)]
    out = _ok(capsys, ["accel", "asm", src, "--params", "toy", "-o", tmp_path / "prog.hex"])
    assert "6 instructions" in out
    lines = (tmp_path / "prog.hex").read_text().splitlines()
    assert lines[0].startswith("// hhe-gen program image for ")      # a comment $readmemh skips
    assert lines[1:] == [f"{w:016x}" for w in want]
    _ok(capsys, ["accel", "asm", src, "--params", "toy", "-o", tmp_path / "prog.bin"])
    raw = (tmp_path / "prog.bin").read_bytes()
    assert raw == b"".join(w.to_bytes(8, "little") for w in want)
    listings = [_ok(capsys, ["accel", "disasm", tmp_path / name, "--params", "toy"])
                for name in ("prog.hex", "prog.bin")]
    assert listings[0] == listings[1]
    code = [" ".join(line.split(";")[0].split()) for line in SOURCE.splitlines()]
    assert listings[0].splitlines() == [c for c in code if c]
    # the listing assembles back to the same image
    (tmp_path / "again.s").write_text(listings[0])
    _ok(capsys, ["accel", "asm", tmp_path / "again.s", "--params", "toy", "-o", tmp_path / "again.hex"])
    assert (tmp_path / "again.hex").read_text() == (tmp_path / "prog.hex").read_text()


def test_asm_error_names_file_line_and_token_and_writes_nothing(tmp_path, capsys):
    src = tmp_path / "bad.s"
    src.write_text("cfg.prime s0, p0\nnotify 1\nmac b1, b2, b20, b3, s0\n")
    out = tmp_path / "bad.hex"
    _fails(capsys, ["accel", "asm", src, "--params", "toy", "-o", out], "bad.s", "line 3", "'b20'", "b0 .. b4")
    assert not out.exists()
    _ok(capsys, ["accel", "asm", src, "--params", "toy", "--buffers", "32", "-o", out])   # the shape decides
    src.write_text("cfg.prime s0, p2\n")                              # toy has two primes
    _fails(capsys, ["accel", "asm", src, "--params", "toy", "-o", out], "line 1", "'p2'")
    src.write_text("frobnicate b1\n")
    _fails(capsys, ["accel", "asm", src, "--params", "toy", "-o", out], "line 1", "'frobnicate'", "a mnemonic")


def test_asm_and_disasm_refuse_unusable_files(tmp_path, capsys):
    src = tmp_path / "prog.s"
    src.write_text(SOURCE)
    _fails(capsys, ["accel", "asm", src, "--params", "toy", "-o", tmp_path / "prog.txt"], "'-o'", ".hex")
    _fails(capsys, ["accel", "asm", src, "--params", "toy", "-o", tmp_path / "no-dir" / "p.hex"], "'-o'",
           "does not exist")
    _fails(capsys, ["accel", "asm", tmp_path / "missing.s", "--params", "toy", "-o", tmp_path / "p.hex"],
           "missing.s", "an existing file")
    _fails(capsys, ["accel", "asm", src, "--params", "toy", "--buffers", "33", "-o", tmp_path / "p.hex"],
           "'--buffers'")
    _fails(capsys, ["accel", "disasm", src, "--params", "toy"], "'FILE'", "prog.s", ".hex")
    (tmp_path / "odd.bin").write_bytes(b"\x00" * 12)
    _fails(capsys, ["accel", "disasm", tmp_path / "odd.bin", "--params", "toy"], "odd.bin", "multiple of 8")
    (tmp_path / "bad.hex").write_text("0000000000000000\nxyz\n")
    _fails(capsys, ["accel", "disasm", tmp_path / "bad.hex", "--params", "toy"], "bad.hex", "line 2", "'xyz'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.hex", "odd.bin", "prog.s"]


def test_disasm_shows_a_malformed_word_with_its_cause(tmp_path, capsys):
    image = tmp_path / "p.hex"
    image.write_text(f"{_field_word(0x02, imm=3):016x}\n{_field_word(0x3F):016x}\n")   # notify 3, opcode 0x3F
    lines = _ok(capsys, ["accel", "disasm", image, "--params", "toy"]).splitlines()
    assert lines[0] == "notify 3"
    assert lines[1].startswith(".word 0xfc00000000000000") and "UNKNOWN_OPCODE" in lines[1]


# -- program ----------------------------------------------------------------------------------------
def test_program_prints_text_memory_map_and_buffers(tmp_path, capsys):
    text = _ok(capsys, ["accel", "program", "decrypt", "--params", "toy"])
    # the memory map of docs/isa.md: block k at k*N; L = 2 primes, N = 64
    for block, region in ((0, "seed"), (2, "slots_out"), (8, "sk_ntt[0]"), (14, "c0[0]"), (17, "c1[1]")):
        assert f"{block * 64:#05x}  {region}" in text, region
    assert "at least 4 for decrypt with 2 rows" in text                # R + 2 (programs table)
    code = [line.split(";")[0].split() for line in text.splitlines()]
    mnemonics = [c[0] for c in code if c]
    # 3 configuration lines, 5 per decoded row (q_0's alone on the generated toy accelerator), decode,
    # store, notify (docs/isa.md's listing)
    assert mnemonics == ["cfg.prime", "cfg.prime", "cfg.scale"] + ["load", "load", "load", "mac", "intt"] \
        + ["decode", "store", "notify"]
    # what it prints is assembly: asm of the printout equals the image -o writes
    (tmp_path / "d.s").write_text(text)
    _ok(capsys, ["accel", "asm", tmp_path / "d.s", "--params", "toy", "-o", tmp_path / "a.hex"])
    out = _ok(capsys, ["accel", "program", "decrypt", "--params", "toy", "-o", tmp_path / "b.hex"])
    assert "c1[1]" in out and "at least 4" in out and "b.hex" in out
    assert (tmp_path / "a.hex").read_text() == (tmp_path / "b.hex").read_text()
    assert len((tmp_path / "b.hex").read_text().splitlines()) == 1 + 11               # the header, 11 words
    _ok(capsys, ["accel", "program", "decrypt", "--params", "toy", "-o", tmp_path / "c.s"])
    assert (tmp_path / "c.s").read_text() == text


def test_program_level_and_buffers(tmp_path, capsys):
    text = _ok(capsys, ["accel", "program", "encrypt_pk", "--params", "toy", "--level", "0", "--buffers", "7"])
    assert "at least 5 for encrypt_pk with 1 row;" in text               # m + 4 (programs table)
    code = " ".join(line.split(";")[0] for line in text.splitlines())
    assert "s0" in code and "s1" not in code                             # one row: prime slot 0 only
    _fails(capsys, ["accel", "program", "encrypt_pk", "--params", "toy", "--buffers", "4"], "'--buffers'", "5")
    _fails(capsys, ["accel", "program", "encrypt_pk", "--params", "toy", "--level", "2"], "'--level'", "0 .. 1")
    _fails(capsys, ["accel", "program", "encrypt", "--params", "toy"], "'program'", "encrypt_pk")
    _fails(capsys, ["accel", "program", "decrypt", "--params", "toy", "-o", tmp_path / "d.json"], "'-o'", ".s")
    assert list(tmp_path.iterdir()) == []


# -- run: the end-to-end checks -------------------------------------------------------------------
def _accel(capsys, tmp_path, keys, program, slots_or_ct, seed, out_name, *extra):
    out = tmp_path / out_name
    stdout = _ok(capsys, ["accel", "run", "--program", program, "--on", "model", "--keys", keys,
                          "--in", slots_or_ct, "--seed", seed, "-o", out, *extra])
    return out, stdout


def _ckks_encrypt(capsys, tmp_path, keys, slots, seed, mode, name):
    out = tmp_path / name
    _ok(capsys, ["ckks", "encrypt", "--keys", keys, "--in", slots, "--mode", mode, "--seed", seed, "-o", out])
    return out


@pytest.mark.parametrize("mode", ["pk", "sk"])
def test_run_encrypt_equals_ckks_encrypt(tmp_path, capsys, keys, mode):
    assert ckks.encode(TOY, AGREEING).rows == ckks.encode(TOY, AGREEING, fmt=FMT).rows, \
        "precondition: the float and fixed-point encoders agree on these slots"
    slots = _slots_file(tmp_path / "slots.json", AGREEING)
    program = "encrypt_pk" if mode == "pk" else "encrypt"                # encrypt + --mode sk = encrypt_sk
    extra = [] if mode == "pk" else ["--mode", "sk"]
    got, stdout = _accel(capsys, tmp_path, keys, program, slots, "0x5eed", "accel.json", *extra)
    assert "key_setup ran first" in stdout and f"encrypt_{mode}" in stdout
    assert json.loads(got.read_text())["form"] == "ntt"
    want = _ct(_ckks_encrypt(capsys, tmp_path, keys, slots, "0x5eed", mode, "ckks.json"))
    accel = _ct(got)
    assert accel.form == "ntt" and want.form == "coeff"
    assert accel.to_form(TOY, "coeff") == want
    assert accel == want.to_form(TOY, "ntt")
    # another seed, another ciphertext
    other, _ = _accel(capsys, tmp_path, keys, program, slots, "0x5eee", "other.json", *extra)
    assert _ct(other).c0 != accel.c0


def test_run_encrypt_pk_differs_from_ckks_encrypt_only_by_the_encoder(tmp_path, capsys, keys):
    """Where the encoders differ (float64 in ``ckks encrypt``, fixed point in the engine), c1 is
    still equal and c0 differs by exactly the plaintext difference; the model pipeline with the
    fixed-point encoder gives the engine's ciphertext bit for bit.  At the accelerator's 38 / 36 the
    two encoders agree on these slots; an accelerator of slot format 29 / 26 (``--width 29
    --frac-bits 26``) rounds differently."""
    coarse = fft.FixedPointFormat(29, 26)
    m_float, m_fixed = ckks.encode(TOY, README_SLOTS), ckks.encode(TOY, README_SLOTS, fmt=coarse)
    assert m_float.rows != m_fixed.rows
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    got, _ = _accel(capsys, tmp_path, keys, "encrypt_pk", slots, 11, "accel.json", "--width", "29", "--frac-bits", "26")
    accel = _ct(got)
    want = _ct(_ckks_encrypt(capsys, tmp_path, keys, slots, 11, "pk", "ckks.json")).to_form(TOY, "ntt")
    assert accel.c1 == want.c1
    for i, q in enumerate(TOY.moduli):
        diff = intt([(a - b) % q for a, b in zip(accel.c0[i], want.c0[i])], q)
        assert diff == [(a - b) % q for a, b in zip(m_fixed.rows[i], m_float.rows[i])]
    pair = ckks.KeyPair.from_json(json.loads(keys.read_text()), TOY)
    assert accel == ckks.encrypt_pk(TOY, pair, m_fixed, 11, form="ntt")


def test_run_decrypt_gives_the_slots_back(tmp_path, capsys, keys):
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    ct, _ = _accel(capsys, tmp_path, keys, "encrypt_pk", slots, 3, "ct.json")
    out, stdout = _accel(capsys, tmp_path, keys, "decrypt", ct, 3, "out.json")
    assert "wrote" in stdout
    got = _read_slots(out)
    assert len(got) == TOY.slots
    want = README_SLOTS + [0] * (TOY.slots - len(README_SLOTS))
    # fresh public-key noise over N coefficients / Delta, plus the codec's rounding
    bound = TOY.n * ckks.noise_bound(TOY) / TOY.scale + 2.0 ** -12
    assert max(abs(a - b) for a, b in zip(got, want)) < min(bound, 2.0 ** -6)
    # bit for bit: the model's decryption, decoded by the fixed-point decoder
    pair = ckks.KeyPair.from_json(json.loads(keys.read_text()), TOY)
    rows = ckks.decrypt(TOY, pair.sk, _ct(ct)).rows
    pairs = ckks_fixed.decode_fixed(rows[:1], [Q0], FMT, TOY.log_scale)              # q_0's row alone
    assert got == [fft.dequantize_complex(p, FMT) for p in pairs]
    # and the ckks command's float decoder agrees within the codec's precision
    ref = tmp_path / "ref.json"
    _ok(capsys, ["ckks", "decrypt", "--keys", keys, "--in", ct, "-o", ref])
    assert max(abs(a - b) for a, b in zip(got, _read_slots(ref))) < 2.0 ** -12
    # a coefficient-form ciphertext of ckks encrypt decrypts on the engine too
    ct2 = _ckks_encrypt(capsys, tmp_path, keys, slots, 4, "sk", "ct2.json")
    out2, _ = _accel(capsys, tmp_path, keys, "decrypt", ct2, 0, "out2.json")
    assert max(abs(a - b) for a, b in zip(_read_slots(out2), want)) < 2.0 ** -6


def test_run_report_counts_units_and_notify_codes(tmp_path, capsys, keys):
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    ct, _ = _accel(capsys, tmp_path, keys, "encrypt_pk", slots, 3, "ct.json")
    report = tmp_path / "report.json"
    _, stdout = _accel(capsys, tmp_path, keys, "decrypt", ct, 3, "out.json", "--json", report)
    rep = json.loads(report.read_text())
    setup, run = rep["runs"]
    assert setup["program"] == "key_setup" and setup["notify"] == [1] and setup["error"]["cause"] == "NONE"
    # key_setup (docs/isa.md section 9): load sk; per row: ntt + store sk, and for pk0, pk1 load + ntt + store
    assert setup["executed"] == 2 + 1 + 2 * 8 + 1
    # decrypt on the generated toy accelerator: 3 cfg, one decoded row (3 loads, mac, intt), decode, store, notify
    assert run["program"] == "decrypt" and run["executed"] == 11 and run["notify"] == [4]
    assert run["units"] == {"memory": 4, "pointwise": 1, "ntt": 1, "codec": 1, "serialising": 4}
    assert run["error"] == {"cause": "NONE", "position": None}
    assert rep["output"] == str(tmp_path / "out.json")
    table = {" ".join(line.split()[:-1]): line.split()[-1] for line in stdout.splitlines()
             if line.startswith("  ") and len(line.split()) >= 2}
    assert "instructions executed  11 of 11" in stdout
    assert {k: table[k] for k in ("memory", "pointwise", "ntt", "codec", "serialising")} == \
        {"memory": "4", "pointwise": "1", "ntt": "1", "codec": "1", "serialising": "4"}
    assert table["notify codes"] == "4" and table["error status"] == "NONE"


def test_run_without_keys_uses_the_keygen_rule_of_the_seed(tmp_path, capsys, keys):
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    with_keys, _ = _accel(capsys, tmp_path, keys, "encrypt_sk", slots, 7, "a.json")
    stdout = _ok(capsys, ["accel", "run", "--program", "encrypt_sk", "--params", "toy", "--in", slots,
                          "--seed", 7, "-o", tmp_path / "b.json"])
    assert "generated" in stdout and "--seed" in stdout
    assert (tmp_path / "b.json").read_text() == with_keys.read_text()   # keys.json is ckks keygen --seed 7


def test_run_on_a_three_prime_parameter_set(tmp_path, capsys):
    params = CKKSParams(RingParams(256, tuple(ntt_primes(256, 30, 3))), 25, name="n256")
    spec = tmp_path / "n256.json"
    spec.write_text(json.dumps(params.interchange()))
    keys = tmp_path / "keys.json"
    _ok(capsys, ["ckks", "keygen", "--params", spec, "--seed", 5, "-o", keys])
    values = [complex(math.cos(k), math.sin(2 * k)) * 0.7 for k in range(40)]
    slots = _slots_file(tmp_path / "slots.json", values)
    ct, stdout = _accel(capsys, tmp_path, keys, "encrypt_pk", slots, 6, "ct.json")
    assert "rows 0 .. 2" in stdout and "level 2" in stdout
    accel = _ct(ct, params)
    pair = ckks.KeyPair.from_json(json.loads(keys.read_text()), params)
    assert accel == ckks.encrypt_pk(params, pair, ckks.encode(params, values, fmt=FMT), 6, form="ntt")
    assert accel.c1 == _ct(_ckks_encrypt(capsys, tmp_path, keys, slots, 6, "pk", "ref.json"), params) \
        .to_form(params, "ntt").c1
    out, _ = _accel(capsys, tmp_path, keys, "decrypt", ct, 6, "out.json")
    got = _read_slots(out)
    assert max(abs(a - b) for a, b in zip(got, values + [0] * (params.slots - len(values)))) < 2.0 ** -6


# -- run: bad input ---------------------------------------------------------------------------------
def test_run_refuses_an_unknown_engine(tmp_path, capsys, keys):
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    _fails(capsys, ["accel", "run", "--program", "encrypt_pk", "--on", "fpga", "--keys", keys, "--in", slots,
                    "-o", tmp_path / "ct.json"], "'--on'", "'model'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slots.json"]


@pytest.mark.parametrize("program", ["encrypt_pk", "encrypt_sk"])
def test_run_encrypt_on_rtl_writes_the_models_ciphertext(tmp_path, capsys, keys, program):
    """The same keys, slots and seed: the RTL engine's ciphertext file equals the model's."""
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    out = {}
    for on in ("model", "rtl"):
        out[on] = tmp_path / f"{on}.json"
        text = _ok(capsys, ["accel", "run", "--program", program, "--on", on, "--keys", keys, "--in", slots,
                            "--seed", "5", "-o", out[on]])
    assert "cycles" in text
    assert json.loads(out["rtl"].read_text()) == json.loads(out["model"].read_text())


@pytest.mark.toolchain
def test_run_on_verilator_equals_rtl_and_model(tmp_path, capsys, keys):
    """--on verilator: the model's ciphertext, and the cycles of the Amaranth run of the same RTL."""
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    out, reports = {}, {}
    for on in ("model", "rtl", "verilator"):
        out[on], reports[on] = tmp_path / f"{on}.json", tmp_path / f"{on}-report.json"
        _ok(capsys, ["accel", "run", "--program", "encrypt_pk", "--on", on, "--keys", keys, "--in", slots,
                     "--seed", "5", "-o", out[on], "--json", reports[on]])
    assert json.loads(out["verilator"].read_text()) == json.loads(out["model"].read_text())
    runs = {on: json.loads(reports[on].read_text())["runs"] for on in ("rtl", "verilator")}
    assert [r["cycles"] for r in runs["verilator"]] == [r["cycles"] for r in runs["rtl"]]
    assert all(r["cycles"] > 100 for r in runs["verilator"])


def test_run_key_setup_on_rtl_reports_like_the_model(tmp_path, capsys, keys):
    """key_setup on the RTL engine: the same counts, notify codes and error status as on the model."""
    reports = {}
    for on in ("model", "rtl"):
        path = tmp_path / f"{on}.json"
        _ok(capsys, ["accel", "run", "--program", "key_setup", "--on", on, "--keys", keys, "--params", "toy",
                     "--json", path])
        reports[on] = json.loads(path.read_text())
    rtl = reports["rtl"]["runs"]
    assert all(run.pop("cycles") > 0 for run in rtl)
    assert rtl == reports["model"]["runs"]
    assert reports["rtl"]["runs"][-1]["notify"] == [1]


def test_run_refuses_bad_input_with_one_line(tmp_path, capsys, keys):
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    out = tmp_path / "out.json"
    run = ["accel", "run", "--keys", keys, "-o", out]
    _fails(capsys, run + ["--program", "encrypt_ok", "--in", slots], "'--program'", "'encrypt_ok'", "encrypt_pk")
    bad = tmp_path / "bad.s"
    bad.write_text("cfg.prime s0, p0\nload b1, s0, 0x40, chek\n")
    _fails(capsys, run + ["--program", bad, "--in", slots], "bad.s", "line 2", "'chek'")
    # keys of other parameters
    other = tmp_path / "other.json"
    n256 = CKKSParams(RingParams(256, tuple(ntt_primes(256, 30, 3))), 25, name="n256")
    other.write_text(json.dumps(ckks.keygen(n256, 1).to_json(n256)))
    _fails(capsys, run[:3] + [other, "-o", out, "--params", "toy", "--program", "encrypt_pk", "--in", slots],
           "'keys'", "--params toy")
    # input of the wrong kind, wrong level, a mode that contradicts the program, a slot too big
    _fails(capsys, run + ["--program", "decrypt", "--in", slots], "'--in'", "ciphertext")
    _fails(capsys, run + ["--program", "decrypt", "--mode", "pk", "--in", slots], "'--mode'")
    _fails(capsys, run + ["--program", "encrypt_sk", "--mode", "pk", "--in", slots], "'--mode'")
    _fails(capsys, run + ["--program", "encrypt_pk", "--level", "2", "--in", slots], "'--level'")
    big = _slots_file(tmp_path / "big.json", [5.0])
    _fails(capsys, run + ["--program", "encrypt_pk", "--in", big], "'re[0]'", "fixed point", "big.json")
    _fails(capsys, run + ["--program", "encrypt_pk"], "'--in'")
    assert not out.exists()


def test_engine_error_reports_cause_and_position_and_writes_nothing(tmp_path, capsys, keys):
    slots = _slots_file(tmp_path / "slots.json", README_SLOTS)
    ct, _ = _accel(capsys, tmp_path, keys, "encrypt_pk", slots, 3, "ct.json")
    listing = _ok(capsys, ["accel", "program", "decrypt", "--params", "toy"]).splitlines()
    code = [i for i, line in enumerate(listing) if line.split(";")[0].strip()]
    # a malformed word (opcode 0x3F is not in the table) as the program's 7th instruction (position 6)
    listing.insert(code[6], ".word 0xfc00000000000000")
    prog = tmp_path / "broken.s"
    prog.write_text("\n".join(listing) + "\n")
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    assert main(["accel", "run", "--program", str(prog), "--keys", str(keys), "--in", str(ct),
                 "-o", str(out), "--json", str(report)]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hhe-gen: error: "), captured.err
    assert "UNKNOWN_OPCODE" in lines[0] and "position 6" in lines[0] and "out.json" in lines[0]
    assert "UNKNOWN_OPCODE at position 6" in captured.out and "key_setup ran first" in captured.out
    assert not out.exists()
    rep = json.loads(report.read_text())
    assert rep["output"] is None
    assert rep["runs"][1]["error"] == {"cause": "UNKNOWN_OPCODE", "position": 6}
    assert rep["runs"][1]["executed"] == 6 and rep["runs"][1]["notify"] == []
    # the same word in a hex image
    image = tmp_path / "broken.hex"
    _ok(capsys, ["accel", "asm", prog, "--params", "toy", "-o", image])
    _fails(capsys, ["accel", "run", "--program", image, "--keys", keys, "--in", ct, "-o", out],
           "UNKNOWN_OPCODE", "position 6", status=1)
    assert not out.exists()


def test_key_setup_alone_and_the_accel_help(capsys):
    stdout = _ok(capsys, ["accel", "run", "--program", "key_setup", "--params", "toy", "--seed", 1])
    assert "key_setup on the ISA model" in stdout and "key_setup ran first" not in stdout
    assert any(line.split()[:2] == ["notify", "codes"] and line.split()[-1] == "1" for line in stdout.splitlines())
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "accel" in capsys.readouterr().out


@pytest.mark.parametrize("ntt", ["stream", "in-place"])
def test_plan_json_lists_every_buffer_and_adds_up(tmp_path, capsys, ntt):
    """``accel plan``: B buffers of N/P x P*w (in place: 2P banks of N/2P x w each), totals equal
    the sum of the rows, the budget line; the NTT unit's own banks only when it streams."""
    out = tmp_path / "plan.json"
    text = _ok(capsys, ["accel", "plan", "--params", "dna-hhe", "--lanes", "2", "--buffers", "3", "--reserve", "40",
                        "--ntt", ntt, "--json", out])
    plan = json.loads(out.read_text())
    buffers = [m for m in plan["memories"] if m["owner"] == "buffers"]
    shape, count = ((4096, 108), 3) if ntt == "stream" else ((2048, 54), 12)
    assert len(buffers) == count and all((m["depth"], m["width"]) == shape for m in buffers)
    assert sum(m["dp16kd"] for m in buffers) == 3 * 24      # 8192 x 54 bits = 24 x 18 Kbit exactly
    ntt_banks = [m for m in plan["memories"] if m["owner"] == "ntt_unit" and (m["depth"], m["width"]) == (2048, 54)]
    assert len(ntt_banks) == (4 if ntt == "stream" else 0)
    assert plan["dp16kd"] == sum(m["dp16kd"] for m in plan["memories"])
    assert plan["left"] == 208 - plan["dp16kd"] - 40
    assert f"the engine {plan['dp16kd']} + reserve 40" in text


def test_plan_refuses_an_unknown_device(capsys):
    _fails(capsys, ["accel", "plan", "--params", "toy", "--device", "ice40"], "'--device'")


def test_plan_defaults_to_the_generated_accelerator(tmp_path, capsys):
    """Without --buffers: the generated accelerator's engine (client_engine: 5 buffers at 2 lanes,
    one FFT in the codec), as ``generate accel`` builds it; it fits the 85F."""
    out = tmp_path / "plan.json"
    text = _ok(capsys, ["accel", "plan", "--params", "dna-hhe", "--lanes", "2", "--json", out])
    plan = json.loads(out.read_text())
    assert plan["buffers"] == 5 and plan["by_owner"]["buffers"]["dp16kd"] == 5 * 24
    assert plan["by_owner"]["codec_unit"]["dp16kd"] == 38
    assert plan["fits"] and plan["left"] == 208 - plan["dp16kd"] and "(fits)" in text

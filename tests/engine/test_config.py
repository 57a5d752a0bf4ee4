"""The accelerator's one configuration (hhe_gen.engine.config): every default resolved once with its
reason, the shape programs are assembled for known without building the engine and equal to the
built engine's, refusals naming the user's parameter, and every command that builds an accelerator
building the one ``generate accel`` writes."""

import json

import pytest

from hhe_gen.apps.cli import main
from hhe_gen.cores.engine import isa
from hhe_gen.cores.unused import mark_unused
from hhe_gen.engine.config import SLOT_FORMAT, AcceleratorConfig
from hhe_gen.params import ParameterError, preset


@pytest.mark.parametrize("choices", [
    dict(params="toy"),
    dict(params="toy", rubato="128s"),
    dict(params="toy", network=False, lanes=4, slot_format=(29, 26)),
    dict(params="flexible-218", lanes=1),
])
def test_shape_without_the_engine_is_the_engines(choices):
    config = AcceleratorConfig(**choices)
    engine = mark_unused(config.engine(), deep=True)
    assert config.shape == engine.shape
    assert config.word_bits == engine.word_bits
    assert config.resolve().ntt_in_place == engine.ntt_in_place


def test_resolve_fills_every_default_with_its_reason_once():
    config = AcceleratorConfig("dna-hhe", 2)
    assert not config.resolved
    done = config.resolve()
    assert done.resolved and done.resolve() is done
    assert (done.buffers, done.reducer, done.ntt_in_place, done.slot_format, done.decode_rows) == \
        (5, "special-barrett", True, SLOT_FORMAT, frozenset({1}))
    assert set(dict(done.reasons)) == {"buffers", "window", "reducer", "twiddles", "ntt_in_place", "datapath",
                                       "slot_format", "slot_rounding", "decode_rows"}
    given = AcceleratorConfig("dna-hhe", 2, buffers=7, reducer="barrett").resolve()
    assert "buffers" not in dict(given.reasons) and "reducer" not in dict(given.reasons)
    assert given.buffers == 7 and given.reducer == "barrett"
    # equal choices: equal configurations (the reasons do not take part)
    assert AcceleratorConfig("dna-hhe", 2, buffers=5).resolve() == done


def test_the_slot_format_is_the_accelerators_everywhere():
    """The model of the configuration reads slots in 38/36, the format the codec is built with,
    rounding half to even unless told otherwise."""
    config = AcceleratorConfig("toy")
    assert config.fmt.width == 38 and config.fmt.frac_bits == 36 and config.fmt.rounding == "half-even"
    assert AcceleratorConfig("toy", slot_rounding="half-up").fmt.rounding == "half-up"
    with pytest.raises(ParameterError, match="'slot_rounding'"):
        AcceleratorConfig("toy", slot_rounding="nearest").resolve()
    assert config.model().fmt == config.fmt
    assert config.shape.message_bound == 1 << (38 - 1 - 36 + preset("toy").log_scale)


@pytest.mark.parametrize("choices, name", [
    (dict(params="abc-fhe", lanes=8), "lanes"),          # 99 buffers derived: the lanes are the user's choice
    (dict(params="toy", lanes=3), "lanes"),
    (dict(params="toy", buffers=40), "buffers"),
    (dict(params="abc-fhe", reducer="special-barrett"), "reducer"),
    (dict(params="toy", reducer="montgomery"), "reducer"),
    (dict(params="toy", device="XC9"), "device"),
    (dict(params="toy", target="asic"), "target"),
    (dict(params="nosuch"), "params"),
    (dict(params="toy", rubato="256x"), "rubato"),
    (dict(params="flexible-218", slot_format=(38, 36)), "slot_format"),
])
def test_refusals_name_the_users_parameter(choices, name):
    with pytest.raises(ParameterError) as info:
        AcceleratorConfig(**choices).resolve()
    assert info.value.name == name


def test_a_derived_buffer_count_is_refused_as_the_lanes_that_made_it(capsys):
    assert main(["accel", "plan", "--params", "abc-fhe", "--lanes", "8"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hhe-gen: error: parameter '--lanes' = 8") and "'--buffers'" not in err
    assert "99 buffers" in err and "--lanes 2" not in err and len(err.splitlines()) == 1


def test_accel_run_runs_the_generated_accelerator(tmp_path, capsys):
    """``accel run`` builds the configuration ``generate accel`` writes for the same options: the
    manifest's configuration is the run report's, and the run is compared with the ISA model."""
    assert main(["generate", "accel", "--params", "toy", "--lanes", "2", "--vectors", "0",
                 "-o", str(tmp_path / "accel")]) == 0
    manifest = json.loads((tmp_path / "accel" / "hhe_accel_n64_p2.json").read_text())
    assert main(["ckks", "keygen", "--params", "toy", "--seed", "1", "-o", str(tmp_path / "k.json")]) == 0
    (tmp_path / "s.json").write_text(json.dumps({"re": [0.5, -0.25], "im": [0.125, 0]}))
    capsys.readouterr()
    assert main(["accel", "run", "--program", "encrypt_pk", "--keys", str(tmp_path / "k.json"), "--in",
                 str(tmp_path / "s.json"), "--seed", "2", "-o", str(tmp_path / "ct.json"),
                 "--json", str(tmp_path / "run.json")]) == 0
    report = json.loads((tmp_path / "run.json").read_text())
    assert report["configuration"] == manifest["configuration"]["values"]
    assert report["configuration"]["slot_format"] == {"width": 38, "frac_bits": 36, "rounding": "half-even"}
    assert manifest["configuration"]["chosen"]["buffers"].startswith("5:")


def test_with_options_resolves_again():
    two = AcceleratorConfig("dna-hhe", 2).resolve()
    eight = two.with_(lanes=8).resolve()
    assert eight.buffers == 15 and not eight.ntt_in_place
    assert two.with_(buffers=9).resolve().buffers == 9


def test_the_engine_is_built_with_the_configurations_choices():
    config = AcceleratorConfig("toy", 2, rubato="Par-80S", window=8, ooo=False, twiddles="rom").resolve()
    engine = mark_unused(config.engine(), deep=True)
    assert isa.Unit.RUBATO in engine.shape.units and engine.rubato_unit.params.name == "Par-80S"
    assert engine.manager.window == 8 and not engine.manager.ooo
    assert engine.ntt_unit.ntt_plan.kind == config.reducer


def test_accel_run_refuses_to_write_over_its_inputs(tmp_path, capsys):
    """``accel run --keys k.json ... -o k.json`` would replace the secret key with the ciphertext."""
    keys = tmp_path / "k.json"
    assert main(["ckks", "keygen", "--params", "toy", "--seed", "1", "-o", str(keys)]) == 0
    (tmp_path / "s.json").write_text(json.dumps({"re": [0.5], "im": [0]}))
    before = keys.read_bytes()
    capsys.readouterr()
    for out, flag in ((keys, "--keys"), (tmp_path / "s.json", "--in")):
        assert main(["accel", "run", "--program", "encrypt_pk", "--keys", str(keys), "--in", str(tmp_path / "s.json"),
                     "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert "'-o'" in err and flag in err and len(err.strip().splitlines()) == 1
    assert keys.read_bytes() == before


def test_a_hex_image_says_what_it_was_assembled_for(tmp_path, capsys):
    """The README's toy program: assembled with --params toy, disassembled without --params; the
    image's first line names the accelerator, and another --params is refused."""
    from hhe_gen.engine import asm
    prog, image = tmp_path / "prog.s", tmp_path / "prog.hex"
    assert main(["accel", "program", "encrypt_pk", "--params", "toy", "-o", str(prog)]) == 0
    assert main(["accel", "asm", str(prog), "--params", "toy", "-o", str(image)]) == 0
    assert asm.image_about(image.read_text()) == AcceleratorConfig("toy").image_about()
    capsys.readouterr()
    assert main(["accel", "disasm", str(image)]) == 0
    listing = capsys.readouterr().out
    assert "cfg.scale 20" in listing and ".word" not in listing        # toy's Delta = 2^20, no malformed word
    assert main(["accel", "disasm", str(image), "--params", "dna-hhe"]) == 2
    assert "'toy'" in capsys.readouterr().err
    # the header is a comment: the words are the program's
    assert asm.read_image(image) == asm.assemble(prog.read_text(), AcceleratorConfig("toy").shape)


def test_the_server_engine_is_a_configuration_too():
    """role="server": Q and P built in, the basis unit, no sampler / codec / network; the shape
    known without building it equals the engine's, and the client's parts are refused."""
    from hhe_gen.engine.server_programs import server_engine, server_shape
    config = AcceleratorConfig("toy", 2, role="server").resolve()
    toy = preset("toy")
    assert (config.buffers, config.window, config.reducer, config.twiddles, config.ntt_in_place) == \
        (24, 8, "barrett", "rom", False)
    assert {"buffers", "window", "reducer", "twiddles", "ntt_in_place"} <= set(dict(config.reasons))
    engine = mark_unused(config.engine(), deep=True)
    assert config.shape == engine.shape == server_shape(toy, 24)
    assert isa.Unit.BASIS in engine.shape.units and isa.Unit.SAMPLER not in engine.shape.units
    assert config.word_bits == engine.word_bits
    assert mark_unused(server_engine(toy), deep=True).shape == engine.shape
    assert config.describe()["values"]["role"] == "server"
    for wrong in (dict(rubato="128s"), dict(reducer="special-barrett"), dict(twiddles="otf"), dict(role="cloud")):
        with pytest.raises(ParameterError) as exc:
            AcceleratorConfig("toy", 2, **{"role": "server", **wrong}).resolve()
        assert exc.value.name == next(iter(wrong))


def test_the_datapath_is_a_choice_of_the_configuration():
    """``datapath="shared"`` builds the crypto unit (one butterfly array) instead of the NTT and
    pointwise units; a bad value, or a shared datapath on the server engine, is refused naming it."""
    shared = AcceleratorConfig("toy", 2, datapath="shared")
    assert shared.resolve().describe()["values"]["datapath"] == "shared"
    engine = mark_unused(shared.engine(), deep=True)
    assert engine.crypto_unit is not None and engine.ntt_unit is None and engine.pointwise_unit is None
    assert engine.shape == shared.shape
    with pytest.raises(ParameterError, match="'datapath'"):
        AcceleratorConfig("toy", 2, datapath="one").resolve()
    with pytest.raises(ParameterError, match="'datapath'"):
        AcceleratorConfig("dna-hhe", 2, role="server", datapath="shared").resolve()

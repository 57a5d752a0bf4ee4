"""A new user's mistakes, round two (issue 36): each ends with one bounded line on stderr naming what
is wrong, exit status 2, no traceback, and no input file overwritten."""

import json
import shutil

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

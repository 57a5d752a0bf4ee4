"""The user documentation in docs/ stays true to the code and self-contained.

- the tables of docs/presets.md and docs/rubato.md equal the tables rendered here from
  ``hhe_gen.params`` (run ``python tests/test_docs.py`` to print them after a change);
- every ```json block of docs/interchange.md parses, and the complete example files in it obey
  the rules that document states (row counts, row lengths, residue ranges, secret in {-1, 0, 1});
- no document refers to files outside the project (``../shared``, ``DESIGN.md``);
- every relative Markdown link points to an existing file.

Only pytest, the standard library and ``hhe_gen.params`` are used.
"""

import json
import re
from pathlib import Path

import pytest

from hhe_gen.params import PRESETS, RUBATO_SETS, CKKSParams, preset

DOCS = Path(__file__).resolve().parent.parent / "docs"
DOC_FILES = sorted(DOCS.glob("*.md"))
EXPECTED_DOCS = {"README.md", "conventions.md", "interchange.md", "presets.md", "rubato.md", "layout.md"}

# The paper each preset follows (by name prefix); presets not taken from a paper say so.
_PRESET_SOURCES = (
    ("dna-hhe", "DNA-HHE"),
    ("flexible-", "design-time-flexible HE hardware"),
    ("abc-fhe", "ABC-FHE"),
    ("kv260-", "KV260 NTT for Full-RNS HEAAN"),
    ("race-", "RACE"),
)


def preset_source(name: str) -> str:
    for prefix, source in _PRESET_SOURCES:
        if name.startswith(prefix):
            return source
    return "none (hhe-gen's own)"


def _cell(text) -> str:
    return str(text).replace("|", "\\|")


def render_presets_table() -> list[str]:
    """The rows of the presets table of docs/presets.md, rendered from PRESETS."""
    rows = ["| name | N | primes | bits per prime | log2 Q | log2 Delta | P (bits) | description | source |",
            "|---|---|---|---|---|---|---|---|---|"]
    for name, (_, description) in PRESETS.items():
        p = preset(name)
        s = p.summary()
        bits = s["bits"]
        bits_text = str(bits[0]) if len(set(bits)) == 1 else ", ".join(map(str, bits))
        special = ", ".join(str(q.bit_length()) for q in p.special_moduli) or "-"
        rows.append(f"| `{name}` | 2^{p.log_n} = {p.n} | {s['primes']} | {bits_text} | {s['logQ']:g} "
                    f"| {s['log_scale']} | {special} | {_cell(description)} | {preset_source(name)} |")
    return rows


def render_rubato_table() -> list[str]:
    """The rows of the parameter-set table of docs/rubato.md, rendered from RUBATO_SETS."""
    rows = ["| set | n | v | l | q | q bits | r | circulant first row | s | sigma | CDF entries | table defect | Delta |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in RUBATO_SETS.values():
        row = ", ".join(map(str, p.circulant))
        rows.append(f"| {p.name} | {p.n} | {p.v} | {p.l} | {p.q} = {p.q:#x} | {p.q_bits} | {p.rounds} "
                    f"| ({row}) | {p.noise_width_s} | {p.noise_sigma} | {len(p.cdf_table)} "
                    f"| {'yes' if p.cdf_table_defect else 'no'} | {p.delta:.1f} |")
    return rows


def _between_markers(text: str, name: str) -> list[str]:
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    assert text.count(begin) == 1 and text.count(end) == 1, f"markers {begin} / {end} missing or repeated"
    body = text.split(begin, 1)[1].split(end, 1)[0]
    return [line.rstrip() for line in body.strip().splitlines()]


def _json_blocks(text: str) -> list[str]:
    return re.findall(r"^```json[ \t]*\n(.*?)^```[ \t]*$", text, flags=re.S | re.M)


def test_all_documents_exist():
    assert EXPECTED_DOCS <= {p.name for p in DOC_FILES}


def test_index_lists_every_document():
    index = (DOCS / "README.md").read_text()
    for name in EXPECTED_DOCS - {"README.md"}:
        assert f"]({name})" in index, f"docs/README.md does not link {name}"


def test_presets_table_matches_code():
    got = _between_markers((DOCS / "presets.md").read_text(), "presets")
    assert got == render_presets_table()


def test_rubato_table_matches_code():
    got = _between_markers((DOCS / "rubato.md").read_text(), "rubato-sets")
    assert got == render_rubato_table()


def test_interchange_json_blocks_parse():
    blocks = _json_blocks((DOCS / "interchange.md").read_text())
    assert len(blocks) >= 5, "docs/interchange.md should show parameters, keys, ciphertexts and slots"
    for block in blocks:
        try:
            json.loads(block)
        except ValueError as exc:
            pytest.fail(f"a ```json block of docs/interchange.md does not parse ({exc}):\n{block[:200]}")


def _check_rows(rows, moduli, n, what, exact=None):
    assert isinstance(rows, list) and 1 <= len(rows) <= len(moduli), f"{what}: 1 .. len(Q) rows"
    if exact is not None:
        assert len(rows) == exact, f"{what}: {exact} rows"
    for i, row in enumerate(rows):
        assert len(row) == n, f"{what}[{i}]: N = {n} coefficients"
        assert all(type(x) is int and 0 <= x < moduli[i] for x in row), f"{what}[{i}]: residues mod q_{i}"


def test_interchange_examples_follow_the_rules():
    """The complete example files of docs/interchange.md obey the rules the document states."""
    docs = [json.loads(b) for b in _json_blocks((DOCS / "interchange.md").read_text())]
    params = [CKKSParams.from_interchange(d) for d in docs if isinstance(d, dict) and "LogN" in d]
    assert params, "no parameters example"

    def params_for(n):
        found = [p for p in params if p.n == n]
        assert len(found) == 1, f"exactly one parameters example with N = {n} expected"
        return found[0]

    kinds = set()
    for d in docs:
        if not isinstance(d, dict) or "LogN" in d:
            continue
        if "sk" in d:
            kinds.add("keys")
            p = params_for(d["N"])
            moduli, n = list(p.moduli), p.n
            assert d["Q"] == moduli
            assert len(d["sk"]) == n and all(type(x) is int and x in (-1, 0, 1) for x in d["sk"])
            _check_rows(d["pk0"], moduli, n, "pk0", exact=len(moduli))
            _check_rows(d["pk1"], moduli, n, "pk1", exact=len(moduli))
        elif "c0" in d:
            kinds.add("ciphertext")
            p = params_for(len(d["c0"][0]))
            assert d.get("form", "coeff") in ("coeff", "ntt")
            assert type(d["scale"]) in (int, float) and d["scale"] >= 1
            _check_rows(d["c0"], list(p.moduli), p.n, "c0")
            _check_rows(d["c1"], list(p.moduli), p.n, "c1", exact=len(d["c0"]))
        elif "re" in d:
            kinds.add("slots")
            im = d.get("im") or [0] * len(d["re"])
            assert len(im) == len(d["re"]) >= 1
            assert all(type(x) in (int, float) for x in d["re"] + im)
        else:
            pytest.fail(f"a ```json block of docs/interchange.md is none of the documented objects: {d}")
    assert kinds == {"keys", "ciphertext", "slots"}


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_no_reference_outside_the_project(path):
    text = path.read_text()
    for forbidden in ("../shared", "DESIGN.md"):
        assert forbidden not in text, f"{path.name} mentions {forbidden}"


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_relative_links_resolve(path):
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)   # links in code blocks do not count
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.I) or target.startswith("#"):
            continue                                   # absolute URL, mailto:, in-page anchor
        file_part = target.split("#", 1)[0]
        assert (path.parent / file_part).exists(), f"{path.name}: broken link {target}"


if __name__ == "__main__":
    print("<!-- presets:begin -->")
    print("\n".join(render_presets_table()))
    print("<!-- presets:end -->\n")
    print("<!-- rubato-sets:begin -->")
    print("\n".join(render_rubato_table()))
    print("<!-- rubato-sets:end -->")

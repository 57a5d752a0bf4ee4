"""docs/isa.md stays true to the code: every table between ``<!-- table:NAME -->`` and
``<!-- /table:NAME -->`` equals ``hhe_gen.engine.markdown_tables()[NAME]``, and the example listing
equals the program the generator makes.  After a change of the ISA or the programs, run
``python tests/engine/test_isa_doc.py`` to rewrite the generated blocks in place."""

import re
import sys
from pathlib import Path

from hhe_gen.engine import markdown_tables, programs
from hhe_gen.engine.model import shape_for_params
from hhe_gen.params import preset

DOCS = Path(__file__).resolve().parents[2] / "docs"
ISA_MD = DOCS / "isa.md"
BLOCK = re.compile(r"<!-- (table|listing):(\S+) -->\n(.*?)\n<!-- /\1:\2 -->", re.S)


def listings() -> dict[str, list[str]]:
    toy = preset("toy")
    text = programs.decrypt(toy, shape_for_params(toy, 16)).text
    return {"decrypt-toy": ["```asm", *text.splitlines(), "```"]}


def generated() -> dict[tuple[str, str], list[str]]:
    out = {("table", name): lines for name, lines in markdown_tables().items()}
    out.update({("listing", name): lines for name, lines in listings().items()})
    return out


def blocks(text: str) -> dict[tuple[str, str], list[str]]:
    found = {}
    for m in BLOCK.finditer(text):
        key = (m.group(1), m.group(2))
        assert key not in found, f"docs/isa.md has the block {key} twice"
        found[key] = m.group(3).splitlines()
    return found


def test_generated_blocks_equal_the_code():
    doc = blocks(ISA_MD.read_text())
    want = generated()
    assert set(doc) == set(want), "docs/isa.md blocks differ from the generated ones (names)"
    for key, lines in want.items():
        assert doc[key] == lines, f"docs/isa.md {key[0]} {key[1]!r} is stale: run python {__file__}"


def test_block_finder_sees_a_changed_table():
    text = ISA_MD.read_text()
    row = markdown_tables()["opcodes"][2]
    assert row in text
    changed = blocks(text.replace(row, row.replace("0x", "0y"), 1))
    assert changed[("table", "opcodes")] != markdown_tables()["opcodes"]


def test_docs_index_links_isa():
    assert "](isa.md)" in (DOCS / "README.md").read_text()


def _render(text: str) -> str:
    want = generated()

    def fill(m):
        lines = want[(m.group(1), m.group(2))]
        return f"<!-- {m.group(1)}:{m.group(2)} -->\n" + "\n".join(lines) + f"\n<!-- /{m.group(1)}:{m.group(2)} -->"
    text = BLOCK.sub(fill, text)
    # first generation from a template: @@table:NAME@@ / @@listing:NAME@@ placeholders
    return re.sub(r"@@(table|listing):(\S+?)@@",
                  lambda m: f"<!-- {m.group(1)}:{m.group(2)} -->\n" + "\n".join(want[(m.group(1), m.group(2))])
                  + f"\n<!-- /{m.group(1)}:{m.group(2)} -->", text)


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ISA_MD
    ISA_MD.write_text(_render(source.read_text()))
    print(f"wrote {ISA_MD}")

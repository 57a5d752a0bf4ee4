"""The measured figures in docs/*.md are the bench snapshot's: every block between
``<!-- figures:NAME -->`` and ``<!-- /figures:NAME -->`` equals
``hhe_gen.apps.report_tables.markdown_tables()[NAME]`` (rendered from
docs/figures/bench-snapshot.json), every table of the snapshot is in the docs once, and every row
names its case and the commit and date it was measured on.  After new bench results go into the
snapshot, run ``python tests/test_docs_figures.py`` to rewrite the generated blocks in place (a
``@@figures:NAME@@`` line in a document is replaced by a new block)."""

import re
import sys
from pathlib import Path

from hhe_gen.apps.report_tables import SNAPSHOT, TABLES, load_snapshot, markdown_tables

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"<!-- figures:(\S+) -->\n(.*?)\n<!-- /figures:\1 -->", re.S)
PLACEHOLDER = re.compile(r"@@figures:(\S+?)@@")


def blocks() -> dict[str, tuple[Path, list[str]]]:
    found = {}
    for doc in sorted(DOCS.glob("*.md")):
        for m in BLOCK.finditer(doc.read_text()):
            name = m.group(1)
            assert name not in found, f"the figures block {name!r} is in {found.get(name, (doc,))[0].name} and {doc.name}"
            found[name] = (doc, m.group(2).splitlines())
    return found


def test_snapshot_is_the_committed_file():
    assert SNAPSHOT == DOCS / "figures" / "bench-snapshot.json" and SNAPSHOT.exists()


def test_every_row_names_its_case_commit_and_date():
    for name, rows in load_snapshot()["tables"].items():
        assert name in TABLES and rows, name
        for row in rows:
            assert row["case"] and isinstance(row["values"], dict), (name, row)
            assert re.fullmatch(r"[0-9a-f]{7,12}", row["commit"]), (name, row["case"])
            assert re.fullmatch(r"\d{4}-\d\d-\d\d", row["date"]), (name, row["case"])
            assert isinstance(row.get("remeasured", True), bool)
            keys = {k for _, k in TABLES[name].columns}
            assert set(row["values"]) <= keys, f"{name} {row['case']}: values without a column {set(row['values']) - keys}"


def test_generated_blocks_equal_the_snapshot():
    doc = blocks()
    want = markdown_tables()
    assert set(doc) == set(want), f"docs figures blocks {sorted(doc)} differ from the snapshot's tables {sorted(want)}"
    for name, lines in want.items():
        path, got = doc[name]
        assert got == lines, f"{path.name} figures {name!r} is stale: run python {__file__}"


def test_each_table_says_its_commit():
    for name, lines in markdown_tables().items():
        commits = {r["commit"] for r in load_snapshot()["tables"][name]}
        text = "\n".join(lines)
        assert all(f"`{c}`" in text for c in commits), name


def test_not_remeasured_rows_say_so():
    snap = {"tables": {"fmax": [{"case": "fmax/x", "values": {"row": "r", "fmax_mhz": 1.0}, "commit": "abcdef0",
                                 "date": "2026-01-01", "remeasured": False, "note": "stale"}]}}
    text = "\n".join(markdown_tables(snap)["fmax"])
    assert "`abcdef0` (2026-01-01), not re-measured" in text and "| stale |" in text


def test_block_finder_sees_a_changed_table():
    name, (path, lines) = next(iter(blocks().items()))
    text = path.read_text()
    row = lines[2]
    changed = text.replace(row, row.replace("|", "| x", 1), 1)
    assert {m.group(1): m.group(2).splitlines() for m in BLOCK.finditer(changed)}[name] != markdown_tables()[name]


def _block(name: str, want: dict) -> str:
    return f"<!-- figures:{name} -->\n" + "\n".join(want[name]) + f"\n<!-- /figures:{name} -->"


def _render(text: str, want: dict) -> str:
    text = BLOCK.sub(lambda m: _block(m.group(1), want), text)
    return PLACEHOLDER.sub(lambda m: _block(m.group(1), want), text)


if __name__ == "__main__":
    want = markdown_tables()
    for doc in sorted(DOCS.glob("*.md")):
        old = doc.read_text()
        new = _render(old, want)
        if new != old:
            doc.write_text(new)
            print(f"wrote {doc}")
    missing = set(want) - set(blocks())
    if missing:
        sys.exit(f"tables in no document (add a @@figures:NAME@@ line): {', '.join(sorted(missing))}")

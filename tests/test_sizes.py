"""The module-size table of docs/design.md matches the code (issue 26, item 8).

Every package module over 800 lines has a "one concept" row whose line count is
within SLACK of ``wc -l``; every "one concept" row names a module that exists and is
over 800 lines; every split row names an existing module and parts that exist.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentic_machines"
DESIGN = ROOT / "docs" / "design.md"
LIMIT = 800
SLACK = 50
ROW = re.compile(r"^\| `([\w/]+\.py)` \| (\d+) \| ([^|]+?) \| (.+) \|$")
HOW = (
    "fix the 'Module sizes' table of docs/design.md: one row per module over "
    f"{LIMIT} lines, `| `path.py` | <wc -l> | one concept | <why> |`, or split it "
    "and add a `split into ...` row with its size before"
)


def _table() -> list[tuple[str, int, str]]:
    """The rows of the table, in order; the table is one block of '|' lines."""
    text = DESIGN.read_text(encoding="utf-8")
    start = text.index("## Module sizes")
    block = text[start:].split("\n## ", 1)[0]
    lines = block.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("| module |"))
    rows = []
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        match = ROW.match(line)
        assert match, f"not a table row: {line[:80]!r}; {HOW}"
        rows.append((match.group(1), int(match.group(2)), match.group(3)))
    return rows


def _sizes() -> dict[str, int]:
    return {
        path.relative_to(PACKAGE).as_posix(): len(path.read_bytes().splitlines())
        for path in PACKAGE.rglob("*.py")
    }


def test_table_is_one_block() -> None:
    # a blank line inside the table cuts the rows after it off into a paragraph
    block = DESIGN.read_text(encoding="utf-8").split("## Module sizes", 1)[1]
    block = block.split("\n## ", 1)[0]
    assert not re.search(r"\|\n\n\| `", block), (
        "a blank line splits the 'Module sizes' table of docs/design.md; remove it"
    )


def test_every_large_module_has_a_one_concept_row() -> None:
    kept = {name: lines for name, lines, decision in _table() if decision == "one concept"}
    large = {name: lines for name, lines in _sizes().items() if lines > LIMIT}
    missing = sorted(set(large) - set(kept))
    assert not missing, f"modules over {LIMIT} lines with no 'one concept' row: {missing}; {HOW}"
    stale = {
        name: (kept[name], large[name]) for name in large if abs(kept[name] - large[name]) > SLACK
    }
    assert not stale, f"stale line counts (table, wc -l): {stale}; update them in the table"


def test_every_row_names_a_real_module() -> None:
    sizes = _sizes()
    for name, lines, decision in _table():
        assert name in sizes, f"{name} is in the size table but not in the package; {HOW}"
        if decision == "one concept":
            assert sizes[name] > LIMIT, (
                f"{name} is {sizes[name]} lines, not over {LIMIT}: drop its row "
                "from the table (say so in the sentence under it)"
            )
        else:
            assert decision.startswith("split into "), f"{name}: decision {decision!r}; {HOW}"
            assert lines > LIMIT, f"{name}: a split row gives the size before the split"
            parts = re.findall(r"`(\w+)`", decision)
            assert parts, f"{name}: name the parts of the split in backquotes"
            folder = Path(name).parent
            for part in parts:
                path = (folder / f"{part}.py").as_posix()
                assert path in sizes, f"{name} split into `{part}`, but {path} does not exist"

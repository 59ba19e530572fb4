"""The fidelity table of docs/sources.md names only constructs that exist where it says.

Each row is ``| construct | status | where | why |``; ``where`` is
```module:attribute``` (optionally followed by ``∋ `name```, a name the attribute must
contain) or ``—`` for an absent construct. Every status is faithful, simplified or
absent, and a simplified or absent row says why.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

SOURCES = Path(__file__).resolve().parent.parent / "docs" / "sources.md"
STATUSES = ("faithful", "simplified", "absent")
WHERE = re.compile(r"`([\w.]+):([\w.]+)`(?: ∋ `([^`]+)`)?")


def table_rows() -> list[tuple[str, str, str, str, str]]:
    """(section, construct, status, where, why) for every row of the fidelity table."""
    text = SOURCES.read_text(encoding="utf-8")
    start = text.index("\n## Fidelity table\n")
    end = text.find("\n## ", start + 1)
    section, rows = "", []
    for line in text[start : end if end >= 0 else len(text)].splitlines():
        if line.startswith("### "):
            section = line[4:].strip()
            continue
        if not line.startswith("| ") or line.startswith("| construct ") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 4, f"a fidelity row has 4 cells: {line!r}"
        rows.append((section, *cells))
    return rows


ROWS = table_rows()


def test_the_table_covers_every_source():
    sections = {r[0] for r in ROWS}
    for name in ("The theory (SPE paper)", "ReAct", "RLM", "REPL-Plan", "THREAD", "Spell"):
        assert name in sections, f"no fidelity rows for {name}"
    assert len(ROWS) >= 60
    # every status occurs, and each source has a row of its own kind of gap or none
    assert {r[2] for r in ROWS} == set(STATUSES)


@pytest.mark.parametrize("section,construct,status,where,why", ROWS, ids=[r[1][:50] for r in ROWS])
def test_every_row_names_what_exists(section, construct, status, where, why):
    assert status in STATUSES, f"{construct}: status {status!r}"
    if status != "faithful":
        assert why, f"{construct}: a {status} construct says why"
    if status == "absent":
        assert where == "—", f"{construct}: an absent construct has no place ({where})"
        return
    match = WHERE.fullmatch(where)
    assert match, f"{construct}: where is `module:attribute` [∋ `name`], got {where!r}"
    module, attribute, member = match.groups()
    obj = importlib.import_module(module)
    for part in attribute.split("."):
        assert hasattr(obj, part), f"{construct}: {module}:{attribute} does not exist"
        obj = getattr(obj, part)
    if member is not None:
        assert member in obj, f"{construct}: {module}:{attribute} lacks {member!r}"

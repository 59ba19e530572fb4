"""One plural rule for a count in a message, ``_text.counted`` (and ``_text.plural`` for a
word that names a list or a verb that agrees with a count): no message says ``1 step(s)``
(issue 36, noticed defects)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentic_machines import HALT, TableMachine
from agentic_machines.errors import InvalidArgument, InvalidMachine, ScriptExhausted

PACKAGE = Path(__file__).resolve().parent.parent / "agentic_machines"
# "{n} noun(s)" in a message of the package's code
COUNT_THEN_S = re.compile(r"\{[^{}]+\} [A-Za-z -]*\((?:s|es|ies)\)")
# the golden-file format of testing.render_trace, which users' golden files hold, stays as it is
KEPT = {"testing.py"}


def test_no_message_counts_with_a_noun_in_parentheses() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name not in KEPT
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if COUNT_THEN_S.search(line)
    ]
    assert not found, "use _text.counted(n, noun):\n" + "\n".join(found)


def test_one_of_a_kind_reads_in_the_singular(tmp_path) -> None:
    from agentic_machines.architectures import repl_plan as rp
    from agentic_machines.drawing.gallery import write_gallery
    from agentic_machines.models import RecordingModel, ReplayModel, ScriptedModel

    with pytest.raises(InvalidMachine, match=r"has 1 problem:"):
        TableMachine({"a": "p"}, {("a", "x"): "b", ("a", "y"): HALT})
    model = rp.scripted_model({"main": ["answer(1)"]})
    model.complete("REPL: main\n#START#\n>>> ")
    with pytest.raises(ScriptExhausted, match=r"has 1 block for REPL 'main'"):
        model.complete("REPL: main\n#START#\n>>> ")
    path = tmp_path / "c.jsonl"
    RecordingModel(ScriptedModel(["a"]), path).complete("p")
    replay = ReplayModel(path)
    replay.complete("p")
    with pytest.raises(ScriptExhausted, match=r"holds 1 call but"):
        replay.complete("p")
    with pytest.raises(InvalidArgument, match=r"unknown gallery picture \['nope'\]"):
        write_gallery(tmp_path, only=["nope"])

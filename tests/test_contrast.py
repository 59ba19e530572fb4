"""The contrast table: one row per architecture, honest statuses, renderings."""

from pathlib import Path

import pytest
from _helpers import experiment

from agentic_machines.architectures import ARCHITECTURES
from agentic_machines.drawing.contrast import (
    SPE_QUESTION,
    Row,
    contrast_rows,
    render_table,
    to_markdown,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rows():
    return contrast_rows()


def test_one_spe_row_per_architecture(rows):
    spe_rows = [r for r in rows if r.question == SPE_QUESTION]
    assert [r.name for r in spe_rows] == list(ARCHITECTURES)


def test_spe_and_spell_hold_and_the_others_are_refuted_by_f2(rows):
    for r in rows:
        if r.question != SPE_QUESTION:
            continue
        if r.name == "spe":
            assert (r.status, r.method) == ("holds", "sampled")
            assert "states" in r.checked
        elif r.name == "spell":
            # the loader covers every state, nested children included
            assert (r.status, r.method) == ("holds", "sampled")
            assert "proofs/spell_loader.md" in r.certificate
        else:
            assert (r.status, r.method) == ("refuted", "fact:F2"), r
            assert r.checked.endswith("completions") and "proofs/" in r.certificate


def test_extra_rows_when_spe_is_present(rows):
    if "spe" not in ARCHITECTURES:
        pytest.skip("the SPE architecture is not registered")
    extras = [r for r in rows if r.question != SPE_QUESTION]
    assert any(r.status == "refuted" and r.method == "fact:F5" for r in extras)


def test_spell_rows_give_the_decided_verdict_and_the_naive_obstruction(rows):
    extra = {r.name: r for r in rows if r.question != SPE_QUESTION}
    assert "spell" not in extra and extra["spell-naive"].status == "refuted"
    assert extra["spell-naive"].method == "fact:F2"
    spell = next(r for r in rows if r.question == SPE_QUESTION and r.name == "spell")
    assert spell.status == "holds" and "nested" in spell.certificate


def test_renderings_have_every_row_on_one_line(rows):
    table = render_table(rows)
    assert len(table.splitlines()) == len(rows) + 2
    md = to_markdown(rows)
    assert len(md.splitlines()) == len(rows) + 2
    assert all(line.startswith("| ") and line.endswith(" |") for line in md.splitlines()[2:])


def test_markdown_escapes_pipes():
    md = to_markdown([Row("a|b", "holds", "sampled", "x | y", "1 checked")])
    assert "a\\|b" in md and "x \\| y" in md


def test_experiment_writes_the_markdown(rows, tmp_path, capsys, monkeypatch):
    module = experiment("contrast")
    # the rows the tests above check, computed once (contrast_rows is most of the script's time)
    monkeypatch.setattr(module, "contrast_rows", lambda: rows)
    out = tmp_path / "contrast.md"
    assert module.main(["--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# The contrast") and "| react |" in text
    assert "initial state SPE?" in capsys.readouterr().out


def test_write_diagrams_marks_the_obstruction_state(tmp_path):
    from agentic_machines.drawing.contrast import write_diagrams

    paths = write_diagrams(tmp_path, ["react"])
    assert [p.name for p in paths] == ["react.png", "react.mmd"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mermaid = paths[1].read_text()
    assert mermaid.startswith("flowchart") and "obstruction" in mermaid.lower()

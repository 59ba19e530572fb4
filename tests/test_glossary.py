"""The glossary behind `explain`: every example runs, every term can be found."""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from pathlib import Path

import pytest

from agentic_machines.cli.glossary import TERMS, lookup, render, suggest, term_names
from agentic_machines.errors import InvalidArgument

REQUIRED = [
    "agentic machine",
    "prompt function",
    "harness",
    "HALT",
    "DIVERGE",
    "transition kernel",
    "embedding",
    "successors",
    "completion-generation",
    "loader",
    "SPE state",
    "F1",
    "F2",
    "F3",
    "F4",
    "F5",
    "F6",
    "boundary state",
    "seed state",
    "CEK machine",
    "HarnessMachine",
    "trace state",
    # the architectures, and the words of every verdict
    "ReAct",
    "RLM",
    "REPL-Plan",
    "THREAD",
    "SPE architecture",
    "Spell",
    "obstruction",
    "witness",
    "verdict",
    "invariant",
    "realizable machine",
]

# Words the tutorial uses as technical terms: `explain` must know each of them.
TUTORIAL_TERMS = [
    "prompt space",
    "completion space",
    "model",
    "run",
    "line budget",
    "kernel form",
    "F2 fixtures",
    "universality",
    "realizable",
    "successor invariant",
    "loader",
    "x*",
    "prompt-monotone",
    "commutation propagation",
    "SPE",
    "spell",
    "repl plan",
]


def test_every_required_term_is_there():
    assert set(REQUIRED) <= set(term_names())
    for word in TUTORIAL_TERMS:
        lookup(word)  # raises when unknown


def test_every_term_of_the_glossary_page_can_be_explained():
    page = (Path(__file__).resolve().parent.parent / "docs" / "glossary.md").read_text("utf-8")
    for heading in re.findall(r"^\*\*([^*]+?)\.?\*\*", page, flags=re.M):
        for name in re.split(r",\s*", heading.split(" (")[0]):
            if name in ("F1–F6", "Architectures"):  # groups, explained one by one
                continue
            lookup(name)


def test_cek_states_are_written_in_the_tutorials_notation():
    # chapter 4 writes a CEK state (e, rho, kappa); explain wrote <llm q, E, K> once (issue 41)
    for term in TERMS:
        for state in re.findall(r"⟨[^⟩]*⟩", term.symbols):
            assert not re.search(r"\b[CEK]\b", state), f"{term.name}: {state} (write e, ρ, κ)"


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.name)
def test_example_prints_exactly_the_result_explain_shows(term):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(
            compile(term.example, f"<glossary: {term.name}>", "exec"),
            {"__name__": "glossary_example"},
        )
    assert out.getvalue().strip(), f"the example of {term.name!r} prints nothing"
    assert out.getvalue() == term.result, f"the stored result of {term.name!r} is stale"
    assert term.symbols and len(term.words) > 40
    shown = render(term)
    assert shown.startswith(term.name)
    assert "It prints:\n" + textwrap.indent(term.result.rstrip(), "  ") in shown


def test_examples_show_what_they_claim():
    def run(name):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(lookup(name).example, {})
        return out.getvalue()

    assert run("SPE state").strip() == "[1] False"  # f2-mul: 1 is SPE, 0 is not
    assert run("F5").strip() == "False"
    assert run("seed state").strip() == "True"


def test_lookup_is_forgiving_and_unknown_terms_suggest():
    assert lookup("spe-state").name == lookup("SPE_STATE").name == "SPE state"
    assert lookup("x*").name == "seed state" and lookup("TraceState").name == "trace state"
    assert suggest("kernal")[0] == "transition kernel"
    with pytest.raises(InvalidArgument, match="did you mean"):
        lookup("sucessors")
    with pytest.raises(InvalidArgument, match="agentic machine"):
        lookup("qqqq")

"""One rule cuts every prompt shown (issue 36, item 7): ``_text.clip_prompt`` keeps the
part after the longest common prefix with the prompts around it, with the cut marked, and
explore's listing and the text diagrams use it, so states whose prompts differ only at the
end stay apart."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import FunctionMachine
from agentic_machines._text import clip_prompt, clip_prompt_repr
from agentic_machines.cli.explore import describe_graph
from agentic_machines.drawing.diagrams import to_dot, to_mermaid
from agentic_machines.runtime.explore import explore
from agentic_machines.strategies import examples

texts = st.text(alphabet="ab \n", max_size=40)


def _shared(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@settings(max_examples=examples(200, 1000))
@given(prefix=texts, text=texts, other=texts, width=st.integers(3, 30))
def test_the_first_character_that_differs_is_shown(prefix, text, other, width) -> None:
    text, other = prefix + text, prefix + other
    shown = clip_prompt(text, width, [other])
    assert len(shown) <= width
    if len(text) <= width:
        assert shown == text
        return
    assert "…" in shown  # a cut is always marked
    core = shown.removeprefix("…")
    core = core.removesuffix("…") if core.endswith("…") and not text.endswith(core) else core
    at = _shared(text, other) if text != other else 0
    # what is shown is a piece of the prompt that holds its first different character
    if at < len(text):
        assert any(
            text[i : i + len(core)] == core and i <= at < i + len(core)
            for i in range(len(text) - len(core) + 1)
        ), (text, other, shown)


@settings(max_examples=examples(100, 500))
@given(text=texts, other=texts, width=st.integers(6, 40))
def test_the_quoted_cut_fits_and_is_closed(text, other, width) -> None:
    shown = clip_prompt_repr(text, width, [other])
    assert len(shown) <= max(width, 3) and shown[0] == shown[-1] and shown[0] in "'\""


def _tickets():
    ask = "Ticket: Customer bought a kettle that leaks and wants a refund or a new one. Decide."
    return FunctionMachine(
        lambda s: ask + "".join(f"\nObservation: you chose {c}" for c in s),
        lambda s, c: s + (c,) if len(s) < 2 else s,
        completions=["refund", "replace"],
        initial=(),
        name="tickets",
    )


def test_siblings_that_differ_at_the_end_stay_apart_in_explore_and_diagrams() -> None:
    g = explore(_tickets(), max_depth=1)
    listing = describe_graph(g)
    refund = next(line for line in listing.splitlines() if "('refund',)  depth" in line)
    replace = next(line for line in listing.splitlines() if "('replace',)  depth" in line)
    assert "you chose refund'" in refund and "you chose replace'" in replace
    assert "…" in refund  # the shared start was cut, visibly
    for text in (to_mermaid(g), to_dot(g)):
        assert "you chose refund" in text and "you chose replace" in text


# -- every other place that shows a prompt or a state that holds one (issue 36, item 7) ------
ASK = "System: you answer support tickets for a shop. " * 3
TAIL = " Answer in one word, then stop, and say nothing else at all, please, thank you."


def test_spell_session_turns_are_told_apart() -> None:
    from agentic_machines.spell.spell_machine import run_spell

    leaf = '(leaf-llm "{}")'
    asks = [
        leaf.format(f"Ticket 1: kettle leaks.{TAIL}"),
        leaf.format(f"Ticket 2: toaster burns.{TAIL}"),
    ]
    program = f"(quine completion (eval (do (quote (list {' '.join(asks)})))))"
    turns = [line for line in run_spell(program, ["refund", "replace"]).describe().splitlines()]
    assert "kettle leaks" in turns[0] and "toaster burns" in turns[2], turns


def test_model_errors_show_the_prompt_where_it_differs() -> None:
    from agentic_machines.errors import ScriptExhausted, UnmatchedPrompt
    from agentic_machines.models import MappingModel, ScriptedModel

    first, second = (ASK * 3 + f"Ticket {t}." + TAIL * 3 for t in ("1: kettle", "2: toaster"))
    model = ScriptedModel(["refund"])
    model.complete(first)
    with pytest.raises(ScriptExhausted, match="toaster"):
        model.complete(second)
    mapped = MappingModel({"kettle": "refund"})
    mapped.complete(first)
    with pytest.raises(UnmatchedPrompt, match="toaster"):
        mapped.complete(second)


def test_spell_boundaries_that_share_both_ends_read_apart() -> None:
    from agentic_machines.spell.evaluator import Boundary

    a, b = (Boundary("self", f"{ASK}Ticket {n}: kettle leaks.{TAIL}", ()) for n in (1, 2))
    assert repr(a) != repr(b)
    graph = explore(
        FunctionMachine(
            lambda s: s.prompt,
            lambda s, c: Boundary("self", s.prompt.replace("Ticket 0", f"Ticket {c}"), ()),
            completions=["1", "2"],
            initial=Boundary("self", f"{ASK}Ticket 0: kettle leaks.{TAIL}", ()),
            name="boundaries",
        ),
        max_depth=1,
    )
    lines = [line for line in describe_graph(graph).splitlines() if "  depth 1  prompt" in line]
    states = [line.split("  depth")[0] for line in lines]
    assert len(states) == 2 and "1: kettle" in states[0] and "2: kettle" in states[1], lines


def _long_states():
    """States (tuples) holding a long shared question, told apart by their last answer."""
    return FunctionMachine(
        lambda s: ASK + " ".join(s[1:]) + TAIL,
        lambda s, c: s + (c,) if len(s) < 2 else s,
        completions=["refund", "replace"],
        initial=(ASK,),
        name="long",
    )


def test_verdict_sentences_and_counterexamples_tell_states_apart() -> None:
    from agentic_machines.checking import check_properties, unreachable
    from agentic_machines.checking.properties import Transition

    r = check_properties(
        _long_states(),
        properties=[
            unreachable(lambda s: s[-1] == "replace", name="replace"),
            Transition("no replace", lambda s, c, t: c != "replace"),
        ],
    )
    state = r.counterexample("unreachable(replace)").explanation
    assert "'replace')" in state and "replace" in state.split("prompt of")[1], state
    step = r.counterexample("no replace").explanation
    assert "'replace')" in step.split("-->")[1], step
    shown = r.counterexample("unreachable(replace)").describe()
    assert "'replace')" in shown, shown


def test_a_trace_table_shows_each_prompt_where_it_differs() -> None:
    from agentic_machines import run
    from agentic_machines.models import ScriptedModel

    trace = run(_long_states(), ScriptedModel(["refund", "replace"]), max_steps=2)
    rows = str(trace).splitlines()
    assert "'…refund Answer in one word" in rows[3], rows  # the prompt column of step 1


def test_a_trace_description_tells_its_states_apart() -> None:
    from agentic_machines import run
    from agentic_machines.models import ScriptedModel

    text = run(_long_states(), ScriptedModel(["refund", "replace"]), max_steps=2).describe()
    steps = [line for line in text.splitlines() if line.startswith("step ")]
    assert "'refund')" in steps[1] and "'refund')" not in steps[0], steps


def test_unreached_prompts_and_the_run_checks_invariant_show_where_they_differ() -> None:
    from agentic_machines import HALT, TableMachine
    from agentic_machines.checking import check_properties, never_raises, unreachable
    from agentic_machines.checking.stateful import hypothesis_check

    ask = "Ticket: a customer's kettle leaks and the support desk must now decide: "
    m = TableMachine(
        {0: "start", 1: ask + "refund", 2: ask + "replace", 3: ask + "repair"},
        {(s, "a"): HALT for s in range(4)},
        initial=0,
    )
    never = check_properties(m, properties=[never_raises()]).report().splitlines()[-1]
    assert all(f"decide: {word}" in never for word in ("refund", "replace", "repair")), never
    # the Hypothesis run's invariant sentence cuts its prompt as the search's does
    turn = FunctionMachine(lambda n: ask + f"turn {n}", lambda n, c: n + 1, initial=0, name="t")
    props = [unreachable(lambda n: n == 2, name="two")]
    found = check_properties(turn, properties=props, completions=["go"], max_states=5)
    ran = hypothesis_check(turn, properties=props, completions=["go"], max_examples=10)
    said = [r.counterexamples["unreachable(two)"].explanation for r in (found, ran)]
    assert said[0] == said[1] and "turn 2'" in said[1], said


def test_a_machines_markdown_table_shows_prompts_where_they_differ() -> None:
    from agentic_machines import HALT, TableMachine
    from agentic_machines.drawing.display import machine_markdown

    ask = "Ticket: a customer's kettle leaks and the desk must decide: "
    m = TableMachine({0: ask + "refund", 1: ask + "replace"}, {(0, "a"): 1, (1, "a"): HALT})
    table = machine_markdown(m)
    assert "decide: refund" in table and "decide: replace" in table, table


def test_a_replay_mismatch_shows_each_prompt_past_the_part_they_share() -> None:
    from agentic_machines import HALT, TableMachine, run
    from agentic_machines.errors import ReplayMismatch
    from agentic_machines.models import ScriptedModel, describe_difference

    ask = "Ticket: a customer's kettle leaks. Decide. Observation 1: "
    said = describe_difference(ask + "the kettle is under warranty", ask + "the receipt is lost")
    at = len(ask + "the ")
    assert f"at character {at}:" in said, said
    # each prompt from where they differ, to its end (a window of 12 characters cut both)
    assert "the kettle is under warranty'" in said and "the receipt is lost'" in said, said
    assert said.count("'…") == 2, said  # both cut at the front, the cut marked
    # a long shared start and a long tail: the cut is marked at both ends
    long = describe_difference(ask + "x" * 80, ask + "y" * 80, 20)
    assert "recorded '…xxxxxxxxxxxxxxxx…', got '…yyyyyyyyyyyyyyyy…'" in long, long
    # run's replay says it the same way
    recorded = run(
        TableMachine({0: ask + "one"}, {(0, "a"): HALT}, initial=0), ScriptedModel(["a"])
    )
    changed = TableMachine({0: ask + "the other one"}, {(0, "a"): HALT}, initial=0)
    with pytest.raises(ReplayMismatch, match="got '….* the other one'"):
        recorded.replay(changed)


def test_exercise_feedback_cuts_its_prompts_by_the_one_rule() -> None:
    from agentic_machines.exercises.checks import check

    same = str(check("5.1", {"invariant": lambda b, a: True}))
    # the prompt and its repeat, each cut where the run's prompts differ, the cut marked
    assert same.count("'… the Eiffel Tower stands?\\nThought 1:'") == 2, same
    left = str(check("5.2", {"same_prompt": [" I should search.\nAction 1: Search[Eiffel Tower]"]}))
    assert "whose prompt is '… I should search." in left, left  # where it leaves x0's prompt
    halted = str(check("7.3", {"completion": " '(+ 1 1)"}))
    assert "leads to HALT (1), not the state" in halted, halted  # no "whose prompt ends HALT"


def test_repl_plans_unrouted_prompt_and_a_machines_first_prompt_close_their_quotes() -> None:
    from agentic_machines import FunctionMachine
    from agentic_machines.architectures import repl_plan as rp
    from agentic_machines.drawing.display import machine_markdown
    from agentic_machines.errors import UnmatchedPrompt

    with pytest.raises(UnmatchedPrompt, match="first line is 'Q" + "x" * 58 + "…', which"):
        rp.scripted_model({}).complete("Q" + "x" * 100 + "\nmore")
    m = FunctionMachine(lambda n: "Ticket: " + "y" * 80, lambda n, c: n + 1, initial=0)
    assert "with prompt `'Ticket: " + "y" * 29 + "…'`" in machine_markdown(m)

"""Spell: golden tests for every construct, and no replay as a property."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import HALT
from agentic_machines.architectures import spell as arch
from agentic_machines.cek import parse, unparse
from agentic_machines.cek.syntax import to_items
from agentic_machines.errors import EvaluationError, UnboundEffect
from agentic_machines.spell import (
    NaiveMachine,
    SpellMachine,
    ToolEnvironment,
    apply_edits,
    balance,
    reopen,
    run_spell,
    run_text,
    seed_program,
    turn_kind,
    wrap_cat,
)

WRAP = "(quine completion (eval (do {} ))))"


# ---------------------------------------------------------------- quine


def test_quine_prints_itself() -> None:
    assert run_text("(quine self (pr-str self))") == "(quine self (pr-str self))"


def test_quine_binds_the_whole_form_and_only_the_last_body_form_is_live() -> None:
    assert run_text("(quine q (+ 41 1))") == 42
    assert unparse(run_text("(quine q q)")) == "(quine q q)"
    # (car nil) would fail, but it is not the last form: inert
    assert run_text("(quine q (car nil) (+ 1 1))") == 2


# ---------------------------------------------------------------- the effect boundary


def test_effect_outside_the_trailing_eval_is_unbound() -> None:
    with pytest.raises(UnboundEffect, match="unbound symbol `!llm-self`"):
        run_text('(quine completion (eval (do (!llm-self "No"))))')
    env = ToolEnvironment({"tool": lambda: "x"})
    with pytest.raises(UnboundEffect, match="`tool`"):
        run_text("(quine completion (eval (do (tool) 'nil)))", env)
    with pytest.raises(UnboundEffect):  # not a wrapper: no outer eval at all
        run_text("(tool)", env)
    with pytest.raises(UnboundEffect):  # a nested eval binds nothing
        run_text("(quine completion (eval (do (eval '(tool)) 'nil)))", env)
    assert env.total_calls == 0


def test_effect_inside_the_trailing_eval_is_bound_and_reaches_called_functions() -> None:
    env = ToolEnvironment({"tool": lambda: "x"})
    assert run_text("(quine completion (eval (do '(tool))))", env) == "x"
    assert run_text("(quine completion (eval (do (defn f () (tool)) '(f))))", env) == "x"
    assert env.calls["tool"] == 2


def test_turn_kinds() -> None:
    assert turn_kind("(quine completion (eval (do '(+ 1 2))))") == "halt"
    assert turn_kind("(quine completion (eval (do '(!extend))))") == "turn"
    assert (
        turn_kind('(quine completion (eval (do \'(f (!llm-self "a") (!llm-self "b")))))') == "fork"
    )
    # halt: no model call; one: one new turn; two: two child sessions in order
    assert run_spell(WRAP.format("'(+ 1 2)"), []).value == 3
    r = run_spell(WRAP.format('\'(list (!llm-self "a") (!llm-self "b"))'), ["1", "2"])
    assert r.value == parse("(1 2)") and [s.prompt for s in r.states] == [
        wrap_cat(["a"]),
        wrap_cat(["b"]),
    ]


def test_appending_a_form_makes_the_old_trailing_form_inert() -> None:
    env = ToolEnvironment({"send": lambda: "sent"})
    m = SpellMachine(env)
    s = m.harness(m.initial, " '(!call-now r (send))")
    assert env.calls["send"] == 1
    assert m.harness(s, " '(str r)") is HALT and m.last_record.value == "sent"
    assert env.calls["send"] == 1  # the old trailing '(!call-now ...) is visible, not fired


def test_fresh_environment_per_self_call() -> None:
    # the child cannot read the parent's x, and its def does not reach the parent
    prog = '(quine completion (eval (do (def x 1) \'(list (!llm-self "child") x))))'
    r = run_spell(prog, ["x"])
    assert r.error is not None or r.recoveries  # x unbound in the child
    r = run_spell(prog, ["(def x 99) x"])
    assert r.value == parse("(99 1)")


# ---------------------------------------------------------------- the completion is the program


def test_completion_is_concatenated_balanced_and_evaluated() -> None:
    m = SpellMachine(task="t")
    assert m.harness(m.initial, " '(+ 1 2") is HALT and m.last_record.value == 3
    assert balance("(a))) (b") == "(a) (b)"


def test_llm_self_inside_if_recursion_and_user_functions() -> None:
    prog = WRAP.format(
        '(defn ask (n) (if (= n 0) nil (cons (!llm-self (str "n=" n)) (ask (- n 1))))) \'(ask 3)'
    )
    r = run_spell(prog, ["1", "2", "3"])
    assert r.value == parse("(1 2 3)")
    assert [s.prompt for s in r.states][-1] == wrap_cat(["n=1"])


def test_leaf_llm_is_never_evaluated() -> None:
    r = run_spell(WRAP.format('\'(leaf-llm "say (car nil)")'), ["(car nil)"])
    assert (
        r.value == "(car nil)"
        and r.states[0].kind == "leaf"
        and r.states[0].prompt == "say (car nil)"
    )


# ---------------------------------------------------------------- helpers and markers


def test_reopen_and_wrap_cat() -> None:
    text = "(quine completion (eval (do 1 '(f))))"
    assert reopen(text) + ")))" == text
    assert reopen(parse(text)) + ")))" == text
    assert parse(balance(wrap_cat(["plan", parse("(a b)")]))) == parse(
        '(quine completion (eval (do "plan" (a b))))'
    )


def test_call_now_materialises_the_result() -> None:
    env = ToolEnvironment({"read": lambda: "big text"})
    m = SpellMachine(env)
    s = m.harness(m.initial, " '(!call-now doc (read))")
    assert s.prompt.endswith('(def doc "big text") ')
    for _ in range(3):  # re-evaluating the materialised program never reads again
        assert m.harness(s, " '(str doc)") is HALT
    assert env.calls["read"] == 1


def test_peek_persist_extend() -> None:
    env = ToolEnvironment({"ls": lambda: ["a.txt", "b.txt", "c.txt"]})
    m = SpellMachine(env)
    s = m.harness(m.initial, " '(!peek files (ls))")
    assert "(prune 2)" in s.prompt
    s2 = m.harness(s, " (persist n (count files)) '(!extend)")
    assert "files" not in s2.prompt and "(persist n 3)" in s2.prompt and "!peek" not in s2.prompt
    assert m.harness(s2, " '(+ n 1)") is HALT and m.last_record.value == 4
    assert env.calls["ls"] == 1


def test_edit_markers_runtime_and_edit_time() -> None:
    assert run_text('(do (prune) (think "x" 1) (rethink 2 "y" 2))') is parse("nil")
    assert run_text("(do (persist x 5) x)") == 5
    d = parse('(do a b (prune 2) c (rethink "r" d) (think "t") e (prune) f)')
    once = apply_edits(d)
    assert unparse(once) == '(do (think "r" d) (think "t") f)'
    assert apply_edits(once) == once  # idempotent


# ---------------------------------------------------------------- error recovery


def test_evaluation_error_appends_recovery_and_fresh_wrapper() -> None:
    m = SpellMachine(task="t")
    s = m.harness(m.initial, " '(car nil)")
    assert m.last_record.recoveries and "car" in m.last_record.recoveries[0]
    assert '"spell-recovery" 1' in s.prompt and s.prompt.endswith(
        '(eval (do "t" \'(!llm-self (reopen completion))'
    )
    assert m.harness(s, " '(+ 1 1)") is HALT and m.last_record.value == 2


def test_parse_error_becomes_an_inert_string() -> None:
    m = SpellMachine(task="t")
    s = m.harness(m.initial, ' "oops')
    items = to_items(parse(balance(s.prompt)))
    assert type(items[2]) is str and items[2].endswith('"oops')  # the raw text, inert
    assert "parse error" in s.prompt and '\\"oops' in s.prompt


def test_retry_budget_is_two_shared() -> None:
    m = SpellMachine(task="t")
    s = m.harness(m.initial, ' "oops')  # parse error: attempt 1
    s = m.harness(s, " '(car nil)")  # evaluation error: attempt 2
    assert '"spell-recovery" 2' in s.prompt
    assert m.harness(s, " '(car nil)") is HALT  # attempt 3: past the budget
    assert isinstance(m.last_record.error, EvaluationError)


# ---------------------------------------------------------------- the architecture


def test_architecture_contract() -> None:
    m = arch.machine()
    model = arch.scripted_model()
    s = arch.initial
    while s is not HALT:
        s = m.harness(s, model.complete(m.prompt(s)))
    assert m.last_record.value == "sent to ada@example.com: buy milk"
    assert dict(m.environment.calls) == {"read-file": 1, "send-email": 1}
    assert arch.diagram_completions(m.prompt(arch.initial))


def test_naive_machine_replays() -> None:
    env = arch.environment()
    m = arch.naive_machine(env)
    s = m.initial
    for c in arch.NAIVE_SCRIPT:
        s = m.harness(s, c)
    assert s is HALT and env.calls == {"read-file": 3, "send-email": 2}


# ---------------------------------------------------------------- no replay, as a property

_TOOLS = ("alpha", "beta")


def _tool(name: str):
    return lambda *args: f"{name}{len(args)}"


def _env() -> ToolEnvironment:
    return ToolEnvironment({t: _tool(t) for t in _TOOLS})


_step = st.one_of(
    st.tuples(st.just("tool"), st.sampled_from(_TOOLS)),
    st.tuples(st.just("def"), st.integers(0, 9)),
    st.tuples(st.just("think"), st.integers(0, 9)),
    st.tuples(st.just("prune"), st.integers(0, 9)),
    st.tuples(st.just("peek"), st.sampled_from(_TOOLS)),
)


def _spell_turn(i: int, step: tuple) -> str:
    kind, arg = step
    if kind == "tool":
        return f" '(!call-now v{i} ({arg}))"
    if kind == "peek":
        return f" '(!peek v{i} ({arg}))"
    if kind == "def":
        return f" (def d{i} {arg}) '(!extend)"
    if kind == "think":
        return f' (think "step {arg}" {arg}) \'(!extend)'
    return f" (def d{i} {arg}) (prune) '(!extend)"


def _naive_turn(i: int, step: tuple) -> str:
    kind, arg = step
    if kind in ("tool", "peek"):
        return f"(def v{i} ({arg}))"
    if kind == "think":
        return f'(think "step {arg}" {arg})'
    return f"(def d{i} {arg})"


@settings(max_examples=30, deadline=None)
@given(st.lists(_step, min_size=1, max_size=8))
def test_no_replay_under_spell_but_replay_under_naive(session: list) -> None:
    expected = sum(1 for kind, _ in session if kind in ("tool", "peek"))
    env = _env()
    m = SpellMachine(env)
    s = m.initial
    for i, step in enumerate(session):
        s = m.harness(s, _spell_turn(i, step))
        assert s is not HALT and m.last_record.error is None and not m.last_record.recoveries
    assert m.harness(s, " '(+ 1 1)") is HALT
    assert env.total_calls == expected  # every tool effect fired exactly once

    env2 = _env()
    naive = NaiveMachine(env2)
    s = naive.initial
    for i, step in enumerate(session):
        s = naive.harness(s, _naive_turn(i, step))
    # each tool form runs again at every later turn
    n = len(session)
    replayed = sum(n - i for i, (kind, _) in enumerate(session) if kind in ("tool", "peek"))
    assert env2.total_calls == replayed
    if expected and n - min(i for i, (k, _) in enumerate(session) if k in ("tool", "peek")) > 1:
        assert env2.total_calls > expected


def test_seed_program_reaches_its_prompt() -> None:
    m = SpellMachine(task="go")
    assert m.load(seed_program("go")) == m.initial


# ---------------------------------------------------------------- the loader


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(arch.SAMPLE_COMPLETIONS), min_size=1, max_size=4))
def test_loader_reaches_every_reachable_state(script: list) -> None:
    from agentic_machines.spell.loader import is_loadable, loader

    m = arch.machine()
    s = arch.initial
    for c in script:
        s = m.harness(s, c)
        if s is HALT:
            break
        assert is_loadable(s)
        before = m.environment.total_calls
        assert m.harness(arch.initial, loader(s)) == s
        assert m.environment.total_calls == before


def test_a_child_waiting_inside_its_own_computation_is_loaded_with_spell_eval() -> None:
    from agentic_machines.spell.loader import loader

    m = arch.machine()
    s = m.harness(arch.initial, ' \'(list 1 (!llm-self "child"))')
    s = m.harness(s, ' (def y 5) \'(list y 2 (!llm-self "grandchild"))')
    s = m.harness(s, ' \'(list 3 (!llm-self "great-grandchild"))')
    assert s.depth == 3  # three sessions wait, each inside its own computation
    # the child's environment lacks the root's `completion` value and has its own `y`
    c = loader(s)
    assert c.count("!spell-eval") == 2
    assert m.harness(arch.initial, c) == s
    # and the loaded state goes on exactly as the reached one
    assert m.harness(m.harness(arch.initial, c), "'7") == m.harness(s, "'7")


def test_spell_eval_runs_a_child_session_in_a_fresh_environment() -> None:
    from agentic_machines.spell import run_text

    m = arch.machine()
    # the child sees none of the caller's bindings, and its value comes back
    assert m.harness(arch.initial, ' (def x 1) \'(!spell-eval "(quine q (+ 1 2))")') is HALT
    assert m.last_record.value == 3
    m.harness(arch.initial, ' (def x 1) \'(!spell-eval "(quine q x)")')
    assert "unbound symbol `x`" in str(m.last_record.error)  # no wrapper: nothing to recover
    with pytest.raises(UnboundEffect):  # an effect: never outside the trailing form
        run_text('(!spell-eval "(quine q 1)")')
    m.harness(arch.initial, " '(!spell-eval 5)")
    assert "expected one string" in " ".join(m.last_record.recoveries)


def test_analysis_holds_with_nested_children_covered() -> None:
    from agentic_machines.architectures import ARCHITECTURES, Architecture

    assert isinstance(ARCHITECTURES["spell"], Architecture)
    v = arch.analysis(depth=2)
    assert (v.holds, v.method) == (True, "sampled") and v.witness is not None
    assert v.details["nested_states"] > 10 and v.details["states_checked"] > 100
    assert "nested sessions" in v.witness.description
    assert (v.details["naive_machine"].holds, v.details["naive_machine"].method) == (
        False,
        "fact:F2",
    )


# ---------------------------------------------------------------- golden files

GOLDEN = Path(__file__).parent / "golden" / "spell"


def test_golden_trace_of_the_scripted_run() -> None:
    from agentic_machines.runtime.run import run
    from agentic_machines.testing import check_golden, render_trace

    m = arch.machine()
    trace = run(m, arch.scripted_model())
    assert trace.end is HALT and m.last_record.value == "sent to ada@example.com: buy milk"
    check_golden(GOLDEN / "trace.txt", render_trace(trace, m.last_record.value))


def test_golden_prompts_of_every_construct() -> None:
    from agentic_machines.spell.patterns import PATTERNS, run_pattern
    from agentic_machines.testing import check_golden

    parts = []
    for name, pattern in PATTERNS.items():
        run, env = run_pattern(pattern)
        assert run.error is None and run.value == pattern.value, name
        assert len(run.recoveries) == pattern.recoveries, name
        parts.append(f"== pattern {name} ==")
        for state, completion in zip(run.states, run.completions):
            parts += [f"-- prompt ({state.kind}) --", state.prompt, "-- completion --", completion]
        parts += [f"-- value: {run.value!r}; tool calls: {dict(env.calls)} --", ""]
    check_golden(GOLDEN / "patterns.txt", "\n".join(parts))


def test_recovery_from_a_completion_that_does_not_read_carries_no_advice() -> None:
    # issue 41: the reader's advice ("add ')' to close it") speaks to a programmer editing
    # a file; a model's completion that does not read is an outcome, and the recovery
    # form (which the model reads next) and the record say what is wrong and where only
    m = arch.machine()
    s = m.harness(arch.initial, ' "unterminated')
    (message,) = m.last_record.recoveries
    assert message.startswith("parse error: unterminated string (line 1, column ")
    assert "add a closing" not in message
    form = m.prompt(s).split("spell-recovery")[1].split("The form")[0]
    assert "unterminated string (line 1" in form and "add a closing" not in form


def test_recovery_keeps_the_task_text_after_the_failed_form_is_pruned() -> None:
    m = arch.machine()
    s = m.harness(arch.initial, " '(car nil)")  # an evaluation error: recovery
    assert m.last_record.recoveries and arch.TASK in m.prompt(s)
    s = m.harness(s, " '(!extend)")  # (prune 2) removes the failed form and the recovery
    assert "spell-recovery" not in m.prompt(s) and arch.TASK in m.prompt(s)
    s = m.harness(arch.initial, ' "unterminated')  # a parse error: the raw text is inert
    s = m.harness(s, " '(!extend)")
    assert arch.TASK in m.prompt(s)


def test_call_now_with_a_limit_cuts_the_injected_value() -> None:
    from agentic_machines.spell.loader import loader

    m = arch.machine()
    s = m.harness(arch.initial, ' \'(!call-now notes (read-file "notes.txt") 10)')
    assert m.prompt(s).endswith('(def notes "the meetin... + [18 chars...]") ')
    assert (
        m.harness(s, " 'notes") is HALT and m.last_record.value == "the meetin... + [18 chars...]"
    )
    s = m.harness(arch.initial, " '(!call-now n 12345 100)")  # short enough: unchanged
    assert m.prompt(s).endswith("(def n 12345) ")
    # waiting on a child with a limit: the loader rebuilds the limit too
    s = m.harness(arch.initial, ' \'(!call-now x (!llm-self "child") 5)')
    assert m.harness(arch.initial, loader(s)) == s
    for bad in (" '(!call-now x 1 -1)", " '(!call-now x 1 y)", " '(!peek x 1 5)"):
        m.harness(arch.initial, bad)
        assert any("!call-now" in r or "!peek" in r for r in m.last_record.recoveries), bad


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" \t\n\u00a0\u2003();'\"ab", max_size=12))
def test_is_open_program_is_whether_the_first_token_is_an_open_paren(text):
    from agentic_machines.spell.text import _tokens, is_open_program

    toks = _tokens(text)  # the reader's tokens, whitespace left out
    assert is_open_program(text) == (bool(toks) and toks[0].group() == "(")

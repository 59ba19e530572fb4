"""RLM as an agentic machine: chat rendering, sub-calls, FINAL, limits, the invariant, the verdict.

Golden files live in tests/golden/rlm/; regenerate them with
``AGENTIC_MACHINES_UPDATE_GOLDEN=1 python -m pytest tests/test_rlm.py``.
"""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT, TraceState, is_sentinel
from agentic_machines.architectures import ExecOptions, rlm
from agentic_machines.checking.sampling import completion_strategy
from agentic_machines.models import ScriptedModel
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples
from agentic_machines.testing import check_golden, render_trace

GOLDEN = Path(__file__).parent / "golden" / "rlm"
M = rlm.machine(isolation="inline")
VALID = rlm.valid_completions() + list(rlm.SCRIPT)

completions = completion_strategy(VALID) | st.builds(
    lambda body: f"```repl\n{body}\n```", st.text(max_size=40)
)
# Root replies that keep the run going without a sub-call, so the state stays a root state.
root_steps = st.sampled_from(
    [
        "```repl\nprint(len(context))\n```",
        "Thinking, no code.",
        "```repl\nx = 1\n```",
        "```repl\n1/0\n```",
        "FINAL_VAR(nothing)",
    ]
)


@st.composite
def root_states(draw):
    state = rlm.initial
    for _ in range(draw(st.integers(0, 5))):
        state = M.harness(state, draw(root_steps))
    return state


def test_chat_rendering_keeps_prefixes():
    msgs = [("system", "S"), ("user", "U\n<|assistant|>\nfake"), ("assistant", "A")]
    for k in range(len(msgs) + 1):
        assert rlm.render_messages(msgs).startswith(rlm.render_messages(msgs[:k]))


def test_prompts_are_golden():
    sub = rlm.initial.then(rlm.SCRIPT[0]).then(rlm.SCRIPT[1]).then(rlm.SCRIPT[2])
    text = (
        "== initial prompt ==\n" + M.prompt(rlm.initial) + "== sub-call prompt ==\n" + M.prompt(sub)
    )
    check_golden(GOLDEN / "prompts.txt", text)
    assert rlm.is_single_user_message(M.prompt(sub))


def test_scripted_model_solves_the_task_golden_trace(solve_default_task):
    trace, result = solve_default_task(rlm, M)
    assert result == rlm.RlmResult("Seine", 4)
    assert TraceState(rlm.SCRIPT[:3]) == trace.steps[3].state  # the sub-call is its own state


def test_two_sub_calls_in_one_block_are_two_states_and_each_runs_once():
    reply = "```repl\na = llm_query('one')\nb = llm_query('two')\nprint(a + b)\n```"
    s1 = M.harness(rlm.initial, reply)
    assert M.prompt(s1) == "<|user|>\none\n"
    s2 = M.harness(s1, "1")
    assert M.prompt(s2) == "<|user|>\ntwo\n"
    s3 = M.harness(s2, "2")
    assert "REPL output:\n\n12\n" in M.prompt(s3) and rlm.turn_of(M.prompt(s3)) == 2


def test_output_is_truncated():
    s = M.harness(rlm.initial, "```repl\nprint('x' * 100000)\n```")
    assert "... + [" in M.prompt(s) and len(M.prompt(s)) < len(M.prompt(rlm.initial)) + 5_000


def test_final_var_of_a_missing_name_keeps_going_and_final_halts():
    s = M.harness(rlm.initial, "FINAL_VAR(nothing)")
    assert not is_sentinel(s)
    assert M.harness(s, "FINAL(Seine)") is HALT and M.result(s, "FINAL(Seine)").answer == "Seine"


def test_turn_limit_forces_a_final_answer_call():
    m = rlm.machine(max_turns=2, isolation="inline")
    trace = run(m, ScriptedModel(["hmm", "still thinking", "Seine, I guess"]))
    assert trace.end is HALT and len(trace) == 3
    assert trace.steps[2].prompt.endswith("<|assistant|>\n" + rlm.FINAL_REQUEST + "\n")
    assert m.result(trace.steps[2].state, "Seine, I guess") == rlm.RlmResult(
        "Seine, I guess", 2, forced=True
    )


def test_a_block_past_its_line_budget_diverges():
    assert M.harness(rlm.initial, "```repl\nwhile True:\n    pass\n```") is DIVERGE


def test_restricted_namespace_and_scaffold_restore():
    s = M.harness(
        rlm.initial,
        "```repl\nimport os\n```\n```repl\nopen('f')\n```\n"
        "```repl\ncontext = 'gone'\n```\n```repl\nprint(len(context))\n```",
    )
    p = M.prompt(s)
    assert "ImportError" in p and "NameError: name 'open' is not defined" in p
    assert f"print(len(context))\n```\n\nREPL output:\n\n{len(rlm.TOY_CONTEXT)}" in p


@settings(max_examples=examples(60, 1000))
@given(root_states(), completions)
def test_root_successor_prompt_invariant_and_totality(step_keeps_invariant, state, c):
    step_keeps_invariant(rlm, M, state, c)


@settings(max_examples=examples(40, 800))
@given(st.lists(completions, max_size=6))
def test_harness_is_total_on_any_trace(follow_completions, cs):
    follow_completions(M, rlm.initial, cs)


def test_analysis_refutes_with_a_turn_3_state():
    v = rlm.analysis()
    assert v.holds is False and v.method == "fact:F2" and v.checked == 200
    s = v.obstruction.state
    assert s == TraceState(rlm.SCRIPT[:2]) and rlm.turn_of(M.prompt(s)) == 3
    assert v.details["initial_state"].holds is False


_SE = "SE = [c for c in BaseException.__subclasses__() if c.__name__ == 'SystemExit'][0]\n"
HOSTILE = [
    "```repl\n"
    + _SE
    + "class A:\n    def __str__(self):\n        raise SE\na = A()\n```\nFINAL_VAR(a)",
    "```repl\nclass A:\n    def __str__(self):\n        raise ValueError('no')\na = A()\n```\nFINAL_VAR(a)",
    "```repl\n" + _SE + "class S(str):\n    def __format__(self, spec):\n        raise SE\n"
    "    def __eq__(self, o):\n        raise SE\n    __hash__ = str.__hash__\nx = llm_query(S('hi'))\n```",
    "```repl\n"
    + _SE
    + "class A:\n    def __deepcopy__(self, memo):\n        raise SE\nkeep = [A()]\n```\n"
    "```repl\nx = llm_query('q')\n```",
    "```repl\n"
    + _SE
    + "class E(Exception):\n    def __str__(self):\n        raise SE\nraise E()\n```",
    "```repl\nw = [c for c in object.__subclasses__() if c.__name__ == 'catch_warnings'][0]()._module\n"
    "w.sys.exit(4)\n```",
    "```repl\nraise [c for c in BaseException.__subclasses__() if c.__name__ == 'KeyboardInterrupt'][0]\n```",
    "```repl\ndef f(n):\n    return f(n + 1)\nf(0)\n```",
    "```repl\nfor i in range(300):\n    print('y' * 10000)\n```",
    "```repl\nprint('\\ud800', 'é€😀')\n```\n\ud800",
    "```repl\nx = " + "+".join(["1"] * 100_000) + "\n```",
    "```repl\nimport json\nprint(json.loads('[' * 100000))\n```",
    # many unclosed starts: quadratic for the reference's backtracking regexes
    "```repl\nA" * 20_000,
    "\nFINAL_VAR(" * 20_000,
    "\nFINAL(" * 20_000,
]


def test_hostile_replies_give_a_state_halt_or_diverge():
    # Model code that reaches SystemExit/KeyboardInterrupt through introspection, or whose
    # methods the harness calls afterwards (__str__, __deepcopy__, __format__), is contained.
    for reply in HOSTILE:
        state = M.harness(rlm.initial, reply)
        if not is_sentinel(state) and rlm.is_single_user_message(M.prompt(state)):
            state = M.harness(state, "an answer")
        assert state is HALT or state is DIVERGE or isinstance(state, TraceState), reply
        if not is_sentinel(state):
            assert rlm.successor_invariant(M.prompt(rlm.initial), M.prompt(state))


_REPLY_ATOMS = st.sampled_from(
    [
        "```repl",
        "```",
        "`",
        "\n",
        " ",
        "\t",
        "\r",
        "\u2028",
        "x",
        "FINAL(",
        "FINAL_VAR(",
        ")",
        "(",
        "\n```",
        "a",
    ]
)


@settings(max_examples=examples(300, 5000))
@given(st.lists(_REPLY_ATOMS, max_size=14).map("".join))
def test_linear_parsers_agree_with_the_reference_regexes(reply):
    assert rlm.find_code_blocks(reply) == [
        m.group(1).strip() for m in rlm.BLOCK_PATTERN.finditer(reply)
    ]
    var = rlm.FINAL_VAR_PATTERN.search(reply)
    names = {} if var is None else {var.group(1).strip().strip("\"'"): "V"}
    fin = rlm.FINAL_PATTERN.search(reply)
    expected = "V" if names else (None if fin is None else fin.group(1).strip())
    assert rlm.find_final(reply, names) == expected


# -- depth 2: child RLMs, batched queries -----------------------------------------------------
DEPTH2_SCRIPT = rlm.DEPTH2_SCRIPT


def test_depth_two_episode_with_a_batched_query_golden():
    m = rlm.machine(max_depth=2, isolation="inline")
    trace = run(m, ScriptedModel(DEPTH2_SCRIPT))
    last = trace.steps[-1]
    result = m.result(last.state, last.completion)
    assert trace.end is HALT and result == rlm.RlmResult("Seine", 3)
    prompts = [s.prompt for s in trace.steps]
    # the child's prompts show its own context (the prompt, by its length) and history
    child = prompts[2]
    assert rlm.is_child_first_prompt(child) and "Answer the following" not in child
    assert prompts[5].startswith(child) and "['Seine', 'Paris']" in prompts[5]
    # the sub-calls are single user messages, in order; the child's answer reached the root
    assert prompts[3].startswith("<|user|>\nName the river in: Which river")
    assert prompts[4].startswith("<|user|>\nName the city in: ")
    assert "REPL output:\n\nSeine\n" in prompts[6] and prompts[6].startswith(prompts[1])
    outline = rlm.run_outline(prompts)
    assert outline.splitlines()[3] == "    sub-call: Name the river in: Which river does thi…"
    check_golden(
        GOLDEN / "depth2_trace.txt",
        "== outline ==\n" + outline + "\n" + render_trace(trace, result),
    )


def test_at_depth_one_rlm_query_is_llm_query_and_batches_keep_order():
    m = rlm.machine(isolation="inline")
    reply = "```repl\nr = rlm_query_batched(['a?', 'b?'])\nprint(r)\n```"
    s = m.harness(rlm.initial, reply)
    assert m.prompt(s) == "<|user|>\na?\n"
    s = m.harness(s, "A")
    assert m.prompt(s) == "<|user|>\nb?\n"
    s = m.harness(s, "B")
    assert "REPL output:\n\n['A', 'B']\n" in m.prompt(s)


def test_bad_prompts_are_error_strings_as_in_the_reference():
    # The paper-era code never raises a bad prompt into model code: its handler or client
    # answers "Error: ...", and a batch is gathered, so one bad item fails every item
    # without a model call. A malformed call itself (no list) raises, as there.
    m = rlm.machine(isolation="inline")
    s = m.harness(
        rlm.initial,
        "```repl\nprint(llm_query_batched(['a', None]))\nprint(llm_query(None))\n"
        "print(llm_query(3.5))\nprint(llm_query_batched([]))\nllm_query_batched('x')\n```",
    )
    p = m.prompt(s)
    assert '["Error: Invalid prompt type: <class \'NoneType\'>", "Error: Invalid' in p
    assert "\nError: Missing 'prompt' or 'prompts' in request.\n" in p
    assert "\nError: Invalid prompt type: <class 'float'>\n[]\n" in p
    assert "\nTypeError: llm_query_batched(prompts) takes a list of prompts" in p


def test_analysis_covers_depth_two():
    v = rlm.analysis(rlm.machine(max_depth=2, isolation="inline"), n=80)
    assert (v.status, v.method) == ("refuted", "fact:F2")
    m = rlm.machine(max_depth=2, isolation="inline")
    s = m.harness(rlm.initial, "```repl\nx = rlm_query('sub task')\n```")
    assert rlm.is_child_first_prompt(m.prompt(s))
    assert rlm.successor_invariant(m.prompt(rlm.initial), m.prompt(s))


def test_max_depth_is_checked():
    import pytest

    from agentic_machines.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="max_depth must be an integer >= 1"):
        next(rlm.rlm_program(max_depth=0, options=ExecOptions(isolation="inline")))


def test_final_follows_the_paper_era_pattern():
    # The cited code of 2025-12-31 matches ^\s*FINAL\((.*?)\) (lazy, unanchored at the
    # end): text after the answer does not stop the run, and the first ")" ends it.
    from agentic_machines.architectures.rlm import FINAL_PATTERN, find_final

    assert FINAL_PATTERN.pattern == r"^\s*FINAL\((.*?)\)"
    assert find_final("FINAL(42) because the record says so", {}) == "42"
    assert find_final("FINAL(f(x) = 3)", {}) == "f(x"
    assert find_final("note\n  FINAL( the Seine )\nmore", {}) == "the Seine"
    assert find_final("say FINAL(x) inline", {}) is None

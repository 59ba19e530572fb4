"""REPL-Plan: golden count-to-four, invariants I1–I10 (named in the banners below), budgets,
solve/run agreement, the analysis invariant and harness totality."""

from __future__ import annotations

from pathlib import Path

import pytest
from _helpers import experiment
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentic_machines import DIVERGE, HALT
from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures.environments import CountEnv
from agentic_machines.errors import ScriptExhausted
from agentic_machines.machine import is_sentinel
from agentic_machines.runtime.run import run
from agentic_machines.strategies import examples
from agentic_machines.testing import check_golden, render_trace

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden" / "repl_plan"


def _solve(blocks, descriptions=None, env=None, **budgets):
    return rp.solve(
        "test task",
        rp.scripted_model(blocks, descriptions or {}),
        env or CountEnv(10_000),
        **budgets,
    )


def _blocks(result, name):
    return [h for h in result.repls[name].history if isinstance(h, rp.Block)]


# -- the golden count-to-four trace ----------------------------------------------------------
def test_count_to_four_golden():
    r = rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4))
    assert r.actions == ("1", "2", "3", "4") and r.env.success
    assert set(r.repls) == {"main", "count_even"}  # one child REPL ...
    assert r.repls["count_even"].invocations == 2  # ... invoked twice
    child_prompts = [p for p in r.prompts if p.startswith("REPL: count_even")]
    assert len(child_prompts) == 2 and rp.C1 not in child_prompts[0]
    assert (
        ">>> n = get_args()[0]\n... act(str(n))\n... answer(None)\n" in child_prompts[1]
    )  # the first invocation's code
    (m1,) = _blocks(r, "main")
    kinds = [(e.kind, e.name, e.detail) for e in m1.events]
    # the reruns replayed act('1') and act('3') from the cache: nothing was sent twice
    assert ("cache_hit", "act", "#0") in kinds and ("cache_hit", "act", "#2") in kinds
    assert [k for k in kinds if k[0] == "rerun"] == [("rerun", "main", "2"), ("rerun", "main", "3")]
    assert [k for k in kinds if k[0] == "spawned"] == [
        ("spawned", "count_even", "say the given even number")
    ]
    # the child never saw i: not in its namespace, not in any of its prompts
    assert "i" not in r.repls["count_even"].variables and r.repls["count_even"].variables == ("n",)
    assert all("i %" not in p and "range(" not in p for p in child_prompts)
    for k, prompt in enumerate(r.prompts, 1):
        check_golden(GOLDEN / f"count_to_four_prompt_{k}.txt", prompt)
    trace = run(rp.machine(isolation="inline"), rp.scripted_model())
    check_golden(GOLDEN / "count_to_four_trace.txt", render_trace(trace))


def test_child_reading_a_parent_variable_gets_repl_name_error():
    r = _solve(
        {"main": ["i = 7\nx = peek()\nanswer(x)"], "peek": ["answer(i)", "answer(get_args())"]}
    )
    (b1, b2) = _blocks(r, "peek")
    assert "REPLNameError: name 'i' is not defined" in b1.stderr
    assert r.answer == () and r.status == "answered"


# -- I1: no repeated side effects ---------------------------------------------------------
@settings(max_examples=examples(40, 400))
@given(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4))
def test_i1_k_live_acts_callee_m_more_child_r(k, m, r):
    main = "\n".join(
        [f"act('a{i}')" for i in range(k)]
        + ["v = helper(1)"]
        + [f"act('b{i}')" for i in range(m)]
        + ["answer(v)"]
    )
    child = "\n".join([f"act('c{i}')" for i in range(r)] + ["answer('ok')"])
    res = _solve({"main": [main], "helper": [child]})
    assert res.actions == tuple(
        [f"a{i}" for i in range(k)] + [f"c{i}" for i in range(r)] + [f"b{i}" for i in range(m)]
    )
    assert res.answer == "ok"


def test_i1_cached_get_obs_is_the_observation_at_the_time():
    main = "before = get_obs()\nact('x')\nhelper()\nafter = get_obs()\nanswer((before, after))"
    res = _solve({"main": [main], "helper": ["act('y')\nanswer(None)"]}, env=CountEnv(100))
    assert res.answer == (CountEnv(100).instruction, "You said y.") and res.actions == ("x", "y")


# -- I2: faithful replay --------------------------------------------------------------------
def test_i2_rerun_with_other_arguments_is_replay_divergence():
    b1 = "def tick():\n    tick.n = getattr(tick, 'n', 0) + 1\n    return tick.n"
    b2 = "act(str(tick()))\nhelper()\nprint('unreachable')"
    res = _solve({"main": [b1, b2, "answer('end')"], "helper": ["answer(None)"]})
    blk = _blocks(res, "main")[1]
    assert (
        blk.status == "diverged" and "ReplayDivergence" in blk.stderr and "act('1')" in blk.stderr
    )
    assert res.actions == ("1",)  # the divergent rerun performed nothing


# -- I3: cache scope ------------------------------------------------------------------------
def test_i3_a_later_block_acts_live():
    res = _solve({"main": ["act('x')", "act('x')\nanswer(1)"]})
    assert res.actions == ("x", "x")


# -- I4: isolation --------------------------------------------------------------------------
def test_i4_parent_cannot_read_child_variables():
    res = _solve(
        {"main": ["helper()\nprint(secret)", "answer(0)"], "helper": ["secret = 1\nanswer(None)"]}
    )
    assert "REPLNameError: name 'secret' is not defined" in _blocks(res, "main")[0].stderr
    assert "secret" in res.repls["helper"].variables and "secret" not in res.repls["main"].variables


# -- I5: get_args fidelity ------------------------------------------------------------------
@settings(max_examples=examples(15, 200))
@given(st.lists(st.lists(st.integers(-5, 5), max_size=3), min_size=1, max_size=3))
def test_i5_get_args_returns_each_calls_arguments(calls):
    main = "\n".join(f"r{j} = helper(*{args!r})" for j, args in enumerate(calls))
    main += "\nanswer([" + ", ".join(f"r{j}" for j in range(len(calls))) + "])"
    res = _solve({"main": [main], "helper": ["answer(get_args())"] * len(calls)})
    assert res.answer == [tuple(a) for a in calls]


def test_i5_child_cannot_mutate_the_parents_arguments():
    res = _solve(
        {
            "main": ["xs = [1]\nhelper(xs)\nanswer(xs)"],
            "helper": ["get_args()[0].append(2)\nanswer(None)"],
        }
    )
    assert res.answer == [1]


# -- I6: answer ends the block and cannot be caught ------------------------------------------
@pytest.mark.parametrize(
    "wrap",
    [
        "try:\n    answer(1)\nexcept Exception:\n    pass\nact('after')",
        "try:\n    answer(1)\nexcept:\n    act('caught')\nact('after')",
        "for _ in range(3):\n    try:\n        answer(1)\n    except BaseException:\n        continue\nact('after')",
    ],
)
def test_i6_answer_in_try_still_returns(wrap):
    res = _solve({"main": ["v = helper()\nanswer(v)"], "helper": [wrap]})
    assert res.answer == 1 and res.actions == ()


# -- I7: the spawn rule ---------------------------------------------------------------------
def test_i7_undefined_value_spawns_nothing_and_builtins_are_not_undefined():
    res = _solve({"main": ["print(len('ab'), undefined_var)", "f = undefined_fn", "answer(0)"]})
    b1, b2, _ = _blocks(res, "main")
    assert "REPLNameError: name 'undefined_var' is not defined" in b1.stderr and b1.stdout == ""
    assert "REPLNameError" in b2.stderr and set(res.repls) == {"main"}
    assert not any(p.startswith("DESCRIBE") for p in res.prompts)
    assert [e.name for e in b1.events if e.kind == "name_error"] == ["undefined_var"]


def test_i7_misspelt_helper_spawns_a_new_repl_shown_in_the_trace():
    main = ["count_even(2)", "count_evn(4)", "answer('x')"]
    res = _solve(
        {"main": main, "count_even": ["answer(act('2'))"], "count_evn": ["answer(act('4'))"]}
    )
    assert set(res.repls) == {"main", "count_even", "count_evn"}
    spawned = [e.text for e in res.trace if e.kind == "spawned"]
    assert spawned == ["count_even: count even", "count_evn: count evn"]
    assert [e.text for e in res.trace if e.kind == "near_miss"] == [
        "count_evn is a new REPL, but 'count_even' exists"
    ]
    assert [p.split("\n")[0] for p in res.prompts if p.startswith("DESCRIBE")] == [
        "DESCRIBE: count_even",
        "DESCRIBE: count_evn",
    ]


def test_i7_recursive_helper_defined_with_def_spawns_nothing():
    code = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint([fib(i) for i in range(8)])\nanswer(fib(10))"
    res = _solve({"main": [code]})
    assert res.answer == 55 and set(res.repls) == {"main"} and res.model_calls == 1
    assert _blocks(res, "main")[0].stdout == "[0, 1, 1, 2, 3, 5, 8, 13]\n"


def test_i7_pooled_name_is_injected_without_a_describe_call():
    pool = {
        "helper": rp.Demo("double the number", ("#CALL# helper(1)\n>>> answer(2)\n#ANSWER# 2\n",))
    }
    res = rp.solve(
        "t",
        rp.scripted_model({"main": ["answer(helper(3))"], "helper": ["answer(get_args()[0] * 2)"]}),
        CountEnv(10),
        pool=pool,
    )
    assert res.answer == 6 and not any(p.startswith("DESCRIBE") for p in res.prompts)
    child_prompt = next(p for p in res.prompts if p.startswith("REPL: helper"))
    assert child_prompt.startswith(
        "REPL: helper\n#DEMO#\n#CALL# helper(1)\n>>> answer(2)\n#ANSWER# 2\n#END#\n"
    )
    assert "Description: double the number\n" in child_prompt
    assert [e.kind for e in res.trace if e.kind in ("injected", "spawned")] == ["injected"]


def test_i7_main_cannot_be_called():
    res = _solve({"main": ["main()", "answer(1)"]})
    assert "REPLNameError" in _blocks(res, "main")[0].stderr and set(res.repls) == {"main"}


# -- I8: history ----------------------------------------------------------------------------
def test_i8_one_block_per_completion_and_last_attempt_stdout():
    res = _solve(
        {
            "main": ["print('before')\nx = helper()\nprint('after', x)", "answer(0)"],
            "helper": ["print('child')\nanswer(5)"],
        }
    )
    b1, b2 = _blocks(res, "main")
    assert b1.stdout == "before\nafter 5\n" and _blocks(res, "helper")[0].stdout == "child\n"
    assert res.model_calls == 4 and len(_blocks(res, "main")) + len(_blocks(res, "helper")) == 3


# -- I9: termination and budgets --------------------------------------------------------------
def test_i9_never_answering_child_fails_after_max_blocks():
    res = _solve(
        {"main": ["helper()", "answer('gave up')"], "helper": ["act('x')"] * 3}, max_blocks=3
    )
    assert res.actions == ("x", "x", "x") and res.answer == "gave up"
    assert "BlocksExceeded" in _blocks(res, "main")[0].stderr


def test_i9_main_block_budget_is_a_typed_failure():
    res = _solve({"main": ["x = 1"] * 2}, max_blocks=2)
    assert res.status == "failed" and res.failure.startswith("BlocksExceeded")


def test_i9_depth_limit_and_self_recursion():
    rec = "n = get_args()[0]\nanswer(0 if n == 0 else f(n - 1))"
    res = _solve({"main": ["answer(f(3))"], "f": [rec, rec, "answer(-1)"]}, max_depth=2)
    f_blocks = _blocks(res, "f")
    # f (depth 1) -> f (depth 2) -> f (depth 3 > max_depth): the call fails in the depth-2 block
    assert sum("DepthExceeded" in b.stderr for b in f_blocks) == 1 and res.answer == -1
    assert res.repls["f"].invocations == 2
    assert any(
        e.kind == "failed" and "DepthExceeded" not in e.text and "deep" in e.text for e in res.trace
    )
    res0 = _solve({"main": ["helper()", "answer(1)"]}, max_depth=0)
    assert "DepthExceeded" in _blocks(res0, "main")[0].stderr and set(res0.repls) == {"main"}


def test_i9_model_call_budget_ends_the_episode():
    res = _solve({"main": ["act('x')"] * 10}, max_model_calls=3)
    assert (
        res.status == "failed"
        and res.failure.startswith("ModelCallsExceeded")
        and res.model_calls == 3
    )
    assert res.actions == ("x", "x", "x")


def test_i9_infinite_loop_cut_by_line_budget_keeps_partial_stdout():
    res = _solve(
        {"main": ["act('x')\ni = 0\nwhile True:\n    print(i)\n    i += 1", "answer(i > 0)"]},
        block_lines=2_000,
    )
    (b1, _) = _blocks(res, "main")
    assert (
        b1.status == "budget"
        and b1.stdout.startswith("0\n1\n2\n")
        and "BudgetExceeded" in b1.stderr
    )
    assert res.actions == ("x",) and res.answer is True


# -- I10: determinism -----------------------------------------------------------------------
def test_i10_same_script_same_everything():
    a = rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4))
    b = rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4))
    assert a.prompts == b.prompts and a.trace == b.trace and a.actions == b.actions
    assert {k: v.transcript for k, v in a.repls.items()} == {
        k: v.transcript for k, v in b.repls.items()
    }


# -- scripted models --------------------------------------------------------------------------
def test_script_exhausted_names_the_repl():
    with pytest.raises(ScriptExhausted, match="REPL 'count_even'"):
        rp.solve(rp.TASK, rp.scripted_model({"main": [rp.M1], "count_even": [rp.C1]}), CountEnv(4))


def test_the_env_passed_to_solve_is_a_template():
    env = CountEnv(4)
    rp.solve(rp.TASK, rp.scripted_model(), env)
    assert env.action_log == []


# -- solve and run(machine) agree, on every example -------------------------------------------


@pytest.mark.parametrize("name", ["count_to_four", "household", "shop"])
def test_solve_and_run_machine_agree(name):
    ex = experiment(name)
    res = rp.solve(ex.TASK, ex.model(), ex.env(), pool=ex.POOL)
    assert res.env.success, res.failure
    m = rp.machine(ex.TASK, ex.env(), pool=ex.POOL, isolation="inline")
    trace = run(m, ex.model())
    assert trace.end is HALT
    last = trace.steps[-1]
    via_machine = m.result(last.state, last.completion)
    assert via_machine.actions == res.actions and via_machine.answer == res.answer
    assert list(trace.prompts) == list(res.prompts)


# -- the SPE analysis and harness totality ------------------------------------------------------
def test_analysis_refutes_at_the_second_invocation_of_count_even():
    v = rp.analysis(n=60)
    assert v.status == "refuted" and v.method == "fact:F2" and v.checked == 60
    state = v.obstruction.state
    assert rp.machine(isolation="inline").prompt(state).startswith(
        "REPL: count_even"
    ) and not rp.is_first_invocation(rp.machine(isolation="inline").prompt(state))
    assert v.details["initial_state"].status == "undecided"  # a #START# retry repeats p(x)


_FRAGMENTS = st.sampled_from(
    [
        "act('1')",
        "helper(1)",
        "x = helper(2)",
        "answer(1)",
        "print(get_obs())",
        "count_even(2)",
        "main()",
        "undefined",
        "try:\n    answer(2)\nexcept:\n    pass",
        "while True:\n    pass",
        "def f(n):\n    return f(n)",
        "f(1)",
        "import os",
        "raise SystemExit",
        "get_args()",
        "'unterminated",
        "#END#",
        "\x00",
        "    ",
        "for i in range(3):",
        "    act(str(i))",
        "print('#START#\\n#CALL# x()')",
    ]
)
_COMPLETIONS = st.one_of(
    st.lists(_FRAGMENTS, max_size=4).map("\n".join),
    st.text(max_size=40),
)
_M = rp.machine(block_lines=3_000, isolation="inline")
_DEEP = [_M.initial, _M.harness(_M.initial, rp.M1)]
_DEEP.append(_M.harness(_DEEP[1], "say it"))


@settings(max_examples=examples(150, 2000), suppress_health_check=[HealthCheck.too_slow])
@given(_COMPLETIONS)
def test_invariant_holds_on_random_completions(c):
    p0 = _M.prompt(_M.initial)
    y = _M.harness(_M.initial, c)
    if not is_sentinel(y):
        assert rp.successor_invariant(p0, _M.prompt(y)), (c, _M.prompt(y))


@settings(max_examples=examples(100, 1000), suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(3)), st.lists(_COMPLETIONS, min_size=1, max_size=3))
def test_harness_is_total(start, cs):
    state = _DEEP[start]
    for c in cs:
        out = _M.harness(state, c)
        assert out is HALT or out is DIVERGE or isinstance(_M.prompt(out), str)
        if is_sentinel(out):
            break
        state = out


# -- the ablation experiment ----------------------------------------------------------------------
def test_ablation_writes_its_table(tmp_path):
    ablation = experiment("repl_plan_ablations")
    out = tmp_path / "ablation.md"
    assert ablation.main(["--tasks", "3", "--out", str(out)]) == 0
    text = out.read_text()
    assert "not a reproduction of the paper's numbers" in text
    rows = [
        line
        for line in text.splitlines()
        if line.startswith("| ") and not line.startswith("| variant")
    ]
    assert len(rows) == 6 and all(" 3 | " in r for r in rows)
    assert (ROOT / "docs" / "repl_plan_ablation.md").exists()


def test_buggy_demonstrations_are_fixed_from_the_error_output():
    shop = experiment("shop")
    for bug, error in [("unescaped", "SyntaxError"), ("undefined", "REPLNameError: name 'qeury'")]:
        res = rp.solve(
            shop.TASK, shop.ShopPolicy("children"), shop.env(3), pool=shop.buggy_pool(bug)
        )
        assert res.prompts[0].startswith(
            "REPL: main\n#DEMO#\n#CALL# main()\n>>> "
        )  # the bug is in the demo
        first, second = _blocks(res, "main")[:2]
        assert first.code == shop.demo_first_block(res.prompts[0]) != shop.MAIN_BLOCK
        assert error in first.stderr and second.status == "ok" and res.success


def test_a_repl_spawned_by_one_caller_is_reused_by_another():
    res = _solve(
        {
            "main": ["a = f(1)\nb = g(2)\nanswer((a, b))"],
            "f": ["answer(get_args()[0] * 10)"] * 2,
            "g": ["answer(f(get_args()[0]))"],
        }
    )
    assert res.answer == (10, 20) and res.repls["f"].invocations == 2
    assert [e.text for e in res.trace if e.kind == "reused"] == ["f"]
    assert sum(p.startswith("DESCRIBE: f") for p in res.prompts) == 1


def test_pooled_main_demonstrations_appear_in_mains_prompt():
    pool = {"main": rp.Demo("ignored", ("#CALL# main()\n>>> answer(42)\n#ANSWER# 42\n",))}
    res = rp.solve("say hi", rp.scripted_model({"main": ["answer('hi')"]}), CountEnv(2), pool=pool)
    assert res.prompts[0].startswith("REPL: main\n#DEMO#\n#CALL# main()\n>>> answer(42)\n")
    assert "Description: say hi\n" in res.prompts[0] and res.answer == "hi"


def test_count_to_four_experiment_writes_the_trace(tmp_path, capsys):
    ex = experiment("count_to_four")
    out = tmp_path / "c4.md"
    res = ex.main(["--out", str(out)])
    assert res.actions == ("1", "2", "3", "4")
    assert out.read_text() == ex.to_markdown() and "#CALL# count_even(4)" in out.read_text()
    assert (ROOT / "docs" / "repl_plan_count_to_four.md").read_text() == out.read_text()


# -- property tests over random episodes: I1, I3-I8, I10 together ----------------------------
# A random episode: main's first block is a list of operations (act, print, a call of helper f
# or g); each helper invocation is a block that acts, sets a variable, maybe calls g (from f
# only, so nesting stays finite) and answers inside a random catcher. The test simulates the
# episode by hand and compares: actions in order (I1), a second main block acting live (I3),
# variables (I4), get_args (I5), answers through catchers (I6), spawn/reuse counts (I7),
# blocks and stdout of the last attempt (I8), and a byte-for-byte rerun (I10).
_CATCH = [
    "{x}",
    "try:\n    {x}\nexcept Exception:\n    act('caught')",
    "try:\n    {x}\nexcept:\n    act('caught')",
    "try:\n    {x}\nexcept BaseException:\n    pass\nact('after')",
]
_MAIN_OP = st.one_of(
    st.tuples(st.just("act")),
    st.tuples(st.just("print")),
    st.tuples(st.just("call"), st.sampled_from("fg"), st.integers(0, 9)),
)
_CHILD = st.tuples(st.integers(0, 2), st.booleans(), st.sampled_from(range(len(_CATCH))))


def _episode(main_ops, child_plans, repeat):
    """Scripts and the expected actions/answers, by simulation."""
    blocks = {"main": [], "f": [], "g": []}
    expected, outs, calls, k = [], [], [], 0
    plans = iter(child_plans)

    def child(name, arg):  # one invocation of `name`: its block and its effects
        n_acts, nested, catcher = next(plans, (0, False, 0))
        lines = ["args = get_args()", f"mine_{name} = 1"]
        for j in range(n_acts):
            lines.append(f"act('{name}{len(blocks[name])}.{j}')")
            expected.append(f"{name}{len(blocks[name])}.{j}")
        slot = len(blocks[name])
        blocks[name].append(None)  # reserve: nested invocations append after this one
        value = (name, (arg,))
        if name == "f" and nested:
            lines.append("inner = g(args[0] + 100)")
            value = (name, (arg,), child("g", arg + 100))
        lines.append(
            _CATCH[catcher]
            .format(
                x="answer(({!r},) + tuple(args){})".format(
                    name, " + (inner,)" if name == "f" and nested else ""
                )
            )
            .replace("tuple(args)", "(args,)")
        )
        blocks[name][slot] = "\n".join(lines)
        return (name, (arg,)) + ((value[2],) if len(value) == 3 else ())

    main_lines = ["mine_main = 1"]
    for op in main_ops:
        if op[0] == "act":
            main_lines.append(f"act('m{k}')")
            expected.append(f"m{k}")
        elif op[0] == "print":
            main_lines.append(f"print('p{k}')")
            outs.append(f"p{k}")
        else:
            main_lines.append(f"r{k} = {op[1]}({op[2]})\nresults.append(r{k})")
            calls.append(child(op[1], op[2]))
        k += 1
    blocks["main"].append("results = []\n" + "\n".join(main_lines))
    second = [f"act('m{j}')" for j in range(repeat)]
    blocks["main"].append("\n".join(second + ["answer(results)"]))
    expected += [f"m{j}" for j in range(repeat)]
    return blocks, expected, outs, calls


@settings(max_examples=examples(40, 400), suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_MAIN_OP, max_size=6), st.lists(_CHILD, min_size=12, max_size=12), st.integers(0, 2)
)
def test_random_episodes_keep_the_invariants(main_ops, child_plans, repeat):
    blocks, expected, outs, calls = _episode(main_ops, child_plans, repeat)
    res = _solve(blocks)
    assert res.status == "answered", res.failure
    assert list(res.actions) == expected  # I1 and I3
    # I5/I6: every answer came back through its catcher, with exactly the call's arguments
    assert res.answer == [_as_answer(c) for c in calls]
    used = {n for n in "fg" if blocks[n]}
    assert set(res.repls) == {"main"} | used  # I7: one REPL per name, reused
    assert sum(p.startswith("DESCRIBE: ") for p in res.prompts) == len(used)
    for name in used:
        assert res.repls[name].invocations == len(blocks[name])
        own = set(res.repls[name].variables) - set(res.repls)  # bound child functions aside
        assert own == {"args", f"mine_{name}"} | (
            {"inner"} if name == "f" and any("inner" in b for b in blocks[name]) else set()
        )  # I4
    assert "results" in res.repls["main"].variables and not any(
        v.startswith("mine_") and v != "mine_main" for v in res.repls["main"].variables
    )  # I4
    # I8: one Block per block completion, stdout of the last attempt only
    n_blocks = sum(len(_blocks(res, n)) for n in res.repls)
    assert n_blocks == res.model_calls - len(used) == sum(len(b) for b in blocks.values())
    assert _blocks(res, "main")[0].stdout == "".join(o + "\n" for o in outs)
    again = _solve(blocks)  # I10
    assert (again.prompts, again.trace, again.actions) == (res.prompts, res.trace, res.actions)


def _as_answer(call):
    return call[:2] + ((_as_answer(call[2]),) if len(call) == 3 else ())


# -- I2 as properties: cached observations are those of their time; hidden state diverges ----------
@settings(max_examples=examples(25, 250))
@given(st.lists(st.sampled_from(["act", "obs"]), max_size=5), st.integers(0, 3))
def test_i2_cached_observations_are_those_of_their_time(ops, r):
    env = CountEnv(10_000)
    lines, want, last = [], [], env.instruction
    for j, op in enumerate(ops):
        if op == "act":
            lines.append(f"act('a{j}')")
            last = f"You said a{j}."
        else:
            lines.append("seen.append(get_obs())")
            want.append(last)
    main = "seen = []\n" + "\n".join(lines) + "\nhelper()\nseen.append(get_obs())\nanswer(seen)"
    child = "\n".join([f"act('c{j}')" for j in range(r)] + ["answer(None)"])
    res = _solve({"main": [main], "helper": [child]}, env=env)
    assert res.answer == want + [f"You said c{r - 1}." if r else last]


@settings(max_examples=examples(15, 150))
@given(st.integers(0, 3), st.integers(0, 2))
def test_i2_hidden_state_before_a_child_call_is_replay_divergence(k, r):
    tick = "def tick():\n    tick.n = getattr(tick, 'n', 0) + 1\n    return tick.n"
    body = "\n".join(
        [f"act('a{j}')" for j in range(k)] + ["act(str(tick()))", "helper()", "act('never')"]
    )
    child = "\n".join([f"act('c{j}')" for j in range(r)] + ["answer(None)"])
    res = _solve({"main": [tick, body, "answer(0)"], "helper": [child]})
    blk = _blocks(res, "main")[1]
    assert blk.status == "diverged" and "ReplayDivergence" in blk.stderr
    assert list(res.actions) == [f"a{j}" for j in range(k)] + ["1"] + [f"c{j}" for j in range(r)]


# -- I9 as properties: every budget ends the episode with a typed failure -------------------------
@settings(max_examples=examples(20, 200))
@given(st.integers(0, 4), st.integers(0, 4))
def test_i9_self_recursion_stops_at_max_depth(n, depth):
    rec = "n = get_args()[0]\nanswer(0 if n == 0 else f(n - 1))"
    script = [rec] * min(n + 1, depth) + ["answer(-1)"]
    res = _solve({"main": [f"answer(f({n}))", "answer('no f')"], "f": script}, max_depth=depth)
    if depth == 0:
        assert res.answer == "no f" and "DepthExceeded" in _blocks(res, "main")[0].stderr
    else:
        assert res.answer == (0 if n + 1 <= depth else -1)
        assert res.repls["f"].invocations == min(n + 1, depth)
        assert sum("DepthExceeded" in b.stderr for b in _blocks(res, "f")) == (
            0 if n + 1 <= depth else 1
        )


@settings(max_examples=examples(15, 150))
@given(st.integers(2, 6), st.integers(1, 6))  # main needs two blocks
def test_i9_block_and_call_budgets(max_blocks, max_calls):
    res = _solve(
        {"main": ["helper()", "answer('gave up')"], "helper": ["act('y')"] * max_blocks},
        max_blocks=max_blocks,
    )
    assert res.actions == ("y",) * max_blocks and res.answer == "gave up"
    assert "BlocksExceeded" in _blocks(res, "main")[0].stderr
    res = _solve({"main": ["act('x')"] * 10}, max_model_calls=max_calls)
    assert (res.status, res.model_calls, res.actions) == ("failed", max_calls, ("x",) * max_calls)
    assert res.failure.startswith("ModelCallsExceeded") and res.trace[-1].kind == "failed"


# -- nasty blocks -----------------------------------------------------------------------------------
def test_a_cached_child_answer_mutated_by_the_block_is_replayed_unchanged():
    res = _solve(
        {
            "main": ["xs = h1()\nxs.append(1)\nh2()\nh3()\nanswer(xs)"],
            "h1": ["answer([0])"],
            "h2": ["answer(2)"],
            "h3": ["answer(3)"],
        }
    )
    assert res.answer == [0, 1]


def test_a_child_answer_is_not_shared_with_the_childs_namespace():
    res = _solve(
        {
            "main": ["a = h()\nb = h()\nanswer((a, b))"],
            "h": ["xs = [1]\nanswer(xs)", "xs.append(2)\nanswer(0)"],
        }
    )
    assert res.answer == ([1], 0)


@pytest.mark.parametrize(
    "setup, arg",
    [
        ("class P:\n    def __init__(self):\n        self.v = [1]\np = P()", "p"),
        ("g = (x for x in range(3))", "g"),
        ("xs = []\nxs.append(xs)", "xs"),
        ("", "lambda x: x + 1"),
    ],
)
def test_objects_recreated_by_a_rerun_do_not_diverge(setup, arg):
    res = _solve(
        {
            "main": [f"{setup}\nr = h({arg})\ns = h({arg})\nanswer((r, s))"],
            "h": ["a = get_args()\nanswer(1)", "answer(2)"],
        }
    )
    assert res.answer == (1, 2), _blocks(res, "main")[0].stderr
    assert " at 0x" not in "".join(res.prompts)  # no memory address reaches a prompt (I10)


def test_deleting_a_primitive_spawns_nothing():
    res = _solve({"main": ["del answer\ndel act", "act('x')\nanswer(1)"]})
    assert res.answer == 1 and res.actions == ("x",) and set(res.repls) == {"main"}


def test_model_code_raising_budget_exceeded_is_an_ordinary_error():
    find = "[c for c in BaseException.__subclasses__() if c.__name__ == 'BudgetExceeded'][0]"
    res = _solve({"main": [f"raise {find}(5)", "answer(1)"]})
    b = _blocks(res, "main")[0]
    assert b.status == "error" and res.answer == 1


def test_huge_stderr_is_cut_and_keeps_the_error_line():
    res = _solve({"main": ["raise ValueError('x' * 10**6)", "answer(1)"]}, max_output=2_000)
    err = _blocks(res, "main")[0].stderr
    assert len(err) < 2_100 and "characters cut" in err and err.rstrip().endswith("x")
    res = _solve({"main": ["def f(n):\n    return f(n + 1)\nf(0)", "answer(1)"]}, max_output=2_000)
    last = _blocks(res, "main")[0].stderr.rstrip().splitlines()[-1]
    assert last.startswith("RecursionError: maximum recursion depth exceeded")


def test_a_model_defined_repr_that_never_returns_does_not_hang_the_harness():
    evil = "class E:\n    def __repr__(self):\n        while True:\n            pass\n"
    res = _solve({"main": [evil + "h(E())\nanswer(E())"], "h": ["answer(1)"]})
    assert (
        res.status == "answered"
        and "#CALL# h(<E: its __repr__ ran too long>)" in res.repls["h"].transcript
    )


def test_catching_base_exception_around_a_child_call_still_gets_its_answer():
    res = _solve(
        {
            "main": ["try:\n    x = h()\nexcept BaseException:\n    x = 'caught'\nanswer(x)"],
            "h": ["act('c')\nanswer(5)"],
        }
    )
    assert res.answer == 5 and res.actions == ("c",)


def test_pooled_prompt_layout_golden():
    pool = {
        "helper": rp.Demo("double the number", ("#CALL# helper(1)\n>>> answer(2)\n#ANSWER# 2\n",)),
        "main": rp.Demo("ignored", ("#CALL# main()\n>>> answer(helper(1))\n#ANSWER# 2\n",)),
    }
    res = rp.solve(
        "Double 3.",
        rp.scripted_model(
            {"main": ["print('hi')", "answer(helper(3))"], "helper": ["answer(get_args()[0] * 2)"]}
        ),
        CountEnv(10),
        pool=pool,
    )
    assert res.answer == 6
    check_golden(GOLDEN / "pooled_prompts.txt", "\n=====\n".join(res.prompts))


def test_solve_and_run_machine_agree_on_every_ablation_variant():
    ablation = experiment("repl_plan_ablations")
    shop = experiment("shop")
    for name, policy, pool, budgets in ablation.variants():
        for seed in (0, 5):
            res = rp.solve(shop.TASK, policy, shop.env(seed), pool=pool, **budgets)
            m = rp.machine(shop.TASK, shop.env(seed), pool=pool, isolation="inline", **budgets)
            trace = run(m, policy)
            assert trace.end is HALT, name
            last = trace.steps[-1]
            via = m.result(last.state, last.completion)
            assert (via.actions, via.answer, via.status) == (res.actions, res.answer, res.status), (
                name,
                seed,
            )
            assert list(trace.prompts) == list(res.prompts)


def test_a_model_method_that_never_returns_outside_a_block_is_a_typed_failure():
    # The snapshot before the next block deep-copies `e`: model code the runtime runs outside
    # any block budget. solve stops it with its per-step budget, as the machine does (↑).
    evil = "class E:\n    def __deepcopy__(self, memo):\n        while True:\n            pass\ne = E()"
    res = _solve({"main": [evil, "act('x')", "answer(0)"]}, line_budget=100_000)
    assert (
        res.status == "failed"
        and res.failure.startswith("BudgetExceeded")
        and res.trace[-1].kind == "failed"
    )
    assert res.model_calls == 2 and res.actions == ()
    m = rp.machine("t", CountEnv(10), line_budget=100_000, isolation="inline")
    assert m.harness(m.harness(m.initial, evil), "act('x')") is DIVERGE


# -- the #START# fix (the paper's appendix) ---------------------------------------------------
def looping_count_policy(prompt: str) -> str:
    """Count to four, but at a REPL whose transcript already holds an answer, start the
    transcript again with #START# (the looping the appendix reports), unless told not to."""
    if prompt.startswith("DESCRIBE: "):
        return rp.COUNT_DESCRIPTIONS["count_even"]
    told = prompt.endswith(rp.DONT_LOOP)
    base = prompt[: -len(rp.DONT_LOOP)] if told else prompt
    transcript = base.split("\n#START#\n", 1)[1]
    block = rp.COUNT_BLOCKS[rp.repl_name(base)][0]
    if "#ANSWER#" in transcript and not told:
        return "#START#\n" + transcript.split("\n", 1)[0] + "\n>>> " + block
    return block


def test_start_fix_recovers_a_looping_policy_golden():
    from agentic_machines.models import FunctionModel

    m = rp.machine(isolation="inline")
    trace = run(m, FunctionModel(looping_count_policy))
    last = trace.steps[-1]
    result = m.result(last.state, last.completion)
    assert trace.end is HALT and result.actions == ("1", "2", "3", "4") and result.success
    assert result.status == "done" and result.model_calls == 6  # 4 useful, 2 retries
    second = [s.prompt for s in trace.steps if s.prompt.startswith("REPL: count_even")][1:]
    assert second[1] == second[0] and second[2] == second[0] + rp.DONT_LOOP
    # every prompt, retries included, keeps the proved invariant's shape
    assert all(rp.successor_invariant(second[0], q) for q in second)
    check_golden(GOLDEN / "start_fix_trace.txt", render_trace(trace, result.actions))


def test_without_the_start_fix_the_looping_policy_fails():
    from agentic_machines.models import FunctionModel

    model = FunctionModel(looping_count_policy)
    result = rp.solve(rp.TASK, model, CountEnv(4), start_fix=False, isolation="inline")
    # count_even's second invocation fails for ever, main starts over and says 1 again
    assert result.actions == ("1", "2", "3", "1") and not result.success
    with pytest.raises(rp.InvalidArgument, match="start_fix must be True or False"):
        rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4), start_fix=1)


class _LooksLikeAnEnvironment:
    """Has every method REPL-Plan calls, but is not an Environment: the architectures take
    one documented form and do not guess an environment from its attributes."""

    action_log: list = []
    done = success = False
    reward = 0.0

    def step(self, action):
        return "ok"

    def observation(self):
        return "ok"

    def fresh(self):
        return self


@pytest.mark.parametrize("env", [_LooksLikeAnEnvironment(), {"step": print}, "CountEnv(4)"])
def test_an_env_that_is_not_an_environment_is_rejected_where_it_is_passed(env):
    with pytest.raises(rp.InvalidArgument, match="env must be an Environment"):
        rp.machine(env=env, isolation="inline")  # when the machine is built, not at a step
    with pytest.raises(rp.InvalidArgument, match="subclass Environment"):
        rp.solve(rp.TASK, rp.scripted_model(), env, isolation="inline")
    from agentic_machines.architectures import adaplanner, adapt, codeact

    for household_machine in (codeact.machine, adaplanner.machine, adapt.machine):
        with pytest.raises(rp.InvalidArgument, match="env must be an Environment"):
            household_machine(env=env)
        # an Environment of another kind: these architectures' tasks are household tasks
        with pytest.raises(rp.InvalidArgument, match="env must be a Household"):
            household_machine(env=CountEnv(3))


def test_a_history_pool_carries_a_repl_from_one_task_to_the_next():
    # The seed's "REPL history reused across tasks": the second task finds count_even in
    # the pool, injects it (no DESCRIBE call, no new spawn) and its prompt shows the
    # first task's transcript of that REPL.
    from agentic_machines.architectures.repl_plan import HistoryPool

    hp = HistoryPool()
    first = rp.solve(rp.TASK, rp.scripted_model(), CountEnv(4), history_pool=hp)
    assert "count_even" in hp.demos and "main" not in hp.demos
    model = rp.scripted_model()
    second = rp.solve(rp.TASK, model, CountEnv(4), history_pool=hp)
    assert second.actions == ("1", "2", "3", "4")
    kinds = [
        (e.kind, e.name) for b in second.repls["main"].history[1:] for e in getattr(b, "events", ())
    ]
    assert ("injected", "count_even") in kinds and ("spawned", "count_even") not in kinds
    assert not [p for p, _ in model.calls if p.startswith("DESCRIBE: ")]
    helper_prompt = next(p for p, _ in model.calls if p.startswith("REPL: count_even"))
    assert first.repls["count_even"].transcript.strip() in helper_prompt
    assert len(hp.demos["count_even"].transcripts) == 2  # the second task's run is kept too
    # the machine reads the pool once, when it is built
    m = rp.machine(isolation="inline", history_pool=hp)
    assert set(m.kwargs["pool"]) == {"count_even"}

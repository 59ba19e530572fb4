"""Isolated executors: the same traces as inline, failures as outcomes, defaults that protect.

The attack corpus is in tests/test_attack_corpus.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from agentic_machines.architectures import repl_plan as rp
from agentic_machines.architectures import rlm
from agentic_machines.architectures.environments import CountEnv
from agentic_machines.errors import InvalidArgument
from agentic_machines.execution import wire
from agentic_machines.execution.codeexec import drive, drive_rest
from agentic_machines.execution.sandbox import (
    Limits,
    ProcessRunner,
    Scaffold,
    is_scripted,
    make_runner,
    namespace_tool,
    resolve_isolation,
)
from agentic_machines.runtime.local_models import FunctionModel, ScriptedModel
from agentic_machines.runtime.run import run
from agentic_machines.testing import render_trace

ROOT = Path(__file__).parent.parent
GOLDEN = Path(__file__).parent / "golden"
sys.path.insert(0, str(ROOT / "experiments"))
sys.path.insert(0, str(Path(__file__).parent))

import count_to_four  # noqa: E402
import household  # noqa: E402
import shop  # noqa: E402
from _helpers import tool_works  # noqa: E402
from attack_corpus import OPERATOR  # noqa: E402

LEVELS = ["process"] + (["namespace"] if namespace_tool() else [])


# -- semantics unchanged -------------------------------------------------------------------
@pytest.mark.parametrize("level", LEVELS)
def test_goldens_are_the_same_under_isolation(level):
    m = rlm.machine(isolation=level)
    trace = run(m, rlm.scripted_model())
    last = trace.steps[-1]
    result = m.result(last.state, last.completion)
    assert render_trace(trace, result) == (GOLDEN / "rlm" / "trace.txt").read_text()
    trace = run(rp.machine(isolation=level), rp.scripted_model())
    assert render_trace(trace) == (GOLDEN / "repl_plan" / "count_to_four_trace.txt").read_text()


def _episode(result):
    return (
        result.trace,
        result.actions,
        result.answer,
        result.status,
        result.failure,
        result.prompts,
        {k: (r.history, r.variables, r.transcript) for k, r in result.repls.items()},
    )


@pytest.mark.parametrize("example", [count_to_four, shop, household], ids=lambda m: m.__name__)
def test_solved_examples_give_the_same_trace_in_a_worker(example):
    inline = rp.solve(example.TASK, example.model(), example.env(), pool=example.POOL)
    assert inline.isolation == "inline"  # their models are scripted: inline by default
    isolated = rp.solve(
        example.TASK, example.model(), example.env(), pool=example.POOL, isolation="process"
    )
    assert isolated.isolation == "process"
    assert _episode(isolated) == _episode(inline)


def test_replay_divergence_and_cached_calls_cross_the_boundary():
    blocks = {
        "main": [
            "g = iter(range(10))\nn = [0]\nact(str(len(n)))\nx = helper(1)",
            # the iterator is kept by reference: the rerun after helper(2) sees next(g) == 1
            "act(str(next(g)))\ny = helper(2)\nanswer(y)",
            "answer(x)",
        ],
        "helper": ["answer(get_args()[0] * 10)", "answer(get_args()[0] * 10)"],
    }
    a = rp.solve("t", rp.scripted_model(blocks), CountEnv(9), isolation="inline")
    b = rp.solve("t", rp.scripted_model(blocks), CountEnv(9), isolation="process")
    assert _episode(a) == _episode(b)
    assert b.repls["main"].history[2].status == "diverged" and b.answer == 10


def test_a_child_answer_of_any_object_reaches_its_caller():
    blocks = {
        "main": ["p = make()\nprint(type(p).__name__, p.x)\nanswer(p.x)"],
        "make": ["class P:\n    def __init__(self):\n        self.x = 7\nanswer(P())"],
    }
    a = rp.solve("t", rp.scripted_model(blocks), CountEnv(2), isolation="inline")
    b = rp.solve("t", rp.scripted_model(blocks), CountEnv(2), isolation="process")
    assert b.answer == a.answer == 7
    assert a.repls["main"].history[1].stdout == b.repls["main"].history[1].stdout == "P 7\n"
    assert _episode(a) == _episode(b)


# -- failures are outcomes -------------------------------------------------------------------
def test_a_timeout_is_an_outcome_and_the_namespace_is_rebuilt():
    blocks = {"main": ["x = 41\nact('1')", "x = 0\nwhile True:\n    pass", "answer(x + 1)"]}
    res = rp.solve(
        "t",
        rp.scripted_model(blocks),
        CountEnv(9),
        isolation="process",
        timeout_s=1,
        block_lines=10**9,
    )
    assert res.answer == 42 and res.status == "answered"  # x = 0 of the failed block is gone
    failed = res.repls["main"].history[2]
    assert failed.status == "timeout" and failed.stderr.startswith("ExecutionTimeout:")
    assert "ExecutionTimeout" in res.prompts[2]  # the model sees it in its next prompt
    assert res.actions == ("1",)  # act('1') was not performed again by the replay
    assert any(e.text.startswith("timeout (ExecutionTimeout)") for e in res.trace)


def test_memory_and_death_are_typed_and_a_child_failure_keeps_the_parent():
    blocks = {
        "main": ["v = helper(3)\nact(str(v))\nanswer(v)"],
        "helper": [
            "big = 'x' * (2 * 1024**3)",
            "import operator\nw = [c for c in operator.methodcaller('__subclasses__')(object) "
            "if c.__name__ == '_wrap_close'][0]\noperator.attrgetter('__init__.__globals__')(w)"
            "['_exit'](9)",
            "answer(get_args()[0] * 2)",
        ],
    }
    res = rp.solve(
        "t",
        rp.scripted_model(blocks),
        CountEnv(9),
        isolation="process",
        limits=Limits(timeout_s=5, memory_mb=512),
    )
    history = res.repls["helper"].history
    assert history[1].status == "memory" and "ExecutionMemoryExceeded" in history[1].stderr
    assert history[2].status == "died" and "WorkerDied" in history[2].stderr
    assert "exit code 9" in history[2].stderr
    assert res.answer == 6 and res.actions == ("6",)


def test_rlm_goes_on_after_a_timeout_and_keeps_its_variables():
    script = [
        "```repl\nriver = 'Seine'\n```",
        "```repl\nriver = 'x'\nwhile True:\n    pass\n```",
        "FINAL_VAR(river)",
    ]
    m = rlm.machine(isolation="process", timeout_s=1, block_lines=10**9)
    trace = run(m, ScriptedModel(script))
    last = trace.steps[-1]
    assert m.result(last.state, last.completion).answer == "Seine"
    assert "ExecutionTimeout" in trace.steps[-1].prompt


# -- defaults and choices ---------------------------------------------------------------------
def test_the_default_is_resolved_where_the_model_is_known():
    assert is_scripted(ScriptedModel(["x"])) and is_scripted(rp.scripted_model())
    assert not is_scripted(FunctionModel(str))
    assert resolve_isolation(None, ScriptedModel(["x"])) == "inline"
    assert resolve_isolation(None, FunctionModel(str)) in ("process", "namespace")
    assert resolve_isolation("strongest") == ("namespace" if namespace_tool() else "process")
    assert rlm.machine().kwargs["options"].isolation == resolve_isolation("strongest")
    assert rp.machine().kwargs["options"].isolation == resolve_isolation("strongest")
    res = rp.solve("t", FunctionModel(lambda p: "answer(1)"), CountEnv(2))
    assert res.isolation.startswith(resolve_isolation("strongest"))
    with pytest.raises(InvalidArgument, match="isolation must be one of"):
        resolve_isolation("sandboxed")
    with pytest.raises(InvalidArgument, match="timeout_s"):
        Limits(timeout_s=0)


def test_a_worker_starts_only_when_a_block_runs_and_gets_a_clean_environment(monkeypatch):
    monkeypatch.setenv("AM_SECRET_API_KEY", "sk-not-for-model-code")
    ex = make_runner("process", timeout_s=5)
    ex.namespace("m", Scaffold())
    assert ex.workers_started == 0
    code = (
        "import operator\nw = [c for c in operator.methodcaller('__subclasses__')(object) "
        "if c.__name__ == '_wrap_close'][0]\ng = operator.attrgetter('__init__.__globals__')(w)\n"
        "print(sorted(g['environ']), g['getcwd']())"
    )
    result = drive_rest(ex.run_block("m", code), None)
    assert ex.workers_started == 1
    assert "AM_SECRET" not in result.stdout and ex.scratch in result.stdout
    scratch = ex.scratch
    ex.close()
    assert not Path(scratch).exists()


def test_wire_round_trips_data_and_refuses_malformed_values():
    value = (
        1,
        -2.5,
        float("inf"),
        "s",
        b"\x00",
        [None, True],
        {"a": {1, 2}},
        {3: "x"},
        frozenset(),
    )
    assert wire.decode(json.loads(json.dumps(wire.encode(value)))) == value
    for bad in ({"$nope": 1}, {"$tuple": 3}, {"$dict": [[1]]}, object()):
        with pytest.raises(ValueError):
            wire.decode(bad)
    with pytest.raises(ValueError):
        wire.loads(b"[" * 100_000)
    nested: list = []
    for _ in range(300):
        nested = [nested]
    assert "$repr" in json.dumps(wire.encode(nested))  # too deep: its repr, not a crash


@pytest.mark.skipif(namespace_tool() is None, reason="no namespace tool works here")
def test_unshare_fallback_runs_blocks_too(tmp_path):
    if not ProcessRunner("namespace", tool="unshare").tool == "unshare":  # pragma: no cover
        pytest.skip("unshare unavailable")
    if not tool_works("unshare"):
        pytest.skip("unshare does not work here")
    ex = ProcessRunner("namespace", Limits(timeout_s=5), tool="unshare")
    ex.namespace("m", Scaffold(values={"x": 2}))
    result = drive_rest(ex.run_block("m", "print(x * 21)"), None)
    assert result.stdout == "42\n"
    # The worker made the mounts read-only itself; without its capabilities, model code that
    # reaches a shell cannot remount them read-write and write outside the scratch directory.
    canary = tmp_path / "canary"
    canary.mkdir()
    remount = (
        "for m in $(cut -d' ' -f5 /proc/self/mountinfo); do mount -o remount,bind,rw $m; done"
        f" 2>/dev/null; touch {canary}/remount; touch in-scratch && echo scratch-ok"
    )
    block = OPERATOR + f"os_['system']({remount!r})"
    result = drive_rest(ex.run_block("m", block), None)
    ex.close()
    assert result.status == "ok", result.stderr
    assert list(canary.iterdir()) == []


def test_cli_runs_of_rlm_and_repl_plan_are_isolated_by_default(tmp_path, capsys):
    from agentic_machines.cli.commands import main

    script = tmp_path / "script.json"
    script.write_text(json.dumps(["```repl\nprint(len(context))\n```", "FINAL(Seine)"]))
    assert main(["run", "rlm", "--script", str(script)]) == 0
    err = capsys.readouterr().err
    assert f"isolation: {resolve_isolation('strongest')}" in err
    script.write_text(json.dumps(["act('1')\nanswer(1)"]))
    assert main(["run", "repl_plan", "--script", str(script), "--isolation", "process"]) == 0
    assert "isolation: process" in capsys.readouterr().err


# -- what each namespace tool guarantees (bubblewrap and the unshare fallback alike) --------
def _working_tools() -> list[str]:
    return [tool for tool in ("bwrap", "unshare") if tool_works(tool)]


@pytest.mark.parametrize("tool", _working_tools())
def test_each_tool_gives_the_worker_its_own_processes_and_signals_work(tool):
    """Under either tool the worker has a PID namespace of its own with its own /proc (it
    sees a handful of processes, not the host's), it is not PID 1 there, so a block that
    kills its own process ends as WorkerDied (SIGKILL), and the next block runs in a new
    worker rebuilt from the journal."""
    ex = ProcessRunner("namespace", Limits(timeout_s=30), tool=tool)
    try:
        ex.namespace("m", Scaffold(values={"x": 2}))
        look = OPERATOR + (
            "print(os_['getpid']() != 1, "
            "len([p for p in os_['listdir']('/proc') if p.isdigit()]) < 10)"
        )
        result = drive_rest(ex.run_block("m", look), None)
        assert (result.status, result.stdout) == ("ok", "True True\n"), result.stderr
        kill = OPERATOR + "os_['kill'](os_['getpid'](), 9)"
        result = drive_rest(ex.run_block("m", kill), None)
        assert result.status == "died" and "SIGKILL" in result.stderr, result.stderr
        again = drive_rest(ex.run_block("m", "print(x * 21)"), None)
        assert again.stdout == "42\n" and ex.replays >= 1
    finally:
        ex.close()


def test_falling_back_to_unshare_warns_with_the_reason(monkeypatch):
    from agentic_machines.errors import IsolationFallback
    from agentic_machines.execution import confine

    # bwrap was probed and failed; unshare is probed now and works
    monkeypatch.setattr(confine, "_TOOLS", {"bwrap": "bwrap is not installed"})
    monkeypatch.setattr(confine, "probe", lambda tool: None)
    with pytest.warns(IsolationFallback, match="unshare, not bubblewrap: bwrap is not installed"):
        assert confine.namespace_tool() == "unshare"


def test_the_worker_paths_under_a_private_directory_are_mounted_back():
    from agentic_machines.execution import confine

    package = str(ROOT / "agentic_machines")
    binds = confine._rebinds([str(ROOT.parent)])  # as if the checkout's parent were /tmp
    triples = [tuple(binds[i : i + 3]) for i in range(0, len(binds), 3)]
    assert ("--ro-bind", package, package) in triples or any(
        package.startswith(t[1] + "/") for t in triples
    )
    assert confine._rebinds(["/nonexistent-mask"]) == []


def test_a_fork_of_the_runners_process_gets_a_worker_of_its_own():
    # An agent's next step runs in a fork of its worker process: the fork's blocks must not
    # reach the parent's REPL, nor may the fork stop the parent's worker or its scratch.
    ex = make_runner("process", timeout_s=5)
    ex.namespace("m", Scaffold())
    drive_rest(ex.run_block("m", "x = 1"), None)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own worker, replaying x = 1, then closed (all of it)
        try:
            got = drive_rest(ex.run_block("m", "x += 10\nprint(x)"), None).stdout
            ex.close()
            os.write(write, got.encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as pipe:
        assert pipe.read() == "11\n"
    assert Path(ex.scratch).exists()  # the parent's, untouched by the child's close()
    assert drive_rest(ex.run_block("m", "print(x)"), None).stdout == "1\n"
    assert ex.workers_started == 1  # the parent's worker lived on
    ex.close()


_PATCH_WORKER = OPERATOR + (
    "server = os_['sys'].modules['agentic_machines.execution.worker'].Server\n"
    "real = server.write\n"
    "def write(self, message):\n"
    "    if message.get('type') == 'result':\n"
    "        message = dict(message, stdout='forged by block 1\\n')\n"
    "    real(self, message)\n"
    "server.write = write\n"
)


TOOLS = [None, *_working_tools()]


def _patched_runner(tool):
    ex = ProcessRunner("namespace" if tool else "process", Limits(timeout_s=30), tool=tool)
    ex.namespace("m", Scaffold())
    return ex


def _block(ex, key, code):
    return drive(ex.run_block(key, code, line_budget=10**6), lambda prompt: "").stdout


@pytest.mark.parametrize("tool", TOOLS)
def test_a_worker_patch_reaches_only_later_blocks_of_its_own_repl_and_alike_each_time(tool):
    # Issue 37, item 5 (a reviewer's finding): block 1 replaces the worker's Server.write.
    # Within its own REPL that is what any code of a persistent REPL can do (redefining
    # print alike): what later blocks show must stay a function of the blocks, the same in
    # two fresh runners and after the worker is rebuilt from the journal.
    seen = []
    for _ in range(2):
        ex = _patched_runner(tool)
        try:
            first = _block(ex, "m", _PATCH_WORKER)
            second = _block(ex, "m", "print('block 2')")
            ex._kill()  # the next block needs a new worker, which replays the journal
            third = _block(ex, "m", "print('block 3')")
            seen.append((first, second, third, ex.replays))
        finally:
            ex.close()
    assert seen[0] == seen[1] == ("forged by block 1\n",) * 3 + (1,)


@pytest.mark.parametrize("tool", TOOLS)
def test_a_block_that_patches_the_worker_cannot_reach_another_repl(tool):
    # Another namespace of the same runner (a REPL-Plan child REPL, an RLM child RLM) runs
    # in a worker of its own: the patch of "m" never reaches "n", before or after a rebuild.
    ex = _patched_runner(tool)
    try:
        ex.namespace("n", Scaffold())
        assert _block(ex, "n", "print('n before')") == "n before\n"
        assert _block(ex, "m", _PATCH_WORKER) == "forged by block 1\n"
        assert _block(ex, "n", "print('n after')") == "n after\n"
        assert _block(ex, "m", "print('m after')") == "forged by block 1\n"
        ex.close()
        ex = _patched_runner(tool)  # n created after m was patched, and m rebuilt
        assert _block(ex, "m", _PATCH_WORKER) == "forged by block 1\n"
        ex.namespace("n", Scaffold())
        for runner in ex._all():
            runner._kill()  # every worker is rebuilt from its own journal
        assert _block(ex, "n", "print('n')") == "n\n"
        assert _block(ex, "m", "print('m')") == "forged by block 1\n"
        assert ex.replays == 1  # m's journal (n's had no block yet, so nothing to replay)
    finally:
        ex.close()


_PATCH_BY_CLOSURE = OPERATOR + (
    "def patched(real):\n"
    "    def write(self, message):\n"
    "        if message.get('type') == 'result':\n"
    "            message = dict(message, stdout='forged by block 1\\n')\n"
    "        real(self, message)\n"
    "    return write\n"
    "server = os_['sys'].modules['agentic_machines.execution.worker'].Server\n"
    "server.write = patched(server.write)\n"
)


@pytest.mark.parametrize("level", LEVELS)
def test_a_child_rlm_shows_its_own_output_after_its_parent_patched_the_worker(level):
    # max_depth=2: the root patches its worker, then starts a child RLM (its own REPL,
    # "rlm.1"), whose block prints; the child's next prompt shows its own output (before
    # each namespace had a worker of its own, it showed the root's forged text).
    root = "```repl\n" + _PATCH_BY_CLOSURE + "x = rlm_query('say hi')\n```"
    child = "```repl\nprint('child says hi')\n```"
    m = rlm.machine(isolation=level, max_depth=2, max_turns=2)
    prompt = m.prompt(m.initial.then(root).then(child))
    assert "child says hi\n" in prompt and "forged by block 1\n" not in prompt


@pytest.mark.parametrize("level", LEVELS)
def test_repl_plans_repls_share_one_interpreter_so_a_patch_reaches_them_alike_each_time(level):
    # The REPLs of one REPL-Plan episode pass any object to each other, so they share one
    # worker (share_with): main's patch reaches the child REPL it calls, as a change to a
    # module would inline; the child's transcript is the same in two runs. (A block that
    # makes a request runs again from its namespace as it was: a closure keeps `real`.) (A block
    main = _PATCH_BY_CLOSURE + "helper(1)\nhelper(2)"
    child = "print('child', get_args()[0])\nanswer(None)"
    lasts = []
    for _ in range(2):
        trace = run(
            rp.machine(isolation=level), ScriptedModel([main, "print a number", child, child])
        )
        lasts.append(trace.steps[-1].prompt)
    assert lasts[0] == lasts[1] and lasts[0].startswith("REPL: helper")
    assert "answer(None)\nforged by block 1\n#ANSWER# None" in lasts[0]


@pytest.mark.slow
def test_a_worker_patch_never_reaches_another_explored_path():
    # Exploration: every path's blocks run in a runner of that path's own run (a branch
    # replays from the start), so the graph is the same whatever the order the paths were
    # explored in, in one process or two, and each state's prompt is that of a fresh run.
    from concurrent.futures import ProcessPoolExecutor

    from agentic_machines.runtime.explore import explore

    patch = "```repl\n" + _PATCH_WORKER + "print('a')\n```"
    plain = "```repl\nprint('plain')\n```"

    def machine():
        return rlm.machine(isolation="process", max_turns=2)

    def prompts(graph):
        return {s: d["prompt"] for s, d in graph.nodes(data=True) if d["kind"] == "state"}

    serial = prompts(explore(machine(), completions=[patch, plain], max_depth=2))
    backward = prompts(explore(machine(), completions=[plain, patch], max_depth=2))
    with ProcessPoolExecutor(2) as pool:
        parallel = prompts(
            explore(machine(), completions=[patch, plain], max_depth=2, executor=pool)
        )
    assert len(serial) == 7 and serial == backward == parallel
    assert all(machine().prompt(state) == prompt for state, prompt in serial.items())
    # what the blocks printed (the patch's source has the text too, with "\\n" in it)
    shown = {s.completions: p.count("forged by block 1\n") for s, p in serial.items()}
    assert (shown[(plain, plain)], shown[(plain, patch)], shown[(patch, plain)]) == (0, 1, 2)
